package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
	"github.com/vmafx/vmafx/gateway/internal/serve"
)

// loginView is the login page.
type loginView struct {
	Message   string
	Error     string
	Namespace string
	Next      string
}

func (loginView) PageTitle() string { return "Log in" }

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c.render(w, r, http.StatusOK, "login", session{}, loginView{Message: q.Get("message"), Namespace: "default", Next: safeNext(q.Get("next"))})
}

// safeNext keeps a post-login destination within the console: never another site.
func safeNext(p string) string {
	if !strings.HasPrefix(p, Prefix) || p == Prefix || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\r\n") || strings.HasPrefix(p, Prefix+"login") {
		return ""
	}
	return p
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if !c.checkForm(w, r, nil) {
		return
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	token = strings.TrimSpace(strings.TrimPrefix(token, "Bearer "))
	ns := strings.TrimSpace(r.PostForm.Get("namespace"))
	view := loginView{Namespace: ns, Next: safeNext(r.PostForm.Get("next"))}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		view.Error = "namespace: " + strings.Join(errs, "; ")
		c.render(w, r, http.StatusBadRequest, "login", session{}, view)
		return
	}
	if _, err := c.store.Checker().Authenticate(r.Context(), token); err != nil {
		view.Error = err.Error()
		c.render(w, r, statusCode(err), "login", session{}, view)
		return
	}
	setCookie(w, r, CookieName, token)
	setCookie(w, r, namespaceCookie, ns)
	next := view.Next
	if next == "" {
		next = Prefix + "namespaces/" + ns + "/jobs"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	var s *session
	if ck, err := r.Cookie(CookieName); err == nil && ck.Value != "" {
		s = &session{CSRF: csrfToken(ck.Value)}
	}
	if !c.checkForm(w, r, s) {
		return
	}
	clearCookie(w, r)
	http.Redirect(w, r, Prefix+"login?message="+"Logged out.", http.StatusSeeOther)
}

// home sends the caller to a namespace's jobs: the one asked for (?namespace=, the
// navigation's form), else the one of the login, else default.
func (c *Console) home(w http.ResponseWriter, r *http.Request, _ session) {
	ns := r.URL.Query().Get("namespace")
	if ns == "" {
		if ck, err := r.Cookie(namespaceCookie); err == nil {
			ns = ck.Value
		}
	}
	if ns == "" || len(validation.IsDNS1123Label(ns)) > 0 {
		ns = "default"
	}
	http.Redirect(w, r, Prefix+"namespaces/"+ns+"/jobs", http.StatusSeeOther)
}

// jobRow is one job of a list.
type jobRow struct {
	Namespace, Name, Phase, Score, Node, Backend, Age, Created string
}

// rowOf is j's row in the list, its age as of now.
func rowOf(now time.Time, j *vmafxv1.VmafxJob) jobRow {
	return jobRow{Namespace: j.Namespace, Name: j.Name, Phase: phaseOf(j.Status.Phase), Score: j.Status.Score, Node: j.Status.Node,
		Backend: backendOf(j), Age: age(now, j.CreationTimestamp), Created: j.CreationTimestamp.UTC().Format(time.RFC3339)}
}

type jobsView struct {
	Namespace string
	Rows      []jobRow
	More      bool
}

func (v jobsView) PageTitle() string { return "Jobs in " + v.Namespace }

func (c *Console) jobs(w http.ResponseWriter, r *http.Request, s session) {
	list, err := c.store.List(r.Context(), s.User, s.Namespace, jobs.ListOptions{Limit: listLimit})
	if err != nil {
		if r.URL.Query().Get("fragment") != "" {
			http.Error(w, err.Error(), statusCode(err))
			return
		}
		c.fail(w, r, s, err)
		return
	}
	items := list.Items
	slices.SortStableFunc(items, func(a, b vmafxv1.VmafxJob) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	now := c.now()
	v := jobsView{Namespace: s.Namespace, More: list.Continue != ""}
	for i := range items {
		v.Rows = append(v.Rows, rowOf(now, &items[i]))
	}
	if r.URL.Query().Get("fragment") == "rows" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = c.pages["rows"].Execute(w, v)
		return
	}
	c.render(w, r, http.StatusOK, "jobs", s, v)
}

