package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
)

// maxCompare bounds one compare call: each distorted video is a job and a worker Pod.
const maxCompare = 32

// The tools' names.
const (
	ToolScore      = "score"
	ToolCompare    = "compare"
	ToolGet        = "get_job"
	ToolList       = "list_jobs"
	ToolWait       = "wait_job"
	ToolListModels = "list_models"
	ToolWorst      = "worst_frames"
)

// Resource URI templates.
const (
	resultTemplate = "vmafx://jobs/{namespace}/{name}/result"
	outputTemplate = "vmafx://jobs/{namespace}/{name}/output"
)

// userKey carries the caller in TokenInfo.Extra.
const userKey = "vmafx.dev/user"

// Options configure the server.
type Options struct {
	// Namespace is used when a call names none.
	Namespace string
	// Version is reported to clients.
	Version string
	// Pictures reads jobs' worst-frame pictures from their object stores for
	// worst_frames, as the caller; nil: the tool names their URIs only.
	Pictures *outputs.Reader
}

// New returns the MCP server over store, with the tools' input schemas built from spec
// (SpecSchema).
func New(store *jobs.Store, spec map[string]any, opts Options) *mcp.Server {
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	h := &handlers{store: store, ns: opts.Namespace, pictures: opts.Pictures}
	s := mcp.NewServer(&mcp.Implementation{Name: "vmafx", Title: "VMAFX video quality scoring", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "Score video quality with VMAF on Kubernetes. Each score is a VmafxJob run by the cluster; " +
			"inputs are URIs the cluster's workers can read (file:///data/..., http(s)://, s3://, gs://, azure://). " +
			"Use score (or compare for several distorted videos), then wait_job, and read vmafx://jobs/{namespace}/{name}/result.",
	})
	nsProp := map[string]any{"type": "string", "description": "namespace of the jobs; default " + opts.Namespace}
	nameProp := map[string]any{"type": "string", "description": "name of the job"}
	waitProp := map[string]any{"type": "integer", "minimum": 0, "maximum": int(jobs.MaxWait.Seconds()),
		"description": "seconds to wait for the result before answering; 0 (default) answers at once"}

	s.AddTool(&mcp.Tool{
		Name:        ToolScore,
		Description: "Score a distorted video against its reference with VMAF: submits one VmafxJob. The fields are the VmafxJob spec's (kubectl explain vmafxjob.spec).",
		InputSchema: toolSchema(spec, map[string]any{"namespace": nsProp,
			"name": map[string]any{"type": "string", "description": "name of the job; default: generated (vmafx-...)"}, "waitSeconds": waitProp}, false),
	}, h.score)
	s.AddTool(&mcp.Tool{
		Name:        ToolCompare,
		Description: "Score several distorted videos against one reference: one VmafxJob each, all checked by the API server before any is created. Returns the jobs (and with waitSeconds their scores), best first once scored.",
		InputSchema: toolSchema(spec, map[string]any{"namespace": nsProp,
			"namePrefix": map[string]any{"type": "string", "description": "prefix of the jobs' generated names; default vmafx-"}, "waitSeconds": waitProp}, true),
	}, h.compare)
	s.AddTool(&mcp.Tool{
		Name: ToolGet, Description: "Get a job: phase, score, result, message.",
		InputSchema: object(map[string]any{"namespace": nsProp, "name": nameProp}, "name"),
	}, h.get)
	s.AddTool(&mcp.Tool{
		Name: ToolWait, Description: "Wait until a job succeeds or fails, at most waitSeconds (default 60, at most 600), and return it.",
		InputSchema: object(map[string]any{"namespace": nsProp, "name": nameProp, "waitSeconds": waitProp}, "name"),
	}, h.wait)
	s.AddTool(&mcp.Tool{
		Name: ToolList, Description: "List jobs of a namespace, with a label selector and pages.",
		InputSchema: object(map[string]any{"namespace": nsProp,
			"labelSelector": map[string]any{"type": "string", "description": "kubectl's selector syntax, e.g. pipeline=nightly"},
			"limit":         map[string]any{"type": "integer", "minimum": 0, "description": "page size; 0: all"},
			"continue":      map[string]any{"type": "string", "description": "the previous page's continue token"}}),
	}, h.list)
	s.AddTool(&mcp.Tool{
		Name: ToolListModels, Description: "List the VMAF models a job can name: built-in and trained.",
		InputSchema: object(map[string]any{"namespace": nsProp}),
	}, h.models)

	worstDesc := "Where a scored job's score is made: its lowest-scoring frames (index and VMAF), the 1st, 5th and 50th percentiles of the per-frame scores, the number of scenes and the worst scene, and, when the job asked for spec.worstFrames.pictures, the URIs of each worst frame's picture and of the score plot. A job of a shared-reference comparison scores several distorted videos (renditions in the answer): rendition picks one by its index in the job's spec order (0, spec.distorted, unless given), each with its own frames and pictures."
	if opts.Pictures != nil {
		worstDesc += fmt.Sprintf(" With pictures, the answer also carries them as PNG images: the score plot with the worst frames marked, then each worst frame (reference, distorted and difference heat map side by side), lowest first; at most %d, each at most %d MiB.", maxImages, maxImageBytes>>20)
	}
	s.AddTool(&mcp.Tool{
		Name: ToolWorst, Description: worstDesc,
		InputSchema: object(map[string]any{"namespace": nsProp, "name": nameProp,
			"images": map[string]any{"type": "integer", "minimum": 0, "maximum": maxImages,
				"description": fmt.Sprintf("how many pictures to return as images (the plot first, then the worst frames); default %d, 0: none", maxImages)},
			"rendition": map[string]any{"type": "integer", "minimum": 0, "maximum": vmafxv1.MaxWorkerRenditions - 1,
				"description": "which distorted video of the job, by its index in the job's spec order: 0 (the default) is spec.distorted, k is spec.renditions[k-1]"}}, "name"),
	}, h.worst)

	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "job-result", URITemplate: resultTemplate, MIMEType: "application/json",
		Description: "A job's phase, pooled score and result (mean, harmonic mean, min, max, frames, fps, backend, model, features)."}, h.result)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "job-output", URITemplate: outputTemplate, MIMEType: "application/json",
		Description: "Where a job's per-frame scores were written (spec.output) and whether the write succeeded; the scores themselves are read from that location with its own credentials."}, h.output)
	return s
}

