package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/mcpserver"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// The pictured job's report: its worst frames' pictures are three panels of panelW by
// panelH pixels (reportPicture), its plot plotW by plotH.
const (
	picturedJob      = "pictured"
	picturedOutput   = "s3://media/clips/pictured.json"
	panelW, panelH   = 160, 90
	plotW, plotH     = 640, 200
	picturedFrames   = 48
	picturedReportAt = "clips/pictured.json.report/"
)

// reportPlotPNG is a fixture of the worker's score plot as PNG: perFrameJSON's curve in
// blue on white, plotW by plotH.
func reportPlotPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, plotW, plotH))
	for y := 0; y < plotH; y++ {
		for x := 0; x < plotW; x++ {
			img.Set(x, y, color.White)
		}
	}
	for x := 0; x < plotW; x++ {
		i := x * picturedFrames / plotW
		v := 95 - float64(i%7)
		if i == picturedFrames/2 {
			v = 20
		}
		img.Set(x, plotH-10-int(v*1.8), color.RGBA{B: 0xad, G: 0x5c, R: 0x0b, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// seedPictured puts a scored job's output and report in the S3 server at endpoint (the
// worker's names: vmafxv1.WorstFramePicture, the plots), the Secret of its keys, and the
// job, its status as the operator writes it, in ns.
func seedPictured(t *testing.T, ns, endpoint string, s3 *awss3.Client) {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client()
	upload(t, s3, "media", "clips/pictured.json", perFrameJSON(picturedFrames))
	uploadReport(t, s3, picturedReportAt, picturedFrames)
	putObject(t, s3, "media", picturedReportAt+vmafxv1.ReportPlotPNG, reportPlotPNG(t))
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "media-bucket"}, StringData: map[string]string{
		"AWS_ACCESS_KEY_ID": s3AccessKey, "AWS_SECRET_ACCESS_KEY": s3SecretKey, "AWS_REGION": "us-east-1",
		"AWS_ENDPOINT_URL": endpoint, "AWS_S3_USE_PATH_STYLE": "true"}}
	if err := c.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	out := vmafxv1.OutputURI(picturedOutput)
	job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: picturedJob}, Spec: vmafxv1.VmafxJobSpec{
		Reference: "s3://media/clips/ref.y4m", Distorted: "s3://media/clips/pictured.mp4", Output: &out,
		WorstFrames: &vmafxv1.WorstFrames{Pictures: true},
		Credentials: &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "media-bucket"}}}}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	playOperator(t, ns, picturedJob, vmafxv1.JobSucceeded, "88.123456")
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		t.Fatal(err)
	}
	job.Status.Result.WorstFrames = listedWorst
	job.Status.Result.Report = picturedOutput + vmafxv1.ReportSuffix
	if err := c.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
}

// checkPNG decodes b as a PNG of w by h pixels that is not one flat colour.
func checkPNG(t *testing.T, what string, b []byte, w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Errorf("%s: not a PNG: %v", what, err)
		return
	}
	if got := img.Bounds().Size(); got.X != w || got.Y != h {
		t.Errorf("%s: %dx%d pixels, want %dx%d", what, got.X, got.Y, w, h)
	}
	first, flat := img.At(0, 0), true
	for y := 0; y < img.Bounds().Dy() && flat; y += 3 {
		for x := 0; x < img.Bounds().Dx() && flat; x += 3 {
			flat = img.At(x, y) == first
		}
	}
	if flat {
		t.Errorf("%s: one flat colour", what)
	}
}

