package push

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/metriclabels"
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

// BackendLabel is the backend label of a result that ran on backend
// (metriclabels.Backend).
func BackendLabel(backend string) string { return metriclabels.Backend(backend) }

// GPULabel is the gpu label of a result that ran on d (nil: the CPU,
// metriclabels.NoGPU).
func GPULabel(d *vmafxv1.WorkerDevice) string {
	if d == nil {
		return metriclabels.NoGPU
	}
	return metriclabels.GPU(d.Name)
}
