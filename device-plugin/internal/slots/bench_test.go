package slots

import (
	"testing"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/vmafx/vmafx/device-plugin/internal/discovery"
)

// BenchmarkAllocate is the plugin's own share of an Allocate call: validation and the
// precomputed response, without gRPC (compare server.BenchmarkAllocate).
func BenchmarkAllocate(b *testing.B) {
	s := New([]discovery.Device{nvidia(0, 4), nvidia(1, 4)}, Options{CDIKind: "nvidia.com/gpu"})
	req := &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"nvidia-1-slot-2"}}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Allocate(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPreferred chooses one slot on a node of 8 GPUs x 4 slots, half taken.
func BenchmarkPreferred(b *testing.B) {
	var devs []discovery.Device
	var avail []string
	for i := 0; i < 8; i++ {
		d := nvidia(i, 4)
		devs = append(devs, d)
		for k := i % 2; k < 4; k += 2 {
			avail = append(avail, d.SlotID(k))
		}
	}
	s := New(devs, Options{})
	req := &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{AvailableDeviceIDs: avail, AllocationSize: 1}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Preferred(req); err != nil {
			b.Fatal(err)
		}
	}
}