func object(props map[string]any, required ...string) map[string]any {
	r := []any{}
	for _, n := range required {
		r = append(r, n)
	}
	return map[string]any{"type": "object", "properties": props, "required": r, "additionalProperties": false}
}

// HTTPHandler serves s over the streamable HTTP transport, each request authenticated by
// its bearer token with checker (a TokenReview) before anything else, and new sessions
// within limits (zero fields: the defaults); m (optional) counts the open sessions.
func HTTPHandler(s *mcp.Server, checker access.Checker, limits SessionLimits, m *Metrics) http.Handler {
	limits = limits.withDefaults()
	sess := &sessions{server: s, limits: limits, metrics: m, byUser: map[string]int{}}
	h := sess.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		// Idle sessions go after a few minutes, their slot with them; a client that
		// waits longer than that between calls opens a new session.
		SessionTimeout: limits.IdleTimeout,
	}))
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		u, err := checker.Authenticate(ctx, token)
		if err != nil {
			if errors.Is(err, access.ErrUnauthenticated) {
				return nil, fmt.Errorf("%w: %w", auth.ErrInvalidToken, err)
			}
			return nil, err
		}
		return &auth.TokenInfo{UserID: u.Name, Extra: map[string]any{userKey: u}}, nil
	}
	// An authenticated request may wait (wait_job, waitSeconds) or stream (the session's
	// event stream) up to the longest wait; a refused one keeps the server's short deadline.
	long := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serve.Extend(w, jobs.MaxWait+time.Minute)
		h.ServeHTTP(w, r)
	})
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(long)
}

