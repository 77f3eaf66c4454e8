package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"testing"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/console"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/mcpserver"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// A shared-reference group's job: two distorted videos scored in one Pod, each with its
// own output, report and worst frames. The second's pictures have panels of another size
// than the first's, so that a test tells which report a picture came from.
const (
	groupJob          = "group"
	groupOutputB      = "s3://media/clips/group-b.json"
	groupReportB      = "clips/group-b.json.report/"
	groupPanelW       = 120
	groupPanelH       = 60
	groupRenditionURI = "s3://media/clips/group-b.mp4"
)

// groupWorstB are the second video's worst frames: none of them is one of the first's.
var groupWorstB = []vmafxv1.JobFrame{{Index: 31, VMAF: "30.000000"}, {Index: 2, VMAF: "31.000000"}}

// seedGroup seeds the pictured job's report and Secret (seedPictured) and a group job
// whose first video is the pictured job's and whose second has its own report, its
// status as the operator writes it: a row for each video.
func seedGroup(t *testing.T, ns, endpoint string, s3 *awss3.Client) {
	t.Helper()
	ctx := context.Background()
	seedPictured(t, ns, endpoint, s3)
	for _, f := range groupWorstB {
		putObject(t, s3, "media", groupReportB+vmafxv1.WorstFramePicture(int(f.Index)), reportPicture(t, groupPanelW, groupPanelH))
	}
	putObject(t, s3, "media", groupReportB+vmafxv1.ReportPlotPNG, reportPlotPNG(t))
	putObject(t, s3, "media", groupReportB+vmafxv1.ReportPlotSVG, reportPlot(picturedFrames))
	out, outB := vmafxv1.OutputURI(picturedOutput), vmafxv1.OutputURI(groupOutputB)
	job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: groupJob}, Spec: vmafxv1.VmafxJobSpec{
		Reference: "s3://media/clips/ref.y4m", Distorted: "s3://media/clips/pictured.mp4", Output: &out,
		Renditions:  []vmafxv1.JobRendition{{Distorted: groupRenditionURI, Output: &outB}},
		WorstFrames: &vmafxv1.WorstFrames{Pictures: true},
		Credentials: &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "media-bucket"}}}}
	c := testenv.Client()
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	playOperator(t, ns, groupJob, vmafxv1.JobSucceeded, "88.123456")
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		t.Fatal(err)
	}
	a := vmafxv1.JobWorst{WorstFrames: listedWorst, Report: picturedOutput + vmafxv1.ReportSuffix}
	job.Status.Result.JobWorst = a
	job.Status.Results = []vmafxv1.JobRenditionResult{
		{Distorted: string(job.Spec.Distorted), Phase: vmafxv1.JobSucceeded, Mean: "88.123456", Frames: picturedFrames, JobWorst: a},
		{Distorted: groupRenditionURI, Phase: vmafxv1.JobSucceeded, Mean: "70.000000", Frames: picturedFrames,
			JobWorst: vmafxv1.JobWorst{WorstFrames: groupWorstB, Report: groupOutputB + vmafxv1.ReportSuffix,
				Percentiles: &vmafxv1.JobPercentiles{P1: "30.500000", P5: "33.000000", P50: "72.000000"}}},
	}
	if err := c.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
}

