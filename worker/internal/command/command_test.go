package command

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil/fftest"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/backend"
)

// The test pair: p02 of the kernel's reference data, 176x144 yuv420p, 16
// frames, with libvmaf 3.2.0's output for it.
const (
	testdata = "../../../vmaf/testdata"
	pairW    = 176
	pairH    = 144
	frames   = 16
)

var (
	refClip  = filepath.Join(testdata, "clips/p02_ref.yuv")
	distClip = filepath.Join(testdata, "clips/p02_dist.yuv")
)

// libvmafJSON is the part of libvmaf's JSON log the tests compare.
type libvmafJSON struct {
	Frames []struct {
		FrameNum int                `json:"frameNum"`
		Metrics  map[string]float64 `json:"metrics"`
	} `json:"frames"`
	Pooled map[string]struct {
		Min, Max, Mean float64
		Harmonic       float64 `json:"harmonic_mean"`
	} `json:"pooled_metrics"`
}

func readLibvmafJSON(t *testing.T, path string) *libvmafJSON {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j libvmafJSON
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &j
}

// modelSHA256 is the checksum of a built-in model's JSON file.
func modelSHA256(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../../../vmaf/models", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// run is one in-process run of the command.
type run struct {
	code           int
	stdout, stderr string
	termination    string // the termination message file, "" if absent
}

// runWorker runs the command in-process with env (plus a termination log in
// a temporary directory, unless env names one) and returns what it did.
func runWorker(t *testing.T, ctx context.Context, env map[string]string, args ...string) run {
	t.Helper()
	term := filepath.Join(t.TempDir(), "termination-log")
	if _, ok := env["VMAFX_TERMINATION_LOG"]; !ok {
		env = withEnv(env, "VMAFX_TERMINATION_LOG", term)
	} else {
		term = env["VMAFX_TERMINATION_LOG"]
	}
	var stdout, stderr bytes.Buffer
	code := Run(ctx, args, func(k string) string { return env[k] }, &stdout, &stderr)
	r := run{code: code, stdout: stdout.String(), stderr: stderr.String()}
	if data, err := os.ReadFile(term); err == nil {
		r.termination = string(data)
	}
	return r
}

func withEnv(env map[string]string, kv ...string) map[string]string {
	m := map[string]string{}
	for k, v := range env {
		m[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// result checks that the run wrote the same single-line WorkerResult to
// stdout and the termination message, and returns it.
func (r run) result(t *testing.T) *vmafxv1.WorkerResult {
	t.Helper()
	if r.termination == "" {
		t.Fatalf("no termination message; exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if r.stdout != r.termination {
		t.Errorf("stdout %q differs from the termination message %q", r.stdout, r.termination)
	}
	if len(r.termination) > 4096 || strings.Count(r.termination, "\n") != 1 {
		t.Errorf("termination message is %d bytes on %d lines, want one line under 4 KiB", len(r.termination), strings.Count(r.termination, "\n"))
	}
	res, err := vmafxv1.ParseWorkerResult([]byte(r.termination))
	if err != nil {
		t.Fatalf("termination message %q: %v", r.termination, err)
	}
	return res
}

// rawArgs are the Pod form's arguments for the raw test pair.
func rawArgs(ref, dist string, extra ...string) []string {
	return append([]string{"score", "--reference", ref, "--distorted", dist,
		"--width", strconv.Itoa(pairW), "--height", strconv.Itoa(pairH), "--pixel-format", "yuv420p"}, extra...)
}

func TestScorePodForm(t *testing.T) {
	want := readLibvmafJSON(t, filepath.Join(testdata, "ref/p02_v061.json"))
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return "file://" + a
	}
	out := filepath.Join(t.TempDir(), "scores.json")
	r := runWorker(t, context.Background(), map[string]string{vmafxv1.EnvBackend: "cpu"},
		rawArgs(abs(refClip), abs(distClip), "--model", "vmaf_v0.6.1", "--output", "file://"+out)...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	got := r.result(t)
	pooled := want.Pooled["vmaf"]
	approx := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-4 {
			t.Errorf("%s = %.6f, want libvmaf's %.6f", name, got, want)
		}
	}
	approx("score", got.Score, pooled.Mean)
	approx("harmonic mean", got.HarmonicMean, pooled.Harmonic)
	approx("min", got.Min, pooled.Min)
	approx("max", got.Max, pooled.Max)
	type provenance struct {
		Version, Backend, RequestedBackend, Model, ModelSHA256, KernelVersion string
		Frames                                                                int
		Error                                                                 *vmafxv1.WorkerError
	}
	wantProv := provenance{vmafxv1.ResultVersion, "cpu", "cpu", "vmaf_v0.6.1", modelSHA256(t, "vmaf_v0.6.1"), vmaf.Version, frames, nil}
	gotProv := provenance{got.Version, got.Backend, got.RequestedBackend, got.Model, got.ModelSHA256, got.KernelVersion, got.Frames, got.Error}
	if diff := cmp.Diff(wantProv, gotProv); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if got.FPS <= 0 || got.WallSeconds <= 0 {
		t.Errorf("fps %v, wall %v s, want both positive", got.FPS, got.WallSeconds)
	}
	if !strings.Contains(r.stderr, `"Scoring"`) {
		t.Errorf("stderr lacks the structured logs:\n%s", r.stderr)
	}

	// The per-frame output has libvmaf's layout and values.
	perFrame := readLibvmafJSON(t, out)
	if len(perFrame.Frames) != len(want.Frames) {
		t.Fatalf("output has %d frames, want %d", len(perFrame.Frames), len(want.Frames))
	}
	for i, f := range perFrame.Frames {
		approx(fmt.Sprintf("frame %d vmaf", i), f.Metrics["vmaf"], want.Frames[i].Metrics["vmaf"])
		approx(fmt.Sprintf("frame %d integer_adm2", i), f.Metrics["integer_adm2"], want.Frames[i].Metrics["integer_adm2"])
	}
	approx("output pooled mean", perFrame.Pooled["vmaf"].Mean, pooled.Mean)
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*.tmp")); len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

// y4m returns a Y4M stream of the raw 4:2:0 frames in data.
func y4m(data []byte, w, h int) []byte {
	fb := vmaf.YUV420P.FrameBytes(w, h)
	out := fmt.Appendf(nil, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420jpeg\n", w, h)
	for i := 0; i+fb <= len(data); i += fb {
		out = append(out, "FRAME\n"...)
		out = append(out, data[i:i+fb]...)
	}
	return out
}

// writeY4MPair writes the test pair as ref.y4m and dist.y4m in dir.
func writeY4MPair(t *testing.T, dir string) (ref, dist string) {
	t.Helper()
	for _, c := range []struct{ from, to string }{{refClip, "ref.y4m"}, {distClip, "dist.y4m"}} {
		data, err := os.ReadFile(c.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.to), y4m(data, pairW, pairH), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "ref.y4m"), filepath.Join(dir, "dist.y4m")
}

func TestScoreDeskForm(t *testing.T) {
	ref, dist := writeY4MPair(t, t.TempDir())
	want := readLibvmafJSON(t, filepath.Join(testdata, "ref/p02_v061.json")).Pooled["vmaf"].Mean
	_, errBefore := os.Stat(defaultTerminationLog)
	var stdout, stderr bytes.Buffer
	// No termination log is named: the default is skipped when absent.
	code := Run(context.Background(), []string{"score", ref, dist}, func(string) string { return "" }, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	checkDeskScore(t, stdout.String(), want)
	if stderr.Len() != 0 {
		t.Errorf("stderr = %q, want nothing without -v", stderr.String())
	}
	if _, err := os.Stat(defaultTerminationLog); errors.Is(errBefore, os.ErrNotExist) && err == nil {
		os.Remove(defaultTerminationLog)
		t.Errorf("the desk form created %s", defaultTerminationLog)
	}
}

// TestScoreDeskFormFlagsAfter: flags may follow the two paths; -v brings the logs back.
func TestScoreDeskFormFlagsAfter(t *testing.T) {
	ref, dist := writeY4MPair(t, t.TempDir())
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"score", ref, dist, "--frames", ":4", "-v", "1"}, func(string) string { return "" }, &stdout, &stderr)
	if code != 0 || !strings.HasPrefix(stdout.String(), "VMAF score: ") || !strings.Contains(stderr.String(), `"Scored"`) || !strings.Contains(stderr.String(), "frames=4") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant a desk score of 4 frames with the logs", code, stdout.String(), stderr.String())
	}
}

// checkDeskScore checks the desk form's one line against libvmaf's mean.
func checkDeskScore(t *testing.T, stdout string, want float64) {
	t.Helper()
	s, ok := strings.CutPrefix(stdout, "VMAF score: ")
	s, nl := strings.CutSuffix(s, "\n")
	got, err := strconv.ParseFloat(s, 64)
	if !ok || !nl || err != nil || len(s)-strings.IndexByte(s, '.') != 7 {
		t.Fatalf("stdout = %q, want \"VMAF score: <six decimals>\\n\"", stdout)
	}
	if math.Abs(got-want) > 1e-4 {
		t.Fatalf("score %v, want libvmaf's %.6f", got, want)
	}
}

func TestScoreOverHTTP(t *testing.T) {
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(testdata, "clips"))))
	defer srv.Close()
	want := readLibvmafJSON(t, filepath.Join(testdata, "ref/p02_v061.json")).Pooled["vmaf"].Mean
	r := runWorker(t, context.Background(), nil, rawArgs(srv.URL+"/p02_ref.yuv", srv.URL+"/p02_dist.yuv")...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if got := r.result(t); math.Abs(got.Score-want) > 1e-4 || got.Frames != frames {
		t.Fatalf("score %v over %d frames, want %v over %d", got.Score, got.Frames, want, frames)
	}
}

func TestScoreRangeAndEnv(t *testing.T) {
	want := readLibvmafJSON(t, filepath.Join(testdata, "ref/p02_v061neg.json"))
	out := filepath.Join(t.TempDir(), "scores.json")
	// The model comes from its env twin; --frames and --subsample pick frames 3, 5, 7, 9.
	r := runWorker(t, context.Background(), map[string]string{"VMAFX_MODEL": "vmaf_v0.6.1neg", "VMAFX_THREADS": "1"},
		rawArgs(refClip, distClip, "--frames", "3:8", "--subsample", "2", "--output", out)...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	got := r.result(t)
	if got.Model != "vmaf_v0.6.1neg" || got.ModelSHA256 != modelSHA256(t, "vmaf_v0.6.1neg") || got.Frames != 4 {
		t.Fatalf("model %s (%s), %d frames; want vmaf_v0.6.1neg over 4 frames", got.Model, got.ModelSHA256, got.Frames)
	}
	var nums []int
	for _, f := range readLibvmafJSON(t, out).Frames {
		nums = append(nums, f.FrameNum)
	}
	if diff := cmp.Diff([]int{3, 5, 7, 9}, nums); diff != "" {
		t.Errorf("scored frames (-want +got):\n%s", diff)
	}
	// Frame 3's features do not depend on where scoring started; its motion
	// does (the first scored frame has none), so compare VIF only.
	if g, w := readLibvmafJSON(t, out).Frames[0].Metrics["integer_vif_scale0_egl_1"], want.Frames[3].Metrics["integer_vif_scale0_egl_1"]; math.Abs(g-w) > 1e-5 {
		t.Errorf("frame 3 integer_vif_scale0_egl_1 = %v, want %v", g, w)
	}

	// A flag wins over its env twin.
	r = runWorker(t, context.Background(), map[string]string{"VMAFX_MODEL": "no-such-model"},
		rawArgs(refClip, distClip, "--model", "vmaf_v0.6.1", "--frames", ":2")...)
	if r.code != 0 || r.result(t).Frames != 2 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

func TestScoreFailures(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	distData, err := os.ReadFile(distClip)
	if err != nil {
		t.Fatal(err)
	}
	fb := vmaf.YUV420P.FrameBytes(pairW, pairH)
	truncated := write("truncated.yuv", distData[:len(distData)-fb/2])
	short := write("short.yuv", distData[:len(distData)-fb])
	empty := write("empty.yuv", nil)
	otherSize := write("other.y4m", y4m(make([]byte, 64*64*3/2*frames), 64, 64))
	model, err := os.ReadFile("../../../vmaf/models/vmaf_v0.6.1.json")
	if err != nil {
		t.Fatal(err)
	}
	corruptModel := write("corrupt.json", model[:len(model)/2])

	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	// A server that redirects to another on 127.0.0.1: the first URL is the
	// user's choice, the redirect is not.
	target := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(testdata, "clips"))))
	defer target.Close()
	redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/p02_dist.yuv?X-Amz-Signature=secret", http.StatusFound))
	defer redirect.Close()
	creds := writeCredentials(t, map[string]string{"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": testSecret})
	otherRate := write("other-rate.y4m", []byte(strings.Replace(string(y4m(distData, pairW, pairH)), "F25:1", "F30:1", 1)))
	noFFmpeg := map[string]string{"VMAFX_FFMPEG": "/nonexistent/ffmpeg"}
	enc := func(name string) string { return fftest.Path(name) }

	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantCode   int
		wantReason string
		wantInMsg  string
	}{
		{"truncated distorted", rawArgs(refClip, truncated), nil, 2, vmafxv1.ReasonBadInput, "truncated"},
		{"frame count mismatch", rawArgs(refClip, short), nil, 2, vmafxv1.ReasonBadInput, "frame count mismatch"},
		{"size mismatch without ffmpeg", []string{"score", "--reference", writeY4MRef(t, dir), "--distorted", otherSize}, noFFmpeg, 2, vmafxv1.ReasonBadInput, "size mismatch: 64x64, reference 176x144; scaling needs ffmpeg"},
		{"frame count mismatch names both", rawArgs(refClip, short), nil, 2, vmafxv1.ReasonBadInput, "reference has 16 frames, distorted 15"},
		{"frame rate mismatch", []string{"score", "--reference", writeY4MRef(t, dir), "--distorted", otherRate}, nil, 2, vmafxv1.ReasonBadInput, "frame rate mismatch: reference 25 fps, distorted 30 fps"},
		{"encoded without ffmpeg", []string{"score", "--reference", enc("ref_ffv1.mkv"), "--distorted", enc("dist_h264.mp4")}, noFFmpeg, 2, vmafxv1.ReasonBadInput, "reference: encoded inputs need ffmpeg and ffprobe: VMAFX_FFMPEG=/nonexistent/ffmpeg"},
		{"truncated mp4", []string{"score", "--reference", enc("ref_ffv1.mkv"), "--distorted", enc("bad_truncated.mp4")}, nil, 2, vmafxv1.ReasonBadInput, "distorted: cannot decode: ffmpeg: "},
		{"audio only", []string{"score", "--reference", enc("bad_audio_only.mka"), "--distorted", enc("dist_h264.mp4")}, nil, 2, vmafxv1.ReasonBadInput, "reference: cannot decode: no video stream, only audio flac"},
		{"unknown codec", []string{"score", "--reference", enc("ref_ffv1.mkv"), "--distorted", enc("bad_unknown_codec.mkv")}, nil, 2, vmafxv1.ReasonBadInput, "distorted: cannot decode: unsupported video codec"},
		{"zero frames", []string{"score", "--reference", enc("ref_ffv1.mkv"), "--distorted", enc("bad_zero_frames.mkv")}, nil, 2, vmafxv1.ReasonBadInput, "distorted: cannot decode: ffprobe: "},
		{"redirect to loopback", rawArgs(refClip, redirect.URL+"/dist.yuv"), nil, 2, vmafxv1.ReasonBadInput, "redirect refused: 127.0.0.1 is a loopback address"},
		{"output on the input volume", rawArgs(refClip, distClip, "--output", "/data/out/x.json"), nil, 2, vmafxv1.ReasonBadInput, "/data is the job's read-only input volume"},
		{"bad output format", rawArgs(refClip, distClip, "--output-format", "xml"), nil, 2, vmafxv1.ReasonBadInput, "want json or csv"},
		{"negative start", rawArgs(refClip, distClip, "--reference-start", "-1"), nil, 2, vmafxv1.ReasonBadInput, "--reference-start"},
		{"bad allowed CIDR", rawArgs(refClip, distClip, "--http-allow-cidrs", "10.0.0.0/99"), nil, 2, vmafxv1.ReasonBadInput, "--http-allow-cidrs"},
		{"bad push gateway", rawArgs(refClip, distClip, "--push-gateway", "pushgateway:9091"), nil, 2, vmafxv1.ReasonBadInput, "--push-gateway"},
		{"s3 unreachable", rawArgs(refClip, "s3://bucket/dist.yuv", "--credentials-dir", creds, "--s3-endpoint", "http://127.0.0.1:1", "--http-retries", "0"), nil, 3, vmafxv1.ReasonFetchFailed, "fetch s3://bucket/dist.yuv"},
		{"missing credentials dir", rawArgs(refClip, "s3://bucket/dist.yuv", "--credentials-dir", filepath.Join(dir, "nope")), nil, 2, vmafxv1.ReasonBadInput, "credentials directory"},
		{"rclone input", rawArgs(refClip, "rclone://remote/dist.yuv"), nil, 3, vmafxv1.ReasonFetchFailed, "unsupported scheme rclone://"},
		{"zero frames", rawArgs(empty, empty), nil, 2, vmafxv1.ReasonBadInput, "no frames"},
		{"unknown pixel format", rawArgs(refClip, distClip, "--pixel-format", "nv12"), nil, 2, vmafxv1.ReasonBadInput, "unknown pixel format"},
		{"raw without geometry", []string{"score", "--reference", refClip, "--distorted", distClip}, nil, 2, vmafxv1.ReasonBadInput, "width and height"},
		{"bad flag", rawArgs(refClip, distClip, "--threads", "-1"), nil, 2, vmafxv1.ReasonBadInput, "--threads"},
		{"bad env twin", rawArgs(refClip, distClip), map[string]string{"VMAFX_THREADS": "many"}, 2, vmafxv1.ReasonBadInput, "VMAFX_THREADS"},
		{"missing inputs", []string{"score", "--reference", refClip}, nil, 2, vmafxv1.ReasonBadInput, "--distorted"},
		{"three positional", []string{"score", refClip, distClip, distClip}, nil, 2, vmafxv1.ReasonBadInput, "positional"},
		{"one-dash long flag", []string{"score", "-reference", refClip, "--distorted", distClip}, nil, 2, vmafxv1.ReasonBadInput, "long flags take two dashes: --reference"},
		{"mixed forms", []string{"score", "--reference", refClip, distClip}, nil, 2, vmafxv1.ReasonBadInput, "want either --reference and --distorted or two positional arguments"},
		{"http output", rawArgs(refClip, distClip, "--output", "http://127.0.0.1:1/x.json"), nil, 2, vmafxv1.ReasonBadInput, "outputs go to file://, s3://, gs:// or azure://"},
		{"unwritable output", rawArgs(refClip, distClip, "--output", filepath.Join(dir, "missing-dir", "x.json")), nil, 2, vmafxv1.ReasonBadInput, "--output"},
		{"unknown model", rawArgs(refClip, distClip, "--model", "vmaf_v9"), nil, 4, vmafxv1.ReasonBadModel, "unknown model"},
		{"corrupt model", rawArgs(refClip, distClip, "--model", corruptModel), nil, 4, vmafxv1.ReasonBadModel, "bad model"},
		{"missing file", rawArgs(filepath.Join(dir, "nope.yuv"), distClip), nil, 2, vmafxv1.ReasonBadInput, "not found"},
		{"http 404", rawArgs(srv.URL+"/ref.yuv", distClip), nil, 2, vmafxv1.ReasonBadInput, "404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(strings.Join(tc.args, " "), "testdata/encoded") && tc.env == nil {
				fftest.Tools(t)
			}
			r := runWorker(t, context.Background(), tc.env, tc.args...)
			if strings.Contains(r.termination+r.stderr, testSecret) || strings.Contains(r.termination+r.stderr, "X-Amz-Signature") {
				t.Errorf("a secret leaked into the result or the logs:\n%s\n%s", r.termination, r.stderr)
			}
			if r.code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tc.wantCode, r.stderr)
			}
			got := r.result(t)
			if got.Error == nil {
				t.Fatalf("result %+v has no error", got)
			}
			if got.Error.Reason != tc.wantReason || !strings.Contains(got.Error.Message, tc.wantInMsg) || strings.Contains(got.Error.Message, "\n") {
				t.Errorf("error = %+v, want reason %s and a one-line message mentioning %q", got.Error, tc.wantReason, tc.wantInMsg)
			}
		})
	}
}

