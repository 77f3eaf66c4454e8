package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/mcpserver"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// scoredWithWorst writes the status the operator writes for a job whose worker listed
// its worst frames and drew their pictures.
func scoredWithWorst(t *testing.T, ns, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		j := &vmafxv1.VmafxJob{}
		if err := testenv.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, nil
		}
		j.Status = vmafxv1.VmafxJobStatus{Phase: vmafxv1.JobSucceeded, Score: "85.000000", Result: &vmafxv1.JobResult{
			Mean: "85.000000", Min: "20.123457",
			JobWorst: vmafxv1.JobWorst{
				Percentiles: &vmafxv1.JobPercentiles{P1: "21.000000", P5: "40.500000", P50: "90.000000"},
				WorstFrames: []vmafxv1.JobFrame{{Index: 31, VMAF: "20.123457"}, {Index: 30, VMAF: "22.000000"}},
				Scenes:      &vmafxv1.JobScenes{Count: 2, Worst: &vmafxv1.JobScene{Start: 24, Frames: 16, Mean: "30.000000"}},
				Report:      "s3://results/pair.json.report/",
			},
		}}
		return testenv.Client().Status().Update(ctx, j) == nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

const worstJob = `{"metadata":{"name":"pictured"},"spec":{"reference":"https://media.example.com/a.y4m","distorted":"https://media.example.com/b.y4m",
	"output":"s3://results/pair.json","worstFrames":{"count":2,"pictures":true}}}`

func checkWorst(t *testing.T, w jobs.Worst) {
	t.Helper()
	if w.Phase != "Succeeded" || w.Score != "85.000000" || w.Percentiles == nil || w.Percentiles.P5 != "40.500000" ||
		w.Scenes == nil || w.Scenes.Count != 2 || w.Report != "s3://results/pair.json.report/" {
		t.Errorf("worst = %+v", w)
	}
	if len(w.WorstFrames) != 2 || w.WorstFrames[0].Index != 31 || w.WorstFrames[0].Picture != "s3://results/pair.json.report/frame-000031.png" {
		t.Errorf("worst frames %+v, want 31 first with its picture", w.WorstFrames)
	}
	if w.Plot == nil || w.Plot.SVG != "s3://results/pair.json.report/scores.svg" {
		t.Errorf("plot %+v", w.Plot)
	}
}

func TestAPIWorstFrames(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startAPI(t)
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	base := d.url + "/v1/namespaces/" + ns + "/jobs"
	if code, body := do(t, http.MethodPost, base, token, worstJob); code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, body)
	}
	code, body := do(t, http.MethodGet, base+"/pictured/worst", token, "")
	if w := decode[jobs.Worst](t, body); code != http.StatusOK || w.Phase != "Pending" || len(w.WorstFrames) != 0 || w.Message == "" {
		t.Errorf("worst of a pending job: %d %s", code, body)
	}
	scoredWithWorst(t, ns, "pictured")
	code, body = do(t, http.MethodGet, base+"/pictured/worst", token, "")
	if code != http.StatusOK {
		t.Fatalf("worst: %d %s", code, body)
	}
	checkWorst(t, decode[jobs.Worst](t, body))
	if code, body = do(t, http.MethodGet, base+"/absent/worst", token, ""); code != http.StatusNotFound {
		t.Errorf("worst of a missing job: %d %s, want 404", code, body)
	}
	other := tokenFor(t, ns, "stranger")
	if code, body = do(t, http.MethodGet, base+"/pictured/worst", other, ""); code != http.StatusForbidden {
		t.Errorf("worst without get on vmafxjobs: %d %s, want 403", code, body)
	}
}

func TestMCPWorstFrames(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startMCP(t, ns)
	s, err := connect(t, d, tokenFor(t, ns, "agent", allVerbs...))
	if err != nil {
		t.Fatal(err)
	}
	var job vmafxv1.VmafxJob
	if err := json.Unmarshal([]byte(worstJob), &job); err != nil {
		t.Fatal(err)
	}
	job.Namespace = ns
	if err := testenv.Client().Create(context.Background(), &job); err != nil {
		t.Fatal(err)
	}
	scoredWithWorst(t, ns, "pictured")
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolWorst, Arguments: map[string]any{"name": "pictured"}})
	if err != nil || res.IsError {
		t.Fatalf("worst_frames: %v %+v", err, res)
	}
	var w jobs.Worst
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &w); err != nil {
		t.Fatal(err)
	}
	checkWorst(t, w)
	res, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolWorst, Arguments: map[string]any{"name": "absent"}})
	if err != nil || !res.IsError {
		t.Errorf("worst_frames of a missing job: %v %+v, want a tool error", err, res)
	}
}
