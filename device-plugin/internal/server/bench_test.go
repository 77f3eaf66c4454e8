package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/vmafx/vmafx/device-plugin/testing/fakekubelet"
)

// BenchmarkAllocate measures Allocate as the kubelet sees it: one single-slot request
// per iteration through the plugin's unix socket, gRPC marshalling both ways included.
// It reports the median and 99th percentile latency (target: p99 under 1 ms).
func BenchmarkAllocate(b *testing.B) {
	dir := fakekubelet.SocketDir(b)
	k := fakekubelet.Start(b, dir)
	s, _ := newServer(b, dir, twoGPUs())
	if err := s.Start(klog.NewContext(context.Background(), logr.Discard())); err != nil {
		b.Fatal(err)
	}
	reg, err := k.Registration(5 * time.Second)
	if err != nil {
		b.Fatal(err)
	}
	p := k.Connect(reg)
	ctx := context.Background()
	ids := []string{"nvidia-0-slot-0", "nvidia-0-slot-1", "nvidia-1-slot-0", "nvidia-1-slot-1"}
	reqs := make([]*pluginapi.AllocateRequest, len(ids))
	for i, id := range ids {
		reqs[i] = &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{id}}}}
	}
	// Warm the connection so the first dial is not measured.
	if _, err := p.Allocate(ctx, reqs[0]); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := p.Allocate(ctx, reqs[i%len(reqs)]); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(start)
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// reportPercentiles reports the median and 99th percentile in microseconds.
func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
