package attempt

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/text"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

// State is what an attempt's Pod says about the attempt.
type State int

const (
	Pending State = iota
	Running
	Succeeded
	Failed
	// Lost: the Pod was deleted or evicted through no fault of the work; the attempt is
	// retried without counting against the backoff limit.
	Lost
	// Terminating: the Pod is being deleted and may still run; no new attempt starts
	// until it is gone, so the work never has two live Pods.
	Terminating
)

// Observation is the outcome of one attempt as read from its Pod.
type Observation[R any] struct {
	State   State
	Reason  string // CamelCase, for conditions and events
	Message string // one line for people
	Node    string
	Started *time.Time
	Ended   time.Time
	Result  R // what Parse read from a Succeeded Pod
	// Bound says a pending Pod is on a node; Since is when a pending Pod was created (not
	// bound) or bound, and when a terminating Pod's grace period ends.
	Bound bool
	Since time.Time
}

// Parse reads a worker's termination message: its result; or, when the worker reported a
// failure itself, its reason (not empty) and message; or err when the message is not a
// result of the kind at all. What a success means is the caller's.
type Parse[R any] func(msg []byte) (result R, reason, message string, err error)

// MaxMessage bounds messages copied from Pods into status and events.
const MaxMessage = 1024

// Observe reads pod. A Succeeded Pod whose termination message parse cannot read is a
// failed attempt: the operator never records a result it cannot prove.
func Observe[R any](pod *corev1.Pod, parse Parse[R]) Observation[R] {
	o := Observation[R]{Node: pod.Spec.NodeName}
	if pod.Status.StartTime != nil {
		t := pod.Status.StartTime.Time
		o.Started = &t
	}
	term := workerTermination(pod)
	if term != nil {
		o.Ended = term.FinishedAt.Time
	}
	if pod.DeletionTimestamp != nil && pod.Spec.NodeName == "" && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		// Never placed, so nothing runs and no kubelet will report: gone already.
		o.State, o.Reason = Lost, ReasonPodLost
		o.Message = fmt.Sprintf("worker Pod %s was deleted before it was placed on a node", pod.Name)
		o.Ended = pod.DeletionTimestamp.Time
		return o
	}
	if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		o.State, o.Reason = Terminating, ReasonPodTerminating
		o.Message = fmt.Sprintf("worker Pod %s is being deleted", pod.Name)
		o.Since = pod.DeletionTimestamp.Time
		return o
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		if term == nil {
			o.State, o.Reason, o.Message = Failed, ReasonUnparsableResult, "the worker container has no termination state"
			return o
		}
		r, reason, msg, err := parse([]byte(term.Message))
		switch {
		case err != nil:
			o.State, o.Reason, o.Message = Failed, ReasonUnparsableResult, OneLine(err.Error())
		case reason != "":
			o.State, o.Reason, o.Message = Failed, reason, OneLine(msg)
		default:
			o.State, o.Result = Succeeded, r
		}
	case corev1.PodFailed:
		o.State = Failed
		if why, lost := lostPod(pod, term); lost {
			o.State, o.Reason, o.Message = Lost, ReasonPodLost, why
			break
		}
		o.Reason, o.Message = failureReason(pod, term, parse)
	case corev1.PodRunning:
		o.State, o.Reason = Running, ReasonStarted
		o.Message = fmt.Sprintf("worker Pod %s is scoring on node %s", pod.Name, pod.Spec.NodeName)
	default:
		pending(pod, &o)
	}
	if o.Ended.IsZero() && (o.State == Failed || o.State == Succeeded || o.State == Lost) {
		o.Ended = lastTransition(pod)
	}
	return o
}

// lostReasons are the Pod-level reasons with which the kubelet fails a Pod through no
// fault of the job: it evicted or preempted it, refused it at admission (a device the
// device plugin could not hand out, a node that changed under it), or shut down.
var lostReasons = map[string]bool{
	"Evicted":                  true,
	"Preempting":               true,
	"UnexpectedAdmissionError": true,
	"NodeAffinity":             true,
	"NodeLost":                 true,
	"Terminated":               true, // graceful node shutdown
	"Shutdown":                 true,
	"NodeShutdown":             true,
}

