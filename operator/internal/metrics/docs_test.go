package metrics

import (
	"testing"

	"github.com/vmafx/vmafx/internal/testutil"
)

// TestDocsListEveryMetric: docs/operator.md's metrics table names every metric.
func TestDocsListEveryMetric(t *testing.T) {
	testutil.RequireMetricsDocumented(t, "operator.md", append(NewJobs().Collectors(), NewPhaseCollector(nil))...)
}