// writeY4MRef writes the test pair's reference as Y4M in dir.
func writeY4MRef(t *testing.T, dir string) string {
	ref, _ := writeY4MPair(t, dir)
	return ref
}

func TestScoreCancelled(t *testing.T) {
	// A server that sends one frame and then nothing, so the run waits on it.
	data, err := os.ReadFile(refClip)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:vmaf.YUV420P.FrameBytes(pairW, pairH)])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("terminated signal received")) })
	r := runWorker(t, ctx, nil, rawArgs(refClip, srv.URL+"/dist.yuv")...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	got := r.result(t)
	if got.Error == nil || got.Error.Reason != vmafxv1.ReasonInternal || !strings.Contains(got.Error.Message, "cancelled (terminated signal received)") {
		t.Fatalf("error = %+v, want Internal naming the signal", got.Error)
	}
}

// panicking is a backend whose Score panics.
type panicking struct{ backend.CPU }

func (panicking) Score(context.Context, vmaf.FrameSource, vmaf.FrameSource, vmaf.Options) (*vmaf.Result, error) {
	var m map[string]int
	m["boom"]++ //nolint:staticcheck // the nil map write is the panic under test
	return nil, nil
}

func TestScorePanicIsReported(t *testing.T) {
	defer func(orig func(string, string) (backend.Backend, string, error)) { selectBackend = orig }(selectBackend)
	selectBackend = func(string, string) (backend.Backend, string, error) { return panicking{}, "", nil }
	r := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip)...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1", r.code)
	}
	got := r.result(t)
	if got.Error == nil || got.Error.Reason != vmafxv1.ReasonInternal || !strings.Contains(got.Error.Message, "panic: assignment to entry in nil map") {
		t.Fatalf("error = %+v, want Internal with the panic's one line", got.Error)
	}
	if !strings.Contains(r.stderr, "goroutine") {
		t.Errorf("stderr lacks the stack trace for the logs:\n%s", r.stderr)
	}
}