// TestAPIPictures: the JSON API serves a job's pictures from its object store, as the
// caller, with the types and sizes the worker wrote, and nothing to a caller without the
// rights or for any other name.
func TestAPIPictures(t *testing.T) {
	endpoint, s3 := startS3(t)
	ns := testenv.CreateNamespace(t)
	seedPictured(t, ns, endpoint, s3)
	d := startAPIDoor(t, true)
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	grantConsole(t, ns, "pipeline") // the Secret of the output's keys
	viewer := tokenFor(t, ns, "viewer", "get")
	stranger := tokenFor(t, ns, "stranger")
	base := d.url + "/v1/namespaces/" + ns + "/jobs/" + picturedJob

	// The worst route gives each picture's path on the API beside its URI in the store.
	code, body := do(t, http.MethodGet, base+"/worst", token, "")
	w := decode[jobs.Worst](t, body)
	if code != http.StatusOK || len(w.WorstFrames) != len(listedWorst) || w.Plot == nil {
		t.Fatalf("worst: %d %s", code, body)
	}
	pics := "/v1/namespaces/" + ns + "/jobs/" + picturedJob + "/pictures/"
	if w.WorstFrames[0].PictureURL != pics+"frame-000024.png" || w.Plot.PNGURL != pics+"scores.png" || w.Plot.SVGURL != pics+"scores.svg" {
		t.Errorf("worst: picture paths %q, %q, %q; want the pictures route", w.WorstFrames[0].PictureURL, w.Plot.PNGURL, w.Plot.SVGURL)
	}

	get := func(path, token string) (answer, string) {
		req, err := http.NewRequest(http.MethodGet, d.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		return read(t, resp, err)
	}
	for _, f := range w.WorstFrames {
		a, b := get(f.PictureURL, token)
		if a.StatusCode != http.StatusOK || a.Header.Get("Content-Type") != "image/png" {
			t.Errorf("GET %s: %d %s, want 200 image/png", f.PictureURL, a.StatusCode, a.Header.Get("Content-Type"))
			continue
		}
		checkPNG(t, f.PictureURL, []byte(b), 3*panelW, panelH)
	}
	a, b := get(w.Plot.PNGURL, token)
	if a.StatusCode != http.StatusOK || a.Header.Get("Content-Type") != "image/png" {
		t.Errorf("GET %s: %d %s, want 200 image/png", w.Plot.PNGURL, a.StatusCode, a.Header.Get("Content-Type"))
	} else {
		checkPNG(t, w.Plot.PNGURL, []byte(b), plotW, plotH)
	}
	a, b = get(w.Plot.SVGURL, token)
	if a.StatusCode != http.StatusOK || a.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(b, "<svg") {
		t.Errorf("GET %s: %d %s %.20q, want the SVG", w.Plot.SVGURL, a.StatusCode, a.Header.Get("Content-Type"), b)
	}
	// An SVG opened on its own is a document: it runs no script.
	if csp := a.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") || strings.Contains(csp, "script-src") {
		t.Errorf("GET %s: Content-Security-Policy %q, want a sandbox without scripts", w.Plot.SVGURL, csp)
	}

	// Nothing else: no other name, no other frame, no caller without the rights.
	for _, tc := range []struct {
		who, token, file string
		want             int
	}{
		{"pipeline", token, vmafxv1.ReportJSON, http.StatusNotFound},            // not a picture
		{"pipeline", token, vmafxv1.WorstFramePicture(25), http.StatusNotFound}, // not a listed worst frame
		{"pipeline", token, "..%2fpictured.json", http.StatusNotFound},          // the output itself
		{"pipeline", token, "frame-24.png", http.StatusNotFound},
		{"the viewer (no Secret)", viewer, vmafxv1.WorstFramePicture(24), http.StatusForbidden},
		{"a stranger", stranger, vmafxv1.WorstFramePicture(24), http.StatusForbidden},
		{"no token", "", vmafxv1.WorstFramePicture(24), http.StatusUnauthorized},
	} {
		a, b := get(pics+tc.file, tc.token)
		var st metav1.Status
		if a.StatusCode != tc.want || json.Unmarshal([]byte(b), &st) != nil || st.Code != int32(tc.want) || strings.Contains(b, "PNG") {
			t.Errorf("%s GET pictures/%s: %d %.200q, want %d as a Status", tc.who, tc.file, a.StatusCode, b, tc.want)
		}
	}
	if code, body := do(t, http.MethodGet, d.url+"/v1/namespaces/"+ns+"/jobs/absent/pictures/scores.png", token, ""); code != http.StatusNotFound {
		t.Errorf("picture of a missing job: %d %s, want 404", code, body)
	}
	// A listed frame whose picture is not in the store (the worker could not write it).
	if _, err := s3.DeleteObject(context.Background(), &awss3.DeleteObjectInput{Bucket: aws.String("media"), Key: aws.String(picturedReportAt + "frame-000013.png")}); err != nil {
		t.Fatal(err)
	}
	if code, body := do(t, http.MethodGet, d.url+pics+"frame-000013.png", token, ""); code != http.StatusNotFound || !strings.Contains(body, "not found") {
		t.Errorf("picture missing from the store: %d %s, want 404", code, body)
	}

	// A door that does not read outputs serves no picture and names none on its path.
	off := startAPI(t)
	if code, body := do(t, http.MethodGet, off.url+pics+"scores.png", token, ""); code != http.StatusNotFound || !strings.Contains(body, "console-read-outputs") {
		t.Errorf("picture from a door that reads no outputs: %d %s, want 404 saying why", code, body)
	}
	if _, body := do(t, http.MethodGet, off.url+"/v1/namespaces/"+ns+"/jobs/"+picturedJob+"/worst", token, ""); strings.Contains(body, "pictureURL") {
		t.Errorf("worst from a door that reads no outputs names the pictures route: %s", body)
	}
}

