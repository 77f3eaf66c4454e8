package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/vmafx/vmafx/internal/testutil"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// The test pair: p02 of the kernel's reference data, 176x144 yuv420p, 16
// frames; libvmaf 3.2.0 pools its vmaf_v0.6.1 scores to a mean of 18.698871.
const (
	refClip      = "../../../vmaf/testdata/clips/p02_ref.yuv"
	distClip     = "../../../vmaf/testdata/clips/p02_dist.yuv"
	pairW, pairH = 176, 144
	libvmafMean  = 18.698871
)

// toY4M writes the raw 4:2:0 clip at from as a Y4M file at to.
func toY4M(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	fb := pairW * pairH * 3 / 2
	out := fmt.Appendf(nil, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420jpeg\n", pairW, pairH)
	for i := 0; i+fb <= len(data); i += fb {
		out = append(out, "FRAME\n"...)
		out = append(out, data[i:i+fb]...)
	}
	if err := os.WriteFile(to, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testutil.Build(t, "./worker/cmd/vmafx-worker")

	t.Run("desk form", func(t *testing.T) {
		dir := t.TempDir()
		ref, dist := filepath.Join(dir, "ref.y4m"), filepath.Join(dir, "dist.y4m")
		toY4M(t, refClip, ref)
		toY4M(t, distClip, dist)
		cmd := exec.Command(bin, "score", ref, dist)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v; stderr:\n%s", err, stderr.String())
		}
		s, ok := strings.CutPrefix(stdout.String(), "VMAF score: ")
		got, err := strconv.ParseFloat(strings.TrimSuffix(s, "\n"), 64)
		if !ok || err != nil || !strings.HasSuffix(s, "\n") || math.Abs(got-libvmafMean) > 1e-4 {
			t.Fatalf("stdout = %q, want \"VMAF score: %.6f\\n\"", stdout.String(), libvmafMean)
		}
	})

	t.Run("SIGTERM is reported", func(t *testing.T) {
		// The distorted input sends one frame and stalls, so the worker is
		// mid-run when the signal comes, as when the kubelet stops a Pod.
		data, err := os.ReadFile(distClip)
		if err != nil {
			t.Fatal(err)
		}
		requested := make(chan struct{}, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.Write(data[:pairW*pairH*3/2])
			w.(http.Flusher).Flush()
			requested <- struct{}{}
			<-r.Context().Done()
		}))
		defer srv.Close()
		term := filepath.Join(t.TempDir(), "termination-log")
		cmd := exec.Command(bin, "score", "--reference", refClip, "--distorted", srv.URL+"/dist.yuv",
			"--width", strconv.Itoa(pairW), "--height", strconv.Itoa(pairH), "--termination-log", term)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-requested:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatal("the worker did not fetch its input")
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("wait: %v, want exit code 1; stderr:\n%s", err, stderr.String())
		}
		msg, err := os.ReadFile(term)
		if err != nil {
			t.Fatal(err)
		}
		r, err := vmafxv1.ParseWorkerResult(msg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Error == nil || r.Error.Reason != vmafxv1.ReasonInternal || !strings.Contains(r.Error.Message, "terminated signal received") {
			t.Fatalf("result error = %+v, want Internal naming SIGTERM", r.Error)
		}
		if stdout.String() != string(msg) {
			t.Errorf("stdout %q differs from the termination message %q", stdout.String(), msg)
		}
	})
}
