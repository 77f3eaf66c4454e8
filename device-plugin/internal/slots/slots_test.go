package slots

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/discovery"
)

func nvidia(index, slots int) discovery.Device {
	return discovery.Device{
		Vendor: vmafxv1.VendorNVIDIA, Index: index, Slots: slots,
		Nodes: []discovery.Node{
			{Path: "/dev/nvidia" + string(rune('0'+index))}, {Path: "/dev/nvidiactl"}, {Path: "/dev/nvidia-uvm"},
		},
	}
}

func amd(index, slots int) discovery.Device {
	return discovery.Device{
		Vendor: vmafxv1.VendorAMD, Index: index, Slots: slots,
		Nodes: []discovery.Node{{Path: "/dev/dri/renderD" + string(rune('0'+index)) + "28"}, {Path: "/dev/kfd"}},
	}
}

func spec(path string) *pluginapi.DeviceSpec {
	return &pluginapi.DeviceSpec{ContainerPath: path, HostPath: path, Permissions: "rw"}
}

func TestList(t *testing.T) {
	s := New([]discovery.Device{nvidia(0, 2), nvidia(1, 2)}, Options{})
	list, changed := s.List()
	want := []*pluginapi.Device{
		{ID: "nvidia-0-slot-0", Health: pluginapi.Healthy}, {ID: "nvidia-0-slot-1", Health: pluginapi.Healthy},
		{ID: "nvidia-1-slot-0", Health: pluginapi.Healthy}, {ID: "nvidia-1-slot-1", Health: pluginapi.Healthy},
	}
	if diff := cmp.Diff(want, list, protocmp.Transform()); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}

	if s.SetHealth("nvidia-1", true, "") {
		t.Error("SetHealth(healthy) on a healthy device reported a change")
	}
	select {
	case <-changed:
		t.Fatal("change signalled without a change")
	default:
	}
	if !s.SetHealth("nvidia-1", false, "device node /dev/nvidia1 missing") {
		t.Error("SetHealth(unhealthy) reported no change")
	}
	select {
	case <-changed:
	default:
		t.Fatal("no change signalled")
	}
	list2, _ := s.List()
	want[2].Health, want[3].Health = pluginapi.Unhealthy, pluginapi.Unhealthy
	if diff := cmp.Diff(want, list2, protocmp.Transform()); diff != "" {
		t.Errorf("List after nvidia-1 went unhealthy (-want +got):\n%s", diff)
	}
	if list[2].Health != pluginapi.Healthy {
		t.Error("a published list was modified")
	}
	if total, healthy := s.Counts(); total != 4 || healthy != 2 {
		t.Errorf("Counts() = %d, %d, want 4, 2", total, healthy)
	}
	if s.Healthy("nvidia-1") || !s.Healthy("nvidia-0") {
		t.Error("Healthy() disagrees with SetHealth")
	}
}

