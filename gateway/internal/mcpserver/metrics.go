package mcpserver

import (
	"context"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmafx/vmafx/gateway/internal/serve"
)

// Metrics counts the MCP requests the server receives, by method, tool and outcome.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	sessions prometheus.Gauge
	refused  *prometheus.CounterVec
}

// NewMetrics registers the MCP server's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmafx_mcp_requests_total",
			Help: "MCP requests by method (tools/call, resources/read, ...), tool and outcome: ok, tool_error (the API server refused, the tool says why) or error.",
		}, []string{"method", "tool", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "vmafx_mcp_request_duration_seconds",
			Help:    "MCP request latency by method and tool; waits last as long as the job takes.",
			Buckets: serve.LatencyBuckets,
		}, []string{"method", "tool"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vmafx_mcp_sessions",
			Help: "MCP sessions open in this replica (and new ones being opened).",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmafx_mcp_sessions_refused_total",
			Help: "New MCP sessions refused by the cap they hit: user (sessions per user) or total (sessions of the replica).",
		}, []string{"cap"}),
	}
	reg.MustRegister(m.requests, m.latency, m.sessions, m.refused)
	return m
}

// Instrument adds m's middleware to s.
func (m *Metrics) Instrument(s *mcp.Server) {
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			start := time.Now()
			tool := ""
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil {
				tool = ToolLabel(call.Params.Name)
			}
			label := MethodLabel(method)
			res, err := next(ctx, method, req)
			outcome := "ok"
			if err != nil {
				outcome = "error"
			} else if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
				outcome = "tool_error"
			}
			m.requests.WithLabelValues(label, tool, outcome).Inc()
			m.latency.WithLabelValues(label, tool).Observe(time.Since(start).Seconds())
			return res, err
		}
	})
}

// Tools are the server's tool names.
var Tools = []string{ToolScore, ToolCompare, ToolGet, ToolList, ToolWait, ToolListModels, ToolWorst}

// ToolLabel is a called tool's name as a metric label: the server's own tools as they
// are, any name a client invents "other", so that a flood of invented names cannot add
// series.
func ToolLabel(name string) string {
	if slices.Contains(Tools, name) {
		return name
	}
	return "other"
}

// methods are the MCP methods the metrics name; others (a later protocol's, or invented)
// count as "other".
var methods = []string{
	"initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
	"resources/templates/list", "resources/subscribe", "resources/unsubscribe", "prompts/list",
	"prompts/get", "completion/complete", "logging/setLevel", "notifications/initialized",
	"notifications/cancelled", "notifications/progress", "notifications/roots/list_changed",
}

// MethodLabel is an MCP method as a metric label: a known one as it is, else "other".
func MethodLabel(method string) string {
	if slices.Contains(methods, method) {
		return method
	}
	return "other"
}