// TestMCPPictures: worst_frames returns the job's pictures as PNG images, read as the
// caller, within its bounds; a caller who may not read the Secret gets the answer and no
// picture, saying why.
func TestMCPPictures(t *testing.T) {
	endpoint, s3 := startS3(t)
	ns := testenv.CreateNamespace(t)
	seedPictured(t, ns, endpoint, s3)
	d := startMCPDoor(t, ns, mcpserver.SessionLimits{}, true)
	agent := tokenFor(t, ns, "agent", allVerbs...)
	grantConsole(t, ns, "agent")
	s, err := connect(t, d, agent)
	if err != nil {
		t.Fatal(err)
	}
	images := func(res *mcp.CallToolResult) []*mcp.ImageContent {
		var out []*mcp.ImageContent
		for _, c := range res.Content {
			if im, ok := c.(*mcp.ImageContent); ok {
				out = append(out, im)
			}
		}
		return out
	}
	res, text := call(t, s, mcpserver.ToolWorst, map[string]any{"name": picturedJob})
	if res.IsError {
		t.Fatalf("worst_frames: %s", text)
	}
	var w jobs.Worst
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &w); err != nil || len(w.WorstFrames) != len(listedWorst) {
		t.Fatalf("worst_frames' answer %v: %s", err, text)
	}
	ims := images(res)
	if len(ims) != 1+len(listedWorst) {
		t.Fatalf("worst_frames returned %d images, want the plot and %d worst frames: %s", len(ims), len(listedWorst), text)
	}
	for i, im := range ims {
		want, wantW, wantH := vmafxv1.ReportPlotPNG, plotW, plotH
		if i > 0 {
			want, wantW, wantH = vmafxv1.WorstFramePicture(int(listedWorst[i-1].Index)), 3*panelW, panelH
		}
		if im.MIMEType != "image/png" || im.Meta["vmafx.dev/picture"] != want {
			t.Errorf("image %d: %s %v, want %s as image/png", i, im.MIMEType, im.Meta["vmafx.dev/picture"], want)
		}
		checkPNG(t, want, im.Data, wantW, wantH)
	}

	// Fewer asked for: the plot, and the rest named.
	res, text = call(t, s, mcpserver.ToolWorst, map[string]any{"name": picturedJob, "images": 1})
	if ims := images(res); res.IsError || len(ims) != 1 || !strings.Contains(text, "frame-000013.png (beyond the images asked for)") {
		t.Errorf("worst_frames with images 1: %d images, %s", len(ims), text)
	}
	if res, text = call(t, s, mcpserver.ToolWorst, map[string]any{"name": picturedJob, "images": 99}); !res.IsError {
		t.Errorf("worst_frames with images 99: %s, want a tool error", text)
	}

	// May read the job, not the Secret of its output: the answer, no picture, and why.
	viewer, err := connect(t, d, tokenFor(t, ns, "viewer", "get"))
	if err != nil {
		t.Fatal(err)
	}
	res, text = call(t, viewer, mcpserver.ToolWorst, map[string]any{"name": picturedJob})
	if ims := images(res); res.IsError || len(ims) != 0 || !strings.Contains(text, "Secret media-bucket") || !strings.Contains(text, "forbidden") {
		t.Errorf("worst_frames without the Secret: %d images, %s; want the answer and the refusal", len(ims), text)
	}
	// May not read the job: the API server's refusal.
	stranger, err := connect(t, d, tokenFor(t, ns, "stranger"))
	if err != nil {
		t.Fatal(err)
	}
	if res, text = call(t, stranger, mcpserver.ToolWorst, map[string]any{"name": picturedJob}); !res.IsError || !strings.Contains(text, "forbidden") || len(images(res)) != 0 {
		t.Errorf("worst_frames by a stranger: %s, want the API server's refusal", text)
	}
}
