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

func post(t *testing.T, c *http.Client, u string, form url.Values, header map[string]string) (*http.Response, string) {
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
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestConsoleSessionAndForms checks the console's login cookie and its refusals of
// forged forms, without a browser.
func TestConsoleSessionAndForms(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	d := startConsole(t, console.Options{})
	token := tokenFor(t, ns, "pipeline", allVerbs...)
	c := browserless(t)

	// Not logged in: to the login page, which says where to come back to.
	resp, _ := get(t, c, d.url+"/console/namespaces/"+ns+"/jobs")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/console/login?") {
		t.Fatalf("without a cookie: %d to %q, want 303 to the login page", resp.StatusCode, loc)
	}
	// A browser that asks for / is sent to the console; an API client gets the API's 404.
	req, _ := http.NewRequest(http.MethodGet, d.url+"/", nil)
	req.Header.Set("Accept", "text/html")
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != console.Prefix {
		t.Errorf("GET / for a browser: %v %v, want 303 to %s", resp, err, console.Prefix)
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
	resp, _ = post(t, c, d.url+"/console/login", form, map[string]string{"Origin": d.url, "Sec-Fetch-Site": "same-origin"})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/namespaces/"+ns+"/jobs" {
		t.Fatalf("login: %d to %q, want 303 to the namespace's jobs", resp.StatusCode, resp.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == console.CookieName {
			session = ck
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure || session.Path != console.Prefix || session.Value != token {
		t.Fatalf("session cookie %+v, want the token, HttpOnly, SameSite=Strict, not Secure on plain HTTP, path %s", session, console.Prefix)
	}

	resp, body := get(t, c, d.url+"/console/namespaces/"+ns+"/submit")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("submit page: %d %s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
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
	resp, body = post(t, c, d.url+"/console/namespaces/"+ns+"/submit", job, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/namespaces/"+ns+"/jobs/from-the-form" {
		t.Fatalf("submit: %d to %q, want 303 to the new job: %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	// Created as the caller, with the API server's defaults.
	resp, body = get(t, c, d.url+"/console/namespaces/"+ns+"/jobs/from-the-form")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "https://media.example.com/a.y4m") || !strings.Contains(body, "writes no per-frame output") {
		t.Errorf("the new job's page: %d %s", resp.StatusCode, body)
	}
	// The list as the page's script fetches it: rows only.
	resp, body = get(t, c, d.url+"/console/namespaces/"+ns+"/jobs?fragment=rows")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, ">from-the-form</a>") || strings.Contains(body, "<html") {
		t.Errorf("rows fragment: %d %s", resp.StatusCode, body)
	}

	// Logging out drops the cookie; the console then asks for a token again.
	if resp, _ := post(t, c, d.url+"/console/logout", url.Values{"csrf": {m[1]}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("logout: %d, want 303", resp.StatusCode)
	}
	if resp, _ := get(t, c, d.url+"/console/namespaces/"+ns+"/jobs"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after logout: %d, want 303 to the login page", resp.StatusCode)
	}
}
