package scenarios

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestBadInput is scenario 4: a job whose distorted clip is truncated fails with the
// worker's reason after one attempt (a deterministic failure is not retried), its Pod run
// once (no crash loop); and an invalid job is refused by `kubectl apply`, naming the field.
func TestBadInput(t *testing.T) {
	requireBaseline(t)
	t.Run("truncated clip", func(t *testing.T) {
		ns := createNamespace(t)
		dir := truncatedPair(t, p01)
		job := newJob(ns, "truncated", p01)
		job.Spec.Volume.HostPath.Path = dir
		if err := c.Create(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		job = waitJobDone(t, client.ObjectKeyFromObject(job), 3*time.Minute)
		if job.Status.Phase != vmafxv1.JobFailed {
			t.Fatalf("phase %s, want Failed", job.Status.Phase)
		}
		t.Logf("Failed: %s", job.Status.Message)
		if !strings.Contains(strings.ToLower(job.Status.Message), "truncated") {
			t.Errorf("status.message %q does not give the worker's reason (truncated)", job.Status.Message)
		}
		if job.Status.Attempts != 1 || job.Status.FailedAttempts != 1 {
			t.Errorf("attempts %d, failed %d; want 1 and 1 (BadInput is not retried)", job.Status.Attempts, job.Status.FailedAttempts)
		}
		var pods corev1.PodList
		if err := c.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{vmafxv1.LabelJob: job.Name}); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if p.Spec.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("worker Pod %s restartPolicy %s, want Never", p.Name, p.Spec.RestartPolicy)
			}
			for _, s := range p.Status.ContainerStatuses {
				if s.RestartCount != 0 {
					t.Errorf("worker Pod %s container %s restarted %d times", p.Name, s.Name, s.RestartCount)
				}
			}
		}
	})

	t.Run("invalid job refused", func(t *testing.T) {
		ns := createNamespace(t)
		manifest := `apiVersion: vmafx.dev/v1
kind: VmafxJob
metadata:
  name: invalid
  namespace: ` + ns + `
spec:
  reference: file:///data/p01_ref.yuv
  distorted: file:///data/p01_dist.yuv
  width: 176
  height: 144
  pixelFormat: yuv999p
`
		out, err := kubectlInput(t, manifest, "apply", "-f", "-")
		if err == nil {
			t.Fatalf("kubectl apply accepted an invalid pixelFormat:\n%s", out)
		}
		if !strings.Contains(out, "spec.pixelFormat") {
			t.Errorf("kubectl apply's error does not name spec.pixelFormat:\n%s", out)
		}
		var job vmafxv1.VmafxJob
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "invalid"}, &job); err == nil {
			t.Error("the invalid job was stored")
		}
	})
}

// truncatedPair makes a folder (see hostDir) holding pair's reference and its distorted
// clip cut off in the middle of a frame.
func truncatedPair(t *testing.T, pair clipPair) string {
	t.Helper()
	dir := hostDir(t)
	src := filepath.Join(testdata(), "clips")
	copyN := func(name string, n int64) {
		in, err := os.Open(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		out, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		r := io.Reader(in)
		if n >= 0 {
			r = io.LimitReader(in, n)
		}
		if _, err := io.Copy(out, r); err != nil {
			t.Fatal(err)
		}
	}
	frame := int64(pair.width) * int64(pair.height) * 3 / 2 // yuv420p, 8 bit
	copyN(pair.name+"_ref.yuv", -1)
	copyN(pair.name+"_dist.yuv", 10*frame+frame/2) // ten and a half frames
	return dir
}

// hostDir makes a folder for clips that worker Pods read through a hostPath volume
// (readable by the worker's uid 65532), removed when the test ends.
func hostDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vmafx-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
