package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/config"
	"github.com/vmafx/vmafx/device-plugin/internal/discovery"
	"github.com/vmafx/vmafx/device-plugin/internal/health"
	"github.com/vmafx/vmafx/device-plugin/internal/heartbeat"
	"github.com/vmafx/vmafx/device-plugin/internal/metrics"
	"github.com/vmafx/vmafx/device-plugin/internal/podresources"
	"github.com/vmafx/vmafx/device-plugin/internal/server"
	"github.com/vmafx/vmafx/device-plugin/internal/slots"
	"github.com/vmafx/vmafx/internal/version"
)

// shutdownTimeout bounds the HTTP server's graceful stop.
const shutdownTimeout = 5 * time.Second

// Run runs the device plugin until ctx ends, then stops everything and removes its
// socket. It returns an error only when it cannot start (no devices of a configured
// vendor, a bad kubeconfig, a taken HTTP port); once serving, failures of the kubelet
// or of the API server are retried, never fatal.
func Run(ctx context.Context, cfg config.Config) error {
	logger := klog.FromContext(ctx)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), version.Collector())
	m := metrics.New(reg)

	inv, err := discovery.Discover(discovery.Options{
		Root: cfg.HostRoot, Vendor: cfg.Vendor, SlotsPerDevice: cfg.SlotsPerDevice,
		CPUsPerSlot: cfg.CPUsPerSlot, CPUSlots: cfg.CPUSlots,
	})
	if err != nil {
		return fmt.Errorf("discovering devices: %w", err)
	}
	names := make([]string, 0, len(inv.Devices))
	for _, d := range inv.Devices {
		names = append(names, d.Name())
	}
	logger.Info("Discovered devices", "vendor", inv.Vendor, "devices", names, "slots", inv.Capacity(), "description", inv.Description(), "cpus", inv.CPUs)
	for _, d := range inv.Ignored {
		logger.Info("Not offering a device of another vendor: one resource name can serve one vendor per node", "device", d.Name(), "pci", d.PCIAddress)
	}

	cdiKind := ""
	if cfg.CDI {
		cdiKind = cfg.CDIKind
		if cdiKind == "" {
			cdiKind = slots.DefaultCDIKind(inv.Vendor)
		}
	}
	selfTestDir := prepareSelfTestDirs(logger, cfg.SelfTestDir, inv.Devices)
	set := slots.New(inv.Devices, slots.Options{CDIKind: cdiKind, SelfTestDir: selfTestDir})
	watcher := health.New(inv.Devices, set, health.Options{
		Root: cfg.HostRoot, Interval: cfg.HealthCheckInterval, RecoveryDelay: cfg.RecoveryDelay, Metrics: m,
		SelfTestDir: selfTestDir,
	})
	// The first list the kubelet sees is already true.
	watcher.Check(ctx)
	srv := server.New(set, server.Options{Dir: cfg.DevicePluginDir, ResourceName: vmafxv1.ResourceSlot, Metrics: m})

	a := &agent{set: set, metrics: m}
	if cfg.PodResourcesSocket != "" {
		a.podResources = podresources.New(cfg.PodResourcesSocket, vmafxv1.ResourceSlot)
		defer func() { _ = a.podResources.Close() }()
	}
	var hb *heartbeat.Heartbeat
	if cfg.HeartbeatInterval > 0 {
		c, err := newClient(cfg.Kubeconfig)
		if err != nil {
			return err
		}
		hb = heartbeat.New(c, a.counts, heartbeat.Options{
			Namespace: cfg.Namespace, NodeName: cfg.NodeName, Interval: cfg.HeartbeatInterval,
			StatusHeartbeatFor: cfg.StatusHeartbeatFor, StatusReportPeriod: cfg.StatusReportPeriod,
			Spec:    vmafxv1.VmafxNodeSpec{GPUVendor: inv.Vendor, Capacity: int32(inv.Capacity()), Image: cfg.WorkerImage},
			Device:  inv.Description(),
			Metrics: m,
		})
	}
	var httpServer *http.Server
	var httpListener net.Listener
	if cfg.HTTPAddress != "" {
		httpListener, err = net.Listen("tcp", cfg.HTTPAddress)
		if err != nil {
			return fmt.Errorf("serving metrics and probes: %w", err)
		}
		httpServer = &http.Server{Handler: handler(reg, srv), ReadHeaderTimeout: 5 * time.Second}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	goRun := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	goRun(func() { watcher.Run(ctx) })
	goRun(func() { a.publish(ctx, hb, cfg.HeartbeatInterval) })
	if hb != nil {
		goRun(func() { hb.Run(ctx) })
	}
	if httpServer != nil {
		logger.Info("Serving metrics and probes", "address", httpListener.Addr().String())
		goRun(func() {
			if err := httpServer.Serve(httpListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error(err, "Metrics and probes server ended")
			}
		})
		goRun(func() {
			<-ctx.Done()
			sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			defer scancel()
			_ = httpServer.Shutdown(sctx)
		})
	}
	err = newSupervisor(srv, cfg.DevicePluginDir).run(ctx)
	cancel()
	wg.Wait()
	logger.Info("Device plugin stopped")
	return err
}