type handlers struct {
	store    *jobs.Store
	ns       string
	pictures *outputs.Reader
}

// caller is the request's user: from its token over HTTP, the kubeconfig's on stdio.
func caller(extra *mcp.RequestExtra) access.User {
	if extra != nil && extra.TokenInfo != nil {
		if u, ok := extra.TokenInfo.Extra[userKey].(access.User); ok {
			return u
		}
	}
	return access.User{}
}

// args splits a call's arguments into the tool's own (own, by name) and the rest, which
// is decoded strictly into spec (unknown fields are named).
func args(req *mcp.CallToolRequest, own map[string]any, spec any) error {
	raw := map[string]json.RawMessage{}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &raw); err != nil {
			return fmt.Errorf("arguments must be a JSON object: %w", err)
		}
	}
	for name, dst := range own {
		if v, ok := raw[name]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			delete(raw, name)
		}
	}
	if spec == nil {
		for name := range raw {
			return fmt.Errorf("unknown argument %q", name)
		}
		return nil
	}
	b, _ := json.Marshal(raw)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(spec); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	return nil
}

// failed is a tool error the model can read and correct: the API server's own message.
func failed(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

// JobSummary is what the tools answer for a job.
type JobSummary struct {
	Namespace string             `json:"namespace"`
	Name      string             `json:"name"`
	Reference string             `json:"reference"`
	Distorted string             `json:"distorted"`
	Model     string             `json:"model,omitempty"`
	Phase     string             `json:"phase"`
	Score     string             `json:"score,omitempty"`
	Result    *vmafxv1.JobResult `json:"result,omitempty"`
	Node      string             `json:"node,omitempty"`
	Attempts  int32              `json:"attempts,omitempty"`
	Message   string             `json:"message,omitempty"`
	Resource  string             `json:"resource"`
	Created   metav1.Time        `json:"created"`
	Condition []metav1.Condition `json:"conditions,omitempty"`
}

func summary(j *vmafxv1.VmafxJob) JobSummary {
	phase := string(j.Status.Phase)
	if phase == "" {
		phase = string(vmafxv1.JobPending)
	}
	return JobSummary{
		Namespace: j.Namespace, Name: j.Name, Reference: string(j.Spec.Reference), Distorted: string(j.Spec.Distorted),
		Model: string(j.Spec.Model), Phase: phase, Score: j.Status.Score, Result: j.Status.Result, Node: j.Status.Node,
		Attempts: j.Status.Attempts, Message: j.Status.Message, Created: j.CreationTimestamp,
		Resource: resourceURI(resultTemplate, j.Namespace, j.Name), Condition: j.Status.Conditions,
	}
}

func resourceURI(tmpl, ns, name string) string {
	return strings.NewReplacer("{namespace}", url.PathEscape(ns), "{name}", url.PathEscape(name)).Replace(tmpl)
}

// answer returns v as both structured content and its JSON text (for clients that show
// only text).
func answer(v any) *mcp.CallToolResult {
	b, _ := json.MarshalIndent(v, "", "  ")
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}
}

func (h *handlers) namespace(ns string) string {
	if ns == "" {
		return h.ns
	}
	return ns
}

func waitFor(seconds int) time.Duration {
	return min(time.Duration(max(seconds, 0))*time.Second, jobs.MaxWait)
}

func (h *handlers) score(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var (
		ns, name string
		wait     int
		spec     vmafxv1.VmafxJobSpec
	)
	if err := args(req, map[string]any{"namespace": &ns, "name": &name, "waitSeconds": &wait}, &spec); err != nil {
		return failed(err), nil
	}
	u := caller(req.Extra)
	job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	created, err := h.store.Submit(ctx, u, h.namespace(ns), job, false)
	if err != nil {
		return failed(err), nil
	}
	if wait > 0 {
		if created, err = h.store.Wait(ctx, u, created.Namespace, created.Name, waitFor(wait)); err != nil {
			return failed(err), nil
		}
	}
	return answer(summary(created)), nil
}

