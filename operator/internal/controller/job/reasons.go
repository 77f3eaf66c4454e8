package job

// Event and condition reasons, CamelCase as the Kubernetes event style guide asks.
const (
	ReasonPodCreated          = "PodCreated"
	ReasonWaitingForScheduler = "WaitingForScheduler"
	ReasonScheduled           = "Scheduled"
	ReasonStarted             = "Started"
	ReasonSucceeded           = "Succeeded"
	ReasonAttemptFailed       = "AttemptFailed"
	ReasonRetrying            = "Retrying"
	ReasonBackoffLimit        = "BackoffLimitExceeded"
	ReasonPodLost             = "PodLost"
	ReasonTooManyLost         = "TooManyLostPods"
	ReasonUnparsableResult    = "UnparsableResult"
	ReasonNotStarted          = "NotStarted"
	ReasonFinished            = "Finished"
	ReasonPodTerminating      = "PodTerminating"
	ReasonOutputWritten       = "OutputWritten"
	ReasonOutputFailed        = "OutputFailed"
	// ReasonNotRetried: a deterministic failure (bad input, bad model, unreadable result).
	ReasonNotRetried = "NotRetried"
	// ReasonFailedCreate: the API server refused a worker Pod (event reason, as the
	// ReplicaSet and Job controllers use it).
	ReasonFailedCreate = "FailedCreate"
	// ReasonPodRefused: a refusal that stands failed the job.
	ReasonPodRefused = "PodRefused"
	// ReasonExceededQuota: a ResourceQuota of the namespace is used up.
	ReasonExceededQuota = "ExceededQuota"
	// ReasonServiceAccountNotFound: the worker service account does not exist.
	ReasonServiceAccountNotFound = "ServiceAccountNotFound"
	// ReasonPendingDeadline: spec.pendingDeadlineSeconds passed.
	ReasonPendingDeadline = "PendingDeadlineExceeded"
	// ReasonStartTimeout: a bound Pod's container did not start in time.
	ReasonStartTimeout = "PodStartTimeout"
	// ReasonVolumeNotAllowed: spec.volume names a host path or NFS server the operator's
	// configuration does not allow.
	ReasonVolumeNotAllowed = "VolumeNotAllowed"
	// ReasonNamespaceLimit: the job's namespace has VMAFX_OPERATOR_MAX_WORKERS_PER_NAMESPACE
	// live worker Pods; the job waits for one to finish.
	ReasonNamespaceLimit = "NamespaceLimitReached"
)

// maxLostAttempts bounds the attempts a job may lose (Pods deleted, evicted, or moved
// off stale nodes) so that a job that can never keep a Pod fails with a reason instead of
// cycling forever. Lost attempts do not count against spec.backoffLimit.
const maxLostAttempts = 10

// ReasonChunksPlanned: a chunked job's probe counted the frames and they were split into
// chunks (event reason).
const ReasonChunksPlanned = "ChunksPlanned"