// lostPod says whether a Failed Pod was lost rather than failed, and how. A Pod is lost
// when the kubelet refused or evicted it, when something disrupted it (preemption, the
// Eviction API, a taint, the Pod garbage collector), or when it was deleted while the
// worker ran: the kubelet then stops the container and marks the Pod Failed before it
// goes away (the worker reports "scoring cancelled"). A worker that had already failed
// before the deletion was asked for failed on its own.
func lostPod(pod *corev1.Pod, term *corev1.ContainerStateTerminated) (string, bool) {
	if r := pod.Status.Reason; lostReasons[r] || strings.HasPrefix(r, "OutOf") {
		return OneLine(fmt.Sprintf("the kubelet on node %s refused or evicted worker Pod %s (%s): %s", pod.Spec.NodeName, pod.Name, r, pod.Status.Message)), true
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return OneLine(fmt.Sprintf("worker Pod %s was disrupted (%s): %s", pod.Name, c.Reason, c.Message)), true
		}
	}
	if pod.DeletionTimestamp != nil && (term == nil || !term.FinishedAt.Time.Before(deletionRequested(pod))) {
		return fmt.Sprintf("worker Pod %s was deleted while it ran", pod.Name), true
	}
	return "", false
}

// deletionRequested is when the deletion of pod was asked for: its deletionTimestamp is
// that moment plus the grace period.
func deletionRequested(pod *corev1.Pod) time.Time {
	t := pod.DeletionTimestamp.Time
	if g := pod.DeletionGracePeriodSeconds; g != nil {
		t = t.Add(-time.Duration(*g) * time.Second)
	}
	return t
}

// pending explains a Pod that has not started: waiting for the scheduler (in its own
// words), or bound and waiting for the kubelet to start the container (with the kubelet's
// reason, such as ImagePullBackOff or CreateContainerConfigError, once it gives one).
func pending[R any](pod *corev1.Pod, o *Observation[R]) {
	o.State = Pending
	o.Since = pod.CreationTimestamp.Time
	if pod.Spec.NodeName == "" {
		o.Reason, o.Message = scheduling(pod)
		return
	}
	o.Bound = true
	o.Reason, o.Message = ReasonScheduled, fmt.Sprintf("worker Pod %s is bound to node %s", pod.Name, pod.Spec.NodeName)
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			o.Since = c.LastTransitionTime.Time
		}
	}
	for _, cs := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		w := cs.State.Waiting
		if w == nil || w.Reason == "" || w.Reason == "ContainerCreating" || w.Reason == "PodInitializing" {
			continue
		}
		msg := w.Message
		if msg == "" {
			msg = w.Reason
		}
		o.Reason = w.Reason
		o.Message = OneLine(fmt.Sprintf("worker Pod %s on node %s cannot start: %s", pod.Name, pod.Spec.NodeName, msg))
		return
	}
}

// failureReason explains a Failed Pod: the kubelet's Pod-level reason when it ended the
// Pod (DeadlineExceeded: the worker then only reports that it was cancelled), else the
// worker's own reason, else the container's exit.
func failureReason[R any](pod *corev1.Pod, term *corev1.ContainerStateTerminated, parse Parse[R]) (string, string) {
	if pod.Status.Reason != "" {
		return pod.Status.Reason, OneLine(pod.Status.Message)
	}
	if term != nil {
		if _, reason, msg, err := parse([]byte(term.Message)); err == nil && reason != "" {
			return reason, OneLine(msg)
		}
	}
	if term != nil {
		reason := term.Reason
		if reason == "" {
			reason = "Error"
		}
		msg := fmt.Sprintf("worker exited with code %d", term.ExitCode)
		if m := strings.TrimSpace(term.Message); m != "" {
			msg += ": " + m
		}
		return reason, OneLine(msg)
	}
	return "PodFailed", "worker Pod failed without a termination state"
}

