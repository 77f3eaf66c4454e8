package chartrender

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// Lint runs `helm lint` (with the values schema) on the chart with values and returns
// its warnings and errors; informational messages (an icon is recommended) are dropped.
func Lint(values map[string]any) error {
	kv, err := chartutil.ParseKubeVersion(DefaultKubeVersion)
	if err != nil {
		return err
	}
	linter := lint.AllWithKubeVersion(ChartDir(), values, "vmafx-system", kv)
	var msgs []string
	for _, m := range linter.Messages {
		if m.Severity >= support.WarningSev {
			msgs = append(msgs, m.Error())
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("helm lint: %s", strings.Join(msgs, "; "))
	}
	return nil
}
