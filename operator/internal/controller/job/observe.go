package job

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

// podState is what an attempt's Pod says about the attempt.
type podState int

const (
	podPending podState = iota
	podRunning
	podSucceeded
	podFailed
	// podLost: the Pod was deleted or evicted through no fault of the job; the attempt is
	// retried without counting against spec.backoffLimit.
	podLost
	// podTerminating: the Pod is being deleted and may still run; no new attempt starts
	// until it is gone, so a job never has two live Pods.
	podTerminating
)

// observation is the outcome of one attempt as read from its Pod.
type observation struct {
	state   podState
	reason  string // CamelCase, for conditions and events
	message string // one line for people
	node    string
	started *time.Time
	ended   time.Time
	result  *vmafxv1.WorkerResult
	// bound says a pending Pod is on a node; since is when a pending Pod was created (not
	// bound) or bound, and when a terminating Pod's grace period ends.
	bound bool
	since time.Time
}

// maxMessage bounds messages copied from Pods into status and events.
const maxMessage = 1024

// observe reads pod. A Succeeded Pod whose termination message is not a valid worker
// result is a failed attempt: the job never records a score it cannot prove.
func observe(pod *corev1.Pod) observation {
	o := observation{node: pod.Spec.NodeName}
	if pod.Status.StartTime != nil {
		t := pod.Status.StartTime.Time
		o.started = &t
	}
	term := workerTermination(pod)
	if term != nil {
		o.ended = term.FinishedAt.Time
	}
	if pod.DeletionTimestamp != nil && pod.Spec.NodeName == "" && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		// Never placed, so nothing runs and no kubelet will report: gone already.
		o.state, o.reason = podLost, ReasonPodLost
		o.message = fmt.Sprintf("worker Pod %s was deleted before it was placed on a node", pod.Name)
		o.ended = pod.DeletionTimestamp.Time
		return o
	}
	if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		o.state, o.reason = podTerminating, ReasonPodTerminating
		o.message = fmt.Sprintf("worker Pod %s is being deleted", pod.Name)
		o.since = pod.DeletionTimestamp.Time
		return o
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		if term == nil {
			o.state, o.reason, o.message = podFailed, ReasonUnparsableResult, "the worker container has no termination state"
			return o
		}
		r, err := vmafxv1.ParseWorkerResult([]byte(term.Message))
		switch {
		case err != nil:
			o.state, o.reason, o.message = podFailed, ReasonUnparsableResult, oneLine(err.Error())
		case r.Error != nil:
			o.state, o.reason, o.message = podFailed, r.Error.Reason, oneLine(r.Error.Message)
		default:
			o.state, o.result = podSucceeded, r
		}
	case corev1.PodFailed:
		o.state = podFailed
		if why, lost := lostPod(pod, term); lost {
			o.state, o.reason, o.message = podLost, ReasonPodLost, why
			break
		}
		o.reason, o.message = failureReason(pod, term)
	case corev1.PodRunning:
		o.state, o.reason = podRunning, ReasonStarted
		o.message = fmt.Sprintf("worker Pod %s is scoring on node %s", pod.Name, pod.Spec.NodeName)
	default:
		pending(pod, &o)
	}
	if o.ended.IsZero() && (o.state == podFailed || o.state == podSucceeded || o.state == podLost) {
		o.ended = lastTransition(pod)
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
		return oneLine(fmt.Sprintf("the kubelet on node %s refused or evicted worker Pod %s (%s): %s", pod.Spec.NodeName, pod.Name, r, pod.Status.Message)), true
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return oneLine(fmt.Sprintf("worker Pod %s was disrupted (%s): %s", pod.Name, c.Reason, c.Message)), true
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
func pending(pod *corev1.Pod, o *observation) {
	o.state = podPending
	o.since = pod.CreationTimestamp.Time
	if pod.Spec.NodeName == "" {
		o.reason, o.message = scheduling(pod)
		return
	}
	o.bound = true
	o.reason, o.message = ReasonScheduled, fmt.Sprintf("worker Pod %s is bound to node %s", pod.Name, pod.Spec.NodeName)
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			o.since = c.LastTransitionTime.Time
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
		o.reason = w.Reason
		o.message = oneLine(fmt.Sprintf("worker Pod %s on node %s cannot start: %s", pod.Name, pod.Spec.NodeName, msg))
		return
	}
}

// failureReason explains a Failed Pod: the kubelet's Pod-level reason when it ended the
// Pod (DeadlineExceeded: the worker then only reports that it was cancelled), else the
// worker's own reason, else the container's exit.
func failureReason(pod *corev1.Pod, term *corev1.ContainerStateTerminated) (string, string) {
	if pod.Status.Reason != "" {
		return pod.Status.Reason, oneLine(pod.Status.Message)
	}
	if term != nil {
		if r, err := vmafxv1.ParseWorkerResult([]byte(term.Message)); err == nil && r.Error != nil {
			return r.Error.Reason, oneLine(r.Error.Message)
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
		return reason, oneLine(msg)
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
		return corev1.PodReasonSchedulingGated, oneLine(fmt.Sprintf("worker Pod %s is queued until its scheduling gates are lifted: %s", pod.Name, strings.Join(names, ", ")))
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
		return c.Reason, oneLine(c.Message)
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

// oneLine folds s to one bounded line for status and events (text.OneLine).
func oneLine(s string) string { return text.OneLine(s, maxMessage) }
