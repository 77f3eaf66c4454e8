package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/mcpserver"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// startMCP runs the MCP server's streamable HTTP transport as vmafx-mcp does in a cluster.
func startMCP(t *testing.T, defaultNamespace string) *door {
	t.Helper()
	return startMCPWith(t, defaultNamespace, mcpserver.SessionLimits{})
}

// startMCPWith is startMCP with session limits (zero fields: the defaults).
func startMCPWith(t *testing.T, defaultNamespace string, limits mcpserver.SessionLimits) *door {
	t.Helper()
	return startMCPDoor(t, defaultNamespace, limits, false)
}

// startMCPDoor is startMCPWith, reading jobs' pictures when readOutputs is set (vmafx-mcp
// --read-outputs).
func startMCPDoor(t *testing.T, defaultNamespace string, limits mcpserver.SessionLimits, readOutputs bool) *door {
	t.Helper()
	opts := serve.Options{Addr: "127.0.0.1:0", ProbeAddr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second}
	ln, probe, err := serve.Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	store, c := newStore(t, "vmafx-mcp")
	ctx, cancel := context.WithCancel(context.Background())
	spec, err := mcpserver.SpecSchema(ctx, c.Own())
	if err != nil {
		t.Fatal(err)
	}
	mopts := mcpserver.Options{Namespace: defaultNamespace}
	if readOutputs {
		mopts.Pictures = outputs.New(store)
	}
	server := mcpserver.New(store, spec, mopts)
	reg := serve.NewRegistry()
	metrics := mcpserver.NewMetrics(reg)
	metrics.Instrument(server)
	d := &door{url: "http://" + ln.Addr().String(), probeURL: "http://" + probe.Addr().String(), store: store, reg: reg, cancel: cancel, done: make(chan error, 1)}
	go func() {
		d.done <- serve.Serve(ctx, opts, ln, probe, mcpserver.HTTPHandler(server, store.Checker(), limits, metrics), reg, nil)
	}()
	t.Cleanup(func() { d.stop(t) })
	waitServing(t, d.probeURL+"/healthz")
	return d
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session with the SDK's own client, presenting token.
func connect(t *testing.T, d *door, token string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "vmafx-test", Version: "v0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return res, text.String()
}

func TestMCPTools(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startMCP(t, ns)
	s, err := connect(t, d, tokenFor(t, ns, "agent", allVerbs...))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	for _, want := range []string{mcpserver.ToolScore, mcpserver.ToolCompare, mcpserver.ToolGet, mcpserver.ToolList, mcpserver.ToolWait, mcpserver.ToolListModels, mcpserver.ToolWorst} {
		if byName[want] == nil {
			t.Errorf("tool %s missing from %v", want, tools.Tools)
		}
	}
	// The score tool's schema is the installed CRD's: its backend enum and description.
	schema, _ := json.Marshal(byName[mcpserver.ToolScore].InputSchema)
	for _, want := range []string{`"enum":["cuda","hip","sycl","vulkan","cpu","auto"]`, `"required":["distorted","reference"]`, "is the URI of the pristine video"} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("score's input schema lacks %s: %s", want, schema)
		}
	}

	// Score a pair end to end: the call waits while the operator (played here) runs it.
	type result struct {
		res  *mcp.CallToolResult
		text string
	}
	got := make(chan result, 1)
	go func() {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolScore, Arguments: map[string]any{
			"name": "pair", "reference": "https://media.example.com/ref.y4m", "distorted": "https://media.example.com/dist.y4m", "waitSeconds": 60,
		}})
		r := result{res: res}
		if err != nil {
			r.text = err.Error()
		} else if len(res.Content) > 0 {
			r.text = res.Content[0].(*mcp.TextContent).Text
		}
		got <- r
	}()
	playOperator(t, ns, "pair", vmafxv1.JobRunning, "")
	playOperator(t, ns, "pair", vmafxv1.JobSucceeded, "91.250000")
	var r result
	select {
	case r = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("score with waitSeconds did not answer once the job succeeded")
	}
	var sum mcpserver.JobSummary
	if r.res == nil || r.res.IsError || json.Unmarshal([]byte(r.text), &sum) != nil || sum.Phase != "Succeeded" || sum.Score != "91.250000" {
		t.Fatalf("score answered %s, want the Succeeded job with its score", r.text)
	}
	rr, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: sum.Resource})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"mean": "91.250000"`) {
		t.Errorf("result resource %s: %+v", sum.Resource, rr.Contents)
	}
	out, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "vmafx://jobs/" + ns + "/pair/output"})
	if err != nil || !strings.Contains(out.Contents[0].Text, "no spec.output") {
		t.Errorf("output resource: %v %+v", err, out)
	}

	// What the CRD refuses, the tool refuses with the CRD's message.
	res, text := call(t, s, mcpserver.ToolScore, map[string]any{"reference": "s3://bucket/ref.yuv", "distorted": "s3://bucket/dist.yuv"})
	if !res.IsError || !strings.Contains(text, "spec.width") || !strings.Contains(text, "width is required for raw YUV inputs (.yuv, .raw), which do not carry their geometry") {
		t.Errorf("raw YUV without width: %s, want the CEL rule's message on spec.width", text)
	}
	res, text = call(t, s, mcpserver.ToolScore, map[string]any{"reference": "ftp://host/ref.y4m", "distorted": "https://h/d.y4m"})
	if !res.IsError || !strings.Contains(text, "spec.reference") || !strings.Contains(text, "unsupported scheme: the worker reads file://") {
		t.Errorf("ftp:// reference: %s, want the CEL rule's message on spec.reference", text)
	}
	res, text = call(t, s, mcpserver.ToolScore, map[string]any{"reference": "https://h/r.y4m", "distorted": "https://h/d.y4m", "backend": "tpu"})
	if !res.IsError || !strings.Contains(text, `spec.backend: Unsupported value: "tpu"`) {
		t.Errorf("backend tpu: %s, want the API server's message", text)
	}
	res, text = call(t, s, mcpserver.ToolScore, map[string]any{"reference": "https://h/r.y4m", "distorted": "https://h/d.y4m", "colour": "red"})
	if !res.IsError || !strings.Contains(text, `unknown field "colour"`) {
		t.Errorf("unknown argument: %s, want it named", text)
	}

	// compare: all or none.
	before := countJobs(t, ns)
	res, text = call(t, s, mcpserver.ToolCompare, map[string]any{"reference": "https://media.example.com/ref.y4m",
		"distorted": []string{"https://media.example.com/a.y4m", "rclone://remote/b.y4m"}})
	if !res.IsError || !strings.Contains(text, "distorted[1]") || countJobs(t, ns) != before {
		t.Errorf("compare with one bad video: %s; jobs %d -> %d, want a refusal naming distorted[1] and no job", text, before, countJobs(t, ns))
	}
	res, text = call(t, s, mcpserver.ToolCompare, map[string]any{"reference": "https://media.example.com/ref.y4m",
		"distorted": []string{"https://media.example.com/a.y4m", "https://media.example.com/b.y4m"}, "namePrefix": "cmp-"})
	var cmp mcpserver.CompareResult
	if res.IsError || json.Unmarshal([]byte(text), &cmp) != nil || len(cmp.Jobs) != 2 || !strings.HasPrefix(cmp.Jobs[0].Name, "cmp-") {
		t.Fatalf("compare: %s, want two jobs", text)
	}
	res, text = call(t, s, mcpserver.ToolList, map[string]any{})
	var list mcpserver.ListResult
	if res.IsError || json.Unmarshal([]byte(text), &list) != nil || len(list.Jobs) != 3 {
		t.Errorf("list: %s, want the three jobs", text)
	}
	res, text = call(t, s, mcpserver.ToolListModels, map[string]any{})
	if res.IsError || !strings.Contains(text, vmafxv1.DefaultModel) {
		t.Errorf("list_models: %s", text)
	}
	res, text = call(t, s, mcpserver.ToolWait, map[string]any{"name": cmp.Jobs[0].Name, "waitSeconds": 0})
	if res.IsError || !strings.Contains(text, `"phase": "Pending"`) {
		t.Errorf("wait_job with 0 s: %s, want the pending job", text)
	}
}

func countJobs(t *testing.T, ns string) int {
	t.Helper()
	var l vmafxv1.VmafxJobList
	if err := testenv.Client().List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

func TestMCPRefusesUnauthorized(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startMCP(t, ns)
	if _, err := connect(t, d, "not-a-token"); err == nil {
		t.Error("a session opened with a token the API server does not know")
	}
	s, err := connect(t, d, tokenFor(t, ns, "reader", "get", "list"))
	if err != nil {
		t.Fatal(err)
	}
	res, text := call(t, s, mcpserver.ToolScore, map[string]any{"reference": "https://media.example.com/ref.y4m", "distorted": "https://media.example.com/dist.y4m"})
	if !res.IsError || !strings.Contains(text, `cannot create resource "vmafxjobs"`) {
		t.Errorf("score without create vmafxjobs: %s, want the refusal", text)
	}
	if n := countJobs(t, ns); n != 0 {
		t.Errorf("%d jobs were created", n)
	}
	_, metrics := do(t, http.MethodGet, d.probeURL+"/metrics", "", "")
	if want := `vmafx_mcp_requests_total{method="tools/call",outcome="tool_error",tool="score"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %s", want)
	}
}