// CompareResult is the compare tool's answer.
type CompareResult struct {
	Jobs []JobSummary `json:"jobs"`
}

func (h *handlers) compare(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var (
		ns, prefix string
		wait       int
		distorted  []vmafxv1.VideoURI
		spec       vmafxv1.VmafxJobSpec
	)
	if err := args(req, map[string]any{"namespace": &ns, "namePrefix": &prefix, "waitSeconds": &wait, "distorted": &distorted}, &spec); err != nil {
		return failed(err), nil
	}
	if len(distorted) == 0 || len(distorted) > maxCompare {
		return failed(fmt.Errorf("distorted: give 1 to %d videos, got %d", maxCompare, len(distorted))), nil
	}
	if prefix == "" {
		prefix = jobs.DefaultGenerateName
	}
	u := caller(req.Extra)
	ns = h.namespace(ns)
	batch := make([]*vmafxv1.VmafxJob, len(distorted))
	for i, d := range distorted {
		s := spec
		s.Distorted = d
		batch[i] = &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}, Spec: s}
	}
	// All or none: the API server checks every job before the first is created.
	for i, j := range batch {
		if _, err := h.store.Submit(ctx, u, ns, j, true); err != nil {
			return failed(fmt.Errorf("distorted[%d]: %w", i, err)), nil
		}
	}
	out := CompareResult{}
	for i, j := range batch {
		created, err := h.store.Submit(ctx, u, ns, j, false)
		if err != nil {
			return failed(fmt.Errorf("distorted[%d] (after %d jobs were created): %w", i, len(out.Jobs), err)), nil
		}
		batch[i] = created
		out.Jobs = append(out.Jobs, summary(created))
	}
	if wait > 0 {
		deadline := time.Now().Add(waitFor(wait))
		for i, j := range batch {
			done, err := h.store.Wait(ctx, u, ns, j.Name, max(time.Until(deadline), 0))
			if err != nil {
				return failed(err), nil
			}
			out.Jobs[i] = summary(done)
		}
		sortByScore(out.Jobs)
	}
	return answer(out), nil
}

func (h *handlers) get(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	j, refused := h.namedJob(ctx, req)
	if refused != nil {
		return refused, nil
	}
	return answer(summary(j)), nil
}

// namedJob reads the job a call names by its namespace and name arguments; a refusal is
// the tool's error.
func (h *handlers) namedJob(ctx context.Context, req *mcp.CallToolRequest) (*vmafxv1.VmafxJob, *mcp.CallToolResult) {
	var ns, name string
	if err := args(req, map[string]any{"namespace": &ns, "name": &name}, nil); err != nil {
		return nil, failed(err)
	}
	j, err := h.store.Get(ctx, caller(req.Extra), h.namespace(ns), name)
	if err != nil {
		return nil, failed(err)
	}
	return j, nil
}

func (h *handlers) wait(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var ns, name string
	wait := 60
	if err := args(req, map[string]any{"namespace": &ns, "name": &name, "waitSeconds": &wait}, nil); err != nil {
		return failed(err), nil
	}
	j, err := h.store.Wait(ctx, caller(req.Extra), h.namespace(ns), name, waitFor(wait))
	if err != nil {
		return failed(err), nil
	}
	return answer(summary(j)), nil
}

