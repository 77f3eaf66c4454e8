package httpapi

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmafx/vmafx/internal/testutil"
)

// TestDocsListEveryMetric: docs/gateway.md names every metric of this door.
func TestDocsListEveryMetric(t *testing.T) {
	testutil.RequireMetricsDocumented(t, "gateway.md", testutil.Registered(func(r prometheus.Registerer) { NewMetrics(r) })...)
}
