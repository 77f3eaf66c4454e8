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
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestComparisonAdoptsOnlyItsOwnJobs: a VmafxJob created beforehand under the name the
// comparison gives an input's job (its result whatever its author made it) is not
// adopted: that input fails, naming the job. One left by an earlier comparison of the
// same name is waited for until it goes, then the comparison makes its own.
func TestComparisonAdoptsOnlyItsOwnJobs(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	// The squatter's job, with the label a comparison's jobs carry.
	squat := newJob(ns, "cmp-d1")
	squat.Labels = map[string]string{vmafxv1.LabelComparison: "cmp"}
	create(t, squat)
	// A job of an earlier comparison "cmp" that the garbage collector (not running here)
	// has yet to remove.
	stale := newJob(ns, "cmp-d2")
	stale.OwnerReferences = []metav1.OwnerReference{{APIVersion: vmafxv1.GroupVersion.String(), Kind: "VmafxComparison", Name: "cmp",
		UID: "00000000-0000-0000-0000-000000000001", Controller: ptr.To(true)}}
	create(t, stale)
	create(t, &vmafxv1.VmafxComparison{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cmp"},
		Spec: vmafxv1.VmafxComparisonSpec{
			Reference: "https://media.example.com/ref.y4m",
			Distorted: []vmafxv1.ComparisonInput{{URI: "https://media.example.com/a.mp4"}, {URI: "https://media.example.com/b.mp4"}},
		},
	})
	c := waitForComparison(t, ns, "cmp", "d1 failed, d2 waiting", func(c *vmafxv1.VmafxComparison) bool {
		return len(c.Status.Results) == 2 && c.Status.Results[0].Phase == vmafxv1.JobFailed && strings.Contains(c.Status.Results[1].Message, "waiting")
	})
	if msg := c.Status.Results[0].Message; !strings.Contains(msg, "VmafxJob cmp-d1") || !strings.Contains(msg, "not adopted") {
		t.Errorf("d1's message %q; want it to name the job and say it is not adopted", msg)
	}
	if msg := c.Status.Results[1].Message; !strings.Contains(msg, "cmp-d2") {
		t.Errorf("d2's message %q; want it to name the job it waits for", msg)
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, vmafxv1.ComparisonFailed); cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "d1") {
		t.Errorf("Failed condition %+v, want True naming d1", cond)
	}
	eventually(t, 10*time.Second, "a JobNameTaken event", func() (bool, error) {
		return slices.Contains(eventReasons(t, ns, "VmafxComparison", "cmp"), "JobNameTaken"), nil
	})
	// Its result must never reach the comparison.
	kubeletFinish(t, bindAndRun(t, ns, "cmp-d1", 1, "node-a"), 0, resultMessage(99, 10))

	// The garbage collector's part: the stale job and its worker Pod go.
	waitForPod(t, ns, "cmp-d2-1")
	if err := testenv.Client().Delete(context.Background(), stale); err != nil {
		t.Fatal(err)
	}
	for _, p := range workerPods(t, ns, "cmp-d2") {
		if !metav1.IsControlledBy(&p, stale) {
			continue // the comparison's own job's, already
		}
		if err := testenv.Client().Delete(context.Background(), &p, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	cmpObj := getComparison(t, ns, "cmp")
	own := &vmafxv1.VmafxJob{}
	eventually(t, 20*time.Second, "the comparison's own cmp-d2", func() (bool, error) {
		if err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cmp-d2"}, own); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return metav1.IsControlledBy(own, cmpObj), nil
	})
	// Its worker Pod: attempt 1, or a later one if the stale job's Pod of that name was
	// still going when it started.
	var pod *corev1.Pod
	eventually(t, 20*time.Second, "a worker Pod of the comparison's own cmp-d2", func() (bool, error) {
		for _, p := range workerPods(t, ns, "cmp-d2") {
			if metav1.IsControlledBy(&p, own) && p.DeletionTimestamp == nil {
				pod = &p
				return true, nil
			}
		}
		return false, nil
	})
	kubeletBind(t, pod, "node-a", true)
	kubeletFinish(t, pod, 0, resultMessage(80, 10))
	c = waitForComparison(t, ns, "cmp", "Failed", func(c *vmafxv1.VmafxComparison) bool { return c.Status.Phase == vmafxv1.JobFailed })
	if d1, d2 := c.Status.Results[0], c.Status.Results[1]; d1.Score != "" || d2.Phase != vmafxv1.JobSucceeded || c.Status.Best != "d2" {
		t.Errorf("results %+v, best %q; want d1 failed without a score, d2 scored", c.Status.Results, c.Status.Best)
	}
}

// TestLadderAdoptsOnlyItsOwnChildren: an encode Pod or a scoring VmafxJob created
// beforehand under the name the ladder gives it is not adopted: that rung fails, naming
// it, and the other rungs go on.
func TestLadderAdoptsOnlyItsOwnChildren(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	// A Pod under the first rung's encode Pod's name, labelled as the ladder's, whose
	// termination message would claim a tiny encode.
	create(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lad-enc-360p-x264-crf30-1", Labels: map[string]string{vmafxv1.LabelLadder: "lad"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "busybox"}}},
	})
	// A VmafxJob under the second rung's scoring job's name.
	create(t, newJob(ns, "lad-360p-x264-crf20"))
	create(t, &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lad"},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference:   "s3://media/title.mp4",
			Resolutions: []vmafxv1.LadderResolution{{Height: 360}},
			Codecs:      []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{30, 20}}},
			Output:      "s3://results/lad",
		},
	})
	pod := waitForPod(t, ns, "lad-enc-360p-x264-crf20-1")
	kubeletBind(t, pod, "cpu-node", true)
	kubeletFinish(t, pod, 0, encodeMessage("s3://results/lad/360p-x264-crf20.mkv", 640, 360, 25, 20000))
	l := waitForLadder(t, ns, "lad", "Failed (every rung failed)", func(l *vmafxv1.VmafxLadder) bool { return l.Status.Phase == vmafxv1.JobFailed })
	for i, want := range []string{"Pod lad-enc-360p-x264-crf30-1", "VmafxJob lad-360p-x264-crf20"} {
		r := l.Status.Rungs[i]
		if r.Phase != vmafxv1.RungFailed || !strings.Contains(r.Message, want) || !strings.Contains(r.Message, "not adopted") {
			t.Errorf("rung %s: %s %q; want Failed naming %s", r.Name, r.Phase, r.Message, want)
		}
		if r.Job != "" {
			t.Errorf("rung %s names job %s, which is not the ladder's", r.Name, r.Job)
		}
	}
	if slices.Contains(eventReasons(t, ns, "VmafxLadder", "lad"), "NameTaken") {
		return
	}
	eventually(t, 10*time.Second, "a NameTaken event", func() (bool, error) {
		return slices.Contains(eventReasons(t, ns, "VmafxLadder", "lad"), "NameTaken"), nil
	})
}
