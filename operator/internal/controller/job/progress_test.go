package job

import (
	"testing"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/attempt"
)

// TestProgressOnly: a young attempt's status write is held back only when it would show
// no more than the attempt's progress.
func TestProgressOnly(t *testing.T) {
	at := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	start := func(j *vmafxv1.VmafxJob) *vmafxv1.VmafxJob {
		after := j.DeepCopy()
		after.Status.Attempts++
		after.Status.PodName = PodName(after, after.Status.Attempts)
		after.Status.ObservedGeneration = 1
		clearRefused(after, after.Status.PodName)
		setPending(after, observation{Reason: ReasonWaitingForScheduler, Message: "worker Pod is waiting for vmafx-scheduler"})
		return after
	}
	fresh := &vmafxv1.VmafxJob{}
	fresh.Name = "j"
	retrying := fresh.DeepCopy()
	retrying.Status.Attempts, retrying.Status.FailedAttempts = 1, 1
	setRetrying(retrying, observation{Reason: "Internal", Message: "out of memory"}, 1, at)
	refused := fresh.DeepCopy()
	setCondition(refused, vmafxv1.JobPodRefused, true, ReasonExceededQuota, "exceeded quota")
	waiting := fresh.DeepCopy()
	waiting.Status.Phase = vmafxv1.JobPending
	setPending(waiting, observation{Reason: ReasonNamespaceLimit, Message: "waiting"})
	cases := []struct {
		name   string
		before *vmafxv1.VmafxJob
		skip   bool
	}{
		{"a new job's first Pod", fresh, true},
		{"the retry after a failure", retrying, true},
		{"the Pod after a refusal: PodRefused turns False at once", refused, false},
		{"the Pod after a wait for the namespace's limit: the jobs behind see it go at once", waiting, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := progressOnly(tc.before, start(tc.before)); got != tc.skip {
				t.Errorf("startedOnly = %v, want %v", got, tc.skip)
			}
		})
	}
	failed := start(fresh)
	setFailed(failed, ReasonPodRefused, "refused", at)
	if progressOnly(fresh, failed) {
		t.Error("progressOnly holds back a failure")
	}
	pending := start(fresh)
	running := pending.DeepCopy()
	running.Status.Node, running.Status.StartTime = "n1", timePtr(at)
	setRunning(running, observation{Node: "n1", Message: "scoring"})
	if !progressOnly(pending, running) {
		t.Error("progressOnly does not hold back Running")
	}
	lost := pending.DeepCopy()
	lost.Status.LostAttempts = 1
	setLost(lost, 1, "evicted")
	if progressOnly(pending, lost) {
		t.Error("progressOnly holds back a lost attempt")
	}
	done := running.DeepCopy()
	setSucceeded(done, observation{Node: "n1", Result: &vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Score: 90, Min: 80, Max: 95, Frames: 3}}, at)
	if progressOnly(running, done) {
		t.Error("progressOnly holds back the result")
	}
}

// TestShowAfter: a job's first state shown, when it only says the Pod waits its turn (for
// the scheduler, for a slot, or bound for its kubelet with no reason given), shows after
// queuedDelay; a reason, the start, or any change once the job is shown, after
// progressDelay.
func TestShowAfter(t *testing.T) {
	cases := []struct {
		name  string
		o     observation
		shown bool
		want  time.Duration
	}{
		{"waiting for the scheduler", observation{Reason: ReasonWaitingForScheduler}, false, queuedDelay},
		{"bound, not started, no reason", observation{Bound: true, Reason: ReasonScheduled}, false, queuedDelay},
		{"unschedulable, in the scheduler's words", observation{Reason: "Unschedulable", Message: "0/3 nodes are available: 3 node(s) offer amd but the job needs cuda."}, false, progressDelay},
		{"every slot taken", observation{Reason: "Unschedulable", Message: "0/40 nodes are available: 30 Insufficient vmafx.dev/slot, 10 node(s) had no free vmafx.dev/slot. preemption: 0/40 nodes are available: 40 No preemption victims found for incoming pod."}, false, queuedDelay},
		{"every slot taken, after the status showed the job", observation{Reason: "Unschedulable", Message: "0/4 nodes are available: 4 Insufficient vmafx.dev/slot."}, true, progressDelay},
		{"slots taken and a stale heartbeat", observation{Reason: "Unschedulable", Message: "0/4 nodes are available: 1 node(s) had a stale VMAFX heartbeat (last 94s ago), 3 Insufficient vmafx.dev/slot."}, false, progressDelay},
		{"gated by Kueue", observation{Reason: "SchedulingGated"}, false, progressDelay},
		{"bound, the image cannot be pulled", observation{Bound: true, Reason: "ImagePullBackOff"}, false, progressDelay},
		{"running", observation{State: attempt.Running, Reason: ReasonStarted}, false, progressDelay},
		{"the gate lifted after the status showed it", observation{Reason: ReasonWaitingForScheduler}, true, progressDelay},
		{"bound after the status showed the wait", observation{Bound: true, Reason: ReasonScheduled}, true, progressDelay},
		{"a retry's next attempt", observation{Reason: ReasonWaitingForScheduler}, true, progressDelay},
	}
	for _, tc := range cases {
		if got := showAfter(tc.o, tc.shown); got != tc.want {
			t.Errorf("%s: showAfter = %v, want %v", tc.name, got, tc.want)
		}
	}
}