func TestCommands(t *testing.T) {
	tests := []struct {
		args     []string
		wantCode int
		stdout   string // a substring of stdout
	}{
		{[]string{"version"}, 0, "kernel " + vmaf.Version + "\nbackends cpu vulkan\nmodels vmaf_v0.6.1 "},
		{[]string{"help"}, 0, "Usage:"},
		{[]string{"--help"}, 0, "--version "},
		{[]string{"encode", "--help"}, 0, "(env VMAFX_S3_PATH_STYLE)"},
		{[]string{"ladder-report", "-h"}, 0, "(env VMAFX_TABLE)"},
		{[]string{"score", "-h"}, 0, "-v, --v int"},
		{[]string{"score", "-h"}, 0, "-pixel-format format"},
		{[]string{"score", "-h"}, 0, "(env VMAFX_PIXEL_FORMAT)"},
		{nil, 2, ""},
		{[]string{"frobnicate"}, 2, ""},
		// The trainer moved to vmafx-trainer; the old form says where.
		{[]string{"train", "--training", "ns/run"}, 2, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runWorker(t, context.Background(), nil, tc.args...)
			if r.code != tc.wantCode || !strings.Contains(r.stdout, tc.stdout) {
				t.Errorf("exit %d, stdout %q; want exit %d and %q in stdout", r.code, r.stdout, tc.wantCode, tc.stdout)
			}
			if tc.wantCode == 0 {
				return
			}
			res, err := vmafxv1.ParseWorkerResult([]byte(r.termination))
			if err != nil || res.Error == nil || res.Error.Reason != vmafxv1.ReasonBadInput {
				t.Errorf("termination message %q (%v), want a BadInput result", r.termination, err)
			}
			if len(tc.args) > 0 && tc.args[0] == "train" && !strings.Contains(r.stderr, "vmafx-trainer") {
				t.Errorf("stderr %q does not name vmafx-trainer", r.stderr)
			}
		})
	}
}

