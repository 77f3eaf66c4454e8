package push

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/metriclabels"
)

// TestResult checks the request a Pushgateway receives: PUT to /metrics/job/<job> with the
// result's gauges in the text format. The real Pushgateway is exercised in the e2e.
func TestResult(t *testing.T) {
	var method, path, body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		method, path, body = r.Method, r.URL.Path, string(b)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	r := &vmafxv1.WorkerResult{Score: 93.5, Min: 80, Max: 99, HarmonicMean: 93, Frames: 48, FPS: 120, WallSeconds: 0.4, Model: "vmaf_v0.6.1", Backend: "vulkan",
		Device: &vmafxv1.WorkerDevice{Name: "NVIDIA H100 80GB HBM3", API: "Vulkan 1.3"}}
	if err := Result(context.Background(), srv.URL, "vmafx-score-1", r); err != nil {
		t.Fatal(err)
	}
	if method != http.MethodPut || path != "/metrics/job/vmafx-score-1" {
		t.Errorf("%s %s, want PUT /metrics/job/vmafx-score-1", method, path)
	}
	// The body is protobuf-delimited by default; the names and labels appear in it.
	for _, want := range []string{"vmafx_batch_score", "vmafx_batch_frames", "vmafx_batch_fps", "vmafx_batch_duration_seconds", "vmaf_v0.6.1",
		"backend", "vulkan", "gpu", "nvidia-h100-80gb-hbm3"} {
		if !strings.Contains(body, want) {
			t.Errorf("pushed body lacks %s", want)
		}
	}
}

func TestResultReportsAFailedPush(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	defer srv.Close()
	err := Result(context.Background(), srv.URL, "j", &vmafxv1.WorkerResult{})
	if err == nil || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("err = %v, want one naming the gateway", err)
	}
}

// TestLabelsAreBounded: the backend label is one of a fixed set and the gpu label a
// device's model, normalised and bounded, whatever a driver reports.
func TestLabelsAreBounded(t *testing.T) {
	for in, want := range map[string]string{"cpu": "cpu", "vulkan": "vulkan", "cuda": "cuda", "hip": "hip", "sycl": "sycl",
		"auto": "other", "": "other", "Vulkan": "other", "metal\n": "other"} {
		if got := BackendLabel(in); got != want {
			t.Errorf("BackendLabel(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"NVIDIA H100 80GB HBM3":                 "nvidia-h100-80gb-hbm3",
		"AMD Radeon RX 7900 XTX (RADV NAVI31)":  "amd-radeon-rx-7900-xtx",
		"llvmpipe (LLVM 15.0.6, 256 bits)":      "llvmpipe",
		"Intel(R) Arc(TM) A770 Graphics (DG2)":  "intel-arc-a770-graphics",
		"  NVIDIA  GeForce RTX 4090  ":          "nvidia-geforce-rtx-4090",
		"(R)":                                   metriclabels.UnknownGPU,
		"":                                      metriclabels.UnknownGPU,
		"\u00e9\u00e8 \"quoted\" {label=\"x\"}": "quoted-label-x",
		strings.Repeat("a-", 60):                strings.TrimRight(strings.Repeat("a-", 24), "-"),
	} {
		got := GPULabel(&vmafxv1.WorkerDevice{Name: in})
		if got != want {
			t.Errorf("GPULabel(%q) = %q, want %q", in, got, want)
		}
		if len(got) > metriclabels.MaxGPU || strings.Trim(got, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			t.Errorf("GPULabel(%q) = %q: more than %d characters or outside [a-z0-9-]", in, got, metriclabels.MaxGPU)
		}
	}
	if got := GPULabel(nil); got != metriclabels.NoGPU {
		t.Errorf("GPULabel(nil) = %q, want %q (the CPU)", got, metriclabels.NoGPU)
	}
}
