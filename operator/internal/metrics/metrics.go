package metrics

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
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
}

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
	}
}

// Collectors returns the metrics to register.
func (m *Jobs) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Attempts, m.Outcomes, m.ScheduleSeconds, m.CompletionSeconds}
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
