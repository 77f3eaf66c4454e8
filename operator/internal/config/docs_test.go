package config

import (
	"testing"

	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/testutil"
)

// TestDocsListEveryOption keeps docs/operator.md's configuration table in step with the
// options, the one place each flag, variable, default and meaning is written: every row
// must appear exactly as the options describe themselves, and no other row may name an
// operator variable. VMAFX_UPDATE_DOCS=1 go test ./operator/internal/config -run TestDocs
// rewrites the table.
func TestDocsListEveryOption(t *testing.T) {
	testutil.RequireGenerated(t, "operator.md", "<!-- options: begin (generated from operator/internal/config) -->\n", "<!-- options: end -->\n",
		cli.MarkdownTable(Flags(&Config{}).Options()))
}
