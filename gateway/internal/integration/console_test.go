package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/console"
	"github.com/vmafx/vmafx/gateway/internal/httpapi"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// stepTimeout bounds one step in the browser: a page of the console answers in
// milliseconds, so a step that waits this long has failed.
const stepTimeout = 30 * time.Second

// chromium is Debian's browser (hack/install-deps.sh installs it for the tests).
const chromium = "/usr/bin/chromium"

// startConsole runs vmafx-api as its main does: the JSON API with the console mounted.
func startConsole(t *testing.T, opts console.Options) *door {
	t.Helper()
	sopts := serve.Options{Addr: "127.0.0.1:0", ProbeAddr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second}
	ln, probe, err := serve.Listen(sopts)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := newStore(t, "vmafx-api")
	reg := serve.NewRegistry()
	metrics := httpapi.NewMetrics(reg)
	reader := outputs.New(store)
	h := console.Mount(httpapi.New(store, metrics, reader).Handler(), console.New(store, metrics, reader, opts))
	ctx, cancel := context.WithCancel(context.Background())
	d := &door{url: "http://" + ln.Addr().String(), probeURL: "http://" + probe.Addr().String(), store: store, reg: reg, cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- serve.Serve(ctx, sopts, ln, probe, h, reg, nil) }()
	t.Cleanup(func() { d.stop(t) })
	waitServing(t, d.probeURL+"/healthz")
	return d
}

// perFrameJSON is a worker's per-frame output in libvmaf's JSON layout: n frames, VMAF
// falling from 95 to a dip of 20 at frame n/2, PSNR beside it.
func perFrameJSON(n int) string {
	var b strings.Builder
	b.WriteString(`{"version":"test","fps":24,"frames":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		v := 95 - float64(i%7)
		if i == n/2 {
			v = 20
		}
		fmt.Fprintf(&b, `{"frameNum":%d,"metrics":{"integer_vif_scale0":0.5,"psnr_y":%.6f,"vmaf":%.6f}}`, i, 30+v/10, v)
	}
	b.WriteString(`],"pooled_metrics":{}}`)
	return b.String()
}

// The object store's root keys, as a job's Secret holds them.
const (
	s3AccessKey = "VMAFXCONSOLETEST"
	s3SecretKey = "vmafx-console-test-secret"
)

// startS3 runs versitygw ($VMAFX_VERSITYGW, which make test builds), a real S3 server,
// on 127.0.0.1 over a temporary directory, stops it by its PID at the end, and returns
// its endpoint and a client with the root keys for the test's own uploads. Without it the
// test skips, and fails under VMAFX_REQUIRE_INTEGRATION.
func startS3(t *testing.T) (string, *awss3.Client) {
	t.Helper()
	bin := os.Getenv("VMAFX_VERSITYGW")
	if bin == "" {
		if os.Getenv("VMAFX_REQUIRE_INTEGRATION") != "" {
			t.Fatal("VMAFX_REQUIRE_INTEGRATION is set but VMAFX_VERSITYGW is not (make versitygw prints it)")
		}
		t.Skip("VMAFX_VERSITYGW is not set: make versitygw builds the S3 server the job's output is read from")
	}
	addr, err := testutil.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command(bin, "--port", addr, "--health", "/healthz", "posix", t.TempDir())
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s3AccessKey, "ROOT_SECRET_ACCESS_KEY="+s3SecretKey)
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	endpoint := "http://" + addr
	waitServing(t, endpoint+"/healthz")
	return endpoint, awss3.New(awss3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s3AccessKey, s3SecretKey, "")})
}

// upload creates bucket and puts data at key.
func upload(t *testing.T, c *awss3.Client, bucket, key, data string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("creating bucket %s: %v", bucket, err)
	}
	putObject(t, c, bucket, key, []byte(data))
}

// putObject puts data at key of an existing bucket.
func putObject(t *testing.T, c *awss3.Client, bucket, key string, data []byte) {
	t.Helper()
	if _, err := c.PutObject(context.Background(), &awss3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)}); err != nil {
		t.Fatalf("uploading %s/%s: %v", bucket, key, err)
	}
}

// The worst frames the seeded job's status lists (perFrameJSON's dip, then two of its
// lowest), fewer than the five the console circles on its own: the page must mark these.
var listedWorst = []vmafxv1.JobFrame{{Index: 24, VMAF: "20.000000"}, {Index: 6, VMAF: "89.000000"}, {Index: 13, VMAF: "89.000000"}}

// reportPicture is a fixture with the worker's layout, w by h pixels a panel: the
// reference (a smooth pattern), the distorted frame (the same in 8x8 blocks, as a
// starved encoder leaves it) and the heat map of their luma difference, side by side.
func reportPicture(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 3*w, h))
	ref := func(x, y int) float64 {
		return 128 + 90*math.Sin(float64(x)/9)*math.Cos(float64(y)/7) + 30*math.Sin(float64(x+y)/23)
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r := ref(x, y)
			bx, by := x/8*8, y/8*8
			d := 0.0
			for j := 0; j < 8; j++ {
				for i := 0; i < 8; i++ {
					d += ref(bx+i, by+j)
				}
			}
			d /= 64
			img.Set(x, y, color.RGBA{R: uint8(r), G: uint8(r * 0.8), B: uint8(255 - r*0.6), A: 255})
			img.Set(w+x, y, color.RGBA{R: uint8(d), G: uint8(d * 0.8), B: uint8(255 - d*0.6), A: 255})
			heat := min(math.Abs(r-d)*4, 510)
			img.Set(2*w+x, y, color.RGBA{R: uint8(min(heat, 255)), G: uint8(max(heat-255, 0)), A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// reportPlot is a fixture of the worker's score plot: perFrameJSON's VMAF curve over n
// frames with the listed worst frames circled, 640 by 200.
func reportPlot(n int) []byte {
	var pts []string
	y := func(v float64) float64 { return 190 - v*1.8 }
	for i := 0; i < n; i++ {
		v := 95 - float64(i%7)
		if i == n/2 {
			v = 20
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", 10+float64(i)*620/float64(n-1), y(v)))
	}
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="640" height="200"><rect width="640" height="200" fill="#fff"/>`)
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#0b5cad"/>`, strings.Join(pts, " "))
	for _, f := range listedWorst {
		v, _ := strconv.ParseFloat(f.VMAF, 64)
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" fill="none" stroke="#cf222e"/>`, 10+float64(f.Index)*620/float64(n-1), y(v))
	}
	b.WriteString(`</svg>`)
	return []byte(b.String())
}

