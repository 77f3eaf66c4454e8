package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// start serves h with opts until the test ends; it returns the door's and the probe's
// addresses and a function that sends SIGTERM (cancels) and returns what Serve returned.
func start(t *testing.T, opts Options, h http.Handler, ready func(context.Context) error) (door, probe string, stop func() error) {
	t.Helper()
	opts.Addr, opts.ProbeAddr = "127.0.0.1:0", "127.0.0.1:0"
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = 5 * time.Second
	}
	dl, pl, err := Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, opts, dl, pl, h, NewRegistry(), ready) }()
	var once atomic.Bool
	stop = func() error {
		if once.Swap(true) {
			return nil
		}
		cancel()
		return <-done
	}
	t.Cleanup(func() { _ = stop() })
	return dl.Addr().String(), pl.Addr().String(), stop
}

// closedWithin reports whether the server closes c within d (reading whatever it sends).
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return err == nil || !(errors.As(err, &ne) && ne.Timeout())
}

// A client that was refused cannot keep its connection by dripping the rest of its body:
// the door closes the connection after the 401 at once.
func TestRefusalClosesTheConnection(t *testing.T) {
	refuse := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	})
	door, _, _ := start(t, Options{ReadTimeout: time.Minute, RequestTimeout: time.Minute}, refuse, nil)
	c, err := net.Dial("tcp", door)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// 100 KiB announced: below the 256 KiB that net/http reads to keep a connection.
	fmt.Fprintf(c, "POST /v1/namespaces/a/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{", 100<<10)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d", resp.StatusCode)
	}
	go func() {
		for range 40 {
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	if !closedWithin(c, time.Second) {
		t.Error("the connection stayed open for 1 s after a 401 while its body dripped")
	}
}

// A body dripped a byte at a time holds its connection no longer than ReadTimeout.
func TestSlowBodyIsCutAtReadTimeout(t *testing.T) {
	read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	door, _, _ := start(t, Options{ReadTimeout: 300 * time.Millisecond, RequestTimeout: time.Minute}, read, nil)
	c, err := net.Dial("tcp", door)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	go func() {
		for range 100 {
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(30 * time.Millisecond)
		}
	}()
	begun := time.Now()
	if !closedWithin(c, 2*time.Second) {
		t.Fatal("a dripped body held the connection for 2 s with a read timeout of 300 ms")
	}
	t.Logf("closed after %s", time.Since(begun).Round(time.Millisecond))
}

// A body over MaxBodyBytes is refused with 413.
func TestBodyIsBounded(t *testing.T) {
	read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	door, _, _ := start(t, Options{ReadTimeout: 10 * time.Second, RequestTimeout: 10 * time.Second}, read, nil)
	resp, err := http.Post("http://"+door+"/", "application/json", strings.NewReader(strings.Repeat(" ", MaxBodyBytes+1)))
	if err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("a body of %d bytes got %d; want 413", MaxBodyBytes+1, resp.StatusCode)
		}
	}
}

// A handler that extends its deadline streams past the request and read timeouts, with
// its context alive; one that does not is cut at the request timeout.
func TestExtendKeepsAStreamGoing(t *testing.T) {
	var ctxErr atomic.Value
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/long" {
			Extend(w, 10*time.Second)
		}
		for i := range 6 {
			if _, err := fmt.Fprintf(w, "event %d\n", i); err != nil {
				return
			}
			http.NewResponseController(w).Flush()
			time.Sleep(150 * time.Millisecond)
		}
		if err := r.Context().Err(); err != nil {
			ctxErr.Store(err)
		}
	})
	door, _, _ := start(t, Options{ReadTimeout: 200 * time.Millisecond, RequestTimeout: 300 * time.Millisecond}, stream, nil)
	get := func(path string) (string, error) {
		resp, err := http.Get("http://" + door + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	body, err := get("/long")
	if err != nil || strings.Count(body, "event") != 6 {
		t.Errorf("extended stream: %q, %v; want 6 events", body, err)
	}
	if err, _ := ctxErr.Load().(error); err != nil {
		t.Errorf("the extended stream's context ended: %v", err)
	}
	if body, err := get("/short"); err == nil && strings.Count(body, "event") == 6 {
		t.Errorf("a stream that did not extend ran past its 300 ms deadline: %q", body)
	}
}

// On SIGTERM the door fails /readyz, keeps serving for the drain period, then stops.
func TestDrainBeforeShutdown(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	const drain = 600 * time.Millisecond
	door, probe, stop := start(t, Options{DrainPeriod: drain, ReadTimeout: time.Second, RequestTimeout: time.Second}, ok, nil)
	status := func(url string) int {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
		resp, err := c.Get(url)
		if err != nil {
			return 0
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if s := status("http://" + probe + "/readyz"); s != http.StatusOK {
		t.Fatalf("/readyz %d before SIGTERM", s)
	}
	begun := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	time.Sleep(100 * time.Millisecond)
	if s := status("http://" + probe + "/readyz"); s != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d while draining; want 503", s)
	}
	if s := status("http://" + door + "/"); s != http.StatusOK {
		t.Errorf("the door answered %d while draining; want 200", s)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begun); took < drain {
		t.Errorf("stopped after %s; want the drain period, %s, first", took, drain)
	}
	if s := status("http://" + door + "/"); s != 0 {
		t.Errorf("the door answered %d after stopping", s)
	}
}

// /readyz reports the background check's last result and never calls the check itself.
func TestReadinessIsCached(t *testing.T) {
	var calls atomic.Int32
	var fail atomic.Bool
	check := func(context.Context) error {
		calls.Add(1)
		if fail.Load() {
			return errors.New("secret API server detail")
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := Readiness(ctx, check, 100*time.Millisecond)
	_, probe, _ := start(t, Options{ReadTimeout: time.Second, RequestTimeout: time.Second}, http.NotFoundHandler(), ready)
	before := calls.Load()
	for range 200 {
		resp, err := http.Get("http://" + probe + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/readyz %d", resp.StatusCode)
		}
	}
	if n := calls.Load() - before; n > 3 {
		t.Errorf("200 /readyz requests made %d checks; want those of the 100 ms period only", n)
	}
	fail.Store(true)
	time.Sleep(300 * time.Millisecond)
	resp, err := http.Get("http://" + probe + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || strings.Contains(string(b), "secret") {
		t.Errorf("/readyz after a failed check: %d %q; want 503 without the error's text", resp.StatusCode, b)
	}
}
