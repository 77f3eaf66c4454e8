package trainer

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	samples, heldOut, skipped prometheus.Counter
	checkpoints               *prometheus.CounterVec
	rmse                      *prometheus.GaugeVec
	stepSeconds               prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		samples: prometheus.NewCounter(prometheus.CounterOpts{Name: "vmafx_trainer_samples_total",
			Help: "Samples counted (training and held-out), including those restored from the last checkpoint."}),
		heldOut: prometheus.NewCounter(prometheus.CounterOpts{Name: "vmafx_trainer_held_out_samples_total",
			Help: "Samples held out since the trainer started."}),
		skipped: prometheus.NewCounter(prometheus.CounterOpts{Name: "vmafx_trainer_skipped_jobs_total",
			Help: "Labelled jobs that could not be used as samples."}),
		checkpoints: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vmafx_trainer_checkpoints_total",
			Help: "Checkpoints due, by result: published, withheld, failed."}, []string{"result"}),
		rmse: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vmafx_trainer_rmse",
			Help: "Root mean square error in VMAF points: training (progressive), held-out, base-held-out."}, []string{"set"}),
		stepSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "vmafx_trainer_step_seconds",
			Help: "Time to learn from one sample.", Buckets: prometheus.ExponentialBuckets(1e-4, 4, 8)}),
	}
	reg.MustRegister(m.samples, m.heldOut, m.skipped, m.checkpoints, m.rmse, m.stepSeconds)
	return m
}
