package metrics

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/metriclabels"
)

// Jobs are the VmafxJob metrics.
type Jobs struct {
	// Attempts counts worker Pods created, by attempt kind (first, retry, lost).
	Attempts *prometheus.CounterVec
	// Outcomes counts finished jobs by phase (Succeeded, Failed).
	Outcomes *prometheus.CounterVec
	// ScheduleSeconds is the time from a job's creation to its first Pod being bound.
	ScheduleSeconds prometheus.Histogram
	// CompletionSeconds is the time from a job's creation to its final phase.
	CompletionSeconds *prometheus.HistogramVec
	// ScoredFrames counts the frames of succeeded jobs, and ScoringFPS their scoring
	// speed, by the backend that ran and the GPU model (metriclabels): what the cluster's
	// workers do, without a metrics endpoint in every short-lived worker Pod.
	ScoredFrames *prometheus.CounterVec
	ScoringFPS   *prometheus.HistogramVec
	gpus         *metriclabels.GPUSet
}

// maxGPUModels bounds the gpu label's values: a cluster has a handful of GPU models.
const maxGPUModels = 32

// fpsBuckets span a 4K score on one CPU thread to a GPU's 1080p.
var fpsBuckets = []float64{0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}

// latencyBuckets span a warm cluster's sub-second placement to hour-long videos.
var latencyBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// NewJobs returns the job metrics, unregistered.
func NewJobs() *Jobs {
	return &Jobs{
		Attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmafx_job_attempts_total", Help: "Worker Pods created for VmafxJobs, by kind of attempt (first, retry, lost).",
		}, []string{"kind"}),
		Outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmafx_job_outcomes_total", Help: "VmafxJobs that reached a final phase, by phase.",
		}, []string{"phase"}),
		ScheduleSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "vmafx_job_schedule_seconds", Help: "Time from a VmafxJob's creation to its first worker Pod being bound to a node.",
			Buckets: latencyBuckets,
		}),
		CompletionSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vmafx_job_completion_seconds", Help: "Time from a VmafxJob's creation to its final phase, by phase.",
			Buckets: latencyBuckets,
		}, []string{"phase"}),
		ScoredFrames: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmafx_job_scored_frames_total", Help: "Frames scored by succeeded VmafxJobs, by the backend that ran and the GPU model (none on the CPU).",
		}, []string{"backend", "gpu"}),
		ScoringFPS: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vmafx_job_scoring_fps", Help: "Scoring speed of succeeded VmafxJobs in frames per second, by the backend that ran and the GPU model (none on the CPU).",
			Buckets: fpsBuckets,
		}, []string{"backend", "gpu"}),
		gpus: metriclabels.NewGPUSet(maxGPUModels),
	}
}

// ObserveResult counts a succeeded job's frames and observes its speed, labelled with
// its backend and its device's model: the device's name is what its result's device
// says before the first comma (the compute API and the driver follow).
func (m *Jobs) ObserveResult(r *vmafxv1.JobResult) {
	if r == nil {
		return
	}
	gpu := metriclabels.NoGPU
	if r.Device != "" {
		name, _, _ := strings.Cut(r.Device, ",")
		gpu = m.gpus.Label(metriclabels.GPU(name))
	}
	backend := metriclabels.Backend(r.Backend)
	m.ScoredFrames.WithLabelValues(backend, gpu).Add(float64(max(r.Frames, 0)))
	if fps, err := strconv.ParseFloat(r.FPS, 64); err == nil && fps > 0 && !math.IsInf(fps, 0) {
		m.ScoringFPS.WithLabelValues(backend, gpu).Observe(fps)
	}
}

// Collectors returns the metrics to register.
func (m *Jobs) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Attempts, m.Outcomes, m.ScheduleSeconds, m.CompletionSeconds, m.ScoredFrames, m.ScoringFPS}
}

// phaseCollector reports vmafx_jobs{phase} from the manager's cache at scrape time, so
// the gauge is always the truth and never drifts from missed transitions.
type phaseCollector struct {
	reader client.Reader
	desc   *prometheus.Desc
}

// NewPhaseCollector returns a collector of jobs by phase read through reader (the
// manager's cached client), without deep copies: the objects it sees are the cache's
// own, and it must never change them.
func NewPhaseCollector(reader client.Reader) prometheus.Collector {
	return &phaseCollector{reader: reader, desc: prometheus.NewDesc("vmafx_jobs", "VmafxJobs by phase.", []string{"phase"}, nil)}
}

func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	var jobs vmafxv1.VmafxJobList
	// Read the cache's own objects: the collector only counts phases, and a deep copy of
	// every job on every scrape would cost as much as the cache itself.
	if err := c.reader.List(context.Background(), &jobs, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	counts := map[vmafxv1.JobPhase]int{vmafxv1.JobPending: 0, vmafxv1.JobRunning: 0, vmafxv1.JobSucceeded: 0, vmafxv1.JobFailed: 0}
	for i := range jobs.Items {
		p := jobs.Items[i].Status.Phase
		if p == "" {
			p = vmafxv1.JobPending
		}
		counts[p]++
	}
	for p, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), string(p))
	}
}

// Register adds collectors to controller-runtime's registry. Registering twice (a
// second manager in one test process) is not an error.
func Register(collectors ...prometheus.Collector) {
	for _, c := range collectors {
		if err := ctrlmetrics.Registry.Register(c); err != nil {
			if !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
				panic(err)
			}
		}
	}
}
