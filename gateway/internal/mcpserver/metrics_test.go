package mcpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmafx/vmafx/gateway/internal/jobs"
)

// TestInventedToolNamesAddNoSeries calls 500 tools that do not exist, each its own
// invented name, through a real client session: the metrics must keep a fixed number of
// series, or every call would add series for the life of the process.
func TestInventedToolNamesAddNoSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := New(jobs.New(nil, nil), map[string]any{"type": "object"}, Options{})
	NewMetrics(reg).Instrument(s)
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "flood", Version: "v0"}, nil).Connect(t.Context(), clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 500 {
		name := fmt.Sprintf("invented-%d-%s", i, strings.Repeat("x", i%40))
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name}); err == nil {
			t.Fatalf("calling the invented tool %s: no error", name)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	tools := map[string]bool{}
	for _, f := range families {
		series += len(f.GetMetric())
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tool" {
					tools[l.GetValue()] = true
				}
			}
		}
	}
	if !tools["other"] {
		t.Errorf("tool labels %v; want the invented ones counted as other", tools)
	}
	if series > 20 {
		t.Errorf("%d series after 500 calls of invented tools; want at most 20", series)
	}
}

func TestLabelsComeFromFixedSets(t *testing.T) {
	for in, want := range map[string]string{
		ToolScore: ToolScore, ToolListModels: ToolListModels, "rm -rf": "other", "": "other",
	} {
		if got := toolLabel(in); got != want {
			t.Errorf("toolLabel(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"tools/call": "tools/call", "initialize": "initialize", "tools/call2": "other", strings.Repeat("m", 1<<16): "other",
	} {
		if got := methodLabel(in); got != want {
			t.Errorf("methodLabel(%.20q) = %q, want %q", in, got, want)
		}
	}
}