func TestParseFrames(t *testing.T) {
	tests := []struct {
		in           string
		start, count int
		wantErr      bool
	}{
		{"", 0, 0, false},
		{"10:20", 10, 20, false},
		{"10:", 10, 0, false},
		{":5", 0, 5, false},
		{"5", 0, 0, true},
		{"-1:2", 0, 0, true},
		{"a:b", 0, 0, true},
	}
	for _, tc := range tests {
		start, count, err := parseFrames(tc.in)
		if (err != nil) != tc.wantErr || start != tc.start || count != tc.count {
			t.Errorf("parseFrames(%q) = %d, %d, %v; want %d, %d, error %v", tc.in, start, count, err, tc.start, tc.count, tc.wantErr)
		}
	}
}

func TestProgressLine(t *testing.T) {
	tests := []struct {
		n     int64
		total int
		want  string
	}{
		{120, 480, "frame 120/480 (25%), 12.0 fps, 30s left"},
		{120, -1, "frame 120, 12.0 fps"},
		{500, 480, "frame 500, 50.0 fps"},
	}
	for _, tc := range tests {
		if got := progressLine(tc.n, tc.total, 10*time.Second); got != tc.want {
			t.Errorf("progressLine(%d, %d) = %q, want %q", tc.n, tc.total, got, tc.want)
		}
	}
}

