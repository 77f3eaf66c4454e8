package attempt

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

var (
	t0     = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	policy = Policy{BackoffLimit: 2, RetryBackoff: 10 * time.Second, MaxRetryBackoff: 5 * time.Minute,
		PendingDeadline: 10 * time.Minute, StartTimeout: 5 * time.Minute, TerminatingTimeout: 2 * time.Minute}
)

// decided is the part of a Decision the table compares.
type decided struct {
	Action, Outcome                        Action
	Reason                                 string
	After                                  time.Duration
	RetryAt                                time.Time
	Requeue, Delete, ForceDelete, Deleting bool
	Events                                 []string
}

func summary(d Decision[*vmafxv1.WorkerResult]) decided {
	s := decided{Action: d.Action, Outcome: d.Outcome, Reason: d.Reason, After: d.After, RetryAt: d.RetryAt, Requeue: d.Requeue, Delete: d.Delete, ForceDelete: d.ForceDelete, Deleting: d.Deleting}
	for _, e := range d.Events {
		s.Events = append(s.Events, e.Reason)
	}
	return s
}

// podAt is attempt 2's Pod, created at created, in phase, placed on node (empty: not).
func podAt(created time.Time, phase corev1.PodPhase, node string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "j-2", CreationTimestamp: metav1.NewTime(created)}, Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: phase}}
	if node != "" {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)}}
	}
	return p
}

// ended is a finished attempt 2 Pod whose worker exited at at with msg.
func ended(phase corev1.PodPhase, at time.Time, msg string) *corev1.Pod {
	p := terminated(phase, 1, msg)
	p.Name = "j-2"
	p.Status.ContainerStatuses[0].State.Terminated.FinishedAt = metav1.NewTime(at)
	return p
}

func terminatingSince(graceEnd time.Time) *corev1.Pod {
	p := podAt(t0.Add(-time.Hour), corev1.PodRunning, "n1")
	at := metav1.NewTime(graceEnd)
	p.DeletionTimestamp = &at
	return p
}

func TestDecide(t *testing.T) {
	good := result(vmafxv1.WorkerResult{Score: 90, Min: 80, Max: 95, Frames: 3, Backend: "cpu", Model: "vmaf_v0.6.1"})
	crash := result(vmafxv1.WorkerResult{Error: &vmafxv1.WorkerError{Reason: "Internal", Message: "out of memory"}})
	bad := result(vmafxv1.WorkerResult{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonBadInput, Message: "truncated"}})
	following := Record{N: 2, Failed: 1}
	cases := []struct {
		name string
		rec  Record
		pod  *corev1.Pod
		want decided
	}{
		{"no attempt yet: start the first", Record{}, nil, decided{Action: Start}},

		// Attempt 2 runs; its outcome is not recorded yet.
		{"its Pod gone without a record: lost, retried at once", following, nil,
			decided{Action: RecordLoss, Outcome: RecordLoss, Requeue: true, Events: []string{ReasonPodLost}}},
		{"the eleventh lost Pod: give up", Record{N: 12, Failed: 1, Lost: 10}, nil,
			decided{Action: Fail, Outcome: RecordLoss, Reason: ReasonTooManyLost, Events: []string{ReasonPodLost}}},
		{"waiting for the scheduler: look again when it has been silent a minute", following, podAt(t0.Add(-10*time.Second), corev1.PodPending, ""),
			decided{Action: Wait, After: 50*time.Second + RecheckMargin}},
		{"not placed within the pending deadline: delete it, fail", following, podAt(t0.Add(-11*time.Minute), corev1.PodPending, ""),
			decided{Action: Fail, Reason: ReasonPendingDeadline, Delete: true, Events: []string{ReasonPendingDeadline}}},
		{"placed, not started: wait for the start timeout", following, podAt(t0.Add(-time.Minute), corev1.PodPending, "n1"),
			decided{Action: Wait, After: 4*time.Minute + RecheckMargin}},
		{"placed and not started in time: delete it, a failure", following, podAt(t0.Add(-6*time.Minute), corev1.PodPending, "n1"),
			decided{Action: RecordFailure, Outcome: RecordFailure, Reason: ReasonStartTimeout, Delete: true, RetryAt: t0.Add(20 * time.Second), After: 20*time.Second + RecheckMargin,
				Events: []string{ReasonAttemptFailed}}},
		{"running", following, podAt(t0.Add(-time.Minute), corev1.PodRunning, "n1"), decided{Action: Wait}},
		{"succeeded", following, ended(corev1.PodSucceeded, t0.Add(-time.Second), good), decided{Action: Succeed}},
		{"failed: retried after the backoff from its end", following, ended(corev1.PodFailed, t0.Add(-5*time.Second), crash),
			decided{Action: RecordFailure, Outcome: RecordFailure, Reason: "Internal", RetryAt: t0.Add(15 * time.Second), After: 15*time.Second + RecheckMargin, Events: []string{ReasonAttemptFailed}}},
		{"failed on bad input: not retried", following, ended(corev1.PodFailed, t0, bad),
			decided{Action: Fail, Outcome: RecordFailure, Reason: vmafxv1.ReasonBadInput, Events: []string{ReasonNotRetried}}},
		{"failed once more than the backoff limit allows", Record{N: 3, Failed: 2}, ended(corev1.PodFailed, t0, crash),
			decided{Action: Fail, Outcome: RecordFailure, Reason: "Internal", Events: []string{ReasonBackoffLimit}}},
		{"evicted: lost", following, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "j-2"}, Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}},
			decided{Action: RecordLoss, Outcome: RecordLoss, Requeue: true, Events: []string{ReasonPodLost}}},
		{"being deleted within its timeout: wait", following, terminatingSince(t0.Add(-time.Minute)),
			decided{Action: Wait, Deleting: true, After: time.Minute + RecheckMargin}},
		{"Terminating past its timeout: its node is gone; lost, force-deleted", following, terminatingSince(t0.Add(-3 * time.Minute)),
			decided{Action: RecordLoss, Outcome: RecordLoss, Requeue: true, ForceDelete: true, Events: []string{ReasonPodLost}}},

		// Attempt 2's outcome is recorded: the next one comes.
		{"recorded, its Pod gone: start the next", Record{N: 2, Lost: 2, Recorded: true}, nil, decided{Action: Start}},
		{"recorded failure within the backoff: wait", Record{N: 2, Failed: 2, Recorded: true, LastFailed: true}, ended(corev1.PodFailed, t0.Add(-5*time.Second), crash),
			decided{Action: Wait, After: 15*time.Second + RecheckMargin}},
		{"recorded failure, backoff passed: start the next", Record{N: 2, Failed: 1, Recorded: true, LastFailed: true}, ended(corev1.PodFailed, t0.Add(-time.Minute), crash),
			decided{Action: Start}},
		{"recorded, its Pod still pending (the operator ended it): delete it first", Record{N: 2, Failed: 1, Recorded: true, LastFailed: true},
			podAt(t0.Add(-6*time.Minute), corev1.PodPending, "n1"), decided{Action: Wait, Delete: true, Deleting: true, After: 2 * time.Minute}},
		{"recorded, its Pod Terminating past its timeout: force-delete it", Record{N: 2, Lost: 2, Recorded: true}, terminatingSince(t0.Add(-3 * time.Minute)),
			decided{Action: Wait, ForceDelete: true, Requeue: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(policy, tc.rec, Attempt{Pod: "j-2"}, tc.pod, parseWorker, t0)
			if diff := cmp.Diff(tc.want, summary(d)); diff != "" {
				t.Errorf("(-want +got):\n%s\nmessage: %s / %s", diff, d.Message, d.Obs.Message)
			}
			if d.Action == Succeed && (d.Obs.Result == nil || d.Obs.Result.Score != 90) {
				t.Errorf("result %+v", d.Obs.Result)
			}
		})
	}
}

