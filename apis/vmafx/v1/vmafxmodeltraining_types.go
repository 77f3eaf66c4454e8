package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrainingAlgorithm is how a training run updates its model.
// +kubebuilder:validation:Enum=online-sgd-ema
type TrainingAlgorithm string

// AlgorithmOnlineSGDEMA is online stochastic gradient descent on the SVR's coefficients and
// offset with an exponential moving average of them as the published model.
const AlgorithmOnlineSGDEMA TrainingAlgorithm = "online-sgd-ema"

// TrainingDataSource selects the labelled jobs a run learns from. A job is a sample when it
// Succeeded, carries spec.subjectiveScore and a JSON spec.output, and matches every
// selector below.
type TrainingDataSource struct {
	// nodeSelector picks the Kubernetes Nodes (by their labels, as a Pod's nodeSelector
	// does) whose scored jobs feed the training, e.g. gpu.vendor: nvidia. Empty: every node.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// jobSelector picks jobs by their labels. Empty: every labelled job.
	// +optional
	JobSelector *metav1.LabelSelector `json:"jobSelector,omitempty"`

	// namespaces whose jobs feed the training. Empty: the run's own namespace.
	// +kubebuilder:validation:MaxItems=64
	// +listType=set
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`

	// credentials names a Secret in the run's namespace with the object store keys the
	// trainer reads the jobs' s3://, gs:// or azure:// outputs with (the keys a job's
	// credentials Secret holds). The endpoint comes from each job's spec.s3.
	// +optional
	Credentials *Credentials `json:"credentials,omitempty"`

	// outputClaim names a PersistentVolumeClaim in the run's namespace that holds the jobs'
	// file:///output/... outputs (their spec.outputVolume); the trainer mounts it read-only
	// at /output.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	OutputClaim string `json:"outputClaim,omitempty"`
}

// CheckpointPolicy says when a training run writes a model version.
type CheckpointPolicy struct {
	// interval between checkpoints, as a Go duration such as 30s, 5m or 1h (at least 1s).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="interval must be at least 1s"
	// +kubebuilder:default="5m"
	// +optional
	Interval string `json:"interval,omitempty"`

	// minSamples is the number of new samples needed before a checkpoint (1 or more).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=100
	// +optional
	MinSamples int32 `json:"minSamples,omitempty"`
}

// RegistryRepository is an OCI repository, <registry>/<repository> (ghcr.io/vmafx/models,
// registry.example:5000/vmaf), optionally written with an oci:// prefix.
// +kubebuilder:validation:MaxLength=400
// +kubebuilder:validation:XValidation:rule="self.matches('^(oci://)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)+$')",message="outputRegistry must be an OCI repository <registry>/<repository>, e.g. ghcr.io/vmafx/models or registry.example:5000/vmaf (no tag, no scheme but oci://)"
type RegistryRepository string

// VmafxModelTrainingSpec describes a training run.
type VmafxModelTrainingSpec struct {
	// baseModel is the built-in model the run starts from: vmaf_v0.6.1 or vmaf_v0.6.1neg.
	// Its feature normalisation and support vectors are kept; the run learns the SVR's
	// coefficients and offset. The other built-in models are not bases: the phone
	// variants' score transform cannot be written into a model file, a bootstrapped
	// model is 21 models, and the 4K models are meant for a viewing distance the
	// labels of a training run rarely describe.
	// +kubebuilder:validation:XValidation:rule="self in ['vmaf_v0.6.1', 'vmaf_v0.6.1neg']",message="baseModel must be vmaf_v0.6.1 or vmaf_v0.6.1neg (the phone variants are these models with a score transform that a model file cannot enable)"
	// +required
	BaseModel string `json:"baseModel"`

	// algorithm is the training algorithm; online-sgd-ema is the one there is.
	// +kubebuilder:default=online-sgd-ema
	// +optional
	Algorithm TrainingAlgorithm `json:"algorithm,omitempty"`

	// outputRegistry is the OCI repository that model versions are pushed to, each tagged
	// <run name>-v<N>.
	// +required
	OutputRegistry RegistryRepository `json:"outputRegistry"`

	// registryCredentials names a Secret of type kubernetes.io/dockerconfigjson in the run's
	// namespace (kubectl create secret docker-registry) used to push to outputRegistry.
	// Without it the trainer pushes anonymously.
	// +optional
	RegistryCredentials *SecretReference `json:"registryCredentials,omitempty"`

	// dataSource selects the samples to learn from.
	// +optional
	DataSource TrainingDataSource `json:"dataSource,omitempty"`

	// checkpoint says when model versions are written.
	// +optional
	Checkpoint CheckpointPolicy `json:"checkpoint,omitempty"`

	// learningRate is the share of a sample's (clipped) error that one step corrects
	// (normalised SGD), from 0.0001 to 1, as a decimal string.
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]+)?|1(\.0+)?)$`
	// +kubebuilder:validation:XValidation:rule="double(self) >= 0.0001 && double(self) <= 1.0",message="learningRate must be between 0.0001 and 1"
	// +kubebuilder:default="0.05"
	// +optional
	LearningRate string `json:"learningRate,omitempty"`

	// emaDecay is the weight of the published model's past in each step of its exponential
	// moving average, from 0 (publish the raw parameters) to 0.9999, as a decimal string.
	// +kubebuilder:validation:Pattern=`^0(\.[0-9]+)?$`
	// +kubebuilder:validation:XValidation:rule="double(self) <= 0.9999",message="emaDecay must be between 0 and 0.9999"
	// +kubebuilder:default="0.9"
	// +optional
	EMADecay string `json:"emaDecay,omitempty"`

	// heldOutPercent is the share of samples, in percent (0 to 50), kept out of training to
	// measure the model; a checkpoint is published only when its error on them is no worse
	// than the base model's. Every k-th sample in arrival order is held out.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=50
	// +kubebuilder:default=20
	// +optional
	HeldOutPercent *int32 `json:"heldOutPercent,omitempty"`

	// suspend stops the run's trainer (phase Stopped) while keeping its model versions and
	// ledger; setting it back to false resumes from the last checkpoint.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// TrainingPhase is where a training run is in its life.
// +kubebuilder:validation:Enum=Initializing;Running;Failed;Stopped
type TrainingPhase string

// The phases of a VmafxModelTraining.
const (
	// TrainingInitializing: the trainer is starting or resuming from its last checkpoint.
	TrainingInitializing TrainingPhase = "Initializing"
	// TrainingRunning: the trainer is reading samples and writing checkpoints.
	TrainingRunning TrainingPhase = "Running"
	// TrainingFailed: the run cannot train as written (see the Ready condition).
	TrainingFailed TrainingPhase = "Failed"
	// TrainingStopped: spec.suspend is set; the trainer is not running.
	TrainingStopped TrainingPhase = "Stopped"
)

// Condition types of a VmafxModelTraining.
const (
	// TrainingReady is True while the trainer runs and reports.
	TrainingReady = "Ready"
	// TrainingCheckpointPublished says whether the last checkpoint was pushed, or why not
	// (e.g. HeldOutWorseThanBase).
	TrainingCheckpointPublished = "CheckpointPublished"
)

// Checkpoint is a model version a training run pushed.
type Checkpoint struct {
	// reference is the model version, oci://<registry>/<repository>:<tag>; a job's
	// spec.model may name it (or the digest form).
	// +optional
	Reference string `json:"reference,omitempty"`
	// digest is the artifact's manifest digest, sha256:<hex>:
	// oci://<registry>/<repository>@<digest> names exactly this version.
	// +optional
	Digest string `json:"digest,omitempty"`
	// samples is the number of samples the version learned from.
	// +optional
	Samples int64 `json:"samples,omitempty"`
	// time is when it was pushed.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
}

// VmafxModelTrainingStatus is the progress of a training run, as its trainer reports it.
type VmafxModelTrainingStatus struct {
	// observedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is Initializing, Running, Failed or Stopped.
	// +optional
	Phase TrainingPhase `json:"phase,omitempty"`
	// samples is the number of samples learned from so far (training and held-out).
	// +optional
	Samples int64 `json:"samples,omitempty"`
	// heldOutSamples is how many of them were held out.
	// +optional
	HeldOutSamples int64 `json:"heldOutSamples,omitempty"`
	// skippedJobs counts labelled jobs that could not be used (no readable JSON output, or
	// features of another model); the trainer's log says why for each.
	// +optional
	SkippedJobs int64 `json:"skippedJobs,omitempty"`
	// modelVersion is the last model version written, <run name>-v<N>.
	// +optional
	ModelVersion string `json:"modelVersion,omitempty"`
	// lastCheckpoint is the last model version pushed.
	// +optional
	LastCheckpoint *Checkpoint `json:"lastCheckpoint,omitempty"`
	// trainingError is the root mean square error, in VMAF points, of the published model
	// on the training samples, measured as each arrived (before learning from it).
	// +optional
	TrainingError string `json:"trainingError,omitempty"`
	// heldOutError is the root mean square error of the published model on the held-out
	// samples, in VMAF points.
	// +optional
	HeldOutError string `json:"heldOutError,omitempty"`
	// baseHeldOutError is the base model's on the same held-out samples.
	// +optional
	BaseHeldOutError string `json:"baseHeldOutError,omitempty"`
	// trainer is the Deployment that runs the trainer.
	// +optional
	Trainer string `json:"trainer,omitempty"`
	// trainerRestarts is how often the kubelet restarted the trainer in its current Pod
	// (a crash, a failed liveness probe, an out-of-memory kill): the trainer is a
	// Deployment, not an attempt, so it is restarted rather than retried, and resumes from
	// its last model version. Each restart is a TrainerRestarted event with the last exit.
	// +optional
	TrainerRestarts int32 `json:"trainerRestarts,omitempty"`
	// conditions: Ready, CheckpointPublished.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VmafxModelTraining is an online training run: a trainer learns a VMAF model from the
// subjective scores of labelled jobs and pushes model versions to an OCI registry, which
// jobs can then name in spec.model.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vmtrain,categories=vmafx
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Samples",type=integer,JSONPath=`.status.samples`
// +kubebuilder:printcolumn:name="ModelVersion",type=string,JSONPath=`.status.modelVersion`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VmafxModelTraining struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the run.
	// +required
	Spec VmafxModelTrainingSpec `json:"spec"`

	// status is the run's progress.
	// +optional
	Status VmafxModelTrainingStatus `json:"status,omitempty"`
}

// VmafxModelTrainingList is a list of VmafxModelTrainings.
//
// +kubebuilder:object:root=true
type VmafxModelTrainingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VmafxModelTraining `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VmafxModelTraining{}, &VmafxModelTrainingList{})
}
