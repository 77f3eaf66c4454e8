package push

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// timeout bounds one push: a Pushgateway answers in milliseconds, and a batch Job must
// not hang on one that is gone.
const timeout = 10 * time.Second

// Result pushes r's metrics to the Pushgateway at url under the job label job (replacing
// that job's previous metrics): vmafx_batch_score, _score_min, _score_max,
// _score_harmonic_mean, _frames, _fps, _duration_seconds and _completion_timestamp_seconds,
// labelled with model, backend (BackendLabel) and gpu (GPULabel).
func Result(ctx context.Context, url, job string, r *vmafxv1.WorkerResult) error {
	labels := prometheus.Labels{"model": r.Model, "backend": BackendLabel(r.Backend), "gpu": GPULabel(r.Device)}
	reg := prometheus.NewRegistry()
	gauge := func(name, help string, v float64) {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "vmafx_batch_" + name, Help: help, ConstLabels: labels})
		g.Set(v)
		reg.MustRegister(g)
	}
	gauge("score", "Pooled (mean) VMAF score of the batch Job.", r.Score)
	gauge("score_min", "Lowest per-frame VMAF score.", r.Min)
	gauge("score_max", "Highest per-frame VMAF score.", r.Max)
	gauge("score_harmonic_mean", "Harmonic mean of the per-frame VMAF scores.", r.HarmonicMean)
	gauge("frames", "Frames scored.", float64(r.Frames))
	gauge("fps", "Scoring speed in frames per second.", r.FPS)
	gauge("duration_seconds", "Wall time of the scoring, fetching and decoding included.", r.WallSeconds)
	gauge("completion_timestamp_seconds", "When the score was pushed, in Unix seconds.", float64(time.Now().Unix()))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := push.New(url, job).Gatherer(reg).PushContext(ctx); err != nil {
		return fmt.Errorf("pushing the result to %s: %w", url, err)
	}
	return nil
}

// backends are the backend label's values beside "other": the backends a worker runs.
var backends = []vmafxv1.Backend{vmafxv1.BackendCPU, vmafxv1.BackendCUDA, vmafxv1.BackendHIP, vmafxv1.BackendSYCL, vmafxv1.BackendVulkan}

// BackendLabel is the backend label of a result that ran on backend: one of the
// backends, or "other", so that no worker adds a series by its own spelling.
func BackendLabel(backend string) string {
	if slices.Contains(backends, vmafxv1.Backend(backend)) {
		return backend
	}
	return "other"
}

// Values of the gpu label beside the models' names.
const (
	// NoGPU is the gpu label of a result scored on the CPU.
	NoGPU = "none"
	// UnknownGPU is the gpu label of a device that gives no usable name.
	UnknownGPU = "unknown"
)

// maxGPULabel bounds the gpu label: a model's name ("nvidia-h100-80gb-hbm3",
// "amd-radeon-rx-7900-xtx") is well under it.
const maxGPULabel = 48

var (
	// driverDetails are the parts of a device's name that say how the driver sees it,
	// not which model it is: "(RADV NAVI31)", "(LLVM 15.0.6, 256 bits)", "(R)", "(TM)".
	driverDetails = regexp.MustCompile(`\([^)]*\)`)
	nonAlnum      = regexp.MustCompile(`[^a-z0-9]+`)
)

// GPULabel is the gpu label of a result that ran on d (nil: the CPU, NoGPU): the
// device's model name, lower-case, its driver's details in parentheses dropped, runs of
// other characters turned into one "-", at most maxGPULabel characters. A cluster has a
// handful of GPU models, so the label stays a small set whatever the driver reports.
func GPULabel(d *vmafxv1.WorkerDevice) string {
	if d == nil {
		return NoGPU
	}
	name := driverDetails.ReplaceAllString(strings.ToLower(d.Name), " ")
	name = strings.Trim(nonAlnum.ReplaceAllString(name, "-"), "-")
	if len(name) > maxGPULabel {
		name = strings.TrimRight(name[:maxGPULabel], "-")
	}
	if name == "" {
		return UnknownGPU
	}
	return name
}
