package v1

// The contract between a training run's trainer (vmafx-trainer) and the operator,
// which reads the trainer's GET /status and reflects it in the run's status.
const (
	// TrainerPort is where a trainer serves /status, /metrics and /healthz.
	TrainerPort = 8090
	// TrainerStatusPath is the trainer's status document, a TrainerStatus in JSON.
	TrainerStatusPath = "/status"
	// TrainerStatusVersion is TrainerStatus.Version.
	TrainerStatusVersion = "vmafx.dev/trainer-status/v1"
	// TrainerRegistryCredentialsPath is where a trainer finds the .dockerconfigjson of
	// spec.registryCredentials.
	TrainerRegistryCredentialsPath = "/var/run/secrets/vmafx.dev/registry"
	// DockerConfigKey is the key of a kubernetes.io/dockerconfigjson Secret.
	DockerConfigKey = ".dockerconfigjson"
)

// Reasons of a training run's conditions, reported by the trainer or the operator.
const (
	// ReasonTrainerStarting: the trainer Pod is not serving /status yet.
	ReasonTrainerStarting = "TrainerStarting"
	// ReasonResuming: the trainer is reading its last checkpoint.
	ReasonResuming = "Resuming"
	// ReasonTraining: the trainer reads samples and checkpoints.
	ReasonTraining = "Training"
	// ReasonRegistryUnavailable: the registry cannot be reached or refuses the trainer.
	ReasonRegistryUnavailable = "RegistryUnavailable"
	// ReasonSuspended: spec.suspend is set.
	ReasonSuspended = "Suspended"
	// ReasonPublished: the last checkpoint was pushed.
	ReasonPublished = "Published"
	// ReasonHeldOutWorseThanBase: a checkpoint was due but its held-out error is worse than
	// the base model's, so it was not pushed.
	ReasonHeldOutWorseThanBase = "HeldOutWorseThanBase"
	// ReasonNoHeldOutSamples: a checkpoint was due but no sample is held out yet to judge it.
	ReasonNoHeldOutSamples = "NoHeldOutSamples"
	// ReasonWaitingForSamples: fewer than checkpoint.minSamples new samples so far.
	ReasonWaitingForSamples = "WaitingForSamples"
	// ReasonPushFailed: pushing a checkpoint failed; the trainer retries at the next interval.
	ReasonPushFailed = "PushFailed"
)

// Event reasons on a VmafxModelTraining.
const (
	// EventCheckpointWritten: a model version was pushed.
	EventCheckpointWritten = "CheckpointWritten"
	// EventCheckpointWithheld: a due checkpoint was not pushed (see CheckpointPublished).
	EventCheckpointWithheld = "CheckpointWithheld"
	// EventTrainerCreated: the operator created the run's trainer Deployment.
	EventTrainerCreated = "TrainerCreated"
	// EventTrainerRestarted: the kubelet restarted the trainer (Warning, with its last
	// exit: reason, exit code and the end of its log).
	EventTrainerRestarted = "TrainerRestarted"
)

// Reasons of a training run's Ready condition that the operator reads from the trainer's
// Deployment and Pod while the trainer does not answer.
const (
	// ReasonTrainerRestarting: the trainer exited and the kubelet restarts it (with its
	// back-off); the message names the last exit.
	ReasonTrainerRestarting = "TrainerRestarting"
	// ReasonTrainerPodRefused: the API server refuses the trainer Deployment's Pod (a
	// used-up quota, a policy); the Deployment keeps trying.
	ReasonTrainerPodRefused = "PodRefused"
)

// TrainerStatus is what a trainer reports at /status.
type TrainerStatus struct {
	Version string `json:"version"`
	// Phase is Initializing, Running or Failed.
	Phase TrainingPhase `json:"phase"`
	// Reason and Message explain the phase (Ready condition).
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// Samples counted, HeldOut of them held out, SkippedJobs not usable.
	Samples     int64 `json:"samples"`
	HeldOut     int64 `json:"heldOut"`
	SkippedJobs int64 `json:"skippedJobs"`
	// ModelVersion is the last version pushed (its tag).
	ModelVersion   string      `json:"modelVersion,omitempty"`
	LastCheckpoint *Checkpoint `json:"lastCheckpoint,omitempty"`
	// Errors in VMAF points, as decimal strings, empty when not known yet.
	TrainingError    string `json:"trainingError,omitempty"`
	HeldOutError     string `json:"heldOutError,omitempty"`
	BaseHeldOutError string `json:"baseHeldOutError,omitempty"`
	// PublishReason and PublishMessage say whether the last due checkpoint was pushed
	// (CheckpointPublished condition); empty before the first was due.
	PublishReason  string `json:"publishReason,omitempty"`
	PublishMessage string `json:"publishMessage,omitempty"`
}
