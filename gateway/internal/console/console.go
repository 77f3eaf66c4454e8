package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/gateway/internal/httpapi"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
	"github.com/vmafx/vmafx/gateway/internal/outputs"
)

// Prefix is where the console is served.
const Prefix = "/console/"

// CookieName is the cookie that holds the caller's bearer token.
const CookieName = "vmafx_console_token"

// cookieMaxAge bounds how long a browser keeps the token: a working day. The token's own
// expiry still applies; an expired one sends the caller back to the login page.
const cookieMaxAge = 12 * time.Hour

// listLimit bounds a list page: the console shows a namespace's latest objects, not an
// archive, and one page must stay cheap for the API server and the browser.
const listLimit = 500

// maxFormBytes bounds a form post: a token is a few KiB, a job's fields less.
const maxFormBytes = 64 << 10

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the console.
type Options struct {
	// ReadOutputs lets a job's page read its per-frame output from object storage (s3://,
	// gs://, azure://) with the keys of the Secret the job names, read as the caller. Off,
	// the page says where the output is; on, the API's Pod reaches the job's store.
	ReadOutputs bool
	// MaxOutputBytes bounds an output read for its curve; 0: DefaultMaxOutputBytes.
	MaxOutputBytes int64
	// Heartbeat is how often an idle live job list sends a comment, so that proxies keep
	// it open; 0: DefaultHeartbeat.
	Heartbeat time.Duration
}

// DefaultHeartbeat is under the idle timeouts of common proxies (nginx's 60 s, a cloud
// load balancer's 60 s and up).
const DefaultHeartbeat = 15 * time.Second

// DefaultMaxOutputBytes bounds a per-frame output read: libvmaf's JSON takes about 1 KiB
// a frame with every feature, so 64 MiB is an hour at 24 fps and memory stays bounded.
const DefaultMaxOutputBytes = 64 << 20

// Console serves the pages.
type Console struct {
	store   *jobs.Store
	metrics *httpapi.Metrics
	opts    Options
	pages   map[string]*template.Template
	now     func() time.Time
	// outputs reads jobs' outputs and pictures, a few at once.
	outputs *outputs.Reader
	// streams are the live job lists open, one a session.
	streams streams
}

// New returns the console over store, counting its requests in metrics and reading
// outputs with reader (shared with the door's other routes, for one bound on reads).
func New(store *jobs.Store, metrics *httpapi.Metrics, reader *outputs.Reader, opts Options) *Console {
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	return &Console{store: store, metrics: metrics, opts: opts, pages: parsePages(), now: time.Now, outputs: reader,
		streams: streams{open: map[string]*stream{}}}
}

// page names, one template file each, rendered inside layout.html.
var pageNames = []string{"login", "jobs", "job", "submit", "comparisons", "comparison", "ladders", "ladder", "error"}

func parsePages() map[string]*template.Template {
	funcs := template.FuncMap{"join": strings.Join, "kbps": func(bps int64) float64 { return float64(bps) / 1000 }}
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/rows.html", "templates/worst.html", "templates/"+name+".html"))
		pages[name] = t
	}
	pages["rows"] = template.Must(template.New("rows.html").Funcs(funcs).ParseFS(templateFS, "templates/rows.html"))
	return pages
}

// route is one of the console's pages; authenticated ones get the caller.
type route struct {
	pattern string
	public  func(*Console, http.ResponseWriter, *http.Request)
	authed  func(*Console, http.ResponseWriter, *http.Request, session)
}

