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
)

// maxLostAttempts bounds the attempts a job may lose (Pods deleted, evicted, or moved
// off stale nodes) so that a job that can never keep a Pod fails with a reason instead of
// cycling forever. Lost attempts do not count against spec.backoffLimit.
const maxLostAttempts = 10
