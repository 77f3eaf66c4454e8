package objectstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/vmafx/vmafx/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// runWorker runs the vmafx-worker binary and returns its result and exit code.
func runWorker(t *testing.T, args ...string) (*vmafxv1.WorkerResult, int, string) {
	t.Helper()
	term := filepath.Join(t.TempDir(), "termination-log")
	cmd := exec.Command(workerBinary, append([]string{"score", "--termination-log", term}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	msg, rerr := os.ReadFile(term)
	if rerr != nil {
		t.Fatalf("no termination message (exit %d): %v\n%s", code, rerr, stderr.String())
	}
	r, perr := vmafxv1.ParseWorkerResult(msg)
	if perr != nil {
		t.Fatalf("termination message %q: %v", msg, perr)
	}
	logs := stdout.String() + stderr.String() + string(msg)
	if strings.Contains(logs, secretKey) {
		t.Errorf("the secret key appears in the worker's output:\n%s", logs)
	}
	return r, code, stderr.String()
}

// encoded is a file of media/testdata/encoded.
func encoded(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "media/testdata/encoded", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// An encoded pair in a bucket scores exactly as the same files do from the local file
// system, and the per-frame scores are written back to the bucket. The distorted MP4
// has its index at the end, so it is spooled.
func TestWorkerScoresABucket(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil && os.Getenv("VMAFX_REQUIRE_FFMPEG") == "" {
		t.Skip("ffmpeg is not installed")
	}
	bucket := s3.bucket(t)
	s3.put(t, bucket, "ref.mkv", encoded(t, "ref_ffv1.mkv"))
	s3.put(t, bucket, "dist.mp4", encoded(t, "dist_h264_moovend.mp4"))
	creds := testutil.CredentialsDir(t, rootKeys())

	got, code, logs := runWorker(t, "--reference", "s3://"+bucket+"/ref.mkv", "--distorted", "s3://"+bucket+"/dist.mp4",
		"--credentials-dir", creds, "--s3-endpoint", s3.endpoint(), "--spool-dir", t.TempDir(),
		"--output", "s3://"+bucket+"/results/scores.json")
	if code != 0 || got.Error != nil {
		t.Fatalf("exit %d, %+v\n%s", code, got.Error, logs)
	}
	if got.OutputError != "" {
		t.Errorf("output error: %s", got.OutputError)
	}
	dir := filepath.Join(testenv.RepoRoot(), "media/testdata/encoded")
	local, code, logs := runWorker(t, "--reference", filepath.Join(dir, "ref_ffv1.mkv"), "--distorted", filepath.Join(dir, "dist_h264_moovend.mp4"))
	if code != 0 {
		t.Fatalf("file:// run: exit %d\n%s", code, logs)
	}
	if got.Score != local.Score || got.Frames != local.Frames || got.Min != local.Min {
		t.Errorf("s3:// score %v (%d frames, min %v), file:// %v (%d frames, min %v)", got.Score, got.Frames, got.Min, local.Score, local.Frames, local.Min)
	}
	var out struct {
		Frames []struct {
			FrameNum int                `json:"frameNum"`
			Metrics  map[string]float64 `json:"metrics"`
		} `json:"frames"`
	}
	if err := json.Unmarshal(s3.get(t, bucket, "results/scores.json"), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Frames) != got.Frames {
		t.Errorf("the bucket's output has %d frames, want %d", len(out.Frames), got.Frames)
	}
}

// Wrong credentials fail the fetch with the service's reason, never the secret.
func TestWorkerWrongCredentials(t *testing.T) {
	bucket := s3.bucket(t)
	s3.put(t, bucket, "ref.yuv", []byte("x"))
	keys := rootKeys()
	keys["AWS_SECRET_ACCESS_KEY"] = secretKey + "-but-wrong"
	got, code, _ := runWorker(t, "--reference", "s3://"+bucket+"/ref.yuv", "--distorted", "s3://"+bucket+"/ref.yuv",
		"--width", "64", "--height", "64", "--credentials-dir", testutil.CredentialsDir(t, keys), "--s3-endpoint", s3.endpoint(), "--s3-path-style")
	if code != 3 || got.Error == nil || got.Error.Reason != vmafxv1.ReasonFetchFailed || !strings.Contains(got.Error.Message, "access denied") {
		t.Fatalf("exit %d, %+v; want FetchFailed, access denied", code, got.Error)
	}
	if strings.Contains(got.Error.Message, "-but-wrong") {
		t.Errorf("message quotes the secret: %s", got.Error.Message)
	}
}
