package attempt

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Record is what the caller's status records of the attempts so far. Attempts run one
// after another: each ends succeeded (which ends the work), failed or lost.
type Record struct {
	// N is the current attempt; 0: none started.
	N int32
	// Failed and Lost count the attempts recorded as failed and as lost.
	Failed, Lost int32
	// Recorded says attempt N's outcome is in the record: it failed or was lost.
	Recorded bool
	// LastFailed says attempt N was recorded as failed, so the next waits for the backoff.
	LastFailed bool
}

// Attempt names the attempt for people and for the API server.
type Attempt struct {
	// Pod is the name of attempt N's Pod: deterministic per attempt, so that a restarted
	// operator finds it.
	Pod string
	// Step names the step the attempt belongs to ("chunk 3", "the probe"); empty for the
	// only step of a single job.
	Step string
}

// Action is what a Decision asks of the caller.
type Action int

const (
	// Wait: nothing to record; look again after Decision.After (0: on the next event).
	Wait Action = iota
	// Succeed: attempt N succeeded with Decision.Obs.Result.
	Succeed
	// RecordFailure: attempt N failed; record it (Failed+1); the next starts at RetryAt.
	RecordFailure
	// RecordLoss: attempt N was lost; record it (Lost+1); the next starts at once.
	RecordLoss
	// Fail: give up: the work fails with Decision.Reason and Decision.Message.
	Fail
	// Start: create attempt N+1's Pod now.
	Start
)

// Event is an Event to emit about the work, once the record that explains it is stored.
type Event struct {
	Warning              bool
	Reason, Action, Note string
	// Pod says the Event relates to the attempt's Pod.
	Pod bool
}

// Decision is what follows from an attempt's record and its Pod.
type Decision[R any] struct {
	Action Action
	// Outcome is how to record attempt N: RecordFailure or RecordLoss, also when Action
	// is Fail; Wait (the zero value) when there is nothing to record of it.
	Outcome Action
	// Obs is the attempt's Pod as read; zero when there is none.
	Obs Observation[R]
	// Reason and Message: for Fail, the work's; for RecordFailure and RecordLoss, the
	// attempt's outcome for people.
	Reason, Message string
	// RetryAt: for RecordFailure, when the next attempt may start.
	RetryAt time.Time
	// After: look again after this long; 0: on the next event (or Requeue).
	After time.Duration
	// Requeue asks for the queue's growing backoff rather than a time.
	Requeue bool
	// Delete: delete the Pod now (gracefully; a result finalizer keeps it until the
	// outcome is recorded).
	Delete bool
	// ForceDelete: once the record is stored, remove the Pod without waiting for its
	// kubelet (its node is taken for gone), as the Pod garbage collector does.
	ForceDelete bool
	// Deleting: the Pod is on its way out, and the next attempt waits for it to go, so
	// that the work never has two live Pods; Obs.Message says so.
	Deleting bool
	Events   []Event
}

// Decide says what follows for an attempt with record rec, whose current Pod (attempt
// rec.N's, called a.Pod) is pod, or nil when neither the cache nor the API server has it.
func Decide[R any](p Policy, rec Record, a Attempt, pod *corev1.Pod, parse Parse[R], now time.Time) Decision[R] {
	switch {
	case rec.N == 0:
		return Decision[R]{Action: Start}
	case rec.Recorded:
		return after(p, rec, pod, parse, now)
	case pod == nil:
		// Only a Pod without the result finalizer (from an older operator, one whose
		// finalizer was removed by hand, or a kind of Pod that carries none) can vanish
		// before its outcome is recorded.
		return lost(p, rec, a, Decision[R]{}, fmt.Sprintf("worker Pod %s was deleted", a.Pod), "; starting a new attempt")
	}
	o := Observe(pod, parse)
	d := Decision[R]{Obs: o}
	switch o.State {
	case Pending:
		return waitPending(p, rec, a, d, now)
	case Running:
		return d
	case Succeeded:
		d.Action = Succeed
		return d
	case Terminating:
		if left := o.Since.Add(p.TerminatingTimeout).Sub(now); left > 0 || p.TerminatingTimeout == 0 {
			d.Deleting, d.After = true, max(left+RecheckMargin, 0)
			return d
		}
		d.ForceDelete = true
		why := fmt.Sprintf("worker Pod %s stayed Terminating %s past its grace period: its node %s does not answer", pod.Name, p.TerminatingTimeout, pod.Spec.NodeName)
		return lost(p, rec, a, d, why, "; force-deleting it and starting a new attempt")
	case Lost:
		return lost(p, rec, a, d, o.Message, "; starting a new attempt")
	}
	return failed(p, rec, a, d, now)
}

