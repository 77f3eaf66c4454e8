package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// docsRow is an option's row in docs/device-plugin.md's configuration table.
func docsRow(o Option) string {
	key, def := "—", "—"
	if o.Key != "" {
		key = "`" + o.Key + "`"
		def = "`" + o.Default + "`"
		if o.Default == "" {
			def = "empty"
		}
	}
	return "| `--" + o.Flag + "` | `" + o.Env + "` | " + key + " | " + def + " | " + o.Usage + " |"
}

// TestDocsListEveryOption keeps the documentation's configuration table in step with
// the options: every row must appear exactly as the options describe themselves.
func TestDocsListEveryOption(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "device-plugin.md"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, o := range Options() {
		if row := docsRow(o); !strings.Contains(string(doc), row) {
			missing = append(missing, row)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/device-plugin.md lacks these configuration rows:\n%s", strings.Join(missing, "\n"))
	}
}
