package job

import (
	corev1 "k8s.io/api/core/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/attempt"
)

// observation is the outcome of one attempt as read from its Pod (attempt.Observe), with
// the scoring worker's result.
type observation = attempt.Observation[*vmafxv1.WorkerResult]

// parseResult is what a success means for a scoring Pod: a valid worker result.
func parseResult(b []byte) (*vmafxv1.WorkerResult, string, string, error) {
	r, err := vmafxv1.ParseWorkerResult(b)
	if err != nil {
		return nil, "", "", err
	}
	if r.Error != nil {
		return r, r.Error.Reason, r.Error.Message, nil
	}
	return r, "", "", nil
}

// observe reads a scoring Pod. A Succeeded Pod whose termination message is not a valid
// worker result is a failed attempt: the job never records a score it cannot prove.
func observe(pod *corev1.Pod) observation { return attempt.Observe(pod, parseResult) }

// oneLine folds s to one bounded line for status and events (text.OneLine).
func oneLine(s string) string { return attempt.OneLine(s) }
