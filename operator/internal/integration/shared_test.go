package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// renditionsMessage is a worker's result with one row per distorted video.
func renditionsMessage(rows ...vmafxv1.WorkerRendition) string {
	b, _ := json.Marshal(vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, WallSeconds: 0.4, Backend: "cpu", RequestedBackend: "cpu",
		Model: "vmaf_v0.6.1", ModelSHA256: "4d5c", KernelVersion: "test", Renditions: rows})
	return string(b)
}

func scoredRow(score float64, frames int) vmafxv1.WorkerRendition {
	return vmafxv1.WorkerRendition{Score: score, HarmonicMean: score - 0.5, Min: score - 3, Max: score + 2, Frames: frames, FPS: 60,
		Percentiles: &vmafxv1.WorkerPercentiles{P1: score - 2.5, P5: score - 2, P50: score},
		WorstFrames: []vmafxv1.WorkerFrame{{Index: frames - 1, VMAF: score - 3}, {Index: frames - 2, VMAF: score - 2.75}},
		Scenes:      &vmafxv1.WorkerScenes{Count: 1, Worst: &vmafxv1.WorkerScene{Start: 0, Frames: frames, Mean: score, Min: score - 3, P5: score - 2}},
		Report:      true}
}

// TestComparisonSharedReference: with sharedReference the distorted videos are scored in
// groups, in spec order, one VmafxJob (and Pod) per group with the others as its
// renditions; a row that failed to fetch is scored again by a retry that lists only it,
// one that is BadInput fails its entry alone, and each entry reads its own row.
func TestComparisonSharedReference(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	out := vmafxv1.OutputURI("s3://results/shr")
	create(t, &vmafxv1.VmafxComparison{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shr"},
		Spec: vmafxv1.VmafxComparisonSpec{
			Reference: "https://media.example.com/ref.y4m",
			Distorted: []vmafxv1.ComparisonInput{{Name: "a", URI: "https://media.example.com/a.mp4"}, {Name: "b", URI: "https://media.example.com/b.mp4"},
				{Name: "c", URI: "https://media.example.com/c.mp4"}, {Name: "d", URI: "https://media.example.com/d.mp4"}},
			Output:          &out,
			SharedReference: &vmafxv1.SharedReference{MaxRenditionsPerPod: 3},
		},
	})
	group := waitForJob(t, ns, "shr-a", "created", func(*vmafxv1.VmafxJob) bool { return true })
	want := []vmafxv1.JobRendition{{Distorted: "https://media.example.com/b.mp4", Output: ptr.To[vmafxv1.OutputURI]("s3://results/shr/b.json")},
		{Distorted: "https://media.example.com/c.mp4", Output: ptr.To[vmafxv1.OutputURI]("s3://results/shr/c.json")}}
	if len(group.Spec.Renditions) != 2 || group.Spec.Renditions[0].Distorted != want[0].Distorted || *group.Spec.Renditions[1].Output != *want[1].Output {
		t.Errorf("group job's renditions %+v, want %+v", group.Spec.Renditions, want)
	}
	if last := waitForJob(t, ns, "shr-d", "created", func(*vmafxv1.VmafxJob) bool { return true }); len(last.Spec.Renditions) != 0 {
		t.Errorf("the last group of one has renditions %+v", last.Spec.Renditions)
	}
	for _, name := range []string{"shr-b", "shr-c"} {
		if err := testenv.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &vmafxv1.VmafxJob{}); !apierrors.IsNotFound(err) {
			t.Errorf("job %s: %v, want none: its input is in group shr-a", name, err)
		}
	}

	// One Pod scores the group: its request lists the three videos.
	pod := bindAndRun(t, ns, "shr-a", 1, "node-a")
	if r := podRequest(t, pod).Score; r.Distorted != "https://media.example.com/a.mp4" || len(r.Renditions) != 2 ||
		r.Renditions[1] != (vmafxv1.RequestRendition{Distorted: "https://media.example.com/c.mp4", Output: "s3://results/shr/c.json"}) {
		t.Errorf("attempt 1 request %+v, want a, then b and c with their outputs", r)
	}
	kubeletFinish(t, pod, 0, renditionsMessage(scoredRow(90, 24),
		vmafxv1.WorkerRendition{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonFetchFailed, Message: "distorted: connection reset"}},
		vmafxv1.WorkerRendition{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonBadInput, Message: "distorted: not a video"}}))
	j := waitForJob(t, ns, "shr-a", "two rows and a retry", func(j *vmafxv1.VmafxJob) bool { return len(j.Status.Results) == 2 && j.Status.FailedAttempts == 1 })
	if j.Status.Score != "90.000000" || j.Status.Phase.Finished() {
		t.Errorf("after attempt 1: score %q, phase %s; want a's score kept and a retry", j.Status.Score, j.Status.Phase)
	}

	// The retry scores only b, the video without a row: a plain score.
	pod = bindAndRun(t, ns, "shr-a", 2, "node-b")
	if r := podRequest(t, pod).Score; r.Distorted != "https://media.example.com/b.mp4" || r.Output != "s3://results/shr/b.json" || len(r.Renditions) != 0 {
		t.Errorf("attempt 2 request %+v, want b alone", r)
	}
	kubeletFinish(t, pod, 0, resultMessage(85, 24))
	kubeletFinish(t, bindAndRun(t, ns, "shr-d", 1, "node-a"), 0, resultMessage(70, 24))

	c := waitForComparison(t, ns, "shr", "Failed with c's entry alone failed", func(c *vmafxv1.VmafxComparison) bool { return c.Status.Phase == vmafxv1.JobFailed })
	got := map[string]vmafxv1.ComparisonEntry{}
	for _, e := range c.Status.Results {
		got[e.Name] = e
	}
	for name, score := range map[string]string{"a": "90.000000", "b": "85.000000", "d": "70.000000"} {
		if e := got[name]; e.Phase != vmafxv1.JobSucceeded || e.Score != score || e.Frames != 24 || e.P5 == "" || e.WorstFrame == nil {
			t.Errorf("entry %s %+v, want Succeeded with %s over 24 frames", name, e, score)
		}
	}
	if e := got["c"]; e.Phase != vmafxv1.JobFailed || e.Job != "shr-a" || !strings.Contains(e.Message, "not a video") {
		t.Errorf("entry c %+v, want Failed, of job shr-a, saying why", e)
	}
	if c.Status.Succeeded != 3 || c.Status.Failed != 1 || c.Status.Best != "a" {
		t.Errorf("counts %d/%d, best %q; want 3/1, a", c.Status.Succeeded, c.Status.Failed, c.Status.Best)
	}
	j = getJob(t, ns, "shr-a")
	if j.Status.Phase != vmafxv1.JobSucceeded || len(j.Status.Results) != 3 || j.Status.Results[1].Distorted != "https://media.example.com/b.mp4" || j.Status.Score != "90.000000" {
		t.Errorf("group job: phase %s, rows %+v, score %q; want Succeeded, 3 rows in spec order, a's score", j.Status.Phase, j.Status.Results, j.Status.Score)
	}
	// a's row lists its worst frames, percentiles, scenes and report as a job of a alone
	// would, through the API server's schema.
	wantWorst := vmafxv1.JobWorst{Percentiles: &vmafxv1.JobPercentiles{P1: "87.500000", P5: "88.000000", P50: "90.000000"},
		WorstFrames: []vmafxv1.JobFrame{{Index: 23, VMAF: "87.000000"}, {Index: 22, VMAF: "87.250000"}},
		Scenes:      &vmafxv1.JobScenes{Count: 1, Worst: &vmafxv1.JobScene{Start: 0, Frames: 24, Mean: "90.000000", Min: "87.000000", P5: "88.000000"}},
		Report:      "s3://results/shr/a.json" + vmafxv1.ReportSuffix}
	if diff := cmp.Diff(wantWorst, j.Status.Results[0].JobWorst); diff != "" {
		t.Errorf("a's row (-want +got):\n%s", diff)
	}
}

