package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

func ladderCondition(l *vmafxv1.VmafxLadder, typ string) string {
	c := meta.FindStatusCondition(l.Status.Conditions, typ)
	if c == nil {
		return "<none>"
	}
	return string(c.Status) + "/" + c.Reason
}

// waitForRelease waits until the operator has released the result finalizer of Pod name.
func waitForRelease(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, 20*time.Second, "pod "+name+" released", func() (bool, error) {
		p := &corev1.Pod{}
		if err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return false, err
		}
		return !slices.Contains(p.Finalizers, vmafxv1.FinalizerResult), nil
	})
}

// oneRungLadder is a ladder of one x264 rung at 360p, crf 30, with spec.backoffLimit 1.
func oneRungLadder(ns, name string) *vmafxv1.VmafxLadder {
	return &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference:       "s3://media/title.mp4",
			Resolutions:     []vmafxv1.LadderResolution{{Height: 360}},
			Codecs:          []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{30}}},
			Output:          vmafxv1.OutputURI("s3://results/" + name),
			ScoringSettings: vmafxv1.ScoringSettings{BackoffLimit: ptr.To[int32](1)},
		},
	}
}

// TestLadderReportGoesThroughTheAttemptEngine: the ladder's Pods go through the attempt
// engine as a job's do. A used-up quota holds the encode back (PodRefused with the API
// server's words, FailedCreate) until there is room; the encode Pod carries the result
// finalizer until the rung records its encode. The report Pod: an eviction is lost and
// replaced without using backoffLimit (1 here), a failure is retried after the backoff,
// and a second failure spends backoffLimit: the ladder Succeeded with ReportWritten False,
// its counts in status, no fourth report Pod, and no Pod held by the finalizer.
func TestLadderReportGoesThroughTheAttemptEngine(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	setPodQuota(t, ns, 0)
	startOperator(t, operatorEnv(config.EnvMaxRetryBackoff, "1s"))
	create(t, oneRungLadder(ns, "rep"))
	l := waitForLadder(t, ns, "rep", "PodRefused=True/ExceededQuota", func(l *vmafxv1.VmafxLadder) bool {
		return ladderCondition(l, vmafxv1.LadderPodRefused) == "True/ExceededQuota"
	})
	if r := l.Status.Rungs; len(r) != 1 || r[0].Phase != vmafxv1.RungEncoding || r[0].EncodeAttempts != 0 || !strings.Contains(r[0].Message, "exceeded quota") {
		t.Errorf("rungs %+v; want one encoding rung, no attempt, the quota's words", r)
	}
	eventually(t, 10*time.Second, "FailedCreate event", func() (bool, error) {
		return slices.Contains(eventReasons(t, ns, "VmafxLadder", "rep"), "FailedCreate"), nil
	})
	setPodQuota(t, ns, 20)

	enc := waitForPod(t, ns, "rep-enc-360p-x264-crf30-1")
	if !slices.Contains(enc.Finalizers, vmafxv1.FinalizerResult) {
		t.Errorf("encode Pod finalizers %v, want %s", enc.Finalizers, vmafxv1.FinalizerResult)
	}
	kubeletBind(t, enc, "cpu-node", true)
	kubeletFinish(t, enc, 0, encodeMessage("s3://results/rep/360p-x264-crf30.mkv", 640, 360, 25, 10000))
	waitForRelease(t, ns, enc.Name)
	waitForLadder(t, ns, "rep", "PodRefused=False", func(l *vmafxv1.VmafxLadder) bool {
		return ladderCondition(l, vmafxv1.LadderPodRefused) == "False/PodCreated"
	})
	kubeletFinish(t, bindAndRun(t, ns, "rep-360p-x264-crf30", 1, "gpu-node"), 0, resultMessage(60, 25))

	first := waitForPod(t, ns, "rep-report-1")
	kubeletBind(t, first, "cpu-node", false)
	kubeletSetStatus(t, first, func(s *corev1.PodStatus) {
		s.Phase, s.Reason, s.Message = corev1.PodFailed, "Evicted", "The node was low on resource: memory."
	})
	second := waitForPod(t, ns, "rep-report-2")
	l = waitForLadder(t, ns, "rep", "the eviction counted as lost, the next report as attempt 2", func(l *vmafxv1.VmafxLadder) bool {
		return l.Status.ReportLost == 1 && l.Status.ReportAttempts == 2
	})
	if st := l.Status; st.Phase != vmafxv1.JobRunning || st.ReportFailures != 0 {
		t.Errorf("after the eviction: phase %s, %d report failures; want Running, none", st.Phase, st.ReportFailures)
	}
	waitForRelease(t, ns, first.Name)

	kubeletBind(t, second, "cpu-node", true)
	kubeletFinish(t, second, 1, `{"version":"vmafx.dev/ladder-report/v1","error":{"reason":"FetchFailed","message":"connection reset"}}`)
	third := waitForPod(t, ns, "rep-report-3")
	l = waitForLadder(t, ns, "rep", "the failure recorded", func(l *vmafxv1.VmafxLadder) bool { return l.Status.ReportAttempts == 3 })
	if st := l.Status; st.ReportFailures != 1 || st.ReportLost != 1 || st.Phase != vmafxv1.JobRunning {
		t.Errorf("after the failure: %d failures, %d lost, phase %s; want 1, 1, Running", st.ReportFailures, st.ReportLost, st.Phase)
	}
	if !slices.Contains(eventReasons(t, ns, "VmafxLadder", "rep"), "AttemptFailed") {
		t.Errorf("events %v, want AttemptFailed", eventReasons(t, ns, "VmafxLadder", "rep"))
	}

	kubeletBind(t, third, "cpu-node", true)
	kubeletFinish(t, third, 1, `{"version":"vmafx.dev/ladder-report/v1","error":{"reason":"FetchFailed","message":"connection reset"}}`)
	l = waitForLadder(t, ns, "rep", "Succeeded", func(l *vmafxv1.VmafxLadder) bool { return l.Status.Phase == vmafxv1.JobSucceeded })
	st := l.Status
	c := meta.FindStatusCondition(st.Conditions, vmafxv1.LadderReportWritten)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "ReportFailed" || !strings.Contains(c.Message, "backoffLimit 1 reached") ||
		!strings.Contains(c.Message, "the table and hull are in the status") {
		t.Errorf("ReportWritten %+v; want False/ReportFailed naming the spent backoffLimit", c)
	}
	if st.ReportAttempts != 3 || st.ReportFailures != 2 || st.ReportLost != 1 || st.Report != "" || len(st.Hull) != 1 {
		t.Errorf("status %+v; want 3 report attempts, 2 failed, 1 lost, no report, the hull", st)
	}
	for _, p := range []string{second.Name, third.Name} {
		waitForRelease(t, ns, p)
	}
	if podExists(t, ns, "rep-report-4") {
		t.Error("a fourth report Pod was made after backoffLimit was spent")
	}
}

