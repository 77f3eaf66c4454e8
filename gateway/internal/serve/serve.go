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
}

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
// shuts down. ready, when set, is asked by /readyz.
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
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
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
	doorSrv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return base }}
	probeSrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

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
	logger.Info("Shutting down", "timeout", opts.ShutdownTimeout)
	stopping.Store(true)
	cancelBase()
	sctx, cancel := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
	defer cancel()
	err := errors.Join(serveErr, doorSrv.Shutdown(sctx), probeSrv.Shutdown(sctx))
	if err == nil {
		logger.Info("Stopped")
	}
	return err
}

// LatencyBuckets are the request-latency histogram buckets of both front doors: from 5 ms
// (a cached get) to 10 min (the longest wait).
var LatencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