// agent holds what the background loops share.
type agent struct {
	set          *slots.Set
	metrics      *metrics.Metrics
	podResources *podresources.Reader

	podResourcesFailing atomic.Bool
}

// counts returns the slots by state and updates the slot gauges. Allocated slots come
// from the kubelet's PodResources API; when it cannot answer, they are unknown.
func (a *agent) counts(ctx context.Context) heartbeat.Counts {
	total, healthy := a.set.Counts()
	c := heartbeat.Counts{Total: int32(total), Healthy: int32(healthy)}
	a.metrics.Slots.WithLabelValues(metrics.StateHealthy).Set(float64(healthy))
	a.metrics.Slots.WithLabelValues(metrics.StateUnhealthy).Set(float64(total - healthy))
	if a.podResources == nil {
		return c
	}
	logger := klog.FromContext(ctx)
	ids, err := a.podResources.Allocated(ctx)
	if err != nil {
		if !a.podResourcesFailing.Swap(true) {
			logger.Info("Cannot count allocated slots from the kubelet's PodResources API", "err", err)
		}
		return c
	}
	if a.podResourcesFailing.Swap(false) {
		logger.Info("Counting allocated slots from the kubelet's PodResources API again")
	}
	c.Allocated, c.AllocatedKnown = int32(len(ids)), true
	a.metrics.Slots.WithLabelValues(metrics.StateAllocated).Set(float64(len(ids)))
	return c
}

// publishPeriod refreshes the slot gauges when no heartbeat does.
const publishPeriod = 10 * time.Second

// publish keeps the slot gauges current and asks for an early heartbeat after every
// health change, so the scheduler learns of lost slots without waiting a period.
func (a *agent) publish(ctx context.Context, hb *heartbeat.Heartbeat, heartbeatInterval time.Duration) {
	var tick <-chan time.Time
	if hb == nil {
		t := time.NewTicker(publishPeriod)
		defer t.Stop()
		tick = t.C
	}
	for {
		_, changed := a.set.List()
		a.counts(ctx)
		select {
		case <-ctx.Done():
			return
		case <-changed:
			if hb != nil {
				hb.Trigger()
			}
		case <-tick:
		}
	}
}

// handler serves /metrics, /healthz (the process answers) and /readyz (registered
// with the kubelet).
func handler(reg *prometheus.Registry, srv *server.Server) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !srv.Registered() {
			http.Error(w, "not registered with the kubelet\n", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// newClient returns an API client from a kubeconfig, or in-cluster without one. It
// does not contact the API server: the plugin must start while it is unreachable.
func newClient(kubeconfig string) (client.Client, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("API server configuration: %w", err)
	}
	cfg.UserAgent = "vmafx-device-plugin"
	scheme := runtime.NewScheme()
	if err := vmafxv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("API client: %w", err)
	}
	return c, nil
}
