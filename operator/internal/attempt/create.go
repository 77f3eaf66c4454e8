package attempt

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Create creates an attempt's Pod. created is false with no error when the Pod exists
// already: an earlier reconcile made it (its name is the attempt's, so it is this
// attempt's Pod; the caller checks its owner where another could hold the name).
func Create(ctx context.Context, c client.Client, pod *corev1.Pod) (created bool, err error) {
	err = c.Create(ctx, pod)
	if apierrors.IsAlreadyExists(err) {
		return false, nil
	}
	return err == nil, err
}

// Refusal is the decision on the API server's refusal to create an attempt's Pod.
type Refusal struct {
	// Gone: the namespace is being deleted, and the work with it: nothing to record.
	Gone bool
	// Reason and Condition are the PodRefused condition's reason and message (True).
	Reason, Condition string
	// Err is set when there was no answer on the request (a timeout, a server error):
	// the caller returns it, and the controller retries with its backoff.
	Err error
	// Fail: the work fails with FailReason and Message. Otherwise the create is tried
	// again After, and Message says so.
	Fail                bool
	FailReason, Message string
	After               time.Duration
	Events              []Event
}

// Refused decides on err, the API server's refusal of pod, for work created age ago whose
// Pod creation has been refused since since (zero: this is the first refusal). A refusal
// that stands (the Pod is invalid, or forbidden by policy) fails the work; one that can
// pass (a used-up quota) is retried with a wait that grows with the time refused, within
// the pending deadline, counted from the first refusal.
func Refused(p Policy, pod string, err error, age time.Duration, since, now time.Time) Refusal {
	kind, reason := classifyRefusal(err, age)
	switch kind {
	case refusalNamespaceGone:
		return Refusal{Gone: true}
	case refusalError:
		return Refusal{Reason: reason, Condition: OneLine(fmt.Sprintf("creating worker Pod %s: %v", pod, err)), Err: fmt.Errorf("creating worker Pod %s: %w", pod, err)}
	}
	msg := OneLine(fmt.Sprintf("the API server refused worker Pod %s: %s", pod, apiMessage(err)))
	r := Refusal{Reason: reason, Condition: msg, Events: []Event{{Warning: true, Reason: ReasonFailedCreate, Action: "Create", Note: msg}}}
	if kind == refusalPermanent {
		r.Fail, r.FailReason, r.Message = true, ReasonPodRefused, msg+"; it would be refused again: fix the cause and create the job anew"
		return r
	}
	if since.IsZero() {
		since = now
	}
	if d := p.PendingDeadline; d > 0 && now.Sub(since) >= d {
		r.Fail, r.FailReason, r.Message = true, ReasonPendingDeadline, msg+fmt.Sprintf("; still refused after the pending deadline (%s)", d)
		r.Events = append(r.Events, Event{Warning: true, Reason: ReasonPendingDeadline, Action: "Fail", Note: r.Message})
		return r
	}
	r.After = min(max(now.Sub(since), p.RetryBackoff), p.MaxRetryBackoff)
	r.Message = msg + fmt.Sprintf("; retrying in %s", r.After.Round(time.Second))
	return r
}
