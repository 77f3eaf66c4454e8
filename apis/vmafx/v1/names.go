package v1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Names shared by the components. Each is spelled here once; the components import it.
const (
	// ResourceSlot is the extended resource that the device plugin advertises and that
	// every worker Pod requests one of.
	ResourceSlot = "vmafx.dev/slot"
	// SchedulerReasonNoFreeSlot is vmafx-scheduler's reason for a node whose slots are all
	// taken, as its FailedScheduling message counts it ("12 node(s) had no free
	// vmafx.dev/slot"); the operator reads it to tell a Pod that waits its turn for a slot.
	SchedulerReasonNoFreeSlot = "node(s) had no free " + ResourceSlot

	// SchedulerName is the scheduler profile that places worker Pods.
	SchedulerName = "vmafx-scheduler"

	// SystemNamespace is where the operator, scheduler and device plugin run.
	SystemNamespace = "vmafx-system"

	// LabelJob on a worker Pod names the VmafxJob it scores: the job's name, or for a name
	// that is no valid label value (longer than 63 characters) JobLabelValue's short form.
	// Select a job's Pods with JobLabelValue(name); AnnotationJobName has the full name.
	LabelJob = "vmafx.dev/job"
	// LabelAttempt on a worker Pod is the job attempt it runs (1, 2, ...).
	LabelAttempt = "vmafx.dev/attempt"
	// LabelGPUVendor on a VmafxNode is its spec.gpuVendor (nvidia, amd, intel or cpu), set
	// by the node's device plugin so that a selector can pick VmafxNodes, and a training
	// run's dataSource.nodeSelector the jobs they scored, by vendor. The key is the one the
	// original VMAFX operator README's examples select on (gpu.vendor: nvidia).
	LabelGPUVendor = "gpu.vendor"
	// LabelComponent marks the Pods of the system's components.
	LabelComponent = "vmafx.dev/component"
	// LabelKueueQueueName is Kueue's label naming the LocalQueue a workload is submitted
	// to. On a VmafxJob it picks the queue of the job's worker Pods; the operator's
	// VMAFX_OPERATOR_KUEUE_QUEUE_NAME is the default.
	LabelKueueQueueName = "kueue.x-k8s.io/queue-name"
	// KueueAdmissionGate is the scheduling gate Kueue's Pod webhook puts on a Pod of a
	// LocalQueue and lifts when it admits the Pod to its ClusterQueue's quota.
	KueueAdmissionGate = "kueue.x-k8s.io/admission"

	// AnnotationBackend on a worker Pod is the backend its job asked for; the scheduler
	// plugin reads it to match GPU vendors.
	AnnotationBackend = "vmafx.dev/backend"
	// AnnotationScoringStrategy on a worker Pod overrides the scheduler plugin's node
	// scoring strategy for that Pod (Spread or BinPack).
	AnnotationScoringStrategy = "vmafx.dev/scoring-strategy"
	// AnnotationPriority on a worker Pod copies its job's spec.priority.
	AnnotationPriority = "vmafx.dev/priority"
	// AnnotationJobName on a worker Pod is the full name of its VmafxJob.
	AnnotationJobName = "vmafx.dev/job-name"

	// FinalizerResult on a worker Pod keeps the Pod, and the result in its termination
	// message, until the operator has recorded the attempt's outcome in the job's status
	// (as the Job controller's batch.kubernetes.io/job-tracking finalizer does).
	FinalizerResult = "vmafx.dev/result"

	// EnvBackend is set by the device plugin's Allocate to the backend the slot offers
	// (cuda, hip, sycl, cpu); the worker reads it.
	EnvBackend = "VMAFX_BACKEND"
	// EnvDevice is set by Allocate to the device behind the slot (e.g. nvidia-0, cpu).
	EnvDevice = "VMAFX_DEVICE"
	// EnvMemoryLimit is set by the operator on worker Pods to the container's memory limit
	// in bytes (limits.memory, through the downward API); the worker sizes its threads and
	// Go's memory limit to it.
	EnvMemoryLimit = "VMAFX_MEMORY_LIMIT"
	// EnvRegistryPlainHTTP is set by the operator on worker and trainer Pods to the
	// comma-separated OCI registries (host[:port]) reached over plain HTTP, not HTTPS.
	EnvRegistryPlainHTTP = "VMAFX_REGISTRY_PLAIN_HTTP"
	// EnvDefaultCredentials is set to "true" by the operator on worker Pods where its
	// configuration (VMAFX_OPERATOR_WORKER_DEFAULT_CREDENTIALS) lets a job that names no
	// Secret use the object storage SDKs' default credentials; otherwise such a job's
	// requests are anonymous.
	EnvDefaultCredentials = "VMAFX_DEFAULT_CREDENTIALS"
	// EnvSlots is set by Allocate to the comma-separated slot IDs given to the container.
	EnvSlots = "VMAFX_SLOTS"
	// EnvSelfTestDir is set by Allocate on a GPU slot to the directory where the worker
	// writes its Vulkan self-test verdict for the device (internal/selftestverdict); the
	// device plugin reads it and marks a device that failed Unhealthy.
	EnvSelfTestDir = "VMAFX_SELFTEST_DIR"

	// LabelTraining on a trainer Deployment and its Pods names the VmafxModelTraining.
	LabelTraining = "vmafx.dev/training"

	// DataMountPath is where a job's spec.volume is mounted, read-only, in the worker.
	DataMountPath = "/data"
	// OutputMountPath is where a job's spec.outputVolume is mounted, writable, in the worker.
	OutputMountPath = "/output"
	// CredentialsMountPath is where the Secret of a job's spec.credentials is mounted,
	// read-only, one file per key; the worker's --credentials-dir.
	CredentialsMountPath = "/var/run/secrets/vmafx.dev/credentials"
)

// JobLabelValue is the vmafx.dev/job label value of the worker Pods of the VmafxJob called
// name: the name itself when it is a valid label value (63 characters at most), else its
// first 52 characters and 10 hex digits of its SHA-256, which stays unique in practice and
// valid (a job name is a DNS subdomain: lower-case alphanumerics, '-' and '.').
func JobLabelValue(name string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	prefix := strings.TrimRight(name[:min(len(name), 52)], "-.")
	return prefix + "-" + hex.EncodeToString(sum[:])[:10]
}

// Labels on the VmafxJobs and Pods that a VmafxComparison or a VmafxLadder creates.
const (
	// LabelComparison on a VmafxJob names the VmafxComparison that created it (as
	// JobLabelValue spells a long name).
	LabelComparison = "vmafx.dev/comparison"
	// LabelLadder on a VmafxJob or an encode Pod names the VmafxLadder that created it.
	LabelLadder = "vmafx.dev/ladder"
	// LabelRung on a VmafxJob or an encode Pod is the ladder rung it encodes or scores.
	LabelRung = "vmafx.dev/rung"
	// LabelStep on a ladder's Pod says what it does: encode or report.
	LabelStep = "vmafx.dev/step"
)
