package integration

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/vmafx/vmafx/gateway/internal/console"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// browserless is a client that keeps cookies and does not follow redirects, to look at
// each answer of the console as a browser gets it.
func browserless(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// answer is a response, read and closed.
type answer struct {
	StatusCode int
	Header     http.Header
	cookies    []*http.Cookie
}

func (a answer) Cookies() []*http.Cookie { return a.cookies }

func read(t *testing.T, resp *http.Response, err error) (answer, string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{StatusCode: resp.StatusCode, Header: resp.Header, cookies: resp.Cookies()}, string(b)
}

func post(t *testing.T, c *http.Client, u string, form url.Values, header map[string]string) (answer, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	return read(t, resp, err)
}

func get(t *testing.T, c *http.Client, u string) (answer, string) {
	t.Helper()
	resp, err := c.Get(u)
	return read(t, resp, err)
}

// TestConsoleSessionAndForms checks the console's login cookie and its refusals of
// forged forms, without a browser.
func TestConsoleSessionAndForms(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startConsole(t, console.Options{})
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	c := browserless(t)

	// Not logged in: to the login page, which says where to come back to.
	first, _ := get(t, c, d.url+"/console/namespaces/"+ns+"/jobs")
	if loc := first.Header.Get("Location"); first.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/console/login?") {
		t.Fatalf("without a cookie: %d to %q, want 303 to the login page", first.StatusCode, loc)
	}
	// A browser that asks for / is sent to the console; an API client gets the API's 404.
	req, _ := http.NewRequest(http.MethodGet, d.url+"/", nil)
	req.Header.Set("Accept", "text/html")
	resp, err := c.Do(req)
	if root, _ := read(t, resp, err); root.StatusCode != http.StatusSeeOther || root.Header.Get("Location") != console.Prefix {
		t.Errorf("GET / for a browser: %d to %q, want 303 to %s", root.StatusCode, root.Header.Get("Location"), console.Prefix)
	}

	// Behind an OIDC proxy that passes the user's token on: no login page, the token is
	// the session.
	req, _ = http.NewRequest(http.MethodGet, d.url+"/console/namespaces/"+ns+"/jobs", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	if proxied, body := read(t, resp, err); proxied.StatusCode != http.StatusOK || !strings.Contains(body, "Jobs in "+ns) {
		t.Errorf("with the token in the Authorization header: %d %s, want the job list", proxied.StatusCode, body)
	}

	// A login posted from another site is refused, token or not.
	form := url.Values{"token": {token}, "namespace": {ns}}
	if resp, body := post(t, c, d.url+"/console/login", form, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("cross-site login: %d, cookies %v, want 403 and none: %s", resp.StatusCode, resp.Cookies(), body)
	}
	// A bad token: the login page again, with the door's message.
	if resp, body := post(t, c, d.url+"/console/login", url.Values{"token": {"junk"}, "namespace": {ns}}, nil); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "a valid Kubernetes bearer token is required") {
		t.Errorf("bad token: %d, want 401 and the door's message: %s", resp.StatusCode, body)
	}
	resp2, _ := post(t, c, d.url+"/console/login", form, map[string]string{"Origin": d.url, "Sec-Fetch-Site": "same-origin"})
	if resp2.StatusCode != http.StatusSeeOther || resp2.Header.Get("Location") != "/console/namespaces/"+ns+"/jobs" {
		t.Fatalf("login: %d to %q, want 303 to the namespace's jobs", resp2.StatusCode, resp2.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, ck := range resp2.Cookies() {
		if ck.Name == console.CookieName {
			session = ck
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure || session.Path != console.Prefix || session.Value != token {
		t.Fatalf("session cookie %+v, want the token, HttpOnly, SameSite=Strict, not Secure on plain HTTP, path %s", session, console.Prefix)
	}

	page, body := get(t, c, d.url+"/console/namespaces/"+ns+"/submit")
	if page.StatusCode != http.StatusOK {
		t.Fatalf("submit page: %d %s", page.StatusCode, body)
	}
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q, want scripts from the console only and no framing", csp)
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the submit form has no csrf field")
	}
	job := url.Values{"name": {"from-the-form"}, "reference": {"https://media.example.com/a.y4m"}, "distorted": {"https://media.example.com/b.y4m"}}
	// Without the form's token (a forged post that rode on the cookie): refused.
	if resp, body := post(t, c, d.url+"/console/namespaces/"+ns+"/submit", job, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("submit without the form token: %d, want 403: %s", resp.StatusCode, body)
	}
	job.Set("csrf", m[1])
	page, body = post(t, c, d.url+"/console/namespaces/"+ns+"/submit", job, nil)
	if page.StatusCode != http.StatusSeeOther || page.Header.Get("Location") != "/console/namespaces/"+ns+"/jobs/from-the-form" {
		t.Fatalf("submit: %d to %q, want 303 to the new job: %s", page.StatusCode, page.Header.Get("Location"), body)
	}
	// Created as the caller, with the API server's defaults.
	page, body = get(t, c, d.url+"/console/namespaces/"+ns+"/jobs/from-the-form")
	if page.StatusCode != http.StatusOK || !strings.Contains(body, "https://media.example.com/a.y4m") || !strings.Contains(body, "writes no per-frame output") {
		t.Errorf("the new job's page: %d %s", page.StatusCode, body)
	}
	// The list as the page's script fetches it: rows only.
	page, body = get(t, c, d.url+"/console/namespaces/"+ns+"/jobs?fragment=rows")
	if page.StatusCode != http.StatusOK || !strings.Contains(body, ">from-the-form</a>") || strings.Contains(body, "<html") {
		t.Errorf("rows fragment: %d %s", page.StatusCode, body)
	}
	// The whole list: without JavaScript it reloads itself; with it, it opens its stream.
	page, body = get(t, c, d.url+"/console/namespaces/"+ns+"/jobs")
	head, _, _ := strings.Cut(body, "</head>")
	if page.StatusCode != http.StatusOK || !strings.Contains(head, `<noscript><meta http-equiv="refresh" content="5"></noscript>`) ||
		!strings.Contains(body, `data-stream="/console/namespaces/`+ns+`/jobs-stream"`) || !strings.Contains(body, `<tr data-job="from-the-form"`) {
		t.Errorf("job list: %d, want a refresh without JavaScript, the live stream's address and the job's row: %s", page.StatusCode, body)
	}

	// Logging out drops the cookie; the console then asks for a token again.
	if resp, _ := post(t, c, d.url+"/console/logout", url.Values{"csrf": {m[1]}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("logout: %d, want 303", resp.StatusCode)
	}
	if resp, _ := get(t, c, d.url+"/console/namespaces/"+ns+"/jobs"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after logout: %d, want 303 to the login page", resp.StatusCode)
	}
	// The live list's stream asks an EventSource to log in again rather than redirect it.
	req, _ = http.NewRequest(http.MethodGet, d.url+"/console/namespaces/"+ns+"/jobs-stream", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err = c.Do(req)
	if stream, body := read(t, resp, err); stream.StatusCode != http.StatusUnauthorized {
		t.Errorf("the live stream after logout: %d %s, want 401", stream.StatusCode, body)
	}
}