func TestAllocate(t *testing.T) {
	tests := []struct {
		name      string
		devs      []discovery.Device
		opts      Options
		unhealthy string
		ids       [][]string
		want      []*pluginapi.ContainerAllocateResponse
		wantErr   error
	}{
		{
			name: "one slot",
			devs: []discovery.Device{nvidia(0, 4), nvidia(1, 4)},
			ids:  [][]string{{"nvidia-1-slot-2"}},
			want: []*pluginapi.ContainerAllocateResponse{{
				Envs:    map[string]string{"VMAFX_BACKEND": "cuda", "VMAFX_DEVICE": "nvidia-1", "VMAFX_SLOTS": "nvidia-1-slot-2", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility,graphics"},
				Devices: []*pluginapi.DeviceSpec{spec("/dev/nvidia1"), spec("/dev/nvidiactl"), spec("/dev/nvidia-uvm")},
			}},
		},
		{
			name: "two slots of one device, with CDI",
			devs: []discovery.Device{amd(0, 4)},
			opts: Options{CDIKind: "amd.com/gpu"},
			ids:  [][]string{{"amd-0-slot-3", "amd-0-slot-1"}},
			want: []*pluginapi.ContainerAllocateResponse{{
				Envs:       map[string]string{"VMAFX_BACKEND": "hip", "VMAFX_DEVICE": "amd-0", "VMAFX_SLOTS": "amd-0-slot-1,amd-0-slot-3"},
				Devices:    []*pluginapi.DeviceSpec{spec("/dev/dri/renderD028"), spec("/dev/kfd")},
				CdiDevices: []*pluginapi.CDIDevice{{Name: "amd.com/gpu=0"}},
			}},
		},
		{
			name: "slots on two devices share common nodes once",
			devs: []discovery.Device{amd(0, 2), amd(1, 2)},
			opts: Options{CDIKind: "amd.com/gpu"},
			ids:  [][]string{{"amd-1-slot-0", "amd-0-slot-1"}},
			want: []*pluginapi.ContainerAllocateResponse{{
				Envs:       map[string]string{"VMAFX_BACKEND": "hip", "VMAFX_DEVICE": "amd-0,amd-1", "VMAFX_SLOTS": "amd-0-slot-1,amd-1-slot-0"},
				Devices:    []*pluginapi.DeviceSpec{spec("/dev/dri/renderD028"), spec("/dev/kfd"), spec("/dev/dri/renderD128")},
				CdiDevices: []*pluginapi.CDIDevice{{Name: "amd.com/gpu=0"}, {Name: "amd.com/gpu=1"}},
			}},
		},
		{
			name: "cpu slot",
			devs: []discovery.Device{{Vendor: vmafxv1.VendorCPU, Slots: 2}},
			opts: Options{CDIKind: "ignored.example.com/x"},
			ids:  [][]string{{"cpu-0-slot-1"}},
			want: []*pluginapi.ContainerAllocateResponse{{
				Envs: map[string]string{"VMAFX_BACKEND": "cpu", "VMAFX_DEVICE": "cpu", "VMAFX_SLOTS": "cpu-0-slot-1"},
			}},
		},
		{
			name: "self-test verdict directory of the slot's device",
			devs: []discovery.Device{nvidia(0, 4), nvidia(1, 4)},
			opts: Options{SelfTestDir: "/run/vmafx/selftest"},
			ids:  [][]string{{"nvidia-1-slot-2"}},
			want: []*pluginapi.ContainerAllocateResponse{{
				Envs: map[string]string{"VMAFX_BACKEND": "cuda", "VMAFX_DEVICE": "nvidia-1", "VMAFX_SLOTS": "nvidia-1-slot-2", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility,graphics",
					"VMAFX_SELFTEST_DIR": "/run/vmafx/selftest"},
				Devices: []*pluginapi.DeviceSpec{spec("/dev/nvidia1"), spec("/dev/nvidiactl"), spec("/dev/nvidia-uvm")},
				Mounts:  []*pluginapi.Mount{{ContainerPath: "/run/vmafx/selftest/nvidia-1", HostPath: "/run/vmafx/selftest/nvidia-1"}},
			}},
		},
		{
			name: "self-test verdict directories of two devices",
			devs: []discovery.Device{amd(0, 2), amd(1, 2)},
			opts: Options{SelfTestDir: "/var/run/vmafx"},
			ids:  [][]string{{"amd-1-slot-0", "amd-0-slot-1"}},
			want: []*pluginapi.ContainerAllocateResponse{{
				Envs:    map[string]string{"VMAFX_BACKEND": "hip", "VMAFX_DEVICE": "amd-0,amd-1", "VMAFX_SLOTS": "amd-0-slot-1,amd-1-slot-0", "VMAFX_SELFTEST_DIR": "/run/vmafx/selftest"},
				Devices: []*pluginapi.DeviceSpec{spec("/dev/dri/renderD028"), spec("/dev/kfd"), spec("/dev/dri/renderD128")},
				Mounts: []*pluginapi.Mount{{ContainerPath: "/run/vmafx/selftest/amd-0", HostPath: "/var/run/vmafx/amd-0"},
					{ContainerPath: "/run/vmafx/selftest/amd-1", HostPath: "/var/run/vmafx/amd-1"}},
			}},
		},
		{
			name: "no self-test directory for a cpu slot",
			devs: []discovery.Device{{Vendor: vmafxv1.VendorCPU, Slots: 2}},
			opts: Options{SelfTestDir: "/run/vmafx/selftest"},
			ids:  [][]string{{"cpu-0-slot-1"}},
			want: []*pluginapi.ContainerAllocateResponse{{
				Envs: map[string]string{"VMAFX_BACKEND": "cpu", "VMAFX_DEVICE": "cpu", "VMAFX_SLOTS": "cpu-0-slot-1"},
			}},
		},
		{
			name: "two containers",
			devs: []discovery.Device{nvidia(0, 2)},
			ids:  [][]string{{"nvidia-0-slot-0"}, {"nvidia-0-slot-1"}},
			want: []*pluginapi.ContainerAllocateResponse{
				{
					Envs:    map[string]string{"VMAFX_BACKEND": "cuda", "VMAFX_DEVICE": "nvidia-0", "VMAFX_SLOTS": "nvidia-0-slot-0", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility,graphics"},
					Devices: []*pluginapi.DeviceSpec{spec("/dev/nvidia0"), spec("/dev/nvidiactl"), spec("/dev/nvidia-uvm")},
				},
				{
					Envs:    map[string]string{"VMAFX_BACKEND": "cuda", "VMAFX_DEVICE": "nvidia-0", "VMAFX_SLOTS": "nvidia-0-slot-1", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility,graphics"},
					Devices: []*pluginapi.DeviceSpec{spec("/dev/nvidia0"), spec("/dev/nvidiactl"), spec("/dev/nvidia-uvm")},
				},
			},
		},
		{name: "unknown slot", devs: []discovery.Device{nvidia(0, 4)}, ids: [][]string{{"nvidia-0-slot-4"}}, wantErr: ErrUnknownSlot},
		{name: "foreign id", devs: []discovery.Device{nvidia(0, 4)}, ids: [][]string{{"nvidia-0-slot-0"}, {"gpu-7"}}, wantErr: ErrUnknownSlot},
		{name: "unhealthy slot", devs: []discovery.Device{nvidia(0, 4), nvidia(1, 4)}, unhealthy: "nvidia-1", ids: [][]string{{"nvidia-0-slot-0", "nvidia-1-slot-0"}}, wantErr: ErrUnhealthySlot},
		{name: "slot twice", devs: []discovery.Device{nvidia(0, 4)}, ids: [][]string{{"nvidia-0-slot-0", "nvidia-0-slot-0"}}, wantErr: ErrInvalidRequest},
		{name: "no slots", devs: []discovery.Device{nvidia(0, 4)}, ids: [][]string{{}}, wantErr: ErrInvalidRequest},
		{name: "no containers", devs: []discovery.Device{nvidia(0, 4)}, wantErr: ErrInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.devs, tc.opts)
			if tc.unhealthy != "" {
				s.SetHealth(tc.unhealthy, false, "test")
			}
			req := &pluginapi.AllocateRequest{}
			for _, ids := range tc.ids {
				req.ContainerRequests = append(req.ContainerRequests, &pluginapi.ContainerAllocateRequest{DevicesIds: ids})
			}
			got, err := s.Allocate(req)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Allocate error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Allocate: %v", err)
			}
			want := &pluginapi.AllocateResponse{ContainerResponses: tc.want}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("Allocate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllocateErrorNamesTheSlot(t *testing.T) {
	s := New([]discovery.Device{nvidia(0, 1)}, Options{})
	s.SetHealth("nvidia-0", false, "device node /dev/nvidia0 missing")
	_, err := s.Allocate(&pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"nvidia-0-slot-0"}}}})
	want := `slot "nvidia-0-slot-0" of device nvidia-0 (device node /dev/nvidia0 missing): slot unhealthy`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestPreferred(t *testing.T) {
	all := func(devs ...discovery.Device) []string {
		var ids []string
		for _, d := range devs {
			for k := 0; k < d.Slots; k++ {
				ids = append(ids, d.SlotID(k))
			}
		}
		return ids
	}
	without := func(ids []string, drop ...string) []string {
		var out []string
		for _, id := range ids {
			keep := true
			for _, d := range drop {
				keep = keep && id != d
			}
			if keep {
				out = append(out, id)
			}
		}
		return out
	}
	n0, n1, n2 := nvidia(0, 4), nvidia(1, 4), nvidia(2, 4)
	tests := []struct {
		name      string
		devs      []discovery.Device
		unhealthy string
		available []string
		must      []string
		size      int
		want      []string
		wantErr   error
	}{
		{
			name: "single slot on an idle node: first device", devs: []discovery.Device{n0, n1},
			available: all(n0, n1), size: 1, want: []string{"nvidia-0-slot-0"},
		},
		{
			name: "single slot goes to the least-used device", devs: []discovery.Device{n0, n1},
			available: without(all(n0, n1), "nvidia-0-slot-0"), size: 1, want: []string{"nvidia-1-slot-0"},
		},
		{
			name: "single slot: least used wins over index", devs: []discovery.Device{n0, n1, n2},
			available: without(all(n0, n1, n2), "nvidia-0-slot-0", "nvidia-1-slot-0", "nvidia-1-slot-3", "nvidia-2-slot-1"),
			size:      1, want: []string{"nvidia-0-slot-1"},
		},
		{
			name: "multi slot packed on one device", devs: []discovery.Device{n0, n1},
			available: all(n0, n1), size: 3, want: []string{"nvidia-0-slot-0", "nvidia-0-slot-1", "nvidia-0-slot-2"},
		},
		{
			name: "multi slot on the fullest device it fits", devs: []discovery.Device{n0, n1, n2},
			available: without(all(n0, n1, n2), "nvidia-1-slot-0", "nvidia-1-slot-1"),
			size:      2, want: []string{"nvidia-1-slot-2", "nvidia-1-slot-3"},
		},
		{
			name: "multi slot too big for any device spans the fewest", devs: []discovery.Device{n0, n1, n2},
			available: without(all(n0, n1, n2), "nvidia-0-slot-0", "nvidia-1-slot-0", "nvidia-1-slot-1", "nvidia-2-slot-0"),
			size:      5, want: []string{"nvidia-0-slot-1", "nvidia-0-slot-2", "nvidia-0-slot-3", "nvidia-2-slot-1", "nvidia-2-slot-2"},
		},
		{
			name: "must-include keeps the container on its device", devs: []discovery.Device{n0, n1},
			available: all(n0, n1), must: []string{"nvidia-1-slot-2"}, size: 2,
			want: []string{"nvidia-1-slot-2", "nvidia-1-slot-0"},
		},
		{
			name: "unhealthy devices are never preferred", devs: []discovery.Device{n0, n1}, unhealthy: "nvidia-0",
			available: all(n0, n1), size: 1, want: []string{"nvidia-1-slot-0"},
		},
		{
			name: "fewer free than asked", devs: []discovery.Device{n0},
			available: []string{"nvidia-0-slot-3"}, size: 2, want: []string{"nvidia-0-slot-3"},
		},
		{
			name: "unknown available ids are skipped", devs: []discovery.Device{n0},
			available: []string{"bogus", "nvidia-0-slot-1"}, size: 1, want: []string{"nvidia-0-slot-1"},
		},
		{name: "zero size", devs: []discovery.Device{n0}, available: all(n0), size: 0, wantErr: ErrInvalidRequest},
		{name: "must larger than size", devs: []discovery.Device{n0}, available: all(n0), must: []string{"nvidia-0-slot-0", "nvidia-0-slot-1"}, size: 1, wantErr: ErrInvalidRequest},
		{name: "unknown must-include", devs: []discovery.Device{n0}, available: all(n0), must: []string{"x"}, size: 1, wantErr: ErrUnknownSlot},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.devs, Options{})
			if tc.unhealthy != "" {
				s.SetHealth(tc.unhealthy, false, "test")
			}
			got, err := s.Preferred(&pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
				AvailableDeviceIDs: tc.available, MustIncludeDeviceIDs: tc.must, AllocationSize: int32(tc.size),
			}}})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Preferred error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Preferred: %v", err)
			}
			if diff := cmp.Diff(tc.want, got.ContainerResponses[0].DeviceIDs); diff != "" {
				t.Errorf("preferred (-want +got):\n%s", diff)
			}
		})
	}
}