// TestJobRenditionsFail: a job of two distorted videos whose every row failed fails with
// the first row's reason and keeps both rows; one whose result lacks a row fails as
// unparsable rather than record a score it cannot prove.
func TestJobRenditionsFail(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	two := func(s *vmafxv1.VmafxJobSpec) {
		s.Renditions = []vmafxv1.JobRendition{{Distorted: "https://media.example.com/b.mp4"}}
	}
	create(t, newJob(ns, "bad", two))
	create(t, newJob(ns, "short", two))
	kubeletFinish(t, bindAndRun(t, ns, "bad", 1, "node-a"), 2, func() string {
		b, _ := json.Marshal(vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Backend: "cpu", Model: "vmaf_v0.6.1",
			Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonBadInput, Message: "every rendition failed; the first: not a video"},
			Renditions: []vmafxv1.WorkerRendition{{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonBadInput, Message: "not a video"}},
				{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonBadInput, Message: "too short"}}}})
		return string(b)
	}())
	j := waitForJob(t, ns, "bad", "Failed", finished)
	if c := meta.FindStatusCondition(j.Status.Conditions, vmafxv1.JobFailedCondition); j.Status.Phase != vmafxv1.JobFailed || c == nil ||
		c.Reason != vmafxv1.ReasonBadInput || len(j.Status.Results) != 2 || j.Status.Results[1].Message != "too short" || j.Status.Attempts != 1 {
		t.Errorf("phase %s, Failed condition %+v, rows %+v, %d attempts; want Failed with BadInput at once, both rows kept", j.Status.Phase, c, j.Status.Results, j.Status.Attempts)
	}
	kubeletFinish(t, bindAndRun(t, ns, "short", 1, "node-a"), 0, renditionsMessage(scoredRow(90, 24)))
	j = waitForJob(t, ns, "short", "Failed", finished)
	if c := meta.FindStatusCondition(j.Status.Conditions, vmafxv1.JobFailedCondition); c == nil || c.Reason != "UnparsableResult" || j.Status.Score != "" {
		t.Errorf("Failed condition %+v, score %q; want UnparsableResult and no score", c, j.Status.Score)
	}
}