func phaseOf(p vmafxv1.JobPhase) string {
	if p == "" {
		return string(vmafxv1.JobPending)
	}
	return string(p)
}

// backendOf is the backend that ran, or the one asked for while none has.
func backendOf(j *vmafxv1.VmafxJob) string {
	if j.Status.Result != nil && j.Status.Result.Backend != "" {
		return j.Status.Result.Backend
	}
	return string(j.Spec.Backend)
}

func age(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// kv is one labelled value of a definition list.
type kv struct{ Key, Value string }

type jobView struct {
	Namespace string
	Job       *vmafxv1.VmafxJob
	Phase     string
	Finished  bool
	Summary   []kv
	Timings   []kv
	Device    []kv
	Result    []kv
	Features  []kv
	Spec      []kv
	Curves    []Chart
	Worst     []worstFrame
	Frames    int
	CurveNote string
	// Percentiles, the worst scene and the report, from the status.
	Percentiles []kv
	WorstScene  []kv
	Report      string
	// Plot is the console URL of the report's score plot, when its pictures are shown.
	Plot string
	// PictureNote says where the pictures are when the console does not show them.
	PictureNote string
	// Listed is set when the worst frames are the status's (the worker's), not the curve's.
	Listed bool
}

func (v jobView) PageTitle() string { return "Job " + v.Job.Name }

type worstFrame struct {
	Frame int
	VMAF  string
	// Picture is the console URL of the frame's picture, when shown.
	Picture string
}

func (c *Console) job(w http.ResponseWriter, r *http.Request, s session) {
	j, err := c.store.Get(r.Context(), s.User, s.Namespace, r.PathValue("name"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	st := j.Status
	v := jobView{Namespace: s.Namespace, Job: j, Phase: phaseOf(st.Phase), Finished: st.Phase.Finished()}
	add := func(list *[]kv, k, val string) {
		if val != "" {
			*list = append(*list, kv{k, val})
		}
	}
	add(&v.Summary, "Phase", v.Phase)
	add(&v.Summary, "Score", st.Score)
	add(&v.Summary, "Node", st.Node)
	add(&v.Summary, "Pod", st.PodName)
	add(&v.Summary, "Backend", backendOf(j))
	add(&v.Summary, "Attempts", count(st.Attempts))
	add(&v.Summary, "Failed attempts", count(st.FailedAttempts))
	add(&v.Summary, "Lost attempts", count(st.LostAttempts))
	add(&v.Summary, "Message", st.Message)
	if ch := st.Chunks; ch != nil {
		add(&v.Summary, "Chunks", fmt.Sprintf("%d of %d done (%s)", ch.Done, ch.Total, ch.Progress))
	}
	created := j.CreationTimestamp.Time
	add(&v.Timings, "Created", stamp(j.CreationTimestamp.Time))
	if st.StartTime != nil {
		add(&v.Timings, "Started", stamp(st.StartTime.Time))
		add(&v.Timings, "Waited to start", st.StartTime.Sub(created).Round(time.Second).String())
	}
	if st.CompletionTime != nil {
		add(&v.Timings, "Finished", stamp(st.CompletionTime.Time))
		if st.StartTime != nil {
			add(&v.Timings, "Ran for", st.CompletionTime.Sub(st.StartTime.Time).Round(time.Second).String())
		}
		add(&v.Timings, "Total", st.CompletionTime.Sub(created).Round(time.Second).String())
	}
	if res := st.Result; res != nil {
		add(&v.Result, "Mean VMAF", res.Mean)
		add(&v.Result, "Harmonic mean", res.HarmonicMean)
		add(&v.Result, "Lowest frame", res.Min)
		add(&v.Result, "Highest frame", res.Max)
		add(&v.Result, "Frames", count(res.Frames))
		add(&v.Result, "Frames per second", res.FPS)
		add(&v.Result, "Model", res.Model)
		add(&v.Result, "Distorted scaled from", res.DistortedScaledFrom)
		if ci := res.ConfidenceInterval; ci != nil {
			add(&v.Result, "95% interval", ci.Low+" to "+ci.High)
		}
		add(&v.Device, "Backend", res.Backend)
		add(&v.Device, "Device", res.Device)
		for _, k := range sortedKeys(res.Features) {
			add(&v.Features, k, res.Features[k])
		}
	}
	add(&v.Spec, "Reference", string(j.Spec.Reference))
	add(&v.Spec, "Distorted", string(j.Spec.Distorted))
	add(&v.Spec, "Model", string(j.Spec.Model))
	if j.Spec.Output != nil {
		add(&v.Spec, "Output", string(*j.Spec.Output))
	}
	c.worstOf(r, s, j, &v)
	c.render(w, r, http.StatusOK, "job", s, v)
}

// worstOf fills in the curve and where the score is made: the status's percentiles,
// worst scene and worst frames (marked on the curve) and, when the console reads the
// output, the worst frames' pictures from the report beside it, read the same way.
func (c *Console) worstOf(r *http.Request, s session, j *vmafxv1.VmafxJob, v *jobView) {
	res := j.Status.Result
	if res != nil && j.Status.Phase == vmafxv1.JobSucceeded {
		if p := res.Percentiles; p != nil {
			v.Percentiles = []kv{{"1st percentile", p.P1}, {"5th percentile", p.P5}, {"Median (50th)", p.P50}}
		}
		if sc := res.Scenes; sc != nil && sc.Worst != nil {
			w := sc.Worst
			v.WorstScene = []kv{{"Scenes", fmt.Sprint(sc.Count)},
				{"Worst scene", fmt.Sprintf("frames %d to %d (%d frames)", w.Start, w.Start+w.Frames-1, w.Frames)}, {"Its mean VMAF", w.Mean}}
			if w.Min != "" {
				v.WorstScene = append(v.WorstScene, kv{"Its lowest frame", w.Min})
			}
			if w.P5 != "" {
				v.WorstScene = append(v.WorstScene, kv{"Its 5th percentile", w.P5})
			}
		}
		v.Report = res.Report
	}
	report := ""
	if j.Status.Phase == vmafxv1.JobSucceeded {
		report = outputs.ReportOf(j, 0)
	}
	listed := listedWorst(j, 0, false)
	v.Listed = len(listed) > 0
	v.Curves, v.Worst, v.Frames, v.CurveNote = c.curves(r, s, j, listed)
	switch {
	case report == "":
	case v.Curves != nil && outputs.ObjectStore(report):
		// The output was read with the caller's keys: the pictures beside it are served
		// the same way, through the console's report route.
		v.Worst = listedWorst(j, 0, true)
		v.Plot = reportURL(j, 0, vmafxv1.ReportPlotSVG)
	default:
		v.PictureNote = "The worst frames' pictures and the score plot are in " + report + "; this console shows them only where it reads the job's output."
	}
}

func count(n int32) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// events is the job's phase stream (jobs.Store.Follow, as the JSON API's events route)
// for the job page's script: EventSource sends the cookie, not an Authorization header.
func (c *Console) events(w http.ResponseWriter, r *http.Request, s session) {
	serve.Extend(w, jobs.MaxWait+30*time.Second)
	events := serve.NewEvents(w)
	send := events.Send
	type update struct {
		Phase string `json:"phase"`
		Score string `json:"score,omitempty"`
		Node  string `json:"node,omitempty"`
	}
	err := c.store.Follow(r.Context(), s.User, s.Namespace, r.PathValue("name"), jobs.MaxWait, func(j *vmafxv1.VmafxJob) error {
		return send("status", update{Phase: phaseOf(j.Status.Phase), Score: j.Status.Score, Node: j.Status.Node})
	})
	switch {
	case !events.Started() && err != nil:
		http.Error(w, err.Error(), statusCode(err))
	case err == nil:
		_ = send("end", struct{}{})
	}
}

// submitView is the submit form, with what was entered and the API server's answer.
type submitView struct {
	Namespace string
	Form      submitForm
	Models    []jobs.Model
	Backends  []string
	Features  []string
	Error     *errorPage
	Accepted  string
}

func (v submitView) PageTitle() string { return "Submit a job to " + v.Namespace }

type submitForm struct {
	Name, Reference, Distorted, Model, Backend, Output string
	Features                                           []string
	DryRun                                             bool
}

// Has reports whether feature f is ticked.
func (f submitForm) Has(feature string) bool { return slices.Contains(f.Features, feature) }

var formBackends = []string{"", string(vmafxv1.BackendAuto), string(vmafxv1.BackendCPU), string(vmafxv1.BackendCUDA), string(vmafxv1.BackendHIP), string(vmafxv1.BackendSYCL), string(vmafxv1.BackendVulkan)}

var formFeatures = []string{string(vmafxv1.FeaturePSNR), string(vmafxv1.FeatureSSIM), string(vmafxv1.FeatureMSSSIM), string(vmafxv1.FeatureCAMBI)}

func (c *Console) submitView(r *http.Request, s session, f submitForm) submitView {
	models, err := c.store.Models(r.Context(), s.User, s.Namespace)
	if err != nil {
		models = nil
	}
	return submitView{Namespace: s.Namespace, Form: f, Models: models, Backends: formBackends, Features: formFeatures}
}

func (c *Console) submitPage(w http.ResponseWriter, r *http.Request, s session) {
	c.render(w, r, http.StatusOK, "submit", s, c.submitView(r, s, submitForm{DryRun: true}))
}

func (c *Console) submit(w http.ResponseWriter, r *http.Request, s session) {
	if !c.checkForm(w, r, &s) {
		return
	}
	p := r.PostForm
	f := submitForm{Name: strings.TrimSpace(p.Get("name")), Reference: strings.TrimSpace(p.Get("reference")), Distorted: strings.TrimSpace(p.Get("distorted")),
		Model: p.Get("model"), Backend: p.Get("backend"), Output: strings.TrimSpace(p.Get("output")), Features: p["features"], DryRun: p.Get("dryRun") != ""}
	job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Name: f.Name}, Spec: vmafxv1.VmafxJobSpec{
		Reference: vmafxv1.VideoURI(f.Reference), Distorted: vmafxv1.VideoURI(f.Distorted),
		Model: vmafxv1.ModelReference(f.Model), Backend: vmafxv1.Backend(f.Backend)}}
	for _, ft := range f.Features {
		job.Spec.Features = append(job.Spec.Features, vmafxv1.Feature(ft))
	}
	if f.Output != "" {
		out := vmafxv1.OutputURI(f.Output)
		job.Spec.Output = &out
	}
	created, err := c.store.Submit(r.Context(), s.User, s.Namespace, job, f.DryRun)
	v := c.submitView(r, s, f)
	if err != nil {
		code := statusCode(err)
		if code == http.StatusUnauthorized {
			c.fail(w, r, s, err)
			return
		}
		e := errorPage{Code: code, Message: err.Error()}
		var st apierrors.APIStatus
		if errors.As(err, &st) {
			e.Reason, e.Message, e.Causes = string(st.Status().Reason), st.Status().Message, causes(st)
		}
		v.Error = &e
		c.render(w, r, code, "submit", s, v)
		return
	}
	if f.DryRun {
		v.Accepted = "The API server accepts this job (dry run: nothing was created). Untick \"Dry run\" to submit it."
		c.render(w, r, http.StatusOK, "submit", s, v)
		return
	}
	http.Redirect(w, r, Prefix+"namespaces/"+s.Namespace+"/jobs/"+created.Name, http.StatusSeeOther)
}
