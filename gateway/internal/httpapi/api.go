package httpapi

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
)

// OpenAPI is the API's OpenAPI 3 document, served at /openapi.json. A test checks it
// against Routes, so a route cannot be added to one and not the other.
//
//go:embed openapi.json
var OpenAPI []byte

// maxBody bounds a submitted job: a spec is a few hundred bytes; 1 MiB is what the API
// server itself accepts for most objects' fields combined and more than any job needs.
const maxBody = 1 << 20

// extendSlack is what a wait's or a stream's deadline adds to its own timeout: time to
// read the job and answer.
const extendSlack = 30 * time.Second

// Route is one operation of the API.
type Route struct {
	Method string
	// Path is the pattern, in net/http's syntax, and the OpenAPI document's path.
	Path string
	// Public routes need no bearer token.
	Public  bool
	handler func(*API, http.ResponseWriter, *http.Request, access.User)
}

// Routes are the API's operations.
var Routes = []Route{
	{Method: http.MethodGet, Path: "/openapi.json", Public: true, handler: (*API).openAPI},
	{Method: http.MethodPost, Path: "/v1/namespaces/{namespace}/jobs", handler: (*API).submit},
	{Method: http.MethodGet, Path: "/v1/namespaces/{namespace}/jobs", handler: (*API).list},
	{Method: http.MethodGet, Path: "/v1/namespaces/{namespace}/jobs/{name}", handler: (*API).get},
	{Method: http.MethodDelete, Path: "/v1/namespaces/{namespace}/jobs/{name}", handler: (*API).cancel},
	{Method: http.MethodGet, Path: "/v1/namespaces/{namespace}/jobs/{name}/events", handler: (*API).events},
	{Method: http.MethodGet, Path: "/v1/namespaces/{namespace}/jobs/{name}/worst", handler: (*API).worst},
	{Method: http.MethodGet, Path: "/v1/namespaces/{namespace}/jobs/{name}/pictures/{file}", handler: (*API).picture},
	{Method: http.MethodGet, Path: "/v1/namespaces/{namespace}/models", handler: (*API).models},
}

// API serves the routes.
type API struct {
	store   *jobs.Store
	metrics *Metrics
	// pictures reads jobs' pictures from object storage; nil: the door does not.
	pictures *outputs.Reader
}

// New returns the API over store, recording requests in metrics; pictures (nil: none)
// reads the jobs' worst-frame pictures for the pictures route.
func New(store *jobs.Store, metrics *Metrics, pictures *outputs.Reader) *API {
	return &API{store: store, metrics: metrics, pictures: pictures}
}

// Handler returns the API's HTTP handler.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range Routes {
		route := rt
		pattern := route.Method + " " + route.Path
		mux.HandleFunc(pattern, a.metrics.instrument(route.Path, func(w http.ResponseWriter, r *http.Request) {
			var u access.User
			if !route.Public {
				var err error
				if u, err = a.authenticate(r); err != nil {
					writeError(r.Context(), w, err)
					return
				}
			}
			route.handler(a, w, r, u)
		}))
	}
	mux.HandleFunc("/", a.metrics.instrument("other", func(w http.ResponseWriter, r *http.Request) {
		writeError(r.Context(), w, apierrors.NewNotFound(vmafxv1.GroupVersion.WithResource("route").GroupResource(), r.URL.Path))
	}))
	return mux
}

func (a *API) authenticate(r *http.Request) (access.User, error) {
	token, _ := access.BearerToken(r.Header)
	return a.store.Checker().Authenticate(r.Context(), token)
}

func (a *API) openAPI(w http.ResponseWriter, _ *http.Request, _ access.User) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(OpenAPI)
}

func (a *API) submit(w http.ResponseWriter, r *http.Request, u access.User) {
	job, err := decodeJob(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	dryRun := false
	switch v := r.URL.Query().Get("dryRun"); v {
	case "":
	case metav1.DryRunAll:
		dryRun = true
	default:
		writeError(r.Context(), w, apierrors.NewBadRequest(fmt.Sprintf("dryRun: %q is not All", v)))
		return
	}
	created, err := a.store.Submit(r.Context(), u, r.PathValue("namespace"), job, dryRun)
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	w.Header().Set("Location", "/v1/namespaces/"+created.Namespace+"/jobs/"+created.Name)
	writeJSON(w, http.StatusCreated, typed(created))
}

// decodeJob reads a submitted job: a VmafxJob in JSON, no unknown field; the error is a
// BadRequest that says what is wrong.
func decodeJob(body io.Reader) (*vmafxv1.VmafxJob, error) {
	var job vmafxv1.VmafxJob
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&job); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body must be a VmafxJob (metadata and spec) in JSON: %v", err))
	}
	if job.Kind != "" && job.Kind != "VmafxJob" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("kind %q: the body must be a VmafxJob", job.Kind))
	}
	return &job, nil
}