func TestReportCrash(t *testing.T) {
	term := filepath.Join(t.TempDir(), "termination-log")
	var stdout, stderr bytes.Buffer
	code := ReportCrash(rawArgs(refClip, distClip, "--termination-log", term), func(string) string { return "" }, &stdout, &stderr,
		"panic: runtime error: index out of range [3] with length 3")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	msg, err := os.ReadFile(term)
	if err != nil {
		t.Fatal(err)
	}
	r, err := vmafxv1.ParseWorkerResult(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := &vmafxv1.WorkerError{Reason: vmafxv1.ReasonInternal, Message: "worker crashed: panic: runtime error: index out of range [3] with length 3"}
	if diff := cmp.Diff(want, r.Error); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if stdout.String() != string(msg) {
		t.Errorf("stdout %q, want the termination message %q", stdout.String(), msg)
	}
}

// TestScoreFeatures asks for PSNR and SSIM beside VMAF: the result carries their pooled
// means under libvmaf's names, equal to libvmaf's within 1e-4, and the VMAF score is the
// one scored without them; an unknown feature is a bad request.
func TestScoreFeatures(t *testing.T) {
	want := readLibvmafJSON(t, filepath.Join(testdata, "ref_extra/p02_extra.json"))
	plain := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip)...)
	r := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip, "--features", "psnr,ssim")...)
	if r.code != 0 || plain.code != 0 {
		t.Fatalf("exit %d / %d, stderr:\n%s", r.code, plain.code, r.stderr)
	}
	got, base := r.result(t), plain.result(t)
	if got.Score != base.Score {
		t.Errorf("VMAF %v with features, %v without", got.Score, base.Score)
	}
	names := []string{"psnr_y", "psnr_cb", "psnr_cr", "float_ssim"}
	if len(got.Features) != len(names) {
		t.Errorf("features %v, want exactly %v", got.Features, names)
	}
	for _, name := range names {
		v, ok := got.Features[name]
		if w := want.Pooled[name].Mean; !ok || math.Abs(v-w) > 1e-4 {
			t.Errorf("%s = %v (present %v), want libvmaf's %v", name, v, ok, w)
		}
	}
	bad := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip, "--features", "psnr,vif")...)
	if res := bad.result(t); bad.code != 2 || res.Error == nil || res.Error.Reason != vmafxv1.ReasonBadInput || !strings.Contains(res.Error.Message, "vif") {
		t.Errorf("unknown feature: exit %d, result %+v; want BadInput naming it", bad.code, res.Error)
	}
}