// TestAPIGroupPictures: the worst route and the pictures route of a group's job answer
// for the video ?rendition= names, each from its own report, and refuse a frame that is
// another video's and a rendition the job does not have.
func TestAPIGroupPictures(t *testing.T) {
	endpoint, s3 := startS3(t)
	ns := testenv.CreateNamespace(t)
	seedGroup(t, ns, endpoint, s3)
	d := startAPIDoor(t, true)
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	grantConsole(t, ns, "pipeline")
	base := d.url + "/v1/namespaces/" + ns + "/jobs/" + groupJob

	code, body := do(t, http.MethodGet, base+"/worst?rendition=1", token, "")
	w := decode[jobs.Worst](t, body)
	if code != http.StatusOK || w.Rendition != 1 || w.Renditions != 2 || w.Distorted != groupRenditionURI || w.Score != "70.000000" ||
		len(w.WorstFrames) != len(groupWorstB) || w.Plot == nil || w.Percentiles == nil || w.Report != groupOutputB+vmafxv1.ReportSuffix {
		t.Fatalf("worst of rendition 1: %d %s", code, body)
	}
	pics := "/v1/namespaces/" + ns + "/jobs/" + groupJob + "/pictures/"
	if w.WorstFrames[0].PictureURL != pics+"frame-000031.png?rendition=1" || w.Plot.PNGURL != pics+"scores.png?rendition=1" {
		t.Errorf("rendition 1's picture paths %q, %q; want the pictures route with ?rendition=1", w.WorstFrames[0].PictureURL, w.Plot.PNGURL)
	}
	for _, f := range w.WorstFrames {
		code, b := do(t, http.MethodGet, d.url+f.PictureURL, token, "")
		if code != http.StatusOK {
			t.Errorf("GET %s: %d %.200s", f.PictureURL, code, b)
			continue
		}
		checkPNG(t, f.PictureURL, []byte(b), 3*groupPanelW, groupPanelH)
	}
	if code, b := do(t, http.MethodGet, d.url+w.Plot.PNGURL, token, ""); code != http.StatusOK {
		t.Errorf("GET %s: %d", w.Plot.PNGURL, code)
	} else {
		checkPNG(t, w.Plot.PNGURL, []byte(b), plotW, plotH)
	}

	// The first video is the job's spec.distorted: no parameter, or 0.
	code, body = do(t, http.MethodGet, base+"/worst", token, "")
	if w0 := decode[jobs.Worst](t, body); code != http.StatusOK || w0.Rendition != 0 || w0.Renditions != 2 || len(w0.WorstFrames) != len(listedWorst) ||
		w0.WorstFrames[0].PictureURL != pics+"frame-000024.png" {
		t.Errorf("worst of rendition 0: %d %s", code, body)
	}
	if code, b := do(t, http.MethodGet, d.url+pics+"frame-000024.png?rendition=0", token, ""); code != http.StatusOK {
		t.Errorf("rendition 0's worst frame: %d", code)
	} else {
		checkPNG(t, "rendition 0's frame 24", []byte(b), 3*panelW, panelH)
	}

	for _, tc := range []struct {
		path string
		want int
	}{
		{pics + "frame-000024.png?rendition=1", http.StatusNotFound}, // the first video's frame, not the second's
		{pics + "frame-000031.png", http.StatusNotFound},             // the second's, not the first's
		{pics + "scores.png?rendition=2", http.StatusNotFound},       // no third video
		{pics + "scores.png?rendition=x", http.StatusBadRequest},
		{"/v1/namespaces/" + ns + "/jobs/" + groupJob + "/worst?rendition=2", http.StatusNotFound},
		{"/v1/namespaces/" + ns + "/jobs/" + picturedJob + "/worst?rendition=1", http.StatusNotFound}, // a job of one video
	} {
		code, b := do(t, http.MethodGet, d.url+tc.path, token, "")
		var st metav1.Status
		if code != tc.want || json.Unmarshal([]byte(b), &st) != nil || st.Code != int32(tc.want) {
			t.Errorf("GET %s: %d %.200q, want %d as a Status", tc.path, code, b, tc.want)
		}
	}
}

// TestMCPGroupPictures: worst_frames with rendition answers with that video's frames and
// its own pictures as images.
func TestMCPGroupPictures(t *testing.T) {
	endpoint, s3 := startS3(t)
	ns := testenv.CreateNamespace(t)
	seedGroup(t, ns, endpoint, s3)
	d := startMCPDoor(t, ns, mcpserver.SessionLimits{}, true)
	agent := tokenFor(t, ns, "agent", allVerbs...)
	grantConsole(t, ns, "agent")
	s, err := connect(t, d, agent)
	if err != nil {
		t.Fatal(err)
	}
	res, text := call(t, s, mcpserver.ToolWorst, map[string]any{"name": groupJob, "rendition": 1})
	if res.IsError {
		t.Fatalf("worst_frames of rendition 1: %s", text)
	}
	var w jobs.Worst
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &w); err != nil || w.Rendition != 1 || len(w.WorstFrames) != len(groupWorstB) {
		t.Fatalf("worst_frames' answer %v: %s", err, text)
	}
	var ims []*mcp.ImageContent
	for _, c := range res.Content {
		if im, ok := c.(*mcp.ImageContent); ok {
			ims = append(ims, im)
		}
	}
	if len(ims) != 1+len(groupWorstB) {
		t.Fatalf("%d images, want the plot and %d worst frames: %s", len(ims), len(groupWorstB), text)
	}
	for i, im := range ims[1:] {
		want := vmafxv1.WorstFramePicture(int(groupWorstB[i].Index))
		if im.Meta["vmafx.dev/picture"] != want || im.Meta["vmafx.dev/uri"] != groupOutputB+vmafxv1.ReportSuffix+want {
			t.Errorf("image %d: %v, want %s of the second video's report", i+1, im.Meta, want)
		}
		checkPNG(t, want, im.Data, 3*groupPanelW, groupPanelH)
	}
	if res, text := call(t, s, mcpserver.ToolWorst, map[string]any{"name": groupJob, "rendition": 2}); !res.IsError || !strings.Contains(text, "scores 2 distorted videos") {
		t.Errorf("worst_frames of a rendition the job lacks: %s, want a tool error saying how many it has", text)
	}
}