// waitPending waits for a Pod that has not started, within the pending deadline (not placed
// yet) or the start timeout (placed, its container not started). The deadline runs from
// the Pod's creation, the timeout from its binding.
func waitPending[R any](p Policy, rec Record, a Attempt, d Decision[R], now time.Time) Decision[R] {
	o := d.Obs
	if o.Bound {
		if left := o.Since.Add(p.StartTimeout).Sub(now); left > 0 || p.StartTimeout == 0 {
			d.After = max(left+RecheckMargin, 0)
			return d
		}
		reason := o.Reason
		if reason == ReasonScheduled {
			reason = ReasonStartTimeout
		}
		d.Obs.State, d.Obs.Reason, d.Obs.Ended = Failed, reason, now
		d.Obs.Message = OneLine(fmt.Sprintf("worker Pod %s did not start within %s of being bound to node %s: %s", a.Pod, p.StartTimeout, o.Node, o.Message))
		d = failed(p, rec, a, d, now)
		d.Delete = true
		return d
	}
	if p.PendingDeadline > 0 {
		left := o.Since.Add(p.PendingDeadline).Sub(now)
		if left <= 0 {
			msg := OneLine(fmt.Sprintf("worker Pod %s was not placed on a node within the pending deadline (%s): %s", a.Pod, p.PendingDeadline, o.Message))
			d.Action, d.Reason, d.Message, d.Delete = Fail, ReasonPendingDeadline, msg, true
			d.Events = append(d.Events, Event{Warning: true, Reason: ReasonPendingDeadline, Action: "Fail", Note: msg, Pod: true})
			return d
		}
		d.After = left + RecheckMargin
	}
	if o.Reason == ReasonWaitingForScheduler && now.Sub(o.Since) >= SchedulerSilence {
		// No word from the scheduler at all: it is not running, or not as vmafx-scheduler.
		d.Obs.Message = fmt.Sprintf("worker Pod %s has waited %s for %s, which has not looked at it: check that the vmafx-scheduler Deployment in %s runs",
			a.Pod, now.Sub(o.Since).Round(time.Second), vmafxv1.SchedulerName, vmafxv1.SystemNamespace)
	} else if o.Reason == ReasonWaitingForScheduler && (d.After == 0 || d.After > SchedulerSilence) {
		d.After = o.Since.Add(SchedulerSilence).Sub(now) + RecheckMargin
	}
	return d
}

// what names attempt n for people: "attempt 2", or "chunk 3, attempt 2," in a step.
func what(a Attempt, n int32) string {
	if a.Step == "" {
		return fmt.Sprintf("attempt %d", n)
	}
	return fmt.Sprintf("%s, attempt %d,", a.Step, n)
}

// lost records attempt rec.N as lost: retried at once without using the backoff budget,
// but the work fails once more than MaxLost attempts were lost.
func lost[R any](p Policy, rec Record, a Attempt, d Decision[R], why, next string) Decision[R] {
	prefix := ""
	if a.Step != "" {
		prefix = a.Step + ": "
	}
	d.Events = append(d.Events, Event{Warning: true, Reason: ReasonPodLost, Action: "Retry", Note: prefix + why + next, Pod: true})
	d.Outcome = RecordLoss
	if n := rec.Lost + 1; n > p.maxLost() {
		of := ""
		if a.Step != "" {
			of = " of " + a.Step
		}
		d.Action, d.Reason = Fail, ReasonTooManyLost
		d.Message = fmt.Sprintf("%d worker Pods%s were lost (the last: %s); giving up", n, of, why)
		return d
	}
	d.Action, d.Message, d.Requeue = RecordLoss, why, true
	return d
}

