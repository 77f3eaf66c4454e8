package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every metric name.
const Namespace = "vmafx_device_plugin"

// Slot states, the values of the state label of the slots gauge.
const (
	StateHealthy   = "healthy"
	StateUnhealthy = "unhealthy"
	StateAllocated = "allocated"
)

// Results, the values of the result label.
const (
	ResultSuccess = "success"
	ResultError   = "error"
)

// Self-test verdicts, the values of the result label of SelfTestVerdicts: a worker's
// pass or fail, or a verdict file that is not one.
const (
	VerdictPass    = "pass"
	VerdictFail    = "fail"
	VerdictInvalid = "invalid"
)

// Metrics holds the device plugin's collectors.
type Metrics struct {
	// Slots is the number of slots by state (healthy, unhealthy, allocated).
	Slots *prometheus.GaugeVec
	// AllocateRequests counts Allocate calls by result.
	AllocateRequests *prometheus.CounterVec
	// AllocateDuration observes how long Allocate takes inside the plugin.
	AllocateDuration prometheus.Histogram
	// Registrations counts registrations with the kubelet by result.
	Registrations *prometheus.CounterVec
	// HealthTransitions counts device health changes by the state entered.
	HealthTransitions *prometheus.CounterVec
	// Heartbeats counts heartbeat writes by result.
	Heartbeats *prometheus.CounterVec
	// HeartbeatFailures counts failed heartbeat writes.
	HeartbeatFailures prometheus.Counter
	// LastHeartbeat is the Unix time of the last heartbeat the API server accepted.
	LastHeartbeat prometheus.Gauge
	// SelfTestVerdicts counts the workers' Vulkan self-test verdicts the plugin has
	// read, by result, each once (a new verdict file, not every check).
	SelfTestVerdicts *prometheus.CounterVec
}

// New creates the collectors and registers them with reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Slots: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "slots",
			Help: "Scoring slots by state: healthy, unhealthy, allocated (allocated comes from the kubelet PodResources API).",
		}, []string{"state"}),
		AllocateRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "allocate_requests_total",
			Help: "Allocate calls from the kubelet by result.",
		}, []string{"result"}),
		// Allocate answers from precomputed data in microseconds; the buckets span
		// 10 us to 100 ms so that the 1 ms target sits in the middle.
		AllocateDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "allocate_duration_seconds",
			Help:    "Time spent inside the plugin answering Allocate.",
			Buckets: prometheus.ExponentialBuckets(10e-6, 2.5, 11),
		}),
		Registrations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "registrations_total",
			Help: "Registrations with the kubelet by result.",
		}, []string{"result"}),
		HealthTransitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "device_health_transitions_total",
			Help: "Device health changes by the state entered (healthy, unhealthy).",
		}, []string{"state"}),
		Heartbeats: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "heartbeats_total",
			Help: "VmafxNode heartbeat writes by result.",
		}, []string{"result"}),
		HeartbeatFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "heartbeat_failures_total",
			Help: "VmafxNode heartbeat writes that failed.",
		}),
		LastHeartbeat: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "last_heartbeat_timestamp_seconds",
			Help: "Unix time of the last heartbeat the API server accepted.",
		}),
		SelfTestVerdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "self_test_verdicts_total",
			Help: "Vulkan self-test verdicts read from the workers, by result (pass, fail, invalid); a fail makes the device Unhealthy.",
		}, []string{"result"}),
	}
	reg.MustRegister(m.Slots, m.AllocateRequests, m.AllocateDuration, m.Registrations,
		m.HealthTransitions, m.Heartbeats, m.HeartbeatFailures, m.LastHeartbeat, m.SelfTestVerdicts)
	return m
}

// Discard returns collectors registered nowhere, for tests and benchmarks.
func Discard() *Metrics { return New(prometheus.NewRegistry()) }
