package attempt

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

func terminated(phase corev1.PodPhase, code int32, msg string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "j-1"},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: workerpod.ContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error", Message: msg}}}}},
	}
}

func result(r vmafxv1.WorkerResult) string {
	r.Version = vmafxv1.ResultVersion
	b, _ := json.Marshal(r)
	return string(b)
}

// deleted marks pod deleted with the 10 s grace period of worker Pods, its deletion asked
// for at the worker's exit plus offset (negative: while the worker ran).
func deleted(pod *corev1.Pod, offset time.Duration) *corev1.Pod {
	exit := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range pod.Status.ContainerStatuses {
		if t := pod.Status.ContainerStatuses[i].State.Terminated; t != nil {
			t.FinishedAt = metav1.NewTime(exit)
		}
	}
	grace := int64(10)
	at := metav1.NewTime(exit.Add(offset + 10*time.Second))
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &at, &grace
	return pod
}

func TestObserve(t *testing.T) {
	good := result(vmafxv1.WorkerResult{Score: 90, Min: 80, Max: 95, Frames: 3, Backend: "cpu", Model: "vmaf_v0.6.1"})
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cases := []struct {
		name   string
		pod    *corev1.Pod
		state  State
		reason string
	}{
		{"pending, no condition", &corev1.Pod{}, Pending, ReasonWaitingForScheduler},
		{"unschedulable", &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
			Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes"}}}}, Pending, "Unschedulable"},
		{"queued by Kueue", &corev1.Pod{Spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: vmafxv1.KueueAdmissionGate}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}}},
			Pending, corev1.PodReasonSchedulingGated},
		{"admitted by Kueue, the API server's gated mark not yet replaced", &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
			Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}}}, Pending, ReasonWaitingForScheduler},
		{"bound, not started", &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}}, Pending, ReasonScheduled},
		{"running", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, Running, ReasonStarted},
		{"succeeded with a result", terminated(corev1.PodSucceeded, 0, good), Succeeded, ""},
		{"succeeded with garbage", terminated(corev1.PodSucceeded, 0, "VMAF score: 90"), Failed, ReasonUnparsableResult},
		{"succeeded with an out-of-range score", terminated(corev1.PodSucceeded, 0, result(vmafxv1.WorkerResult{Score: 140, Min: 1, Max: 150, Frames: 2})), Failed, ReasonUnparsableResult},
		{"succeeded with another version", terminated(corev1.PodSucceeded, 0, `{"version":"vmafx.dev/result/v0","score":90,"frames":1}`), Failed, ReasonUnparsableResult},
		{"failed with the worker's reason", terminated(corev1.PodFailed, 2, result(vmafxv1.WorkerResult{Error: &vmafxv1.WorkerError{Reason: "BadInput", Message: "truncated"}})), Failed, "BadInput"},
		{"failed with log lines", terminated(corev1.PodFailed, 137, "killed"), Failed, "Error"},
		{"deadline exceeded", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded"}}, Failed, "DeadlineExceeded"},
		{"deadline exceeded while the worker reports its cancellation", func() *corev1.Pod {
			p := terminated(corev1.PodFailed, 1, result(vmafxv1.WorkerResult{Error: &vmafxv1.WorkerError{Reason: "Internal", Message: "scoring cancelled"}}))
			p.Status.Reason = "DeadlineExceeded"
			return p
		}(), Failed, "DeadlineExceeded"},
		{"evicted", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}}, Lost, ReasonPodLost},
		{"refused at admission by the kubelet", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "UnexpectedAdmissionError",
			Message: "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices vmafx.dev/slot"}}, Lost, ReasonPodLost},
		{"out of slots at admission", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OutOfvmafx.dev/slot"}}, Lost, ReasonPodLost},
		{"node shutdown", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Terminated"}}, Lost, ReasonPodLost},
		{"preempted", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget,
			Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"}}}}, Lost, ReasonPodLost},
		// The kubelet's handling of a deleted Pod: it stops the worker (which reports its
		// cancellation) and marks the Pod Failed before the Pod goes away.
		{"deleted while it ran, then failed by the kubelet", deleted(terminated(corev1.PodFailed, 1,
			result(vmafxv1.WorkerResult{Error: &vmafxv1.WorkerError{Reason: "Internal", Message: "scoring cancelled (context canceled)"}})), -2*time.Second), Lost, ReasonPodLost},
		{"deleted, failed without a container state", deleted(&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}}, 0), Lost, ReasonPodLost},
		{"failed on its own before it was deleted", deleted(terminated(corev1.PodFailed, 2,
			result(vmafxv1.WorkerResult{Error: &vmafxv1.WorkerError{Reason: "BadInput", Message: "truncated"}})), time.Minute), Failed, "BadInput"},
		{"deleted after it succeeded", deleted(terminated(corev1.PodSucceeded, 0, good), 0), Succeeded, ""},
		{"bound, image pull backing off", &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{
			ContainerStatuses: []corev1.ContainerStatus{{Name: workerpod.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "ImagePullBackOff", Message: `Back-off pulling image "vmafx-worker:nope"`}}}}}}, Pending, "ImagePullBackOff"},
		{"bound, container being created", &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{
			ContainerStatuses: []corev1.ContainerStatus{{Name: workerpod.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "ContainerCreating"}}}}}}, Pending, ReasonScheduled},
		{"deleted before it was placed", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}, Lost, ReasonPodLost},
		{"being deleted", &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}, ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}, Terminating, ReasonPodTerminating},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Observe(tc.pod, parseWorker)
			if diff := cmp.Diff([]any{tc.state, tc.reason}, []any{o.State, o.Reason}); diff != "" {
				t.Errorf("(-want +got):\n%s\nmessage: %s", diff, o.Message)
			}
			if o.State == Succeeded && (o.Result == nil || o.Result.Score != 90) {
				t.Errorf("result %+v", o.Result)
			}
		})
	}
}

