package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmafx/vmafx/internal/testutil"
)

// TestDocsListEveryMetric: docs/device-plugin.md names every metric.
func TestDocsListEveryMetric(t *testing.T) {
	testutil.RequireMetricsDocumented(t, "device-plugin.md", testutil.Registered(func(r prometheus.Registerer) { New(r) })...)
}