// permanentReasons are the failures that no retry can change: the input or the request
// is unusable, the model is unknown, the result cannot be read.
var permanentReasons = map[string]bool{
	vmafxv1.ReasonBadInput: true,
	vmafxv1.ReasonBadModel: true,
	ReasonUnparsableResult: true,
}

// failed records attempt rec.N as failed (d.Obs says how), and fails the work when the
// failure is deterministic (the same input would fail the same way) or the backoff limit
// is spent.
func failed[R any](p Policy, rec Record, a Attempt, d Decision[R], now time.Time) Decision[R] {
	o := d.Obs
	msg := fmt.Sprintf("%s failed (%s): %s", what(a, rec.N), o.Reason, o.Message)
	d.Outcome = RecordFailure
	switch {
	case permanentReasons[o.Reason]:
		d.Action, d.Reason, d.Message = Fail, o.Reason, msg+"; not retried, as the same input fails the same way"
		d.Events = append(d.Events, Event{Warning: true, Reason: ReasonNotRetried, Action: "Fail", Note: d.Message, Pod: true})
	case rec.Failed+1 > p.BackoffLimit:
		d.Action, d.Reason, d.Message = Fail, o.Reason, fmt.Sprintf("%s; backoffLimit %d reached", msg, p.BackoffLimit)
		d.Events = append(d.Events, Event{Warning: true, Reason: ReasonBackoffLimit, Action: "Fail", Note: d.Message, Pod: true})
	default:
		d.Action, d.Reason, d.Message = RecordFailure, o.Reason, msg
		d.RetryAt = p.RetryAt(rec.Failed+1, o.Ended, now)
		wait := max(d.RetryAt.Sub(now), 0)
		d.After = wait + RecheckMargin
		d.Events = append(d.Events, Event{Warning: true, Reason: ReasonAttemptFailed, Action: "Retry", Note: fmt.Sprintf("%s; retrying in %s", msg, wait.Round(time.Second)), Pod: true})
	}
	return d
}

// after decides on the attempt after rec.N, whose outcome is recorded: it starts once
// the recorded attempt's Pod is gone or finished and, after a failure, the backoff has
// passed. A Pod the operator ended (it did not start in time) is deleted first.
func after[R any](p Policy, rec Record, pod *corev1.Pod, parse Parse[R], now time.Time) Decision[R] {
	d := Decision[R]{Action: Start}
	if pod == nil {
		return d
	}
	o := Observe(pod, parse)
	d.Obs = o
	switch o.State {
	case Pending, Running:
		d.Action, d.Delete, d.Deleting, d.After = Wait, true, true, p.TerminatingTimeout
		d.Obs.Message = fmt.Sprintf("worker Pod %s is being deleted", pod.Name)
		return d
	case Terminating:
		if left := o.Since.Add(p.TerminatingTimeout).Sub(now); left > 0 || p.TerminatingTimeout == 0 {
			d.Action, d.Deleting, d.After = Wait, true, max(left+RecheckMargin, 0)
			return d
		}
		d.Action, d.ForceDelete, d.Requeue = Wait, true, true
		return d
	}
	if rec.LastFailed {
		if left := p.RetryAt(rec.Failed, o.Ended, now).Sub(now); left > 0 {
			d.Action, d.After = Wait, left+RecheckMargin
		}
	}
	return d
}

// Permanent says whether a failure of this reason is deterministic: the same input
// fails the same way, so no retry can change it.
func Permanent(reason string) bool { return permanentReasons[reason] }
