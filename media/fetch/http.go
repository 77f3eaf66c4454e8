package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// Defaults for the zero fields of HTTPOptions.
const (
	// DefaultTimeout bounds each wait: connecting, the TLS handshake, the
	// response headers, and any one wait for body bytes. It is not a bound on
	// the whole transfer, which runs at the scoring speed (a 1080p video is
	// read at about 3 MB per frame, for minutes).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBytes is the size limit of one input: 256 GiB, about 23
	// minutes of 1080p60 8-bit 4:2:0 raw video (3.1 MB a frame), far more
	// than a VMAF test clip.
	DefaultMaxBytes = 256 << 30
	// DefaultAttempts is the number of requests sent for one input, first
	// try, retries and resumes together.
	DefaultAttempts = 5
	// DefaultBackoff is the wait before the first retry; it doubles on each
	// retry up to DefaultMaxBackoff (0.5, 1, 2, 4 s: about 7.5 s in all with
	// the defaults), each wait drawn from its upper half at random.
	DefaultBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff = 10 * time.Second
)

// maxRetryAfter caps the wait a server asks for with Retry-After, so that a
// job is not parked for an hour by one header.
const maxRetryAfter = 30 * time.Second

// HTTPOptions configures NewHTTP. Zero fields take the defaults above.
type HTTPOptions struct {
	Timeout time.Duration
	// MaxBytes is the size limit of one object; negative means no limit.
	MaxBytes int64
	// Attempts is the number of requests per object, at least 1.
	Attempts   int
	Backoff    time.Duration
	MaxBackoff time.Duration
	// UserAgent is sent with every request.
	UserAgent string
	// Redirects says which redirects are followed.
	Redirects RedirectPolicy
	// lookup resolves a host name and dial connects to an address, for the dials to a
	// URI's own host; nil: the system's. Tests set a name that re-resolves.
	lookup func(context.Context, string) ([]netip.Addr, error)
	dial   func(ctx context.Context, network, address string) (net.Conn, error)
}

// HTTP fetches http:// and https:// URIs. It is safe for concurrent use.
type HTTP struct {
	opts HTTPOptions
	// client sends the first request for a URI; hops sends the requests that
	// follow redirects, on connections whose address the policy checked.
	// Neither follows redirects itself: request does, hop by hop.
	client, hops *http.Client
	proxy        func(*http.Request) (*url.URL, error)
}

// NewHTTP returns an HTTP fetcher. It honours the usual proxy variables
// (HTTPS_PROXY, NO_PROXY, ...).
func NewHTTP(o HTTPOptions) *HTTP {
	o = o.withDefaults()
	transport := func(d *net.Dialer) *http.Transport {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = d.DialContext
		t.TLSHandshakeTimeout = o.Timeout
		t.ResponseHeaderTimeout = o.Timeout
		// Byte offsets must be those of the object for Range resumes, so no
		// transparent gzip.
		t.DisableCompression = true
		return t
	}
	noFollow := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	t := transport(&net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second})
	dial, lookup := o.dial, o.lookup
	if dial == nil {
		dial = (&net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}).DialContext
	}
	if lookup == nil {
		lookup = defaultLookup
	}
	t.DialContext = o.Redirects.guardedDial(dial, lookup)
	// A separate pool for redirect hops: its connections were all checked
	// when they were made, and a hop never reuses one that was not.
	ht := transport(&net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second, ControlContext: o.Redirects.control})
	return &HTTP{opts: o, proxy: t.Proxy,
		client: &http.Client{Transport: t, CheckRedirect: noFollow},
		hops:   &http.Client{Transport: ht, CheckRedirect: noFollow},
	}
}

// withDefaults returns o with its zero fields set to the defaults.
func (o HTTPOptions) withDefaults() HTTPOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	return o
}