// parseWorker reads a scoring worker's result, as the job controller does.
func parseWorker(b []byte) (*vmafxv1.WorkerResult, string, string, error) {
	r, err := vmafxv1.ParseWorkerResult(b)
	if err != nil {
		return nil, "", "", err
	}
	if r.Error != nil {
		return r, r.Error.Reason, r.Error.Message, nil
	}
	return r, "", "", nil
}

func TestBackoffDoublesUpToTheMaximum(t *testing.T) {
	p := Policy{RetryBackoff: 10 * time.Second, MaxRetryBackoff: time.Minute}
	var got []time.Duration
	for f := int32(1); f <= 5; f++ {
		got = append(got, p.Backoff(f))
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOneLineBoundsMessages(t *testing.T) {
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'x'
	}
	if got := OneLine("a\n  b\tc"); got != "a b c" {
		t.Errorf("OneLine folds to %q", got)
	}
	if got := OneLine(string(long)); len(got) != MaxMessage {
		t.Errorf("OneLine kept %d bytes, want %d", len(got), MaxMessage)
	}
}

// TestWaitsForSlot: a verdict that every node's slots are taken, in kube-scheduler's
// words, is a wait for a slot; any other reason on any node, or another form, is not.
func TestWaitsForSlot(t *testing.T) {
	cases := []struct {
		reason, message string
		want            bool
	}{
		{"Unschedulable", "0/100 nodes are available: 100 Insufficient vmafx.dev/slot. preemption: 0/100 nodes are available: 100 No preemption victims found for incoming pod.", true},
		{"Unschedulable", "0/40 nodes are available: 30 Insufficient vmafx.dev/slot, 10 node(s) had no free vmafx.dev/slot.", true},
		{"Unschedulable", "0/1 nodes are available: 1 node(s) had no free vmafx.dev/slot.", true},
		{"Unschedulable", "0/4 nodes are available: 1 Insufficient memory, 3 Insufficient vmafx.dev/slot.", false},
		{"Unschedulable", "0/3 nodes are available: 2 node(s) had a stale VMAFX heartbeat (last 94s ago), 1 node(s) offer amd but the job needs cuda.", false},
		{"Unschedulable", "0/0 nodes are available: ", false},
		{"Unschedulable", `0/3 nodes are available: pod has an unknown vmafx.dev/backend "x".`, false},
		{"Unschedulable", "no nodes available to schedule pods", false},
		{"Unschedulable", "", false},
		{"SchedulingGated", "0/1 nodes are available: 1 Insufficient vmafx.dev/slot.", false},
	}
	for _, tc := range cases {
		if got := WaitsForSlot(tc.reason, tc.message); got != tc.want {
			t.Errorf("WaitsForSlot(%q, %q) = %v, want %v", tc.reason, tc.message, got, tc.want)
		}
	}
}
