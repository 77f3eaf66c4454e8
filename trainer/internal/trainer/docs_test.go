package trainer

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmafx/vmafx/internal/testutil"
)

// TestDocsListEveryMetric: docs/training.md names every metric of the trainer.
func TestDocsListEveryMetric(t *testing.T) {
	testutil.RequireMetricsDocumented(t, "training.md", testutil.Registered(func(r prometheus.Registerer) { newMetrics(r) })...)
}