func TestDecideNamesTheStep(t *testing.T) {
	crash := result(vmafxv1.WorkerResult{Error: &vmafxv1.WorkerError{Reason: "Internal", Message: "out of memory"}})
	d := Decide(policy, Record{N: 3, Failed: 2}, Attempt{Pod: "j-c3-3", Step: "chunk 3"}, ended(corev1.PodFailed, t0, crash), parseWorker, t0)
	if want := "chunk 3, attempt 3, failed (Internal): out of memory; backoffLimit 2 reached"; d.Message != want {
		t.Errorf("message %q, want %q", d.Message, want)
	}
	d = Decide(policy, Record{N: 12, Lost: 10}, Attempt{Pod: "j-c3-12", Step: "chunk 3"}, nil, parseWorker, t0)
	if want := "11 worker Pods of chunk 3 were lost (the last: worker Pod j-c3-12 was deleted); giving up"; d.Message != want {
		t.Errorf("message %q, want %q", d.Message, want)
	}
}

func TestRefused(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	quota := apierrors.NewForbidden(pods, "j-1", errors.New("exceeded quota: workers, requested: pods=1, used: pods=2, limited: pods=2"))
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "j-1", field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), "x", "too long")})
	terminating := apierrors.NewForbidden(pods, "j-1", errors.New("namespace is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	type got struct {
		Gone, Err, Fail bool
		Reason, FailRsn string
		After           time.Duration
	}
	cases := []struct {
		name  string
		err   error
		since time.Time
		want  got
	}{
		{"first quota refusal: retry after the backoff", quota, time.Time{}, got{Reason: ReasonExceededQuota, After: 10 * time.Second}},
		{"refused for three minutes: the wait grows with it", quota, t0.Add(-3 * time.Minute), got{Reason: ReasonExceededQuota, After: 3 * time.Minute}},
		{"refused past the pending deadline, from the first refusal: fail", quota, t0.Add(-10 * time.Minute),
			got{Reason: ReasonExceededQuota, Fail: true, FailRsn: ReasonPendingDeadline}},
		{"invalid: fail at once", invalid, time.Time{}, got{Reason: "Invalid", Fail: true, FailRsn: ReasonPodRefused}},
		{"namespace going", terminating, time.Time{}, got{Gone: true}},
		{"no answer: an error to retry", apierrors.NewServerTimeout(pods, "create", 1), time.Time{}, got{Reason: "ServerTimeout", Err: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Refused(policy, "j-1", tc.err, time.Hour, tc.since, t0)
			if diff := cmp.Diff(tc.want, got{Gone: r.Gone, Err: r.Err != nil, Fail: r.Fail, Reason: r.Reason, FailRsn: r.FailReason, After: r.After}); diff != "" {
				t.Errorf("(-want +got):\n%s\nmessage: %s", diff, r.Message)
			}
		})
	}
}
