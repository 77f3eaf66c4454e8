// Package testutil holds the helpers that tests across the components share: building a
// binary of the project, a free loopback port, a bounded wait for a condition, a
// credentials folder as a mounted Secret. Only tests import it.
package testutil

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"
)

// RepoRoot is the repository's root folder, found from this file's own path.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// GoCommand is the go command that runs the tests: $GOROOT/bin/go when GOROOT is set,
// else the one on PATH.
func GoCommand() (string, error) {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); isFile(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building a binary for the test needs the go command: %w", err)
	}
	return p, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// BuildBinary builds the package pkg (relative to the repository root, e.g.
// "./worker/cmd/vmafx-worker") into dir with the test's own build settings, so the
// build cache the test binary filled serves it, plus env (e.g. "CGO_ENABLED=0" for a
// binary as static as in the images), and returns the binary's path.
func BuildBinary(dir, pkg string, env ...string) (string, error) {
	gobin, err := GoCommand()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(gobin, "build", "-o", bin, pkg)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// Build is BuildBinary into the test's temporary folder; it fails the test on error.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin, err := BuildBinary(t.TempDir(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// FreeAddr returns a loopback address ("127.0.0.1:port") that was free a moment ago.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FreePort is FreeAddr's port; it fails the test on error.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// CredentialsDir writes keys as a mounted Secret shows them: one read-only file per key.
func CredentialsDir(t testing.TB, keys map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range keys {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Poll is the longest interval between two checks of Eventually, Wait and Consistently.
// They start at FirstPoll and double up to Poll, so a condition that holds soon is seen
// soon, and a long wait does not flood the API server.
const (
	FirstPoll = 10 * time.Millisecond
	Poll      = 200 * time.Millisecond
)

// Eventually calls f until it returns nil, and fails the test with f's last error when
// timeout passes first. f gets a context that ends at the deadline. Every wait in the
// tests is bounded by it; none sleeps for a fixed time and hopes.
func Eventually(t testing.TB, timeout time.Duration, what string, f func(ctx context.Context) error) {
	t.Helper()
	if err := Wait(context.Background(), timeout, f); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Wait calls f until it returns nil, ctx ends or timeout passes; then it returns f's
// last error, saying how long it waited.
func Wait(ctx context.Context, timeout time.Duration, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for backoff := polls(); ; {
		last := f(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s: %w", timeout, last)
		case <-time.After(backoff.Step()):
		}
	}
}

// Consistently calls f throughout window and fails the test the first time f returns an
// error. It asserts that something does not happen (a second Pod, a retry past the
// limit, a standby taking over), which no condition can signal; window is how long the
// wrong behaviour would take to show, and the test says why it is long enough.
func Consistently(t testing.TB, window time.Duration, what string, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	for backoff := polls(); ; {
		if err := f(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Step()):
		}
	}
}

// polls are the intervals between checks: FirstPoll, doubling up to Poll.
func polls() *wait.Backoff {
	return &wait.Backoff{Duration: FirstPoll, Factor: 2, Cap: Poll, Steps: math.MaxInt32}
}

// Condition turns a test's boolean condition into the form Eventually takes: not yet
// is an error that names what, and cond's own error is kept as the reason.
func Condition(what string, cond func() (bool, error)) func(context.Context) error {
	return func(context.Context) error {
		ok, err := cond()
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", what, err)
		case !ok:
			return fmt.Errorf("%s: not yet", what)
		}
		return nil
	}
}

// Env is an environment of the given name, value pairs, in the form of os.LookupEnv.
func Env(kv ...string) func(name string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// fqName finds a metric's name in a prometheus.Desc's String().
var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// RequireMetricsDocumented fails the test for every metric of collectors that the page
// (a path under docs/) does not name as `name` or `name{labels}`: the page is where a user
// looks a metric up, so a new metric without a row is an error.
func RequireMetricsDocumented(t testing.TB, page string, collectors ...prometheus.Collector) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(RepoRoot(), "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range collectors {
			c.Describe(ch)
		}
		close(ch)
	}()
	n := 0
	for d := range ch {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		n++
		if !strings.Contains(string(doc), "`"+m[1]+"`") && !strings.Contains(string(doc), "`"+m[1]+"{") {
			t.Errorf("docs/%s does not document the metric %s", page, m[1])
		}
	}
	if n == 0 {
		t.Fatal("no metrics described: is the list of collectors empty?")
	}
}

// Registered returns the collectors that register adds to a registry.
func Registered(register func(prometheus.Registerer)) []prometheus.Collector {
	r := &recorder{}
	register(r)
	return r.collectors
}

// recorder is a prometheus.Registerer that keeps what is registered.
type recorder struct{ collectors []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

// RequireGenerated checks that the page (a path under docs/) holds want between the
// lines begin and end (each written with its newline): a part of a hand-written page that
// a test generates from the code, the one place its facts live. With VMAFX_UPDATE_DOCS=1
// it writes want there instead.
func RequireGenerated(t testing.TB, page, begin, end, want string) {
	t.Helper()
	path := filepath.Join(RepoRoot(), "docs", page)
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("docs/%s lacks the markers %q and %q", page, begin, end)
	}
	if got := string(doc[i+len(begin) : j]); got == want {
		return
	}
	if os.Getenv("VMAFX_UPDATE_DOCS") == "1" {
		out := string(doc[:i+len(begin)]) + want + string(doc[j:])
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/%s is stale after %q; run the test with VMAFX_UPDATE_DOCS=1. Want:\n%s", page, strings.TrimSpace(begin), want)
}

// Parallel calls f(0) to f(n-1) from 16 goroutines, as a fleet of clients would (creating
// a thousand nodes one by one would measure the test, not the system), and returns the
// first error any call returned once all are done.
func Parallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	var next atomic.Int64
	var first atomic.Pointer[error]
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := f(i); err != nil {
					first.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return *p
	}
	return nil
}

// Every calls f with the time every period, from its own goroutine, until ctx ends: the
// periodic writes (heartbeats) a test makes in place of a component.
func Every(ctx context.Context, period time.Duration, f func(now time.Time)) {
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				f(now)
			}
		}
	}()
}
