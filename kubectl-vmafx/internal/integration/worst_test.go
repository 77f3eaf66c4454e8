package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

func TestWorst(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	kc := kubeconfig(t, ns)
	mustRun(t, kc, "-n", ns, "score", "https://media.example.com/ref.y4m", "https://media.example.com/dist.y4m", "--name", "scored")
	if _, err := run(t, kc, "-n", ns, "worst", "scored"); err == nil || !strings.Contains(err.Error(), "has no score yet (phase Pending)") {
		t.Errorf("worst of a pending job: %v", err)
	}

	result := &vmafxv1.JobResult{
		Mean: "85.000000", Min: "20.123457",
		JobWorst: vmafxv1.JobWorst{
			Percentiles: &vmafxv1.JobPercentiles{P1: "21.000000", P5: "40.500000", P50: "90.000000"},
			WorstFrames: []vmafxv1.JobFrame{{Index: 31, VMAF: "20.123457"}, {Index: 30, VMAF: "22.000000"}},
			Scenes:      &vmafxv1.JobScenes{Count: 2, Worst: &vmafxv1.JobScene{Start: 24, Frames: 16, Mean: "30.000000", Min: "20.123457", P5: "21.000000"}},
			Report:      "s3://b/out.json.report/",
		},
	}
	// The status as the operator writes it; the API server's schema (MaxItems, types) takes it.
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		j := &vmafxv1.VmafxJob{}
		if err := testenv.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "scored"}, j); err != nil {
			return false, nil
		}
		j.Status = vmafxv1.VmafxJobStatus{Phase: vmafxv1.JobSucceeded, Score: "85.000000", Result: result}
		return testenv.Client().Status().Update(ctx, j) == nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, kc, "-n", ns, "worst", "scored")
	for _, want := range []string{
		"VMAF 85.000000 (1st percentile 21.000000, 5th 40.500000, median 90.000000)",
		"Scenes: 2; the worst starts at frame 24 (16 frames): mean 30.000000, min 20.123457, 5th percentile 21.000000",
		"Report: s3://b/out.json.report/",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("worst lacks %q:\n%s", want, out)
		}
	}
	if !lineHas(out, "1", "31", "20.123457") || !lineHas(out, "2", "30", "22.000000") {
		t.Errorf("worst frames table:\n%s", out)
	}

	var v struct {
		WorstFrames []vmafxv1.JobFrame `json:"worstFrames"`
		Report      string             `json:"report"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, kc, "-n", ns, "worst", "scored", "-o", "json")), &v); err != nil || len(v.WorstFrames) != 2 || v.Report != result.Report {
		t.Errorf("worst -o json: %v %+v", err, v)
	}
	if out := mustRun(t, kc, "-n", ns, "worst", "scored", "-o", "yaml"); !strings.Contains(out, "index: 31") {
		t.Errorf("worst -o yaml:\n%s", out)
	}
	if _, err := run(t, kc, "-n", ns, "worst", "scored", "-o", "wide"); err == nil {
		t.Error("worst -o wide: want a refusal")
	}
}

// TestWorstGroup: worst on a shared-reference group's job shows each distorted video's
// own worst frames, percentiles and report in a section of its own, or the one
// --rendition names; a video whose row failed says why.
func TestWorstGroup(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	kc := kubeconfig(t, ns)
	ctx := context.Background()
	out := func(s string) *vmafxv1.OutputURI { o := vmafxv1.OutputURI(s); return &o }
	job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "group"}, Spec: vmafxv1.VmafxJobSpec{
		Reference: "s3://b/ref.y4m", Distorted: "s3://b/a.mp4", Output: out("s3://b/a.json"),
		Renditions: []vmafxv1.JobRendition{{Distorted: "s3://b/b.mp4", Output: out("s3://b/b.json")}, {Distorted: "s3://b/c.mp4", Output: out("s3://b/c.json")}}}}
	if err := testenv.Client().Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	rowA := vmafxv1.JobWorst{Percentiles: &vmafxv1.JobPercentiles{P1: "81.000000", P5: "82.000000", P50: "90.000000"},
		WorstFrames: []vmafxv1.JobFrame{{Index: 7, VMAF: "80.000000"}}, Report: "s3://b/a.json.report/"}
	rowB := vmafxv1.JobWorst{Percentiles: &vmafxv1.JobPercentiles{P1: "61.000000", P5: "62.000000", P50: "70.000000"},
		WorstFrames: []vmafxv1.JobFrame{{Index: 41, VMAF: "50.000000"}, {Index: 40, VMAF: "51.500000"}},
		Scenes:      &vmafxv1.JobScenes{Count: 3, Worst: &vmafxv1.JobScene{Start: 36, Frames: 12, Mean: "55.000000", Min: "50.000000", P5: "50.500000"}},
		Report:      "s3://b/b.json.report/"}
	job.Status = vmafxv1.VmafxJobStatus{Phase: vmafxv1.JobSucceeded, Score: "88.000000",
		Result: &vmafxv1.JobResult{Mean: "88.000000", JobWorst: rowA},
		Results: []vmafxv1.JobRenditionResult{
			{Distorted: "s3://b/a.mp4", Phase: vmafxv1.JobSucceeded, Mean: "88.000000", JobWorst: rowA},
			{Distorted: "s3://b/b.mp4", Phase: vmafxv1.JobSucceeded, Mean: "68.000000", JobWorst: rowB},
			{Distorted: "s3://b/c.mp4", Phase: vmafxv1.JobFailed, Reason: vmafxv1.ReasonBadInput, Message: "not a video"}}}
	if err := testenv.Client().Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}

	all := mustRun(t, kc, "-n", ns, "worst", "group")
	sections := strings.Split(all, "Rendition ")[1:]
	if len(sections) != 3 {
		t.Fatalf("worst of a group of 3: %d sections:\n%s", len(sections), all)
	}
	for i, want := range [][]string{
		{"0: s3://b/a.mp4", "VMAF 88.000000 (1st percentile 81.000000", "Report: s3://b/a.json.report/"},
		{"1: s3://b/b.mp4", "VMAF 68.000000 (1st percentile 61.000000, 5th 62.000000, median 70.000000)",
			"Scenes: 3; the worst starts at frame 36 (12 frames)", "Report: s3://b/b.json.report/"},
		{"2: s3://b/c.mp4", "No score (phase Failed): BadInput: not a video"},
	} {
		for _, w := range want {
			if !strings.Contains(sections[i], w) {
				t.Errorf("section %d lacks %q:\n%s", i, w, sections[i])
			}
		}
	}
	if !lineHas(sections[1], "1", "41", "50.000000") || !lineHas(sections[1], "2", "40", "51.500000") || lineHas(sections[1], "1", "7", "80.000000") {
		t.Errorf("rendition 1's worst frames table:\n%s", sections[1])
	}

	var g struct {
		Renditions []struct {
			Rendition   int                `json:"rendition"`
			Distorted   string             `json:"distorted"`
			WorstFrames []vmafxv1.JobFrame `json:"worstFrames"`
		} `json:"renditions"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, kc, "-n", ns, "worst", "group", "-o", "json")), &g); err != nil || len(g.Renditions) != 3 ||
		g.Renditions[1].Rendition != 1 || len(g.Renditions[1].WorstFrames) != 2 || g.Renditions[1].WorstFrames[0].Index != 41 {
		t.Errorf("worst -o json of a group: %v %+v", err, g)
	}

	one := mustRun(t, kc, "-n", ns, "worst", "group", "--rendition", "1")
	if strings.Contains(one, "Rendition ") || !lineHas(one, "1", "41", "50.000000") || !strings.Contains(one, "Report: s3://b/b.json.report/") {
		t.Errorf("worst --rendition 1:\n%s", one)
	}
	if _, err := run(t, kc, "-n", ns, "worst", "group", "--rendition", "2"); err == nil || !strings.Contains(err.Error(), "rendition 2 of job group failed: BadInput: not a video") {
		t.Errorf("worst --rendition 2 (failed): %v", err)
	}
	if _, err := run(t, kc, "-n", ns, "worst", "group", "--rendition", "3"); err == nil || !strings.Contains(err.Error(), "scores 3 distorted videos") {
		t.Errorf("worst --rendition 3: %v", err)
	}
}