// uploadReport puts the report's pictures beside the job's output, named as the worker
// names them (vmafxv1.WorstFramePicture and the plot), in the bucket upload made.
func uploadReport(t *testing.T, c *awss3.Client, prefix string, frames int) {
	t.Helper()
	for _, f := range listedWorst {
		putObject(t, c, "media", prefix+vmafxv1.WorstFramePicture(int(f.Index)), reportPicture(t, 160, 90))
	}
	putObject(t, c, "media", prefix+vmafxv1.ReportPlotSVG, reportPlot(frames))
}

// consoleRole lets a ServiceAccount of ns read what the console shows: jobs, comparisons,
// ladders, and the Secret that holds the outputs' keys.
func grantConsole(t *testing.T, ns, sa string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa + "-console"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{vmafxv1.GroupVersion.Group}, Resources: []string{"vmafxcomparisons", "vmafxladders"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"media-bucket"}, Verbs: []string{"get"}},
	}}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa + "-console"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}}
	for _, o := range []client.Object{role, rb} {
		if err := testenv.Client().Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// seedConsole creates what the console shows: three finished jobs, one with a
// per-frame output in the fake store, a comparison and a ladder with results.
func seedConsole(t *testing.T, ns, s3URL string, frames int) {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "media-bucket"}, StringData: map[string]string{
		"AWS_ACCESS_KEY_ID": s3AccessKey, "AWS_SECRET_ACCESS_KEY": s3SecretKey, "AWS_REGION": "us-east-1",
		"AWS_ENDPOINT_URL": s3URL, "AWS_S3_USE_PATH_STYLE": "true"}}
	if err := c.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	out := vmafxv1.OutputURI("s3://media/trailer/x264-720p.json")
	jobsToMake := []struct {
		name, score string
		output      bool
	}{{"trailer-x264-720p", "88.123456", true}, {"trailer-x264-360p", "71.500000", false}, {"trailer-av1-720p", "", false}}
	for _, j := range jobsToMake {
		job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: j.name}, Spec: vmafxv1.VmafxJobSpec{
			Reference: "s3://media/trailer/ref.y4m", Distorted: vmafxv1.VideoURI("s3://media/trailer/" + j.name + ".mp4"),
			Credentials: &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "media-bucket"}}}}
		if j.output {
			job.Spec.Output = &out
			job.Spec.Features = []vmafxv1.Feature{vmafxv1.FeaturePSNR}
			job.Spec.WorstFrames = &vmafxv1.WorstFrames{Pictures: true}
		}
		if err := c.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		if j.score != "" {
			playOperator(t, ns, j.name, vmafxv1.JobSucceeded, j.score)
		} else {
			playOperator(t, ns, j.name, vmafxv1.JobRunning, "")
		}
	}
	// The scored job's result as the operator records it, with its timings and device.
	j := &vmafxv1.VmafxJob{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "trailer-x264-720p"}, j); err != nil {
		t.Fatal(err)
	}
	start := metav1.NewTime(j.CreationTimestamp.Add(3 * time.Second))
	done := metav1.NewTime(j.CreationTimestamp.Add(41 * time.Second))
	j.Status.StartTime, j.Status.CompletionTime = &start, &done
	j.Status.Result.Frames = int32(frames)
	j.Status.Result.Min, j.Status.Result.Max, j.Status.Result.HarmonicMean = "20.000000", "95.000000", "87.654321"
	j.Status.Result.Device = "NVIDIA H100 80GB HBM3 (Vulkan 1.3)"
	j.Status.Result.Backend = "vulkan"
	j.Status.Result.Features = map[string]string{"psnr_y": "39.123456"}
	j.Status.Result.Percentiles = &vmafxv1.JobPercentiles{P1: "20.000000", P5: "88.400000", P50: "92.000000"}
	j.Status.Result.WorstFrames = listedWorst
	j.Status.Result.Scenes = &vmafxv1.JobScenes{Count: 3, Worst: &vmafxv1.JobScene{Start: 21, Frames: 7, Mean: "81.857143", Min: "20.000000", P5: "41.600000"}}
	j.Status.Result.Report = string(out) + vmafxv1.ReportSuffix
	j.Status.Conditions = []metav1.Condition{{Type: vmafxv1.JobOutputWritten, Status: metav1.ConditionTrue, Reason: "Written", Message: "per-frame scores in " + string(out), LastTransitionTime: done}}
	if err := c.Status().Update(ctx, j); err != nil {
		t.Fatal(err)
	}

	cmp := &vmafxv1.VmafxComparison{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "encoder-ab"}, Spec: vmafxv1.VmafxComparisonSpec{
		Reference: "s3://media/trailer/ref.y4m", Distorted: []vmafxv1.ComparisonInput{{Name: "x264-r164", URI: "s3://media/trailer/a.mp4"}, {Name: "x264-r165", URI: "s3://media/trailer/b.mp4"}}}}
	if err := c.Create(ctx, cmp); err != nil {
		t.Fatal(err)
	}
	cmp.Status = vmafxv1.VmafxComparisonStatus{Phase: vmafxv1.JobSucceeded, Total: 2, Succeeded: 2, Best: "x264-r165", Results: []vmafxv1.ComparisonEntry{
		{Name: "x264-r164", Job: "encoder-ab-x264-r164", Phase: vmafxv1.JobSucceeded, Score: "91.200000", HarmonicMean: "90.900000", Min: "80.100000", Frames: 240},
		{Name: "x264-r165", Job: "encoder-ab-x264-r165", Phase: vmafxv1.JobSucceeded, Score: "92.700000", HarmonicMean: "92.500000", Min: "84.300000", Frames: 240}}}
	if err := c.Status().Update(ctx, cmp); err != nil {
		t.Fatal(err)
	}

	ladder := &vmafxv1.VmafxLadder{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trailer-ladder"}, Spec: vmafxv1.VmafxLadderSpec{
		Reference: "s3://media/trailer/ref.y4m", Resolutions: []vmafxv1.LadderResolution{{Height: 720}, {Height: 360}},
		Codecs: []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{23, 28, 33}}}, Output: "s3://media/trailer/ladder"}}
	if err := c.Create(ctx, ladder); err != nil {
		t.Fatal(err)
	}
	rung := func(h int32, v int32, kbps int64, score string, hull bool) vmafxv1.LadderRung {
		name := fmt.Sprintf("%dp-x264-crf%d", h, v)
		return vmafxv1.LadderRung{Name: name, Job: "trailer-ladder-" + name, Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: v, Height: h,
			Phase: vmafxv1.RungSucceeded, Resolution: fmt.Sprintf("%dx%d", h*16/9, h), Bitrate: kbps * 1000, Bytes: kbps * 1000 / 8 * 60, Score: score, Hull: hull}
	}
	ladder.Status = vmafxv1.VmafxLadderStatus{Phase: vmafxv1.JobSucceeded, Total: 6, Encoded: 6, Scored: 6, Rungs: []vmafxv1.LadderRung{
		rung(720, 23, 4200, "96.100000", true), rung(720, 28, 2100, "91.300000", true), rung(720, 33, 1100, "82.000000", false),
		rung(360, 23, 1500, "84.500000", true), rung(360, 28, 800, "76.200000", true), rung(360, 33, 420, "63.900000", true)},
		Hull: []string{"360p-x264-crf33", "360p-x264-crf28", "360p-x264-crf23", "720p-x264-crf28", "720p-x264-crf23"}}
	if err := c.Status().Update(ctx, ladder); err != nil {
		t.Fatal(err)
	}
}