// TestLadderRefusedPastThePendingDeadline: a ladder's Pod that the API server keeps
// refusing (a used-up quota) fails its step once spec.pendingDeadlineSeconds has passed
// since the first refusal, as a job's does; a ladder whose every rung failed is Failed.
func TestLadderRefusedPastThePendingDeadline(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	setPodQuota(t, ns, 0)
	startOperator(t, operatorEnv(config.EnvMaxRetryBackoff, "1s"))
	l := oneRungLadder(ns, "deadline")
	l.Spec.PendingDeadlineSeconds = ptr.To[int64](2)
	create(t, l)
	l = waitForLadder(t, ns, "deadline", "Failed", func(l *vmafxv1.VmafxLadder) bool { return l.Status.Phase == vmafxv1.JobFailed })
	if r := l.Status.Rungs[0]; r.Phase != vmafxv1.RungFailed || r.EncodeAttempts != 0 || !strings.Contains(r.Message, "pending deadline") ||
		!strings.Contains(r.Message, "exceeded quota") {
		t.Errorf("rung %+v; want failed without an attempt, naming the quota and the pending deadline", r)
	}
	if !slices.Contains(eventReasons(t, ns, "VmafxLadder", "deadline"), "PendingDeadlineExceeded") {
		t.Errorf("events %v, want PendingDeadlineExceeded", eventReasons(t, ns, "VmafxLadder", "deadline"))
	}
}

// TestLadderDeletedReleasesItsPods: a ladder deleted while its encode runs lets its Pod
// go: the result finalizer is released, so that the garbage collector (which does not run
// here) can remove the Pod rather than leave it Terminating for good.
func TestLadderDeletedReleasesItsPods(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	l := oneRungLadder(ns, "gone")
	create(t, l)
	enc := waitForPod(t, ns, "gone-enc-360p-x264-crf30-1")
	if !slices.Contains(enc.Finalizers, vmafxv1.FinalizerResult) {
		t.Fatalf("encode Pod finalizers %v, want %s", enc.Finalizers, vmafxv1.FinalizerResult)
	}
	kubeletBind(t, enc, "cpu-node", true)
	if err := testenv.Client().Delete(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	waitForRelease(t, ns, enc.Name)
}