// TestConsoleGroupComparison: a shared-reference comparison's page lists each input's own
// worst frames, the second input's from its row of the group's job, with its pictures
// through the console's report route of that input's video.
func TestConsoleGroupComparison(t *testing.T) {
	endpoint, s3 := startS3(t)
	ns := testenv.CreateNamespace(t)
	seedGroup(t, ns, endpoint, s3)
	ctx := context.Background()
	c := testenv.Client()
	job := &vmafxv1.VmafxJob{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: groupJob}, job); err != nil {
		t.Fatal(err)
	}
	job.Labels = map[string]string{vmafxv1.LabelComparison: vmafxv1.JobLabelValue("grp")}
	if err := c.Update(ctx, job); err != nil {
		t.Fatal(err)
	}
	cmp := &vmafxv1.VmafxComparison{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "grp"}, Spec: vmafxv1.VmafxComparisonSpec{
		Reference: job.Spec.Reference, Distorted: []vmafxv1.ComparisonInput{{Name: "a", URI: job.Spec.Distorted}, {Name: "b", URI: groupRenditionURI}},
		SharedReference: &vmafxv1.SharedReference{MaxRenditionsPerPod: 2}}}
	if err := c.Create(ctx, cmp); err != nil {
		t.Fatal(err)
	}
	cmp.Status = vmafxv1.VmafxComparisonStatus{Phase: vmafxv1.JobSucceeded, Total: 2, Succeeded: 2, Best: "a", Results: []vmafxv1.ComparisonEntry{
		{Name: "a", Job: groupJob, Phase: vmafxv1.JobSucceeded, Score: "88.123456", Frames: picturedFrames},
		{Name: "b", Job: groupJob, Phase: vmafxv1.JobSucceeded, Score: "70.000000", Frames: picturedFrames}}}
	if err := c.Status().Update(ctx, cmp); err != nil {
		t.Fatal(err)
	}
	d := startConsole(t, console.Options{ReadOutputs: true})
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	grantConsole(t, ns, "pipeline")
	code, page := consoleGet(t, d.url+"/console/namespaces/"+ns+"/comparisons/grp", token)
	if code != http.StatusOK {
		t.Fatalf("comparison page: %d %.300s", code, page)
	}
	report := "/console/namespaces/" + ns + "/jobs/" + groupJob + "/report/"
	articles := strings.Split(page, `<article class="rendition"`)[1:]
	if len(articles) != 2 {
		t.Fatalf("%d inputs with worst frames on the page, want a and b:\n%s", len(articles), page)
	}
	for i, tc := range []struct {
		name   string
		frames []vmafxv1.JobFrame
		query  string
	}{{"a", listedWorst, ""}, {"b", groupWorstB, "?rendition=1"}} {
		a := articles[i]
		if !strings.Contains(a, `data-name="`+tc.name+`"`) {
			t.Errorf("input %d is not %s:\n%s", i, tc.name, a)
		}
		for _, f := range tc.frames {
			pic := report + vmafxv1.WorstFramePicture(int(f.Index)) + tc.query
			if !strings.Contains(a, fmt.Sprintf(`data-frame="%d"`, f.Index)) || !strings.Contains(a, `href="`+template.HTMLEscapeString(pic)+`"`) {
				t.Errorf("input %s: no frame %d linked to %s:\n%s", tc.name, f.Index, pic, a)
			}
		}
		pic := report + vmafxv1.WorstFramePicture(int(tc.frames[0].Index)) + tc.query
		code, b := consoleGet(t, d.url+pic, token)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d %.200s", pic, code, b)
			continue
		}
		w, h := 3*panelW, panelH
		if tc.name == "b" {
			w, h = 3*groupPanelW, groupPanelH
		}
		checkPNG(t, pic, []byte(b), w, h)
	}
}
