package command

import (
	"testing"

	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/internal/testutil"
)

// TestDocsListEveryFlag keeps the flag tables of docs/worker.md in step with the flags,
// the one place each flag, variable, default and meaning is written.
// VMAFX_UPDATE_DOCS=1 go test ./worker/internal/command -run TestDocs rewrites them.
func TestDocsListEveryFlag(t *testing.T) {
	for name, set := range map[string]*cli.Set{
		"score":         newScoreFlags().set,
		"encode":        newEncodeFlags().set,
		"ladder-report": newLadderReportFlags().set,
		"run":           newRunFlags().set,
	} {
		testutil.RequireGenerated(t, "worker.md", "<!-- "+name+" flags: begin (generated from worker/internal/command) -->\n",
			"<!-- "+name+" flags: end -->\n", set.MarkdownTable())
	}
}
