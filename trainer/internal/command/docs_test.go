package command

import (
	"testing"

	"github.com/vmafx/vmafx/internal/testutil"
)

// TestDocsListEveryFlag keeps the flag table of docs/training.md in step with the flags,
// the one place each flag, variable, default and meaning is written.
// VMAFX_UPDATE_DOCS=1 go test ./trainer/internal/command -run TestDocs rewrites it.
func TestDocsListEveryFlag(t *testing.T) {
	testutil.RequireGenerated(t, "training.md", "<!-- vmafx-trainer flags: begin (generated from trainer/internal/command) -->\n",
		"<!-- vmafx-trainer flags: end -->\n", NewFlags().Set().MarkdownTable())
}