// renditionWorst are the worst frames of the jobs seedRenditions makes: two of the
// comparison's inputs and two of the ladder's rungs, each with its pictures.
var renditionWorst = map[string][]vmafxv1.JobFrame{
	"encoder-ab-x264-r164":           {{Index: 24, VMAF: "80.100000"}, {Index: 7, VMAF: "84.000000"}},
	"encoder-ab-x264-r165":           {{Index: 30, VMAF: "84.300000"}},
	"trailer-ladder-720p-x264-crf33": {{Index: 24, VMAF: "61.500000"}, {Index: 25, VMAF: "63.000000"}},
	"trailer-ladder-360p-x264-crf33": {{Index: 24, VMAF: "40.250000"}},
}

// renditionScore are their scores, as the comparison's and the ladder's tables have them.
var renditionScore = map[string]string{
	"encoder-ab-x264-r164": "91.200000", "encoder-ab-x264-r165": "92.700000",
	"trailer-ladder-720p-x264-crf33": "82.000000", "trailer-ladder-360p-x264-crf33": "63.900000",
}

// seedRenditions creates the jobs of seedConsole's comparison and ladder, labelled as the
// operator labels them, scored with their worst frames' pictures in the S3 server (whose
// bucket media exists).
func seedRenditions(t *testing.T, ns string, s3 *awss3.Client) {
	t.Helper()
	ctx := context.Background()
	for name, worst := range renditionWorst {
		label, owner := vmafxv1.LabelComparison, "encoder-ab"
		if strings.HasPrefix(name, "trailer-ladder-") {
			label, owner = vmafxv1.LabelLadder, "trailer-ladder"
		}
		out := vmafxv1.OutputURI("s3://media/renditions/" + name + ".json")
		job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{label: vmafxv1.JobLabelValue(owner)}},
			Spec: vmafxv1.VmafxJobSpec{Reference: "s3://media/trailer/ref.y4m", Distorted: vmafxv1.VideoURI("s3://media/renditions/" + name + ".mp4"),
				Output: &out, WorstFrames: &vmafxv1.WorstFrames{Pictures: true},
				Credentials: &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "media-bucket"}}}}
		if err := testenv.Client().Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		playOperator(t, ns, name, vmafxv1.JobSucceeded, renditionScore[name])
		if err := testenv.Client().Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			t.Fatal(err)
		}
		job.Status.Result.WorstFrames = worst
		job.Status.Result.Report = string(out) + vmafxv1.ReportSuffix
		if err := testenv.Client().Status().Update(ctx, job); err != nil {
			t.Fatal(err)
		}
		for _, f := range worst {
			putObject(t, s3, "media", "renditions/"+name+".json.report/"+vmafxv1.WorstFramePicture(int(f.Index)), reportPicture(t, 160, 90))
		}
	}
}

