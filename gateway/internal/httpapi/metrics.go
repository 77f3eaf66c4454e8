package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmafx/vmafx/gateway/internal/serve"
)

// Metrics counts the API's requests by route and code and times them.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
}

// NewMetrics registers the API's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmafx_api_requests_total",
			Help: "HTTP scoring API requests by route (the handler's pattern), method and status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "vmafx_api_request_duration_seconds",
			Help:    "HTTP scoring API request latency by route and method; waits and streams last as long as the job takes.",
			Buckets: serve.LatencyBuckets,
		}, []string{"route", "method"}),
	}
	m.inFlight = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmafx_api_requests_in_flight",
		Help: "HTTP scoring API requests being served, by route: open waits and event streams included.",
	}, []string{"route"})
	reg.MustRegister(m.requests, m.latency, m.inFlight)
	return m
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush lets Server-Sent Events through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Instrument records route's requests: the console's pages are counted with the API's
// routes, under their own patterns.
func (m *Metrics) Instrument(route string, h http.HandlerFunc) http.HandlerFunc {
	return m.instrument(route, h)
}

// instrument records route's requests.
func (m *Metrics) instrument(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.inFlight.WithLabelValues(route).Inc()
		defer m.inFlight.WithLabelValues(route).Dec()
		rec := &statusRecorder{ResponseWriter: w}
		h(rec, r)
		if rec.code == 0 {
			rec.code = http.StatusOK
		}
		method := MethodLabel(r.Method)
		m.requests.WithLabelValues(route, method, strconv.Itoa(rec.code)).Inc()
		m.latency.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	}
}

// MethodLabel is method as a metric label: the standard methods as they are, anything a
// client invents "other", so that a flood of invented methods cannot add series.
func MethodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions:
		return method
	}
	return "other"
}