var routes = []route{
	{pattern: "GET /console/{$}", authed: (*Console).home},
	{pattern: "GET /console/login", public: (*Console).loginPage},
	{pattern: "POST /console/login", public: (*Console).login},
	{pattern: "POST /console/logout", public: (*Console).logout},
	{pattern: "GET /console/static/", public: (*Console).static},
	{pattern: "GET /console/namespaces/{namespace}/jobs", authed: (*Console).jobs},
	{pattern: "GET /console/namespaces/{namespace}/jobs-stream", authed: (*Console).jobStream},
	{pattern: "GET /console/namespaces/{namespace}/jobs/{name}", authed: (*Console).job},
	{pattern: "GET /console/namespaces/{namespace}/jobs/{name}/report/{file}", authed: (*Console).reportFile},
	{pattern: "GET /console/namespaces/{namespace}/jobs/{name}/events", authed: (*Console).events},
	{pattern: "GET /console/namespaces/{namespace}/submit", authed: (*Console).submitPage},
	{pattern: "POST /console/namespaces/{namespace}/submit", authed: (*Console).submit},
	{pattern: "GET /console/namespaces/{namespace}/comparisons", authed: (*Console).comparisons},
	{pattern: "GET /console/namespaces/{namespace}/comparisons/{name}", authed: (*Console).comparison},
	{pattern: "GET /console/namespaces/{namespace}/ladders", authed: (*Console).ladders},
	{pattern: "GET /console/namespaces/{namespace}/ladders/{name}", authed: (*Console).ladder},
}

// Handler returns the console's handler, for Prefix.
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		_, path, _ := strings.Cut(rt.pattern, " ")
		mux.HandleFunc(rt.pattern, c.metrics.Instrument(path, func(w http.ResponseWriter, r *http.Request) {
			secure(w)
			if rt.public != nil {
				rt.public(c, w, r)
				return
			}
			s, ok := c.session(w, r)
			if !ok {
				return
			}
			if ns := r.PathValue("namespace"); ns != "" {
				if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
					c.fail(w, r, s, apierrors.NewBadRequest("namespace "+ns+": "+strings.Join(errs, "; ")))
					return
				}
				s.Namespace = ns
			}
			rt.authed(c, w, r, s)
		}))
	}
	mux.HandleFunc("/console/", c.metrics.Instrument("/console/other", func(w http.ResponseWriter, r *http.Request) {
		secure(w)
		c.render(w, r, http.StatusNotFound, "error", session{}, errorPage{Title: "Not found", Message: "There is no console page at " + r.URL.Path + "."})
	}))
	return mux
}

// secure sets the headers every page carries: no script or style from elsewhere, no
// framing (clickjacking), no caching of pages that show a caller's jobs.
func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
}

// session is an authenticated caller.
type session struct {
	User      access.User
	CSRF      string
	Namespace string
}

// session authenticates the cookie's token; without a valid one it sends the browser to
// the login page (or answers 401 to a script) and returns false.
func (c *Console) session(w http.ResponseWriter, r *http.Request) (session, bool) {
	// An OIDC proxy in front of the door (oauth2-proxy --pass-authorization-header) sends
	// the user's token on every request: it counts as the login.
	token, fromHeader := access.BearerToken(r.Header)
	if !fromHeader {
		ck, err := r.Cookie(CookieName)
		if err != nil || ck.Value == "" {
			c.toLogin(w, r, "")
			return session{}, false
		}
		token = ck.Value
	}
	u, err := c.store.Checker().Authenticate(r.Context(), token)
	switch {
	case errors.Is(err, access.ErrUnauthenticated):
		clearCookie(w, r)
		c.toLogin(w, r, "The token was refused or has expired: paste a new one.")
		return session{}, false
	case err != nil:
		c.render(w, r, statusCode(err), "error", session{}, errorPage{Title: "Cannot check the token", Message: err.Error()})
		return session{}, false
	}
	return session{User: u, CSRF: csrfToken(token)}, true
}

func (c *Console) toLogin(w http.ResponseWriter, r *http.Request, msg string) {
	if r.Header.Get("Accept") == "text/event-stream" || r.URL.Query().Get("fragment") != "" {
		http.Error(w, "log in again", http.StatusUnauthorized)
		return
	}
	q := url.Values{}
	if msg != "" {
		q.Set("message", msg)
	}
	if r.Method == http.MethodGet {
		q.Set("next", r.URL.Path)
	}
	http.Redirect(w, r, Prefix+"login?"+q.Encode(), http.StatusSeeOther)
}

