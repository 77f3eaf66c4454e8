package job

import "github.com/vmafx/vmafx/operator/internal/attempt"

// Event and condition reasons, CamelCase as the Kubernetes event style guide asks; those
// of an attempt's life are the attempt engine's.
const (
	ReasonPodCreated          = attempt.ReasonPodCreated
	ReasonWaitingForScheduler = attempt.ReasonWaitingForScheduler
	ReasonScheduled           = attempt.ReasonScheduled
	ReasonStarted             = attempt.ReasonStarted
	ReasonSucceeded           = "Succeeded"
	ReasonAttemptFailed       = attempt.ReasonAttemptFailed
	ReasonRetrying            = "Retrying"
	ReasonBackoffLimit        = attempt.ReasonBackoffLimit
	ReasonPodLost             = attempt.ReasonPodLost
	ReasonTooManyLost         = attempt.ReasonTooManyLost
	ReasonUnparsableResult    = attempt.ReasonUnparsableResult
	ReasonNotStarted          = "NotStarted"
	ReasonFinished            = "Finished"
	ReasonPodTerminating      = attempt.ReasonPodTerminating
	ReasonOutputWritten       = "OutputWritten"
	ReasonOutputFailed        = "OutputFailed"
	// ReasonNotRetried: a deterministic failure (bad input, bad model, unreadable result).
	ReasonNotRetried = attempt.ReasonNotRetried
	// ReasonFailedCreate: the API server refused a worker Pod (event reason, as the
	// ReplicaSet and Job controllers use it).
	ReasonFailedCreate = attempt.ReasonFailedCreate
	// ReasonPodRefused: a refusal that stands failed the job.
	ReasonPodRefused = attempt.ReasonPodRefused
	// ReasonExceededQuota: a ResourceQuota of the namespace is used up.
	ReasonExceededQuota = attempt.ReasonExceededQuota
	// ReasonServiceAccountNotFound: the worker service account does not exist.
	ReasonServiceAccountNotFound = attempt.ReasonServiceAccountNotFound
	// ReasonPendingDeadline: spec.pendingDeadlineSeconds passed.
	ReasonPendingDeadline = attempt.ReasonPendingDeadline
	// ReasonStartTimeout: a bound Pod's container did not start in time.
	ReasonStartTimeout = attempt.ReasonStartTimeout
	// ReasonVolumeNotAllowed: spec.volume names a host path or NFS server the operator's
	// configuration does not allow.
	ReasonVolumeNotAllowed = "VolumeNotAllowed"
	// ReasonNamespaceLimit: the job's namespace has VMAFX_OPERATOR_MAX_WORKERS_PER_NAMESPACE
	// live worker Pods; the job waits for one to finish.
	ReasonNamespaceLimit = attempt.ReasonNamespaceLimit
)

// maxLostAttempts bounds the attempts a job may lose (Pods deleted, evicted, or moved
// off stale nodes) so that a job that can never keep a Pod fails with a reason instead of
// cycling forever. Lost attempts do not count against spec.backoffLimit.
const maxLostAttempts = attempt.DefaultMaxLost

// ReasonChunksPlanned: a chunked job's probe counted the frames and they were split into
// chunks (event reason).
const ReasonChunksPlanned = "ChunksPlanned"
