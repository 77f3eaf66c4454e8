package job

import (
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestStartedOnly: the reconcile that creates an attempt's Pod skips its status write
// only when the write would say no more than the next reconcile, which sees the Pod.
func TestStartedOnly(t *testing.T) {
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
	setRetrying(retrying, observation{Reason: "Internal", Message: "out of memory"}, 1, limitNow)
	refused := fresh.DeepCopy()
	setCondition(refused, vmafxv1.JobPodRefused, true, ReasonExceededQuota, "exceeded quota")
	waiting := limitJob("j", 0, 0, true)
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
			if got := startedOnly(tc.before, start(tc.before)); got != tc.skip {
				t.Errorf("startedOnly = %v, want %v", got, tc.skip)
			}
		})
	}
	failed := start(fresh)
	setFailed(failed, ReasonPodRefused, "refused", limitNow)
	if startedOnly(fresh, failed) {
		t.Error("startedOnly skips the write of a failure")
	}
}
