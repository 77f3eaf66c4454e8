package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

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
