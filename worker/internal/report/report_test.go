package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/backend"
	"github.com/vmafx/vmafx/worker/internal/source"
)

func TestClassify(t *testing.T) {
	fetchErr := &fetch.Error{URI: "http://h/ref.y4m", Err: fetch.ErrTimeout}
	type want struct {
		Reason string
		Code   int
	}
	tests := []struct {
		name string
		err  error
		want want
	}{
		{"success", nil, want{"", 0}},
		{"truncated distorted", fmt.Errorf("distorted: %w: got 10 of 38016 bytes", vmaf.ErrTruncated), want{vmafxv1.ReasonBadInput, 2}},
		{"size mismatch", fmt.Errorf("%w: reference 176x144", vmaf.ErrSizeMismatch), want{vmafxv1.ReasonBadInput, 2}},
		{"frame count mismatch", fmt.Errorf("%w: distorted ended first", vmaf.ErrFrameCountMismatch), want{vmafxv1.ReasonBadInput, 2}},
		{"no frames", vmaf.ErrNoFrames, want{vmafxv1.ReasonBadInput, 2}},
		{"unknown pixel format", fmt.Errorf("%w: \"nv12\"", vmaf.ErrUnknownPixelFormat), want{vmafxv1.ReasonBadInput, 2}},
		{"bad y4m header", fmt.Errorf("reference: %w", vmaf.ErrBadHeader), want{vmafxv1.ReasonBadInput, 2}},
		{"too small", vmaf.ErrTooSmall, want{vmafxv1.ReasonBadInput, 2}},
		{"raw without geometry", fmt.Errorf("distorted: %w", source.ErrNoGeometry), want{vmafxv1.ReasonBadInput, 2}},
		{"bad flag", fmt.Errorf("%w: --threads -1", ErrBadRequest), want{vmafxv1.ReasonBadInput, 2}},
		{"fetch", fetchErr, want{vmafxv1.ReasonFetchFailed, 3}},
		{"fetch while reading frames", fmt.Errorf("reference: %w", fetchErr), want{vmafxv1.ReasonFetchFailed, 3}},
		{"input not found", &fetch.Error{URI: "file:///data/missing.y4m", Err: fetch.ErrNotFound}, want{vmafxv1.ReasonBadInput, 2}},
		{"s3", &fetch.Error{URI: "s3://b/k", Err: fetch.ErrUnsupportedScheme}, want{vmafxv1.ReasonFetchFailed, 3}},
		{"unknown model", fmt.Errorf("%w: \"x\"", vmaf.ErrUnknownModel), want{vmafxv1.ReasonBadModel, 4}},
		{"corrupt model", fmt.Errorf("%w: unexpected end of JSON input", vmaf.ErrBadModel), want{vmafxv1.ReasonBadModel, 4}},
		{"bad VMAFX_CPU", fmt.Errorf("%w: VMAFX_CPU=\"sse9\", want generic, avx2 or avx512", vmaf.ErrUnsupportedCPU), want{vmafxv1.ReasonBadInput, 2}},
		{"gpu slot without a device", fmt.Errorf("%w: backend cuda has no vendor kernel", backend.ErrUnavailable), want{vmafxv1.ReasonBackendUnavailable, 5}},
		{"cancelled", fmt.Errorf("reference: %w", context.Canceled), want{vmafxv1.ReasonInternal, 1}},
		{"cancelled during a fetch", errors.Join(context.Canceled, fetchErr), want{vmafxv1.ReasonInternal, 1}},
		{"anything else", errors.New("disk full"), want{vmafxv1.ReasonInternal, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reason, code := Classify(tc.err)
			if diff := cmp.Diff(tc.want, want{reason, code}); diff != "" {
				t.Errorf("Classify(%v) (-want +got):\n%s", tc.err, diff)
			}
		})
	}
}

var prov = Provenance{Backend: "cpu", RequestedBackend: "cuda", Model: "vmaf_v0.6.1", ModelSHA256: strings.Repeat("ab", 32)}