// scheduling explains a Pending Pod from its PodScheduled condition, so a job that
// cannot be placed carries the scheduler's own words. A Pod with scheduling gates is
// queued (by Kueue, whose gate it names): the API server marks it SchedulingGated when it
// is created, and the mark stays after the gates are lifted until the scheduler has looked
// at the Pod, so the gates themselves tell whether it still waits for them.
func scheduling(pod *corev1.Pod) (string, string) {
	if gates := pod.Spec.SchedulingGates; len(gates) > 0 {
		if slices.ContainsFunc(gates, func(g corev1.PodSchedulingGate) bool { return g.Name == vmafxv1.KueueAdmissionGate }) {
			return corev1.PodReasonSchedulingGated, fmt.Sprintf("worker Pod %s is queued in Kueue's LocalQueue %s: Kueue lifts its scheduling gate %s when the ClusterQueue has quota for it",
				pod.Name, pod.Labels[vmafxv1.LabelKueueQueueName], vmafxv1.KueueAdmissionGate)
		}
		names := make([]string, len(gates))
		for i, g := range gates {
			names[i] = g.Name
		}
		return corev1.PodReasonSchedulingGated, OneLine(fmt.Sprintf("worker Pod %s is queued until its scheduling gates are lifted: %s", pod.Name, strings.Join(names, ", ")))
	}
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.PodScheduled {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return ReasonScheduled, fmt.Sprintf("worker Pod %s is bound to node %s", pod.Name, pod.Spec.NodeName)
		}
		if c.Reason == "" || c.Reason == corev1.PodReasonSchedulingGated {
			break // the gates are lifted: the scheduler has not looked yet
		}
		return c.Reason, OneLine(c.Message)
	}
	if pod.Spec.NodeName != "" {
		return ReasonScheduled, fmt.Sprintf("worker Pod %s is bound to node %s", pod.Name, pod.Spec.NodeName)
	}
	return ReasonWaitingForScheduler, fmt.Sprintf("worker Pod %s is waiting for %s", pod.Name, vmafxv1.SchedulerName)
}

func workerTermination(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if cs.Name == workerpod.ContainerName && cs.State.Terminated != nil {
			return cs.State.Terminated
		}
	}
	return nil
}

func lastTransition(pod *corev1.Pod) time.Time {
	var t time.Time
	for _, c := range pod.Status.Conditions {
		if c.LastTransitionTime.After(t) {
			t = c.LastTransitionTime.Time
		}
	}
	return t
}

// OneLine folds s to one bounded line for status and events (text.OneLine).
func OneLine(s string) string { return text.OneLine(s, MaxMessage) }

// TerminationMessage is the worker container's termination message; "" while it has
// not terminated.
func TerminationMessage(pod *corev1.Pod) string {
	if t := workerTermination(pod); t != nil {
		return t.Message
	}
	return ""
}

// slotBusyReasons are the per-node reasons of a scheduler's verdict that say only that a
// node's scoring slots are all taken: kube-scheduler's NodeResourcesFit, which checks
// vmafx.dev/slot like any extended resource and usually reports first, and vmafx-scheduler's
// own placement filter.
var slotBusyReasons = map[string]bool{
	"Insufficient " + vmafxv1.ResourceSlot: true,
	vmafxv1.SchedulerReasonNoFreeSlot:      true,
}

// WaitsForSlot says whether a Pending Pod's scheduling verdict (reason and message, as
// Observe reads them from its PodScheduled condition) is only that every node's slots are
// taken: the Pod waits its turn for a slot to free, as a Pod the scheduler has not
// looked at yet waits its turn in the scheduler's queue. The message is kube-scheduler's
// ("0/40 nodes are available: 30 Insufficient vmafx.dev/slot, 10 node(s) had no free
// vmafx.dev/slot. preemption: ..."); any other reason on any node (a stale heartbeat, the
// wrong vendor, too little memory), a reason from PreFilter, or a message in another form
// says false, so such a verdict is shown as promptly as before.
func WaitsForSlot(reason, message string) bool {
	if reason != corev1.PodReasonUnschedulable {
		return false
	}
	_, rest, ok := strings.Cut(message, " nodes are available: ")
	if !ok || !strings.HasPrefix(message, "0/") {
		return false
	}
	// The per-node histogram ends at the first ". " (a reason such as vmafx.dev/slot
	// holds a dot, never a dot and a space), or at the message's final ".".
	histogram, _, found := strings.Cut(rest, ". ")
	if !found {
		histogram = strings.TrimSuffix(rest, ".")
	}
	for _, entry := range strings.Split(histogram, ", ") {
		count, why, ok := strings.Cut(entry, " ")
		if !ok || count == "" || strings.Trim(count, "0123456789") != "" || !slotBusyReasons[why] {
			return false
		}
	}
	return true
}