// TestMemoryLimit: a Y4M header of 32 bytes that claims 16384x16384 4:4:4 12-bit frames
// fails at once under a 1 GiB limit, with the estimate in the message, without
// allocating the gigabytes one such frame takes; under a limit that holds fewer threads
// than asked for, the worker scores with fewer and says so.
func TestMemoryLimit(t *testing.T) {
	t.Cleanup(func() { debug.SetMemoryLimit(math.MaxInt64) })
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.y4m")
	if err := os.WriteFile(huge, []byte("YUV4MPEG2 W16384 H16384 C444p12\nFRAME\n\x00\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := runWorker(t, context.Background(), map[string]string{"VMAFX_MEMORY_LIMIT": "1073741824"}, "score", "--reference", huge, "--distorted", huge)
	runtime.ReadMemStats(&after)
	res := r.result(t)
	if r.code != 2 || res.Error == nil || res.Error.Reason != vmafxv1.ReasonBadInput ||
		!strings.Contains(res.Error.Message, "needs about") || !strings.Contains(res.Error.Message, "1024 MiB") {
		t.Errorf("exit %d, error %+v; want BadInput with the estimate and the 1024 MiB limit", r.code, res.Error)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("refusing the geometry allocated %d MiB", alloc>>20)
	}

	ref, dist := writeY4MPair(t, dir)
	// 176x144 needs the runtime's 48 MiB and about 0.7 MiB per thread: 52 MiB holds a few.
	r = runWorker(t, context.Background(), map[string]string{"VMAFX_MEMORY_LIMIT": strconv.Itoa(62 << 20)}, "score", "--threads", "64", "--reference", ref, "--distorted", dist)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "Fewer threads than CPUs") {
		t.Errorf("64 threads under a 62 MiB limit: the log does not say that fewer ran:\n%s", r.stderr)
	}
}

// TestScoreGPUSlotWithoutDevice: a GPU slot (VMAFX_BACKEND=cuda) on a machine whose
// Vulkan cannot serve it (no GPU here: lavapipe is refused for a GPU slot) fails the
// attempt with BackendUnavailable naming what is missing, rather than scoring on the CPU.
func TestScoreGPUSlotWithoutDevice(t *testing.T) {
	if b, _, err := backend.Select("cuda", ""); err == nil {
		b.Close()
		t.Skip("this machine has a GPU that runs the Vulkan kernels")
	}
	r := runWorker(t, context.Background(), map[string]string{vmafxv1.EnvBackend: "cuda"}, rawArgs(refClip, distClip)...)
	if r.code != 5 {
		t.Fatalf("exit %d, want 5 (BackendUnavailable); stderr:\n%s", r.code, r.stderr)
	}
	got := r.result(t)
	if got.Error == nil || got.Error.Reason != vmafxv1.ReasonBackendUnavailable || !strings.Contains(got.Error.Message, "backend cuda has no vendor kernel") {
		t.Fatalf("error = %+v, want BackendUnavailable naming the backend and what is missing", got.Error)
	}
	if got.RequestedBackend != "cuda" {
		t.Errorf("requestedBackend = %q, want cuda", got.RequestedBackend)
	}
}

// TestScoreVulkan runs the Pod form on the Vulkan backend (lavapipe in CI):
// the result names the backend, the device and what ran where, and the
// score is the CPU kernel's to the last bit, with the device scoring every frame
// (--wait-for-device) and by default, where the CPU scores the frames before the
// device is open (on lavapipe, whose open takes longer than this clip, most or all).
func TestScoreVulkan(t *testing.T) {
	if _, _, err := backend.Select("vulkan", ""); err != nil {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") != "1" {
			t.Skipf("no usable Vulkan device (VMAFX_REQUIRE_VULKAN=1 fails instead): %v", err)
		}
		t.Fatal(err)
	}
	scorePair := func(ref, dist, b string, wait bool, env ...string) *vmafxv1.WorkerResult {
		e := map[string]string{vmafxv1.EnvBackend: b, "VMAFX_WAIT_FOR_DEVICE": strconv.FormatBool(wait)}
		for i := 0; i+1 < len(env); i += 2 {
			e[env[i]] = env[i+1]
		}
		r := runWorker(t, context.Background(), e, rawArgs(ref, dist)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d, stderr:\n%s", b, r.code, r.stderr)
		}
		// The device's open and close are logged step by step: on a GPU they are a
		// fixed cost of every run.
		for _, key := range []string{"instanceSeconds=", "pipelinesSeconds=", "drivers=", "destroyDeviceSeconds=", "planesImported="} {
			if b == "vulkan" && !strings.Contains(r.stderr, key) {
				t.Errorf("%s: no %s in the log:\n%s", b, key, r.stderr)
			}
		}
		// Every frame on the device, from where the readers put them: none
		// copied into the staging (lavapipe imports host memory).
		if b == "vulkan" && wait && !strings.Contains(r.stderr, " stagedBytes=0") {
			t.Errorf("%s: frames staged on the host, want them imported:\n%s", b, r.stderr)
		}
		return r.result(t)
	}
	scoreWith := func(b string, wait bool, env ...string) *vmafxv1.WorkerResult {
		return scorePair(refClip, distClip, b, wait, env...)
	}
	gpu, cpu, overlapped := scoreWith("vulkan", true), scoreWith("cpu", false), scoreWith("vulkan", false)
	if gpu.Device != nil && gpu.Device.CPUFrames != 0 {
		t.Errorf("--wait-for-device: %d frames on the CPU, want 0", gpu.Device.CPUFrames)
	}
	// One thread with the device, one on the CPU beside it from the start. The device's
	// thread queues up to its frames in flight (64 at this size) without waiting, so on
	// the 16-frame clip it could take every frame before the CPU's thread ran: the pair
	// repeated 6 times (96 frames) leaves the CPU's thread frames whatever the timing.
	long := func(clip string) string {
		data, err := os.ReadFile(clip)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), filepath.Base(clip))
		if err := os.WriteFile(p, bytes.Repeat(data, 6), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	longRef, longDist := long(refClip), long(distClip)
	longCPU := scorePair(longRef, longDist, "cpu", false)
	if beside := scorePair(longRef, longDist, "vulkan", true, "VMAFX_THREADS", "2", "VMAFX_DEVICE_THREADS", "1"); beside.Device == nil ||
		beside.Device.CPUFrames == 0 || beside.Score != longCPU.Score || beside.Min != longCPU.Min || beside.Max != longCPU.Max {
		t.Errorf("--device-threads 1 of 2: device %+v, score %v (min %v, max %v); want frames on the CPU beside the device and the CPU's score %v",
			beside.Device, beside.Score, beside.Min, beside.Max, longCPU.Score)
	}
	if d := overlapped.Device; d == nil || d.Name == "" || d.CPUFrames < 0 || d.CPUFrames > overlapped.Frames ||
		overlapped.Score != cpu.Score || overlapped.Min != cpu.Min || overlapped.Max != cpu.Max {
		t.Errorf("CPU while the device opens: device %+v, score %v (min %v, max %v); want the device, at most %d frames on the CPU, and the CPU's score %v (min %v, max %v)",
			d, overlapped.Score, overlapped.Min, overlapped.Max, overlapped.Frames, cpu.Score, cpu.Min, cpu.Max)
	}
	if gpu.Backend != "vulkan" || gpu.Device == nil || gpu.Device.Name == "" || !strings.HasPrefix(gpu.Device.API, "Vulkan 1.") {
		t.Fatalf("result backend %q, device %+v: want vulkan and its device", gpu.Backend, gpu.Device)
	}
	// Lavapipe has shaderFloat64: every feature runs on the device.
	if !slices.Equal(gpu.Device.Features, []string{"motion", "vif", "adm"}) || len(gpu.Device.HostFeatures) != 0 {
		t.Errorf("device features %v, host features %v: want motion, vif and adm on the device",
			gpu.Device.Features, gpu.Device.HostFeatures)
	}
	if cpu.Device != nil {
		t.Errorf("cpu result has a device: %+v", cpu.Device)
	}
	if gpu.Score != cpu.Score || gpu.HarmonicMean != cpu.HarmonicMean || gpu.Min != cpu.Min || gpu.Max != cpu.Max {
		t.Errorf("vulkan score %v (hm %v, min %v, max %v), cpu %v (hm %v, min %v, max %v): want identical",
			gpu.Score, gpu.HarmonicMean, gpu.Min, gpu.Max, cpu.Score, cpu.HarmonicMean, cpu.Min, cpu.Max)
	}
}

