package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrainingAlgorithm is how a training run updates its model.
// +kubebuilder:validation:Enum=online-sgd-ema
type TrainingAlgorithm string

// AlgorithmOnlineSGDEMA is online stochastic gradient descent with an exponential moving
// average of the weights.
const AlgorithmOnlineSGDEMA TrainingAlgorithm = "online-sgd-ema"

// TrainingDataSource selects where training samples come from.
type TrainingDataSource struct {
	// nodeSelector picks the VmafxNodes whose job results feed the training.
	// An empty selector means every node.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
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

// VmafxModelTrainingSpec describes a training run.
type VmafxModelTrainingSpec struct {
	// baseModel is the model the run starts from, e.g. vmaf_v0.6.1.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`
	// +required
	BaseModel string `json:"baseModel"`

	// algorithm is the training algorithm; online-sgd-ema is the one there is.
	// +kubebuilder:default=online-sgd-ema
	// +optional
	Algorithm TrainingAlgorithm `json:"algorithm,omitempty"`

	// outputRegistry is where model versions are written (file:// or s3:// URI).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^(file:///[^/]|s3://[^/]+/?)')",message="must be a file:///abs/path or s3://bucket[/prefix] URI"
	// +optional
	OutputRegistry string `json:"outputRegistry,omitempty"`

	// dataSource selects the samples to learn from.
	// +optional
	DataSource TrainingDataSource `json:"dataSource,omitempty"`

	// checkpoint says when model versions are written.
	// +optional
	Checkpoint CheckpointPolicy `json:"checkpoint,omitempty"`
}

// TrainingPhase is where a training run is in its life.
// +kubebuilder:validation:Enum=Initializing;Training;Succeeded;Failed
type TrainingPhase string

// The phases of a VmafxModelTraining.
const (
	TrainingInitializing TrainingPhase = "Initializing"
	TrainingRunning      TrainingPhase = "Training"
	TrainingSucceeded    TrainingPhase = "Succeeded"
	TrainingFailed       TrainingPhase = "Failed"
)

// Condition types of a VmafxModelTraining.
const (
	// TrainingReady is True when the run's inputs are valid and it can train.
	TrainingReady = "Ready"
)

// VmafxModelTrainingStatus is the progress of a training run.
type VmafxModelTrainingStatus struct {
	// observedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is Initializing, Training, Succeeded or Failed.
	// +optional
	Phase TrainingPhase `json:"phase,omitempty"`
	// samples is the number of samples learned from so far.
	// +optional
	Samples int64 `json:"samples,omitempty"`
	// modelVersion is the last model version written.
	// +optional
	ModelVersion string `json:"modelVersion,omitempty"`
	// lastCheckpoint is when the last model version was written.
	// +optional
	LastCheckpoint *metav1.Time `json:"lastCheckpoint,omitempty"`
	// conditions: Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VmafxModelTraining is an online training run that refines a VMAF model from the
// results of scoring jobs and writes checkpoints to a model registry.
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