// checkRenditionsWorst: the page lists the worst frames of each rendition that has them,
// in the table's order, and shows each one's worst picture, decoded by the browser.
func checkRenditionsWorst(t *testing.T, ctx context.Context, want []string) {
	t.Helper()
	// The pictures load lazily, as the reader scrolls to them: the test asks for them all
	// at once, as a reader who scrolled the page through.
	act(t, ctx, "waiting for the renditions' pictures", chromedp.WaitVisible(chromedp.CSS("#worst-renditions")),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("#worst-renditions img").forEach(i => i.loading = "eager"); true`),
		chromedp.Poll[chromedp.Void](`Array.from(document.querySelectorAll("#worst-renditions img")).every(i => i.complete && i.naturalWidth > 0)`))
	got := eval[[]string](t, ctx, "reading the renditions' worst frames", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("#worst-renditions article")).map(a => a.dataset.job + "|" +
			Array.from(a.querySelectorAll("tbody tr")).map(r => r.dataset.frame).join(",") + "|" +
			Array.from(a.querySelectorAll("img")).map(i => i.naturalWidth).join(","))`))
	var wantRows []string
	for _, job := range want {
		var frames []string
		for _, f := range renditionWorst[job] {
			frames = append(frames, fmt.Sprint(f.Index))
		}
		wantRows = append(wantRows, job+"|"+strings.Join(frames, ",")+"|480")
	}
	if fmt.Sprint(got) != fmt.Sprint(wantRows) {
		t.Errorf("renditions' worst frames %q, want %q: each one's frames and its worst picture (three 160-pixel panels)", got, wantRows)
	}
}

// browser starts headless Chromium with a fresh profile that talks to nothing but the
// test's own servers.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("VMAFX_REQUIRE_INTEGRATION") != "" {
			t.Fatalf("VMAFX_REQUIRE_INTEGRATION is set but there is no %s (hack/install-deps.sh installs Debian's chromium): %v", chromium, err)
		}
		t.Skipf("no %s (Debian's chromium; hack/install-deps.sh installs it): %v", chromium, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-proxy-server", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	// Start the browser on this context: a step's shorter deadline then ends the step,
	// not the browser.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return ctx
}

