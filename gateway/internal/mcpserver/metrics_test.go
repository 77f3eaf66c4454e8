package mcpserver

import (
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
)

// refuseAll authenticates nobody.
type refuseAll struct{}

func (refuseAll) Authenticate(context.Context, string) (access.User, error) {
	return access.User{}, access.ErrUnauthenticated
}

// nobody acts for no one: every call fails as an impersonating door's does without a
// caller.
type nobody struct{}

func (nobody) For(access.User) (client.WithWatch, error) { return nil, jobs.ErrNoCaller }
func (nobody) Own() client.WithWatch                     { return nil }

// testSpec is a VmafxJob spec schema small enough for the tests.
var testSpec = map[string]any{"type": "object", "properties": map[string]any{
	"reference": map[string]any{"type": "string"}, "distorted": map[string]any{"type": "string"},
}}

// connect returns a client session of a new server whose metrics reg gathers.
func connect(t *testing.T, reg prometheus.Registerer) *mcp.ClientSession {
	t.Helper()
	s := New(jobs.New(nobody{}, refuseAll{}), testSpec, Options{Namespace: "a"})
	NewMetrics(reg).Instrument(s)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func seriesCount(t *testing.T, reg prometheus.Gatherer) int {
	t.Helper()
	n, err := testutil.GatherAndCount(reg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A flood of calls of invented tools adds no series: they all count as "other".
func TestInventedToolsAddNoSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	cs := connect(t, reg)
	ctx := context.Background()
	call := func(name string) {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	}
	call(ToolGet)
	call("invented")
	before := seriesCount(t, reg)
	for i := range 2000 {
		call(fmt.Sprintf("invented-%d", i))
	}
	after := seriesCount(t, reg)
	t.Logf("series: %d before the flood, %d after 2000 calls of invented tools", before, after)
	if after > before {
		t.Errorf("invented tools added %d series (before %d, after %d)", after-before, before, after)
	}
	if after > 50 {
		t.Errorf("%d series; want at most 50", after)
	}
}

func TestLabels(t *testing.T) {
	for in, want := range map[string]string{ToolScore: ToolScore, ToolListModels: ToolListModels, "Score": "other", "": "other"} {
		if got := ToolLabel(in); got != want {
			t.Errorf("ToolLabel(%q) = %q; want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"tools/call": "tools/call", "initialize": "initialize", "tools/invented": "other"} {
		if got := MethodLabel(in); got != want {
			t.Errorf("MethodLabel(%q) = %q; want %q", in, got, want)
		}
	}
}
