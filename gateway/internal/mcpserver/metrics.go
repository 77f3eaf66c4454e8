package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmafx/vmafx/gateway/internal/serve"
)

// Metrics counts the MCP requests the server receives, by method, tool and outcome.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
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
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// Instrument adds m's middleware to s.
func (m *Metrics) Instrument(s *mcp.Server) {
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, rawMethod string, req mcp.Request) (mcp.Result, error) {
			start := time.Now()
			tool := ""
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil {
				tool = toolLabel(call.Params.Name)
			}
			method := methodLabel(rawMethod)
			res, err := next(ctx, rawMethod, req)
			outcome := "ok"
			if err != nil {
				outcome = "error"
			} else if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
				outcome = "tool_error"
			}
			m.requests.WithLabelValues(method, tool, outcome).Inc()
			m.latency.WithLabelValues(method, tool).Observe(time.Since(start).Seconds())
			return res, err
		}
	})
}

// The label values a client can choose come from fixed sets: a tool name or method is
// the client's to invent, and every new label value is a series kept for the life of the
// process, so invented names would grow memory without bound.
var (
	knownTools   = map[string]bool{ToolScore: true, ToolCompare: true, ToolGet: true, ToolWait: true, ToolList: true, ToolListModels: true}
	knownMethods = map[string]bool{
		"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
		"resources/list": true, "resources/templates/list": true, "resources/read": true,
		"resources/subscribe": true, "resources/unsubscribe": true, "prompts/list": true,
		"prompts/get": true, "completion/complete": true, "logging/setLevel": true,
		"notifications/initialized": true, "notifications/cancelled": true,
		"notifications/progress": true, "notifications/roots/list_changed": true,
	}
)

// toolLabel is name if the server has such a tool, else "other".
func toolLabel(name string) string {
	if knownTools[name] {
		return name
	}
	return "other"
}

// methodLabel is method if it is one of MCP's, else "other".
func methodLabel(method string) string {
	if knownMethods[method] {
		return method
	}
	return "other"
}