func (h *handlers) worst(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var ns, name string
	images, k := maxImages, 0
	if err := args(req, map[string]any{"namespace": &ns, "name": &name, "images": &images, "rendition": &k}, nil); err != nil {
		return failed(err), nil
	}
	if images < 0 || images > maxImages {
		return failed(fmt.Errorf("images: %d is not 0 to %d", images, maxImages)), nil
	}
	if k < 0 || k >= vmafxv1.MaxWorkerRenditions {
		return failed(fmt.Errorf("rendition: %d is not 0 to %d", k, vmafxv1.MaxWorkerRenditions-1)), nil
	}
	u := caller(req.Extra)
	j, err := h.store.Get(ctx, u, h.namespace(ns), name)
	if err != nil {
		return failed(err), nil
	}
	w, err := jobs.WorstOf(j, k)
	if err != nil {
		return failed(err), nil
	}
	res := answer(w)
	if h.pictures != nil && images > 0 {
		res.Content = append(res.Content, h.images(ctx, u, j, k, images)...)
	}
	return res, nil
}

// ListResult is the list tool's answer.
type ListResult struct {
	Jobs     []JobSummary `json:"jobs"`
	Continue string       `json:"continue,omitempty"`
}

func (h *handlers) list(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var (
		ns   string
		opts jobs.ListOptions
	)
	if err := args(req, map[string]any{"namespace": &ns, "labelSelector": &opts.Selector, "limit": &opts.Limit, "continue": &opts.Continue}, nil); err != nil {
		return failed(err), nil
	}
	l, err := h.store.List(ctx, caller(req.Extra), h.namespace(ns), opts)
	if err != nil {
		return failed(err), nil
	}
	out := ListResult{Jobs: []JobSummary{}, Continue: l.Continue}
	for i := range l.Items {
		out.Jobs = append(out.Jobs, summary(&l.Items[i]))
	}
	return answer(out), nil
}

// ModelsResult is the list_models tool's answer.
type ModelsResult struct {
	Models []jobs.Model `json:"models"`
}

func (h *handlers) models(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var ns string
	if err := args(req, map[string]any{"namespace": &ns}, nil); err != nil {
		return failed(err), nil
	}
	m, err := h.store.Models(ctx, caller(req.Extra), h.namespace(ns))
	if err != nil {
		return failed(err), nil
	}
	return answer(ModelsResult{Models: m}), nil
}

// parseJobURI reads vmafx://jobs/{namespace}/{name}/{kind}.
func parseJobURI(raw, kind string) (ns, name string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "vmafx" || u.Host != "jobs" {
		return "", "", false
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) != 3 || parts[2] != kind || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

func (h *handlers) readJob(ctx context.Context, req *mcp.ReadResourceRequest, kind string) (*vmafxv1.VmafxJob, error) {
	ns, name, ok := parseJobURI(req.Params.URI, kind)
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	return h.store.Get(ctx, caller(req.Extra), ns, name)
}

func jsonResource(uri string, v any) *mcp.ReadResourceResult {
	b, _ := json.MarshalIndent(v, "", "  ")
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}
}

func (h *handlers) result(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	j, err := h.readJob(ctx, req, "result")
	if err != nil {
		return nil, err
	}
	return jsonResource(req.Params.URI, summary(j)), nil
}

// OutputInfo is the job-output resource.
type OutputInfo struct {
	Output  string `json:"output,omitempty"`
	Format  string `json:"format,omitempty"`
	Written *bool  `json:"written,omitempty"`
	Message string `json:"message,omitempty"`
}

func (h *handlers) output(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	j, err := h.readJob(ctx, req, "output")
	if err != nil {
		return nil, err
	}
	info := OutputInfo{Message: "the job has no spec.output: only pooled scores are kept (see the result resource)"}
	if j.Spec.Output != nil {
		info = OutputInfo{Output: string(*j.Spec.Output), Format: string(j.Spec.OutputFormat)}
		if info.Format == "" {
			info.Format = string(vmafxv1.OutputJSON)
		}
		if c := apimeta.FindStatusCondition(j.Status.Conditions, vmafxv1.JobOutputWritten); c != nil {
			w := c.Status == metav1.ConditionTrue
			info.Written, info.Message = &w, c.Message
		}
	}
	return jsonResource(req.Params.URI, info), nil
}