// TestScoreVulkanV1 scores a VMAF v1 model on the Vulkan backend: motion, ADM, CAMBI's
// c-values and SpEED chroma on the device, nothing left on the CPU as the result says,
// and the CPU's score to the last bit.
func TestScoreVulkanV1(t *testing.T) {
	if _, _, err := backend.Select("vulkan", ""); err != nil {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") != "1" {
			t.Skipf("no usable Vulkan device (VMAFX_REQUIRE_VULKAN=1 fails instead): %v", err)
		}
		t.Fatal(err)
	}
	run := func(b string) (*vmafxv1.WorkerResult, string) {
		r := runWorker(t, context.Background(), map[string]string{vmafxv1.EnvBackend: b, "VMAFX_WAIT_FOR_DEVICE": "true"},
			p03Args("--model", "vmaf_v1.0.16_3d0h", "--frames", ":3")...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d, stderr:\n%s", b, r.code, r.stderr)
		}
		return r.result(t), r.stderr
	}
	gpu, log := run("vulkan")
	cpu, _ := run("cpu")
	if gpu.Device == nil || !slices.Equal(gpu.Device.Features, []string{"motion", "adm", "cambi", "speed_chroma"}) ||
		len(gpu.Device.HostFeatures) != 0 || gpu.Device.CPUFrames != 0 {
		t.Errorf("device %+v: want motion, adm, cambi and speed_chroma on the device, nothing on the host", gpu.Device)
	}
	if strings.Contains(log, "Some features run on the CPU beside the device") {
		t.Errorf("logs features on the CPU where none are; stderr:\n%s", log)
	}
	if gpu.Score != cpu.Score || gpu.Min != cpu.Min || gpu.Max != cpu.Max {
		t.Errorf("vulkan score %v (min %v, max %v), cpu %v (min %v, max %v): want identical",
			gpu.Score, gpu.Min, gpu.Max, cpu.Score, cpu.Min, cpu.Max)
	}
}

