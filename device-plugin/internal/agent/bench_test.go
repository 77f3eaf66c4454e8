package agent

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/config"
	"github.com/vmafx/vmafx/device-plugin/internal/discovery"
	"github.com/vmafx/vmafx/device-plugin/internal/health"
	"github.com/vmafx/vmafx/device-plugin/internal/metrics"
	"github.com/vmafx/vmafx/device-plugin/internal/server"
	"github.com/vmafx/vmafx/device-plugin/internal/slots"
	"github.com/vmafx/vmafx/device-plugin/testing/fakehost"
	"github.com/vmafx/vmafx/device-plugin/testing/fakekubelet"
)

// BenchmarkDeviceLossToListAndWatch measures, per iteration, the time from a device
// disappearing to the kubelet side of ListAndWatch receiving the list with that
// device's slots Unhealthy (target: under 1 s), with the default health check
// interval. node-removed removes /dev/nvidia0, which fsnotify reports; sysfs-gone makes
// sysfs read vendor 0xffff, which only the periodic check sees. The device then comes
// back (recovery delay 0) before the next iteration. It reports the median and 99th
// percentile in milliseconds.
func BenchmarkDeviceLossToListAndWatch(b *testing.B) {
	pci := fakehost.NVIDIA(0).PCI
	b.Run("node-removed", func(b *testing.B) {
		benchmarkLoss(b, func(h *fakehost.Host) { h.Remove("/dev/nvidia0") }, func(h *fakehost.Host) { h.Create("/dev/nvidia0") })
	})
	b.Run("sysfs-gone", func(b *testing.B) {
		benchmarkLoss(b, func(h *fakehost.Host) { h.SetVendor(pci, fakehost.VendorGone) }, func(h *fakehost.Host) { h.SetVendor(pci, fakehost.VendorNVIDIA) })
	})
}

func benchmarkLoss(b *testing.B, lose, restore func(*fakehost.Host)) {
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	defer cancel()
	h := fakehost.New(b, 8)
	h.AddGPU(fakehost.NVIDIA(0))
	h.AddGPU(fakehost.NVIDIA(1))
	inv, err := discovery.Discover(discovery.Options{Root: h.Root, Vendor: "auto", SlotsPerDevice: 4, CPUsPerSlot: 2})
	if err != nil {
		b.Fatal(err)
	}
	set := slots.New(inv.Devices, slots.Options{})
	w := health.New(inv.Devices, set, health.Options{Root: h.Root, Interval: config.DefaultHealthCheckInterval})
	go w.Run(ctx)
	dir := fakekubelet.SocketDir(b)
	k := fakekubelet.Start(b, dir)
	srv := server.New(set, server.Options{Dir: dir, ResourceName: vmafxv1.ResourceSlot, Metrics: metrics.Discard()})
	if err := srv.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = srv.Stop() }()
	reg, err := k.Registration(5 * time.Second)
	if err != nil {
		b.Fatal(err)
	}
	lists, err := k.Connect(reg).Watch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	// waitFor reads lists until slot 0 of nvidia-0 has the wanted health.
	waitFor := func(health string) {
		timeout := time.After(10 * time.Second)
		for {
			select {
			case l := <-lists:
				if l[0].ID == "nvidia-0-slot-0" && l[0].Health == health {
					return
				}
			case <-timeout:
				b.Fatalf("nvidia-0 not %s within 10 s", health)
			}
		}
	}
	waitFor(pluginapi.Healthy)
	lat := make([]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		lose(h)
		waitFor(pluginapi.Unhealthy)
		lat[i] = time.Since(start)
		b.StopTimer()
		restore(h)
		waitFor(pluginapi.Healthy)
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
