package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"

	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/internal/version"
)

// Options say where and how to listen.
type Options struct {
	// Addr is the door's address (host:port).
	Addr string
	// ProbeAddr serves /healthz, /readyz and /metrics.
	ProbeAddr string
	// TLSCertFile and TLSKeyFile, when both set, serve the door over TLS; the files are
	// read again for every handshake after they change (a renewed Secret needs no restart).
	TLSCertFile, TLSKeyFile string
	// ShutdownTimeout bounds how long in-flight requests may take after SIGTERM.
	ShutdownTimeout time.Duration
	// DrainPeriod is how long the door keeps serving after SIGTERM with /readyz failing,
	// so that the endpoints controller and the load balancers stop sending it requests
	// before it stops accepting them.
	DrainPeriod time.Duration
	// ReadTimeout bounds reading a request, headers and body: a body dripped a byte at a
	// time cannot hold a connection and its goroutine longer.
	ReadTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends no request for this long.
	IdleTimeout time.Duration
	// RequestTimeout is a request's deadline for its answer; a long poll or an event
	// stream extends its own (Extend).
	RequestTimeout time.Duration
}

// MaxHeaderBytes bounds a request's headers: a bearer token is a few KiB.
const MaxHeaderBytes = 64 << 10

// MaxBodyBytes bounds a request's body: a job spec is a few hundred bytes and an MCP
// call with 32 distorted URIs under 100 KiB.
const MaxBodyBytes = 1 << 20

// Extend moves the deadline of the request that w answers to d from now: for a handler
// that waits or streams for longer than the server's RequestTimeout. (ReadTimeout
// bounds reading the request only: a test checks that its passing ends no stream.)
func Extend(w http.ResponseWriter, d time.Duration) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
}

// guard names the client (its remote host) in the request's context for the rate limit
// of token reviews, bounds every request's body and closes the connection after a refusal (401, 403,
// 413, 429) without reading the rest of its body: net/http would otherwise read up to
// 256 KiB of it, which a client can drip for as long as ReadTimeout allows.
func guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		client, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			client = r.RemoteAddr
		}
		r = r.WithContext(access.WithClient(r.Context(), client))
		h.ServeHTTP(&closeOnRefusal{ResponseWriter: w, body: r.ContentLength != 0}, r)
	})
}

type closeOnRefusal struct {
	http.ResponseWriter
	body  bool
	wrote bool
}

func (c *closeOnRefusal) WriteHeader(code int) {
	if !c.wrote {
		c.wrote = true
		switch code {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
			c.Header().Set("Connection", "close")
			if c.body {
				// What is left of the body is never read: reading it fails at once.
				_ = http.NewResponseController(c.ResponseWriter).SetReadDeadline(time.Now())
			}
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *closeOnRefusal) Write(b []byte) (int, error) {
	c.wrote = true
	return c.ResponseWriter.Write(b)
}

// Flush lets event streams through.
func (c *closeOnRefusal) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *closeOnRefusal) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// NewRegistry returns a registry with the Go and process collectors and vmafx_build_info.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), version.Collector())
	return reg
}

// Listen opens both listeners.
func Listen(opts Options) (door, probe net.Listener, err error) {
	door, err = net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, nil, err
	}
	probe, err = net.Listen("tcp", opts.ProbeAddr)
	if err != nil {
		return nil, nil, errors.Join(err, door.Close())
	}
	return door, probe, nil
}

// Serve serves h on door and the probes and reg's metrics on probe until ctx ends, then
// drains and shuts down. ready, when set, is the readiness that /readyz reports: a
// function that returns at once (Readiness), since anyone who reaches the probe port can
// ask it.
func Serve(ctx context.Context, opts Options, door, probe net.Listener, h http.Handler, reg *prometheus.Registry, ready func(context.Context) error) error {
	logger := klog.FromContext(ctx)
	var stopping atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if stopping.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		if ready != nil {
			if err := ready(r.Context()); err != nil {
				http.Error(w, "not ready: the API server did not answer the last check (see the log)", http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))

	// Requests' contexts derive from base: cancelling it on shutdown makes long polls and
	// event streams answer at once instead of holding Shutdown for minutes.
	base, cancelBase := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancelBase()
	doorSrv := &http.Server{
		Handler:           guard(h),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       opts.ReadTimeout,
		WriteTimeout:      opts.RequestTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	probeSrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: time.Minute, MaxHeaderBytes: MaxHeaderBytes}

	errs := make(chan error, 2)
	tlsOn := opts.TLSCertFile != "" && opts.TLSKeyFile != ""
	if tlsOn {
		certs, err := newCertLoader(opts.TLSCertFile, opts.TLSKeyFile)
		if err != nil {
			return errors.Join(err, door.Close(), probe.Close())
		}
		doorSrv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.get}
	}
	go func() {
		var err error
		if tlsOn {
			err = doorSrv.ServeTLS(door, "", "")
		} else {
			err = doorSrv.Serve(door)
		}
		errs <- err
	}()
	go func() { errs <- probeSrv.Serve(probe) }()
	logger.Info("Serving", "address", door.Addr().String(), "tls", tlsOn, "probeAddress", probe.Addr().String())

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errs:
		serveErr = fmt.Errorf("serving: %w", serveErr)
	}
	stopping.Store(true)
	if serveErr == nil && opts.DrainPeriod > 0 {
		// /readyz fails from now; the door serves on while the Pod leaves its Services.
		logger.Info("Draining", "period", opts.DrainPeriod)
		time.Sleep(opts.DrainPeriod)
	}
	logger.Info("Shutting down", "timeout", opts.ShutdownTimeout)
	cancelBase()
	sctx, cancel := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
	defer cancel()
	err := errors.Join(serveErr, doorSrv.Shutdown(sctx), probeSrv.Shutdown(sctx))
	if err == nil {
		logger.Info("Stopped")
	}
	return err
}

// Readiness runs check now and then every period until ctx ends, logging each change,
// and returns a readiness function that reports the last result without calling check:
// /readyz costs the API server nothing however often it is asked.
func Readiness(ctx context.Context, check func(context.Context) error, period time.Duration) func(context.Context) error {
	logger := klog.FromContext(ctx)
	var last atomic.Pointer[error]
	notYet := errors.New("not checked yet")
	last.Store(&notYet)
	run := func() {
		cctx, cancel := context.WithTimeout(ctx, period)
		defer cancel()
		err := check(cctx)
		if prev := *last.Load(); (prev == nil) != (err == nil) {
			if err != nil {
				logger.Error(err, "Not ready")
			} else {
				logger.Info("Ready")
			}
		}
		last.Store(&err)
	}
	run()
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				run()
			}
		}
	}()
	return func(context.Context) error { return *last.Load() }
}

// LatencyBuckets are the request-latency histogram buckets of both front doors: from 5 ms
// (a cached get) to 10 min (the longest wait).
var LatencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