// TestScoreSelectsOnSlotDevice: the backend is selected for the slot's device
// (VMAFX_DEVICE), whose vendor's Vulkan drivers alone the loader loads.
func TestScoreSelectsOnSlotDevice(t *testing.T) {
	defer func(orig func(string, string) (backend.Backend, string, error)) { selectBackend = orig }(selectBackend)
	var requested, device string
	selectBackend = func(b, d string) (backend.Backend, string, error) {
		requested, device = b, d
		return backend.CPU{}, "", nil
	}
	r := runWorker(t, context.Background(), map[string]string{vmafxv1.EnvBackend: "cuda", vmafxv1.EnvDevice: "nvidia-0"}, rawArgs(refClip, distClip)...)
	if r.code != 0 || requested != "cuda" || device != "nvidia-0" {
		t.Errorf("exit %d, selected %q on %q; want 0, cuda on nvidia-0; stderr:\n%s", r.code, requested, device, r.stderr)
	}
}

// TestScoreDeviceOpensBesideModel: on a GPU backend the device opens while the model
// loads. A model that fails fails the attempt as BadModel with the device recorded (on
// lavapipe here, skipped without Vulkan); a device that fails too is the cause, and the
// attempt fails with BackendUnavailable.
func TestScoreDeviceOpensBesideModel(t *testing.T) {
	defer func(orig func(string, string) (backend.Backend, string, error)) { selectBackend = orig }(selectBackend)
	selectBackend = func(string, string) (backend.Backend, string, error) {
		return nil, "", fmt.Errorf("%w: no Vulkan device", backend.ErrUnavailable)
	}
	r := runWorker(t, context.Background(), map[string]string{vmafxv1.EnvBackend: "cuda"}, rawArgs(refClip, distClip, "--model", "vmaf_v9")...)
	if got := r.result(t); r.code != 5 || got.Error == nil || got.Error.Reason != vmafxv1.ReasonBackendUnavailable || got.RequestedBackend != "cuda" {
		t.Errorf("device and model both fail: exit %d, result %+v; want 5, BackendUnavailable, requested cuda", r.code, got)
	}

	selectBackend = backend.SelectBeside
	if _, _, err := backend.Select("vulkan", ""); err != nil {
		t.Skipf("no usable Vulkan device: %v", err)
	}
	r = runWorker(t, context.Background(), map[string]string{vmafxv1.EnvBackend: "vulkan"}, rawArgs(refClip, distClip, "--model", "vmaf_v9")...)
	if got := r.result(t); r.code != 4 || got.Error == nil || got.Error.Reason != vmafxv1.ReasonBadModel || got.Backend != "vulkan" || got.Device == nil {
		t.Errorf("the model fails beside a device that opens: exit %d, result %+v; want 4, BadModel, the vulkan device recorded", r.code, got)
	}
}
