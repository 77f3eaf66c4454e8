package scenarios

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// envBenchChunked runs TestBenchChunkedJob, which measures rather than checks and so is
// left out of `make e2e`: VMAFX_BENCH_CHUNKED=1 and -run TestBenchChunkedJob (see
// docs/benchmarks.md, "Chunked jobs").
const envBenchChunked = "VMAFX_BENCH_CHUNKED"

// benchFrames1080p is the length of the benchmark's 1080p pair: 5 s at 24 fps.
const benchFrames1080p = 120

// TestBenchChunkedJob scores one 1080p pair (testsrc2, the reference lossless FFV1 in
// Matroska, the distorted H.264 in MP4 with its index first, both read from a hostPath so
// that chunks seek) with parallelism 1, 2 and 4, three rounds each, and logs the whole
// job's frames per second, from the create to Succeeded as this test sees it, with the
// load average beside. It checks that every run succeeds with the same score.
func TestBenchChunkedJob(t *testing.T) {
	if os.Getenv(envBenchChunked) == "" {
		t.Skipf("%s is not set: this measures, see docs/benchmarks.md", envBenchChunked)
	}
	requireBaseline(t)
	endpoint := deployVersitygw(t)
	dir := encode1080p(t)
	upload(t, endpoint, dir) // the bucket holds the outputs
	ns := createNamespace(t)
	creds := bucketCredentials(t, ns)
	var score string
	for round := range 3 {
		for _, p := range []int32{1, 2, 4} {
			name := fmt.Sprintf("bench-p%d-r%d", p, round)
			job := &vmafxv1.VmafxJob{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: vmafxv1.VmafxJobSpec{
					Reference: "file:///data/ref.mkv", Distorted: "file:///data/dist.mp4",
					Volume: &vmafxv1.JobVolume{HostPath: &corev1.HostPathVolumeSource{
						Path: dir, Type: ptr.To(corev1.HostPathDirectory),
					}},
					Credentials: creds,
					S3:          &vmafxv1.S3Options{Endpoint: endpoint, Region: "us-east-1", PathStyle: true},
					Output:      ptr.To(vmafxv1.OutputURI("s3://" + s3Bucket + "/bench/" + name + ".json")),
					Parallelism: p,
				},
			}
			start := time.Now()
			if err := c.Create(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			done := waitJobDoneEvery(t, client.ObjectKeyFromObject(job), 10*time.Minute, 100*time.Millisecond)
			wall := time.Since(start)
			if done.Status.Phase != vmafxv1.JobSucceeded {
				t.Fatalf("%s: %s: %s", name, done.Status.Phase, done.Status.Message)
			}
			if score == "" {
				score = done.Status.Score
			}
			if done.Status.Score != score {
				t.Errorf("%s scored %s, parallelism 1 %s", name, done.Status.Score, score)
			}
			load, _ := os.ReadFile("/proc/loadavg")
			t.Logf("BENCH parallelism=%d round=%d frames=%d wall=%.2fs fps=%.2f nodes=%s load=%s", p, round,
				done.Status.Result.Frames, wall.Seconds(), float64(done.Status.Result.Frames)/wall.Seconds(),
				strings.Join(jobNodes(t, ns, name), ","), strings.Join(strings.Fields(string(load))[:3], " "))
		}
	}
}

// waitJobDoneEvery is waitJobDone polling every interval, for a finer wall time.
func waitJobDoneEvery(t *testing.T, key client.ObjectKey, timeout, interval time.Duration) *vmafxv1.VmafxJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	job := &vmafxv1.VmafxJob{}
	for {
		if err := c.Get(ctx, key, job); err == nil && (job.Status.Phase == vmafxv1.JobSucceeded || job.Status.Phase == vmafxv1.JobFailed) {
			return job
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s not done within %s: %s", key, timeout, job.Status.Message)
		case <-time.After(interval):
		}
	}
}

// jobNodes are the distinct nodes a job's Pods ran on.
func jobNodes(t *testing.T, ns, job string) []string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{vmafxv1.LabelJob: job}); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, p := range pods.Items {
		if !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	return nodes
}

// encode1080p writes the benchmark's pair into a folder the worker's user can read.
func encode1080p(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vmafx-bench-1080p-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("testsrc2=size=1920x1080:rate=24:duration=%d", benchFrames1080p/24)
	for _, args := range [][]string{
		{"-f", "lavfi", "-i", src, "-c:v", "ffv1", "-pix_fmt", "yuv420p", "ref.mkv"},
		{"-f", "lavfi", "-i", src, "-c:v", "libx264", "-crf", "35", "-g", "24", "-pix_fmt", "yuv420p", "-movflags", "+faststart", "dist.mp4"},
	} {
		cmd := exec.CommandContext(t.Context(), "ffmpeg", append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if err := os.Chmod(filepath.Join(dir, args[len(args)-1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
