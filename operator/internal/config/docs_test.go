package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/testutil"
)

// TestDocsListEveryOption keeps docs/operator.md's configuration table in step with the
// options, the one place each flag, variable, default and meaning is written: every row
// must appear exactly as the options describe themselves, and no other row may name an
// operator variable. VMAFX_UPDATE_DOCS=1 rewrites the table.
func TestDocsListEveryOption(t *testing.T) {
	path := filepath.Join(testutil.RepoRoot(), "docs", "operator.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	table := cli.MarkdownTable(Flags(&Config{}).Options())
	const begin, end = "<!-- options: begin (generated from operator/internal/config) -->\n", "<!-- options: end -->\n"
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("docs/operator.md lacks the markers %q and %q", begin, end)
	}
	if got := string(doc[i+len(begin) : j]); got != table {
		if os.Getenv("VMAFX_UPDATE_DOCS") == "1" {
			out := string(doc[:i+len(begin)]) + table + string(doc[j:])
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/operator.md's configuration table is stale; run VMAFX_UPDATE_DOCS=1 go test ./operator/internal/config -run TestDocs. Want:\n%s", table)
	}
}
