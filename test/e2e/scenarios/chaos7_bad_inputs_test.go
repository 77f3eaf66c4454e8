package scenarios

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestChaos7BadInputs is chaos scenario 7: a truncated file, a corrupt Y4M header, a
// missing file, a host path outside the operator's allowlist and an http URL that
// redirects to 127.0.0.1 each fail their job with a reason that says so, after exactly
// one attempt (none, for the refused volume). The redirect case needs the worker to
// refuse redirects to loopback addresses.
func TestChaos7BadInputs(t *testing.T) {
	requireBaseline(t)
	// Quick (under half a minute): it runs in every `make e2e` as well as in `make chaos`.
	ns := createNamespace(t)

	truncated := newJob(ns, "truncated", p01)
	truncated.Spec.Volume.HostPath.Path = truncatedPair(t, p01)

	header := newJob(ns, "corrupt-header", p01)
	header.Spec.Volume.HostPath.Path = corruptY4M(t)
	header.Spec.Reference, header.Spec.Distorted = "file:///data/ref.y4m", "file:///data/dist.y4m"
	header.Spec.Width, header.Spec.Height = nil, nil

	missing := newJob(ns, "missing", p01)
	missing.Spec.Distorted = "file:///data/no-such-clip.yuv"

	redirect := newJob(ns, "redirect", p01)
	redirect.Spec.Distorted = vmafxv1.VideoURI(redirector(t) + "/p01_dist.yuv")

	cases := []struct {
		job  *vmafxv1.VmafxJob
		want []string // in the job's message, any letter case
	}{
		{truncated, []string{"truncated"}},
		{header, []string{"header"}},
		{missing, []string{"not found"}},
		{redirect, []string{"redirect"}},
	}
	for _, tc := range cases {
		if err := c.Create(t.Context(), tc.job); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range cases {
		t.Run(tc.job.Name, func(t *testing.T) {
			done := waitJobDone(t, client.ObjectKeyFromObject(tc.job), 3*time.Minute)
			requireFailedOnce(t, done, tc.want...)
		})
	}

	t.Run("host path outside the allowlist", func(t *testing.T) {
		// The local cluster allows every host path; narrow it to the clips for this case.
		restore := setOperatorEnv(t, "VMAFX_OPERATOR_ALLOWED_HOST_PATHS", filepath.Join(testdata(), "clips"))
		defer restore()
		outside := newJob(ns, "outside", p01)
		outside.Spec.Volume.HostPath.Path = "/etc"
		if err := c.Create(t.Context(), outside); err != nil {
			t.Fatal(err)
		}
		done := waitJobDone(t, client.ObjectKeyFromObject(outside), 2*time.Minute)
		if done.Status.Phase != vmafxv1.JobFailed || !strings.Contains(done.Status.Message, "VMAFX_OPERATOR_ALLOWED_HOST_PATHS") || done.Status.Attempts != 0 {
			t.Errorf("phase %s, attempts %d: %s; want Failed with no Pod, naming the allowlist", done.Status.Phase, done.Status.Attempts, done.Status.Message)
		}
		inside := newJob(ns, "inside", p01)
		if err := c.Create(t.Context(), inside); err != nil {
			t.Fatal(err)
		}
		requireScore(t, waitJobDone(t, client.ObjectKeyFromObject(inside), 3*time.Minute), p01)
	})
}

// requireFailedOnce checks that a job failed after one attempt, its message holding each
// of want.
func requireFailedOnce(t *testing.T, job *vmafxv1.VmafxJob, want ...string) {
	t.Helper()
	t.Logf("%s: %s", job.Status.Phase, job.Status.Message)
	if job.Status.Phase != vmafxv1.JobFailed || job.Status.Attempts != 1 {
		t.Errorf("phase %s after %d attempts; want Failed after exactly 1", job.Status.Phase, job.Status.Attempts)
	}
	for _, w := range want {
		if !strings.Contains(strings.ToLower(job.Status.Message), w) {
			t.Errorf("message %q does not say %q", job.Status.Message, w)
		}
	}
	pods, err := jobPods(t.Context(), job.Namespace, job.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 {
		t.Errorf("%d worker Pods; want 1", len(pods))
	}
}

// corruptY4M makes a folder (see hostDir) with a reference Y4M and a distorted one whose
// header is garbage.
func corruptY4M(t *testing.T) string {
	t.Helper()
	dir := hostDir(t)
	raw, err := os.ReadFile(filepath.Join(testdata(), "clips", p01.name+"_ref.yuv"))
	if err != nil {
		t.Fatal(err)
	}
	frame := int(p01.width) * int(p01.height) * 3 / 2
	var ref bytes.Buffer
	fmt.Fprintf(&ref, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420jpeg\n", p01.width, p01.height)
	for i := 0; i+frame <= len(raw); i += frame {
		ref.WriteString("FRAME\n")
		ref.Write(raw[i : i+frame])
	}
	dist := append([]byte("YUV4MPEG2 Wabc H-3 Fnope\n"), ref.Bytes()[bytes.IndexByte(ref.Bytes(), '\n')+1:]...)
	for name, data := range map[string][]byte{"ref.y4m": ref.Bytes(), "dist.y4m": dist} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// redirector serves, on the node's address (the worker Pods reach this machine there),
// a redirect of every request to the same path on 127.0.0.1, and returns its base URL.
func redirector(t *testing.T) string {
	t.Helper()
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1"+r.URL.Path, http.StatusFound)
	}).url
}