func TestFailureEncoding(t *testing.T) {
	long := "reference: " + strings.Repeat("very long\nmulti-line é message ", 500)
	r, code := Failure(fmt.Errorf("%s: %w", long, vmaf.ErrTruncated), prov, 1500*time.Millisecond)
	if code != ExitBadInput {
		t.Errorf("code = %d, want %d", code, ExitBadInput)
	}
	line := Encode(r)
	if len(line) > MaxBytes || strings.Count(string(line), "\n") != 1 || line[len(line)-1] != '\n' {
		t.Fatalf("encoded result is %d bytes over %d lines, want one line under %d bytes", len(line), strings.Count(string(line), "\n"), MaxBytes)
	}
	got, err := vmafxv1.ParseWorkerResult(line)
	if err != nil {
		t.Fatal(err)
	}
	if got.Error == nil || got.Error.Reason != vmafxv1.ReasonBadInput || !strings.HasPrefix(got.Error.Message, "reference: very long multi-line") {
		t.Fatalf("error = %+v", got.Error)
	}
	want := vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, WallSeconds: 1.5, Backend: "cpu", RequestedBackend: "cuda",
		Model: "vmaf_v0.6.1", ModelSHA256: prov.ModelSHA256, KernelVersion: vmaf.Version,
		WorkerVersion: version.Get().Version, WorkerCommit: version.Get().Commit}
	got.Error = nil
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

func TestEncodeHugeFields(t *testing.T) {
	p := prov
	p.Model = strings.Repeat("m", 5000)
	r, _ := Failure(errors.New(strings.Repeat("x", 5000)), p, time.Second)
	line := Encode(r)
	if len(line) > MaxBytes {
		t.Fatalf("encoded result is %d bytes, want at most %d", len(line), MaxBytes)
	}
	if _, err := vmafxv1.ParseWorkerResult(line); err != nil {
		t.Fatal(err)
	}
}

func TestEncodeNotFinite(t *testing.T) {
	r := prov.result(time.Second)
	r.Score, r.Frames = math.NaN(), 3
	got, err := vmafxv1.ParseWorkerResult(Encode(r))
	if err != nil {
		t.Fatal(err)
	}
	if got.Error == nil || got.Error.Reason != vmafxv1.ReasonInternal {
		t.Fatalf("error = %+v, want Internal", got.Error)
	}
}

func TestWriteTermination(t *testing.T) {
	dir := t.TempDir()
	line := []byte("{}\n")

	missing := filepath.Join(dir, "termination-log")
	if err := WriteTermination(missing, false, line); err == nil {
		t.Fatal("writing a missing default path succeeded, want an error")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the default path was created: %v", err)
	}

	if err := WriteTermination(missing, true, line); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "kubelet-made")
	if err := os.WriteFile(existing, []byte("an older, longer message\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteTermination(existing, false, line); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{missing, existing} {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(line), string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", p, diff)
		}
	}
}

// TestSuccessInterval: a bootstrapped model's result carries the pooled interval, which
// holds the bagged score; a plain model's carries none.
func TestSuccessInterval(t *testing.T) {
	score := func(model string) *vmaf.Result {
		open := func(name string) vmaf.FrameSource {
			f, err := os.Open(filepath.Join("../../../vmaf/testdata/clips", name))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			r, err := vmaf.OpenRaw(f, 176, 144, vmaf.YUV420P)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		res, err := vmaf.Score(context.Background(), open("p01_ref.yuv"), open("p01_dist.yuv"), vmaf.Options{Model: model, Count: 4})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	r := Success(score("vmaf_b_v0.6.3"), Provenance{Model: "vmaf_b_v0.6.3"}, time.Second)
	if i := r.Interval; i == nil || !(i.Low <= i.Bagging && i.Bagging <= i.High) || i.Low >= i.High || i.StdDev <= 0 {
		t.Fatalf("interval %+v, want low <= bagging <= high and a spread", r.Interval)
	}
	if r := Success(score("vmaf_v0.6.1"), Provenance{Model: "vmaf_v0.6.1"}, time.Second); r.Interval != nil {
		t.Errorf("vmaf_v0.6.1 has an interval %+v", r.Interval)
	}
}
