package v1

// Names shared by the components. Each is spelled here once; the components import it.
const (
	// ResourceSlot is the extended resource that the device plugin advertises and that
	// every worker Pod requests one of.
	ResourceSlot = "vmafx.dev/slot"

	// SchedulerName is the scheduler profile that places worker Pods.
	SchedulerName = "vmafx-scheduler"

	// SystemNamespace is where the operator, scheduler and device plugin run.
	SystemNamespace = "vmafx-system"

	// LabelJob on a worker Pod names the VmafxJob it scores.
	LabelJob = "vmafx.dev/job"
	// LabelAttempt on a worker Pod is the job attempt it runs (1, 2, ...).
	LabelAttempt = "vmafx.dev/attempt"
	// LabelComponent marks the Pods of the system's components.
	LabelComponent = "vmafx.dev/component"

	// AnnotationBackend on a worker Pod is the backend its job asked for; the scheduler
	// plugin reads it to match GPU vendors.
	AnnotationBackend = "vmafx.dev/backend"
	// AnnotationScoringStrategy on a worker Pod overrides the scheduler plugin's node
	// scoring strategy for that Pod (Spread or BinPack).
	AnnotationScoringStrategy = "vmafx.dev/scoring-strategy"
	// AnnotationPriority on a worker Pod copies its job's spec.priority.
	AnnotationPriority = "vmafx.dev/priority"

	// EnvBackend is set by the device plugin's Allocate to the backend the slot offers
	// (cuda, hip, sycl, cpu); the worker reads it.
	EnvBackend = "VMAFX_BACKEND"
	// EnvDevice is set by Allocate to the device behind the slot (e.g. nvidia-0, cpu).
	EnvDevice = "VMAFX_DEVICE"
	// EnvSlots is set by Allocate to the comma-separated slot IDs given to the container.
	EnvSlots = "VMAFX_SLOTS"

	// DataMountPath is where a job's spec.volume is mounted, read-only, in the worker.
	DataMountPath = "/data"
	// OutputMountPath is where a job's spec.outputVolume is mounted, writable, in the worker.
	OutputMountPath = "/output"
	// CredentialsMountPath is where the Secret of a job's spec.credentials is mounted,
	// read-only, one file per key; the worker's --credentials-dir.
	CredentialsMountPath = "/var/run/secrets/vmafx.dev/credentials"

	// DefaultModel is the VMAF model used when a job names none.
	DefaultModel = "vmaf_v0.6.1"
)

// BuiltinModels are the models every worker carries. The worker's kernel embeds them
// (worker/vmaf) and the operator checks model names against this list.
var BuiltinModels = []string{"vmaf_v0.6.1", "vmaf_v0.6.1neg", "vmaf_v0.6.1phone", "vmaf_v0.6.1negphone"}
