package job

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
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
	if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		o.state, o.reason = podTerminating, ReasonPodTerminating
		o.message = fmt.Sprintf("worker Pod %s is being deleted", pod.Name)
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
		if pod.Status.Reason == "Evicted" || pod.Status.Reason == "Preempting" || isDisrupted(pod) {
			o.state = podLost
			o.reason = ReasonPodLost
			o.message = oneLine(fmt.Sprintf("worker Pod %s was evicted: %s", pod.Name, pod.Status.Message))
			return o
		}
		o.reason, o.message = failureReason(pod, term)
	case corev1.PodRunning:
		o.state, o.reason = podRunning, ReasonStarted
		o.message = fmt.Sprintf("worker Pod %s is scoring on node %s", pod.Name, pod.Spec.NodeName)
	default:
		o.state = podPending
		o.reason, o.message = scheduling(pod)
	}
	if o.ended.IsZero() && (o.state == podFailed || o.state == podSucceeded) {
		o.ended = lastTransition(pod)
	}
	return o
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
// cannot be placed carries the scheduler's own words.
func scheduling(pod *corev1.Pod) (string, string) {
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.PodScheduled {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return ReasonScheduled, fmt.Sprintf("worker Pod %s is bound to node %s", pod.Name, pod.Spec.NodeName)
		}
		reason := c.Reason
		if reason == "" {
			reason = ReasonWaitingForScheduler
		}
		return reason, oneLine(c.Message)
	}
	if pod.Spec.NodeName != "" {
		return ReasonScheduled, fmt.Sprintf("worker Pod %s is bound to node %s", pod.Name, pod.Spec.NodeName)
	}
	return ReasonWaitingForScheduler, fmt.Sprintf("worker Pod %s is waiting for %s", pod.Name, vmafxv1.SchedulerName)
}

func isDisrupted(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func workerTermination(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if cs.Name == containerName && cs.State.Terminated != nil {
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

// oneLine folds s to one bounded line for status and events.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxMessage {
		s = s[:maxMessage-3] + "..."
	}
	return s
}