func (a *API) list(w http.ResponseWriter, r *http.Request, u access.User) {
	q := r.URL.Query()
	var limit int64
	if v := q.Get("limit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(r.Context(), w, apierrors.NewBadRequest(fmt.Sprintf("limit: %q is not a whole number of 0 or more", v)))
			return
		}
		limit = n
	}
	list, err := a.store.List(r.Context(), u, r.PathValue("namespace"), jobs.ListOptions{Selector: q.Get("labelSelector"), Limit: limit, Continue: q.Get("continue")})
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	list.APIVersion, list.Kind = vmafxv1.GroupVersion.String(), "VmafxJobList"
	for i := range list.Items {
		typed(&list.Items[i])
	}
	writeJSON(w, http.StatusOK, list)
}

// parseWait reads ?wait= as a Go duration (60s, 2m) or whole seconds (60).
func parseWait(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if n, aerr := strconv.Atoi(v); aerr == nil && n >= 0 {
		d, err = time.Duration(min(n, int(jobs.MaxWait.Seconds())+1))*time.Second, nil
	}
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration such as 60s or 2m", v)
	}
	if d > jobs.MaxWait {
		return 0, fmt.Errorf("%s is longer than the most a request waits, %s", v, jobs.MaxWait)
	}
	return d, nil
}

func (a *API) get(w http.ResponseWriter, r *http.Request, u access.User) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	var (
		job *vmafxv1.VmafxJob
		err error
	)
	if v := r.URL.Query().Get("wait"); v != "" {
		d, perr := parseWait(v)
		if perr != nil {
			writeError(r.Context(), w, apierrors.NewBadRequest("wait: "+perr.Error()))
			return
		}
		serve.Extend(w, d+extendSlack)
		job, err = a.store.Wait(r.Context(), u, ns, name, d)
	} else {
		job, err = a.store.Get(r.Context(), u, ns, name)
	}
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	writeJSON(w, http.StatusOK, typed(job))
}

// worst answers with the worst frames, percentiles, scenes and report (jobs.Worst) of
// the job's distorted video ?rendition= (its index in spec order; 0, spec.distorted,
// unless given: a shared-reference group's job scores several).
func (a *API) worst(w http.ResponseWriter, r *http.Request, u access.User) {
	k, err := jobs.ParseRendition(r.URL.Query().Get("rendition"))
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	job, err := a.store.Get(r.Context(), u, r.PathValue("namespace"), r.PathValue("name"))
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	worst, err := jobs.WorstOf(job, k)
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	if a.pictures != nil && len(outputs.Pictures(job, k)) > 0 && outputs.ObjectStore(worst.Report) {
		// The door reads them: each picture's route, beside its URI in the store.
		base, query := picturesPath(job), renditionQuery(k)
		for i, f := range worst.WorstFrames {
			worst.WorstFrames[i].PictureURL = base + vmafxv1.WorstFramePicture(int(f.Index)) + query
		}
		worst.Plot.SVGURL, worst.Plot.PNGURL = base+vmafxv1.ReportPlotSVG+query, base+vmafxv1.ReportPlotPNG+query
		worst.Message = "this API serves the pictures at their pictureURL, and the plot at plot.svgURL and plot.pngURL, read as you"
	}
	writeJSON(w, http.StatusOK, worst)
}

// picturesPath is the path of the pictures route of j, up to the file's name.
func picturesPath(j *vmafxv1.VmafxJob) string {
	return "/v1/namespaces/" + j.Namespace + "/jobs/" + j.Name + "/pictures/"
}

// renditionQuery is the query that picks distorted video k of a job, none for 0.
func renditionQuery(k int) string {
	if k == 0 {
		return ""
	}
	return "?rendition=" + strconv.Itoa(k)
}