// csrfToken is the form token of a session: an HMAC keyed by the bearer token itself, so
// a page from another site, which cannot read the HttpOnly cookie, cannot forge it, and
// every replica of the API computes the same one without a shared secret.
func csrfToken(bearer string) string {
	m := hmac.New(sha256.New, []byte(bearer))
	m.Write([]byte("vmafx console form v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sameOrigin refuses a form post that a browser marks as coming from another site (Fetch
// metadata, then Origin): a second line behind SameSite=Strict and the form token, and
// the only one for the login form, which has no session yet.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	return true
}

// checkForm parses a post and checks that it comes from the console's own page.
func (c *Console) checkForm(w http.ResponseWriter, r *http.Request, s *session) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.render(w, r, http.StatusBadRequest, "error", sessionOrZero(s), errorPage{Title: "Bad form", Message: err.Error()})
		return false
	}
	ok := sameOrigin(r)
	if ok && s != nil {
		ok = hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(s.CSRF))
	}
	if !ok {
		c.render(w, r, http.StatusForbidden, "error", sessionOrZero(s), errorPage{Title: "Form refused",
			Message: "The form did not come from this console's own page (cross-site request refused). Reload the page and send it again."})
	}
	return ok
}

func sessionOrZero(s *session) session {
	if s == nil {
		return session{}
	}
	return *s
}

// namespaceCookie remembers the namespace of the login, for /console/.
const namespaceCookie = "vmafx_console_namespace"

func setCookie(w http.ResponseWriter, r *http.Request, name, value string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: Prefix, MaxAge: int(cookieMaxAge.Seconds()),
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	for _, name := range []string{CookieName, namespaceCookie} {
		http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: Prefix, MaxAge: -1,
			HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	}
}

// layout is what every page template gets.
type layout struct {
	Title   string
	Session session
	Page    any
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, code int, name string, s session, page any) {
	title := name
	if t, ok := page.(interface{ PageTitle() string }); ok {
		title = t.PageTitle()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := c.pages[name].Execute(w, layout{Title: title, Session: s, Page: page}); err != nil {
		klog.FromContext(r.Context()).Error(err, "Rendering a console page", "page", name)
	}
}

// errorPage is a refusal or a failure, in the API server's words.
type errorPage struct {
	Title   string
	Code    int
	Reason  string
	Message string
	Causes  []string
}

func (e errorPage) PageTitle() string { return e.Title }

// fail renders err: the API server's Status (Forbidden, NotFound ...) as it is.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s session, err error) {
	code := statusCode(err)
	if code == http.StatusUnauthorized {
		clearCookie(w, r)
		c.toLogin(w, r, err.Error())
		return
	}
	p := errorPage{Title: http.StatusText(code), Code: code, Message: err.Error()}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		p.Reason = string(st.Status().Reason)
		p.Message = st.Status().Message
		p.Causes = causes(st)
	}
	if code >= 500 {
		klog.FromContext(r.Context()).Error(err, "Console request failed", "path", r.URL.Path)
	}
	c.render(w, r, code, "error", s, p)
}

func causes(st apierrors.APIStatus) []string {
	var out []string
	if d := st.Status().Details; d != nil {
		for _, cs := range d.Causes {
			if cs.Field != "" {
				out = append(out, cs.Field+": "+cs.Message)
			} else {
				out = append(out, cs.Message)
			}
		}
	}
	return out
}

// statusCode is err's HTTP code, as the JSON API answers it.
func statusCode(err error) int {
	var st apierrors.APIStatus
	switch {
	case errors.As(err, &st) && st.Status().Code != 0:
		return int(st.Status().Code)
	case errors.Is(err, access.ErrUnauthenticated), errors.Is(err, jobs.ErrNoCaller):
		return http.StatusUnauthorized
	case errors.Is(err, access.ErrRateLimited):
		return http.StatusTooManyRequests
	case errors.Is(err, access.ErrReviewFailed):
		return http.StatusServiceUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

func (c *Console) static(w http.ResponseWriter, r *http.Request) {
	sub, _ := fs.Sub(staticFS, "static")
	w.Header().Set("Cache-Control", "public, max-age=300")
	http.StripPrefix(Prefix+"static/", http.FileServerFS(sub)).ServeHTTP(w, r)
}

// Mount serves the console at Prefix beside api (the JSON API's handler), and sends a
// browser that asks for / to the console.
func Mount(api http.Handler, c *Console) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle(Prefix, c.Handler())
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "text/html") {
			http.Redirect(w, r, Prefix, http.StatusSeeOther)
			return
		}
		api.ServeHTTP(w, r)
	})
	return mux
}
