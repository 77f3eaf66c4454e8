package attempt

// Event and condition reasons, CamelCase as the Kubernetes event style guide asks.
const (
	ReasonPodCreated          = "PodCreated"
	ReasonWaitingForScheduler = "WaitingForScheduler"
	ReasonScheduled           = "Scheduled"
	ReasonStarted             = "Started"
	ReasonAttemptFailed       = "AttemptFailed"
	ReasonBackoffLimit        = "BackoffLimitExceeded"
	ReasonPodLost             = "PodLost"
	ReasonTooManyLost         = "TooManyLostPods"
	ReasonUnparsableResult    = "UnparsableResult"
	ReasonPodTerminating      = "PodTerminating"
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
	// ReasonPendingDeadline: the pending deadline passed.
	ReasonPendingDeadline = "PendingDeadlineExceeded"
	// ReasonStartTimeout: a bound Pod's container did not start in time.
	ReasonStartTimeout = "PodStartTimeout"
	// ReasonNamespaceLimit: the namespace has VMAFX_OPERATOR_MAX_WORKERS_PER_NAMESPACE live
	// worker Pods; the work waits for one to finish.
	ReasonNamespaceLimit = "NamespaceLimitReached"
)