// picture answers with one picture of the report of the job's distorted video
// ?rendition= (outputs.Reader.Picture): a worst frame's PNG or the score plot, read from
// the job's object store as the caller, with the keys of the job's Secret read as the
// caller too.
func (a *API) picture(w http.ResponseWriter, r *http.Request, u access.User) {
	file := r.PathValue("file")
	gone := func(msg string) {
		writeError(r.Context(), w, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
			Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound, Message: msg}})
	}
	if !outputs.IsPictureName(file) {
		gone(fmt.Sprintf("%q: a job's pictures are %s", file, outputs.PictureNames))
		return
	}
	if a.pictures == nil {
		gone("this door does not read jobs' outputs (vmafx-api --console-read-outputs is off): the worst route names each picture's URI in the job's store")
		return
	}
	k, err := jobs.ParseRendition(r.URL.Query().Get("rendition"))
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	job, err := a.store.Get(r.Context(), u, r.PathValue("namespace"), r.PathValue("name"))
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	p, err := a.pictures.Picture(r.Context(), u, job, k, file, outputs.MaxPictureBytes)
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	defer p.Close()
	p.Serve(w)
}

func (a *API) cancel(w http.ResponseWriter, r *http.Request, u access.User) {
	job, err := a.store.Cancel(r.Context(), u, r.PathValue("namespace"), r.PathValue("name"))
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, typed(job))
}

// events streams the job's status as Server-Sent Events: one "status" event now and one
// per change (phase, attempts, node, score, message), then "end" once it has finished,
// or "timeout" when ?timeout= (default and most: 10 minutes) passes first.
func (a *API) events(w http.ResponseWriter, r *http.Request, u access.User) {
	timeout := jobs.MaxWait
	if v := r.URL.Query().Get("timeout"); v != "" {
		d, err := parseWait(v)
		if err != nil {
			writeError(r.Context(), w, apierrors.NewBadRequest("timeout: "+err.Error()))
			return
		}
		timeout = d
	}
	serve.Extend(w, timeout+extendSlack)
	events := serve.NewEvents(w)
	send := events.Send
	err := a.store.Follow(r.Context(), u, r.PathValue("namespace"), r.PathValue("name"), timeout, func(j *vmafxv1.VmafxJob) error {
		return send("status", typed(j))
	})
	switch {
	case !events.Started() && err != nil:
		writeError(r.Context(), w, err)
	case err == nil:
		_ = send("end", map[string]string{})
	case errors.Is(err, context.DeadlineExceeded):
		_ = send("timeout", map[string]string{})
	case errors.Is(err, context.Canceled):
	default:
		status := asStatus(err)
		_ = send("error", status)
	}
}

// ModelList is the answer of the models route.
type ModelList struct {
	Items []jobs.Model `json:"items"`
}

func (a *API) models(w http.ResponseWriter, r *http.Request, u access.User) {
	models, err := a.store.Models(r.Context(), u, r.PathValue("namespace"))
	if err != nil {
		writeError(r.Context(), w, err)
		return
	}
	writeJSON(w, http.StatusOK, ModelList{Items: models})
}

// typed fills in apiVersion and kind, which the client's decoding drops.
func typed(j *vmafxv1.VmafxJob) *vmafxv1.VmafxJob {
	j.APIVersion, j.Kind = vmafxv1.GroupVersion.String(), "VmafxJob"
	j.ManagedFields = nil
	return j
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// asStatus is err as the API server's Status: its own when it came from the API server.
func asStatus(err error) metav1.Status {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		s.APIVersion, s.Kind = "v1", "Status"
		return s
	}
	failure := func(code int32, reason metav1.StatusReason) metav1.Status {
		return metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
			Code: code, Reason: reason, Message: err.Error()}
	}
	switch {
	case errors.Is(err, access.ErrUnauthenticated):
		return failure(http.StatusUnauthorized, metav1.StatusReasonUnauthorized)
	case errors.Is(err, access.ErrRateLimited):
		return failure(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests)
	case errors.Is(err, access.ErrReviewFailed):
		return failure(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		s := apierrors.NewTimeoutError(err.Error(), 1).Status()
		s.APIVersion, s.Kind = "v1", "Status"
		return s
	}
	s := apierrors.NewInternalError(err).Status()
	s.APIVersion, s.Kind = "v1", "Status"
	return s
}

// writeError answers with err as a Status; the API server's own errors keep their code,
// reason and field causes.
func writeError(ctx context.Context, w http.ResponseWriter, err error) {
	s := asStatus(err)
	if s.Code == 0 {
		s.Code = http.StatusInternalServerError
	}
	if s.Code >= 500 {
		klog.FromContext(ctx).Error(err, "Request failed")
	}
	switch s.Code {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="vmafx"`)
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "5")
	}
	writeJSON(w, int(s.Code), s)
}