// backoff is the wait after tries requests: doubling from Backoff up to
// MaxBackoff, drawn from the upper half at random.
func (o HTTPOptions) backoff(tries int) time.Duration {
	d := o.Backoff << min(tries-1, 30)
	if d <= 0 || d > o.MaxBackoff {
		d = o.MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits for d or until ctx ends, and then returns ctx's error.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// proxied reports whether req goes through a proxy (HTTPS_PROXY and co).
func (h *HTTP) proxied(req *http.Request) bool {
	if h.proxy == nil {
		return false
	}
	p, err := h.proxy(req)
	return err == nil && p != nil
}

// Open sends a GET for u and returns its body as a stream. Connection
// errors, timeouts, 5xx and 429 responses are retried with backoff; other
// responses are not. A body that breaks off is resumed with a Range request
// when the server advertised byte ranges and a validator (ETag or
// Last-Modified) for the object; else the read fails.
func (h *HTTP) Open(ctx context.Context, u *url.URL) (*Object, error) {
	// One guard for every dial of this object: retries, resumes and redirects back to
	// its host (pin.go).
	b := &body{h: h, ctx: withHostGuard(ctx), u: u, size: -1}
	if err := b.connect(nil); err != nil {
		return nil, err
	}
	return &Object{ReadCloser: b, Size: b.size}, nil
}

// retryable is a failure worth another request.
type retryable struct {
	err   error
	after time.Duration // the server's Retry-After, or 0
}

func (r *retryable) Error() string { return r.err.Error() }

// errStalled is the cause given to a request's context when a body read
// waited longer than the timeout.
var errStalled = errors.New("stalled")

// body is an Object's stream: one response body at a time, replaced by a
// Range request when a transfer breaks.
type body struct {
	h   *HTTP
	ctx context.Context
	u   *url.URL

	resp   *http.Response // nil between requests
	cancel context.CancelCauseFunc
	rctx   context.Context
	timer  *time.Timer // cancels rctx when a read stalls

	tries     int
	off       int64 // bytes delivered to the reader
	size      int64 // object size, or -1
	ranges    bool  // the server takes Range requests for this object
	validator string
	broken    *retryable // why the last transfer broke off, until retried
	err       error      // sticky: io.EOF or the final failure
}

// connect sends requests until one returns a usable response, sleeping
// before each retry; prev is the failure that made it necessary (nil for
// the first request).
func (b *body) connect(prev *retryable) error {
	for {
		if prev != nil {
			if b.tries >= b.h.opts.Attempts {
				return fail(b.u, fmt.Errorf("%w (gave up after %d attempts)", prev.err, b.tries))
			}
			wait := max(b.h.opts.backoff(b.tries), min(prev.after, maxRetryAfter))
			logr.FromContextOrDiscard(b.ctx).Info("Retrying fetch", "uri", Redact(b.u), "attempt", b.tries+1, "wait", wait, "err", prev.err.Error())
			if err := sleep(b.ctx, wait); err != nil {
				return err
			}
		}
		b.tries++
		err := b.request()
		if err == nil {
			return nil
		}
		if !errors.As(err, &prev) {
			return err
		}
	}
}

// request sends one GET, from b.off, and keeps its response when usable.
// Failures are *retryable, *Error, or the context's error.
func (b *body) request() error {
	rctx, cancel := context.WithCancelCause(b.ctx)
	resp, err := b.follow(rctx)
	if err != nil {
		cancel(nil)
		return err
	}
	fresh := b.off == 0
	switch {
	case fresh && resp.StatusCode == http.StatusOK:
		b.size = resp.ContentLength
		if b.h.opts.MaxBytes >= 0 && b.size > b.h.opts.MaxBytes {
			discard(resp, cancel)
			return fail(b.u, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, b.size, b.h.opts.MaxBytes))
		}
		b.validator = validator(resp.Header)
		b.ranges = resp.Header.Get("Accept-Ranges") == "bytes" && b.validator != "" && b.size >= 0
	case !fresh && resp.StatusCode == http.StatusPartialContent:
		if start, ok := rangeStart(resp.Header.Get("Content-Range")); !ok || start != b.off {
			discard(resp, cancel)
			return fail(b.u, fmt.Errorf("resuming at byte %d: server sent range %q", b.off, resp.Header.Get("Content-Range")))
		}
	case !fresh && resp.StatusCode == http.StatusOK:
		discard(resp, cancel)
		return fail(b.u, fmt.Errorf("resuming at byte %d: the object changed since the transfer began", b.off))
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		discard(resp, cancel)
		return &retryable{err: fmt.Errorf("HTTP %s", resp.Status), after: retryAfter(resp.Header.Get("Retry-After"))}
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		discard(resp, cancel)
		return fail(b.u, fmt.Errorf("%w: HTTP %s", ErrNotFound, resp.Status))
	default:
		discard(resp, cancel)
		return fail(b.u, fmt.Errorf("HTTP %s", resp.Status))
	}
	b.resp, b.rctx, b.cancel = resp, rctx, cancel
	timeout := b.h.opts.Timeout
	b.timer = time.AfterFunc(timeout, func() { cancel(errStalled) })
	b.timer.Stop()
	return nil
}

// follow sends the GET and follows redirects that the policy allows, hop by hop.
func (b *body) follow(rctx context.Context) (*http.Response, error) {
	target := b.u
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, target.String(), nil)
		if err != nil {
			return nil, fail(b.u, err)
		}
		req.Header.Set("Accept-Encoding", "identity")
		if b.h.opts.UserAgent != "" {
			req.Header.Set("User-Agent", b.h.opts.UserAgent)
		}
		if b.off > 0 {
			req.Header.Set("Range", "bytes="+strconv.FormatInt(b.off, 10)+"-")
			req.Header.Set("If-Range", b.validator)
		}
		// The URI's own host is the user's choice, wherever it is; other hosts
		// reached by redirects go through the policy's checked pool.
		client := b.h.client
		if !sameHost(target, b.u) && !b.h.proxied(req) {
			client = b.h.hops
		}
		resp, err := client.Do(req)
		if err != nil {
			if b.ctx.Err() != nil {
				return nil, b.ctx.Err()
			}
			if refused := (*refusedError)(nil); errors.As(err, &refused) {
				// The dialer refused the address a host name resolved to.
				return nil, fail(b.u, fmt.Errorf("to %s: %w", Redact(target), refused))
			}
			return nil, b.transportFailure(err)
		}
		if !isRedirect(resp.StatusCode) {
			return resp, nil
		}
		loc, err := resp.Location()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // drain for connection reuse
		resp.Body.Close()
		switch {
		case err != nil:
			return nil, fail(b.u, fmt.Errorf("HTTP %s without a valid Location", resp.Status))
		case hop == maxRedirects:
			return nil, fail(b.u, fmt.Errorf("stopped after %d redirects", maxRedirects))
		}
		if err := b.h.opts.Redirects.checkHop(rctx, target, loc, sameHost(loc, b.u), b.h.proxied(req)); err != nil {
			return nil, fail(b.u, err)
		}
		target = loc
	}
}