// screenshots is where the pages' pictures are kept: $VMAFX_CONSOLE_SCREENSHOTS, else
// _output/console-screenshots of the repository.
func screenshots(t *testing.T) string {
	dir := os.Getenv("VMAFX_CONSOLE_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(testenv.RepoRoot(), "_output", "console-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shoot keeps a screenshot of the whole page as name.png.
func shoot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

func eval[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func act(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		// Say what the browser shows: the page the step did not expect.
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		loc, _ := chromedp.Run(sctx, chromedp.Location())
		text, _ := chromedp.Run(sctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("%s: %v; the browser is at %s showing:\n%s", what, err, loc, text)
	}
}

// login fills in the login form with token and namespace ns and sends it.
func login(t *testing.T, ctx context.Context, base, token, ns string) {
	t.Helper()
	act(t, ctx, "opening the login page", chromedp.Navigate(base+"/console/"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SetValue(chromedp.CSS("#token"), token), chromedp.SetValue(chromedp.CSS("#namespace"), ns),
		chromedp.Click(chromedp.CSS(`form[action="/console/login"] button[type=submit]`)))
}

func TestConsoleInABrowser(t *testing.T) {
	ctx := browser(t)
	const frames = 48
	endpoint, s3 := startS3(t)
	upload(t, s3, "media", "trailer/x264-720p.json", perFrameJSON(frames))
	uploadReport(t, s3, "trailer/x264-720p.json.report/", frames)
	ns := testenv.CreateNamespace(t)
	d := startConsole(t, console.Options{ReadOutputs: true, Heartbeat: 100 * time.Millisecond})
	seedConsole(t, ns, endpoint, frames)
	token := tokenFor(t, ns, "reviewer", allVerbs...)
	grantConsole(t, ns, "reviewer")
	nobody := tokenFor(t, ns, "nobody")
	viewer := tokenFor(t, ns, "viewer", "get", "list", "watch") // jobs, but not the Secret
	dir := screenshots(t)

	// The login page, then the namespace's jobs.
	act(t, ctx, "opening the console", chromedp.Navigate(d.url+"/console/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	shoot(t, ctx, dir, "login")
	login(t, ctx, d.url, token, ns)
	act(t, ctx, "waiting for the job list", chromedp.WaitVisible(chromedp.CSS("#jobs")))
	rows := eval[[]string](t, ctx, "reading the job list", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("#jobs tbody tr")).map(r => Array.from(r.cells).map(c => c.textContent.trim()).join("|"))`))
	want := map[string]string{
		"trailer-x264-720p": "trailer-x264-720p|Succeeded|88.123456|node-a|vulkan|",
		"trailer-x264-360p": "trailer-x264-360p|Succeeded|71.500000|node-a|cpu|",
		"trailer-av1-720p":  "trailer-av1-720p|Running||node-a|auto|",
	}
	if len(rows) != len(want) {
		t.Fatalf("job list rows = %q, want one per job (%d)", rows, len(want))
	}
	for _, r := range rows {
		name, _, _ := strings.Cut(r, "|")
		if w, ok := want[name]; !ok || !strings.HasPrefix(r, w) {
			t.Errorf("job list row %q, want it to start %q", r, w)
		}
	}
	// The list is live: a job created while it is open appears without a reload, then its
	// score, from the stream of the namespace's jobs (the page says so; the 5 s refresh
	// it falls back to says "refreshes itself").
	act(t, ctx, "waiting for the live list", chromedp.Poll[chromedp.Void](`document.getElementById("live-status").textContent.startsWith("Newest first; live")`),
		chromedp.Evaluate[chromedp.Void](`window.vmafxNoReload = true`))
	live := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trailer-live"}, Spec: vmafxv1.VmafxJobSpec{
		Reference: "s3://media/trailer/ref.y4m", Distorted: "s3://media/trailer/live.mp4"}}
	if err := testenv.Client().Create(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	act(t, ctx, "waiting for the new job in the list", chromedp.WaitVisible(chromedp.CSS(`#jobs tr[data-job="trailer-live"]`)))
	playOperator(t, ns, "trailer-live", vmafxv1.JobSucceeded, "77.250000")
	act(t, ctx, "waiting for the new job's score", chromedp.Poll[chromedp.Void](`document.querySelector('#jobs tr[data-job="trailer-live"]').textContent.includes("77.250000")`))
	listedNow := eval[int](t, ctx, "counting the rows", chromedp.Evaluate[int](`document.querySelectorAll("#jobs tbody tr").length`))
	status := eval[string](t, ctx, "reading the list's status", chromedp.Text(chromedp.CSS("#live-status")))
	kept := eval[bool](t, ctx, "checking the page was not reloaded", chromedp.Evaluate[bool](`window.vmafxNoReload === true`))
	if listedNow != len(want)+1 || !kept || !strings.HasPrefix(status, "Newest first; live, updated at") {
		t.Errorf("after a job was created: %d rows, page kept %v, status %q; want the new job's row added once, no reload, the live stream", listedNow, kept, status)
	}
	shoot(t, ctx, dir, "jobs")

	// A job's page: its curve has a point per frame and the worst frames of the status
	// circled (the worker's three, not the five lowest the console would pick itself).
	act(t, ctx, "opening a job", chromedp.Click(chromedp.CSS(`a[href$="/jobs/trailer-x264-720p"]`)), chromedp.WaitVisible(chromedp.CSS("#vmaf-curve")))
	points := eval[int](t, ctx, "counting the curve's points", chromedp.Evaluate[int](`document.querySelector("#vmaf-curve").points.numberOfItems`))
	declared := eval[chromedp.AttributeResult](t, ctx, "reading data-points", chromedp.AttributeValue(chromedp.CSS("#vmaf-curve"), "data-points"))
	if points != frames || declared.Value != fmt.Sprint(frames) {
		t.Errorf("VMAF curve draws %d points (data-points %q), want %d, one per frame", points, declared.Value, frames)
	}
	worst := eval[int](t, ctx, "counting the worst frames", chromedp.Evaluate[int](`document.querySelectorAll("#vmaf circle.worst").length`))
	listed := eval[[]string](t, ctx, "reading the worst frames", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("#worst tbody tr")).map(r => r.cells[0].textContent + "|" + r.cells[1].textContent)`))
	if worst != len(listedWorst) || fmt.Sprint(listed) != "[24|20.000000 6|89.000000 13|89.000000]" {
		t.Errorf("%d worst frames circled, listed %q; want the status's %d: frame %d (the dip) first", worst, listed, len(listedWorst), frames/2)
	}
	where := eval[string](t, ctx, "reading the percentiles and the worst scene", chromedp.Evaluate[string](
		`document.querySelector("#percentiles").textContent + "|" + document.querySelector("#worst-scene").textContent`))
	for _, s := range []string{"5th percentile88.400000", "Median (50th)92.000000", "frames 21 to 27 (7 frames)", "81.857143"} {
		if !strings.Contains(where, s) {
			t.Errorf("percentiles and worst scene %q lack %q", where, s)
		}
	}
	// The pictures, streamed from the report in the object store through the console:
	// each decoded by the browser (naturalWidth: the fixture's three 160-pixel panels).
	act(t, ctx, "waiting for the pictures", chromedp.Poll[chromedp.Void](
		`Array.from(document.querySelectorAll("#pictures img")).every(i => i.complete)`))
	widths := eval[[]int](t, ctx, "reading the pictures", chromedp.Evaluate[[]int](
		`Array.from(document.querySelectorAll("#pictures img")).map(i => i.naturalWidth)`))
	if fmt.Sprint(widths) != "[480 480 480 640]" {
		t.Errorf("pictures decoded %v pixels wide, want the three worst frames' (480) and the plot (640)", widths)
	}
	if psnr := eval[int](t, ctx, "counting the PSNR curve's points", chromedp.Evaluate[int](`document.querySelector("#psnr-y-curve").points.numberOfItems`)); psnr != frames {
		t.Errorf("PSNR curve draws %d points, want %d", psnr, frames)
	}
	page := eval[string](t, ctx, "reading the job page", chromedp.Text(chromedp.CSS("main")))
	for _, s := range []string{"NVIDIA H100 80GB HBM3", "Ran for", "38s", "OutputWritten", "87.654321", "psnr_y"} {
		if !strings.Contains(page, s) {
			t.Errorf("job page lacks %q", s)
		}
	}
	shoot(t, ctx, dir, "job")
	checkReportRoute(t, d.url, ns, token)

	// The ladder's rate-quality curves and hull, and the comparison, each with its jobs'
	// worst frames (made now: the job list above counts the seeded jobs).
	seedRenditions(t, ns, s3)
	act(t, ctx, "opening the ladder", chromedp.Navigate(d.url+"/console/namespaces/"+ns+"/ladders/trailer-ladder"), chromedp.WaitVisible(chromedp.CSS("#ladder")))
	ladderCurves := eval[[]int](t, ctx, "reading the ladder's curves", chromedp.Evaluate[[]int](`Array.from(document.querySelectorAll("#ladder polyline.series")).map(p => p.points.numberOfItems)`))
	if fmt.Sprint(ladderCurves) != "[3 3 5]" {
		t.Errorf("ladder curves have %v points, want [3 3 5]: 720p, 360p and the hull", ladderCurves)
	}
	// Each rung's worst frames with its pictures, in the table's order.
	checkRenditionsWorst(t, ctx, []string{"trailer-ladder-720p-x264-crf33", "trailer-ladder-360p-x264-crf33"})
	shoot(t, ctx, dir, "ladder")
	act(t, ctx, "opening the comparison", chromedp.Navigate(d.url+"/console/namespaces/"+ns+"/comparisons/encoder-ab"), chromedp.WaitVisible(chromedp.CSS("#comparison")))
	checkRenditionsWorst(t, ctx, []string{"encoder-ab-x264-r164", "encoder-ab-x264-r165"})
	shoot(t, ctx, dir, "comparison")

	// A running job's page follows its phases (the job's event stream) and shows the
	// result once the job has finished, without a reload by hand.
	act(t, ctx, "opening a running job", chromedp.Navigate(d.url+"/console/namespaces/"+ns+"/jobs/trailer-av1-720p"),
		chromedp.WaitVisible(chromedp.CSS(`#summary[data-events]`)))
	playOperator(t, ns, "trailer-av1-720p", vmafxv1.JobSucceeded, "64.250000")
	act(t, ctx, "waiting for the result", chromedp.WaitVisible(chromedp.CSS("#job-score")))
	if got := eval[string](t, ctx, "reading the score", chromedp.Text(chromedp.CSS("#job-score"))); got != "64.250000" {
		t.Errorf("the running job's page shows score %q once it finished, want 64.250000", got)
	}

	// An invalid job: the API server's own message comes back.
	act(t, ctx, "submitting an invalid job", chromedp.Navigate(d.url+"/console/namespaces/"+ns+"/submit"), chromedp.WaitVisible(chromedp.CSS("#reference")),
		chromedp.SetValue(chromedp.CSS("#reference"), "ftp://media.example.com/ref.y4m"),
		chromedp.SetValue(chromedp.CSS("#distorted"), "https://media.example.com/dist.y4m"),
		chromedp.Click(chromedp.CSS(`main form button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("#submit-error")))
	msg := eval[string](t, ctx, "reading the refusal", chromedp.Text(chromedp.CSS("#submit-error")))
	if !strings.Contains(msg, "spec.reference") || !strings.Contains(msg, "unsupported scheme: the worker reads file://") {
		t.Errorf("refusal %q, want the CRD's message for spec.reference", msg)
	}
	shoot(t, ctx, dir, "submit-invalid")
	// Every field of the form, and of the navigation, has a label.
	unlabelled := eval[[]string](t, ctx, "looking for unlabelled fields", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("input:not([type=hidden]), select, textarea")).filter(e => !e.labels || e.labels.length === 0).map(e => e.name)`))
	if len(unlabelled) > 0 {
		t.Errorf("fields without a label: %q", unlabelled)
	}
	// The same form, fixed, as a dry run: accepted, nothing created.
	act(t, ctx, "dry-running a valid job", chromedp.SetValue(chromedp.CSS("#reference"), "https://media.example.com/ref.y4m"),
		chromedp.Click(chromedp.CSS(`main form button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("#submit-ok")))

	// A token without rights: logged in, it sees no job, no score, no curve.
	act(t, ctx, "logging out", chromedp.Click(chromedp.CSS(`form[action="/console/logout"] button`)), chromedp.WaitVisible(chromedp.CSS("#token")))
	login(t, ctx, d.url, nobody, ns)
	act(t, ctx, "waiting for the refusal", chromedp.WaitVisible(chromedp.CSS("#error")))
	refused := eval[string](t, ctx, "reading the refusal", chromedp.Text(chromedp.CSS("main")))
	if !strings.Contains(refused, "403") || !strings.Contains(refused, "cannot list resource") || strings.Contains(refused, "trailer-") {
		t.Errorf("a token without rights sees %q, want the API server's 403 and no job", refused)
	}
	shoot(t, ctx, dir, "forbidden")
	act(t, ctx, "opening a job without rights", chromedp.Navigate(d.url+"/console/namespaces/"+ns+"/jobs/trailer-x264-720p"), chromedp.WaitVisible(chromedp.CSS("#error")))
	if page := eval[string](t, ctx, "reading the page", chromedp.Text(chromedp.CSS("main"))); strings.Contains(page, "88.123456") || !strings.Contains(page, "forbidden") {
		t.Errorf("a token without rights sees %q on a job's page, want a refusal", page)
	}

	// A token that may read the jobs but not the Secret of their output: the scores, and
	// no curve, since the console reads the output with the Secret's keys as the caller.
	act(t, ctx, "logging out again", chromedp.Click(chromedp.CSS(`form[action="/console/logout"] button`)), chromedp.WaitVisible(chromedp.CSS("#token")))
	login(t, ctx, d.url, viewer, ns)
	act(t, ctx, "opening a job without the Secret", chromedp.WaitVisible(chromedp.CSS("#jobs")),
		chromedp.Navigate(d.url+"/console/namespaces/"+ns+"/jobs/trailer-x264-720p"), chromedp.WaitVisible(chromedp.CSS("#curve-note")))
	note := eval[string](t, ctx, "reading the note", chromedp.Text(chromedp.CSS("#curve-note")))
	curves := eval[int](t, ctx, "counting curves", chromedp.Evaluate[int](`document.querySelectorAll("svg.chart").length`))
	score := eval[string](t, ctx, "reading the score", chromedp.Text(chromedp.CSS("#job-score")))
	if curves != 0 || !strings.Contains(note, "Secret media-bucket") || !strings.Contains(note, "forbidden") || score != "88.123456" {
		t.Errorf("without the Secret: %d curves, note %q, score %q; want the score, no curve and the refusal", curves, note, score)
	}
	// Its worst frames from the status, and where the pictures are instead of them.
	pictureNote := eval[string](t, ctx, "reading the pictures' note", chromedp.Text(chromedp.CSS("#picture-note")))
	images := eval[int](t, ctx, "counting pictures", chromedp.Evaluate[int](`document.querySelectorAll("#pictures img").length`))
	rowsWorst := eval[int](t, ctx, "counting worst frames", chromedp.Evaluate[int](`document.querySelectorAll("#worst tbody tr").length`))
	if images != 0 || rowsWorst != len(listedWorst) || !strings.Contains(pictureNote, "s3://media/trailer/x264-720p.json.report/") {
		t.Errorf("without the Secret: %d pictures, %d worst frames, note %q; want no picture, the status's frames and the report's URI", images, rowsWorst, pictureNote)
	}
	shoot(t, ctx, dir, "job-without-secret")

	// Neither may they fetch a picture, nor may a token without rights stream the list.
	pic := "/console/namespaces/" + ns + "/jobs/trailer-x264-720p/report/" + vmafxv1.WorstFramePicture(24)
	for _, tc := range []struct {
		who, token, path string
		want             int
	}{{"the viewer", viewer, pic, http.StatusForbidden}, {"nobody", nobody, pic, http.StatusForbidden},
		{"nobody", nobody, "/console/namespaces/" + ns + "/jobs-stream", http.StatusForbidden}} {
		if code, body := consoleGet(t, d.url+tc.path, tc.token); code != tc.want || strings.Contains(body, "PNG") || strings.Contains(body, "88.123456") {
			t.Errorf("%s GET %s: %d %q, want %d and nothing of the namespace", tc.who, tc.path, code, body, tc.want)
		}
	}

	// One live list a session: a second stream of the same token ends the first, which
	// says so (its page falls back to the refresh).
	checkOneStream(t, d.url+"/console/namespaces/"+ns+"/jobs-stream", token)
}

// consoleGet fetches u as the console's browser would, with token in its cookie.
func consoleGet(t *testing.T, u, token string) (int, string) {
	t.Helper()
	a, body := consoleAnswer(t, u, token)
	return a.StatusCode, body
}

func consoleAnswer(t *testing.T, u, token string) (answer, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: console.CookieName, Value: token})
	resp, err := http.DefaultClient.Do(req)
	return read(t, resp, err)
}

// checkReportRoute: the report route serves the worker's picture names of the listed
// worst frames, and nothing else of the bucket.
func checkReportRoute(t *testing.T, base, ns, token string) {
	t.Helper()
	prefix := base + "/console/namespaces/" + ns + "/jobs/trailer-x264-720p/report/"
	for _, tc := range []struct {
		file string
		want int
	}{
		{vmafxv1.WorstFramePicture(24), http.StatusOK}, {vmafxv1.ReportPlotSVG, http.StatusOK},
		{vmafxv1.ReportJSON, http.StatusNotFound},            // not a picture
		{vmafxv1.WorstFramePicture(25), http.StatusNotFound}, // not a listed worst frame
		{"..%2fx264-720p.json", http.StatusNotFound},         // the output itself
		{"frame-24.png", http.StatusNotFound},
	} {
		a, body := consoleAnswer(t, prefix+tc.file, token)
		picture := strings.HasPrefix(body, "\x89PNG") || strings.HasPrefix(body, "<svg")
		if a.StatusCode != tc.want || picture != (tc.want == http.StatusOK) {
			t.Errorf("GET report/%s: %d (%.40q), want %d", tc.file, a.StatusCode, body, tc.want)
		}
		// A picture opened on its own (an SVG is a document) runs no script.
		if csp := a.Header.Get("Content-Security-Policy"); picture && (!strings.Contains(csp, "sandbox") || strings.Contains(csp, "script-src")) {
			t.Errorf("GET report/%s: Content-Security-Policy %q, want a sandbox without scripts", tc.file, csp)
		}
	}
}

// checkOneStream opens the live list twice with one token: the first stream is told it
// was replaced and ends.
func checkOneStream(t *testing.T, u, token string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	open := func() io.ReadCloser {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/event-stream")
		req.AddCookie(&http.Cookie{Name: console.CookieName, Value: token})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			resp.Body.Close()
			t.Fatalf("GET %s: %d %s, want an event stream", u, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		return resp.Body
	}
	// until reads events up to the one named want (a comment is "heartbeat"), and returns
	// the names seen.
	until := func(r *bufio.Reader, want string) []string {
		var seen []string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the stream for %q after %q: %v", want, seen, err)
			}
			name, ok := strings.CutPrefix(strings.TrimSpace(line), "event: ")
			if strings.HasPrefix(line, ": ") {
				name, ok = "heartbeat", true
			}
			if ok {
				seen = append(seen, name)
				if name == want {
					return seen
				}
			}
		}
	}
	bodyA := open()
	defer bodyA.Close()
	a := bufio.NewReader(bodyA)
	until(a, "job")
	// An idle stream sends comments, which keep proxies from closing it.
	until(a, "heartbeat")
	bodyB := open()
	defer bodyB.Close()
	until(bufio.NewReader(bodyB), "job")
	until(a, "replaced")
	if rest, err := io.ReadAll(a); err != nil || strings.Contains(string(rest), "event:") {
		t.Errorf("the replaced stream went on: %q, %v", rest, err)
	}
}