// transportFailure classifies an error from sending a request: TLS
// certificate errors are final, everything else (refused, reset, DNS,
// timeouts) is retried.
func (b *body) transportFailure(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // without the URI, which may hold credentials
	}
	if isCertError(err) {
		return fail(b.u, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &retryable{err: fmt.Errorf("%w: no response within %v", ErrTimeout, b.h.opts.Timeout)}
	}
	return &retryable{err: errors.New(describe(err))}
}

// isCertError reports whether err is a TLS certificate verification
// failure, which no retry fixes.
func isCertError(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

// Read reads from the current response, resuming a broken transfer when it can.
func (b *body) Read(p []byte) (int, error) {
	for {
		if b.err != nil {
			return 0, b.err
		}
		if b.resp == nil {
			if err := b.connect(b.pending()); err != nil {
				b.err = err
				return 0, err
			}
		}
		b.timer.Reset(b.h.opts.Timeout)
		n, err := b.resp.Body.Read(p)
		b.timer.Stop()
		b.off += int64(n)
		if limit := b.h.opts.MaxBytes; limit >= 0 && b.off > limit {
			b.release()
			b.err = fail(b.u, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit))
			return 0, b.err
		}
		if err == nil {
			return n, nil
		}
		if errors.Is(err, io.EOF) && (b.size < 0 || b.off >= b.size) {
			b.release()
			b.err = io.EOF
			return n, io.EOF
		}
		stalled := errors.Is(context.Cause(b.rctx), errStalled)
		b.release()
		if b.ctx.Err() != nil {
			b.err = b.ctx.Err()
			return n, nil
		}
		lost := b.lost(err, stalled)
		if !b.ranges && b.off > 0 {
			b.err = fail(b.u, lost)
			return n, nil
		}
		b.broken = &retryable{err: lost}
		if n > 0 {
			return n, nil
		}
	}
}

// lost describes a transfer that broke off.
func (b *body) lost(err error, stalled bool) error {
	total := "?"
	if b.size >= 0 {
		total = strconv.FormatInt(b.size, 10)
	}
	if stalled {
		return fmt.Errorf("%w: no data for %v after %d of %s bytes", ErrTimeout, b.h.opts.Timeout, b.off, total)
	}
	return fmt.Errorf("connection lost after %d of %s bytes: %s", b.off, total, describe(err))
}

// pending returns and clears the failure that broke the last transfer.
func (b *body) pending() *retryable {
	r := b.broken
	b.broken = nil
	return r
}

// release closes the current response, if any.
func (b *body) release() {
	if b.resp == nil {
		return
	}
	b.timer.Stop()
	b.cancel(nil)
	b.resp.Body.Close()
	b.resp = nil
}

// Close ends the transfer.
func (b *body) Close() error {
	b.release()
	if b.err == nil {
		b.err = fail(b.u, errors.New("read after close"))
	}
	return nil
}

// discard drains a little of an unwanted response, so its connection can be
// reused, and closes it.
func discard(resp *http.Response, cancel context.CancelCauseFunc) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // drain for connection reuse
	resp.Body.Close()
	cancel(nil)
}

// validator returns the If-Range value for a response: a strong ETag, else
// Last-Modified, else "".
func validator(h http.Header) string {
	if e := h.Get("ETag"); e != "" && !strings.HasPrefix(e, "W/") {
		return e
	}
	return h.Get("Last-Modified")
}

// rangeStart parses the first byte of a Content-Range: "bytes 100-199/200".
func rangeStart(cr string) (int64, bool) {
	rest, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return 0, false
	}
	first, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(first, 10, 64)
	return n, err == nil
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// describe returns err's message without io.EOF's bare "EOF", which reads
// like a normal end.
func describe(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "connection closed by the server"
	}
	return err.Error()
}
