package discovery

import (
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/testing/fakehost"
)

func nvidiaDevice(i, minor int) Device {
	g := fakehost.NVIDIA(i)
	return Device{
		Vendor: vmafxv1.VendorNVIDIA, Index: minor, PCIAddress: g.PCI, PCIVendor: "10de", PCIDevice: "2684",
		SysfsDir: "/sys/devices/pci0000:00/" + g.PCI, Slots: 4,
		Nodes: []Node{
			{Path: "/dev/nvidia" + itoa(minor)}, {Path: "/dev/nvidiactl"}, {Path: "/dev/nvidia-uvm"},
			{Path: "/dev/nvidia-uvm-tools", Optional: true},
		},
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDiscover(t *testing.T) {
	amd0, intel0 := fakehost.AMD(0), fakehost.Intel(0)
	tests := []struct {
		name  string
		build func(h *fakehost.Host)
		opts  Options
		want  Inventory
		desc  string
	}{
		{
			name: "two nvidia",
			build: func(h *fakehost.Host) {
				h.AddGPU(fakehost.NVIDIA(0))
				h.AddGPU(fakehost.NVIDIA(1))
			},
			want: Inventory{Vendor: vmafxv1.VendorNVIDIA, CPUs: 8, Devices: []Device{nvidiaDevice(0, 0), nvidiaDevice(1, 1)}},
			desc: "2x nvidia (10de:2684)",
		},
		{
			name: "nvidia minors from the driver, not PCI order",
			build: func(h *fakehost.Host) {
				g0, g1 := fakehost.NVIDIA(0), fakehost.NVIDIA(1)
				g0.NVIDIAMinor, g1.NVIDIAMinor = 1, 0
				h.AddGPU(g0)
				h.AddGPU(g1)
			},
			want: Inventory{Vendor: vmafxv1.VendorNVIDIA, CPUs: 8, Devices: []Device{
				func() Device { d := nvidiaDevice(1, 0); return d }(),
				func() Device { d := nvidiaDevice(0, 1); return d }(),
			}},
			desc: "2x nvidia (10de:2684)",
		},
		{
			name: "nvidia without nvidia-drm or proc info",
			build: func(h *fakehost.Host) {
				g := fakehost.NVIDIA(0)
				g.NoDRM, g.NoProcInfo = true, true
				h.AddGPU(g)
			},
			want: Inventory{Vendor: vmafxv1.VendorNVIDIA, CPUs: 8, Devices: []Device{nvidiaDevice(0, 0)}},
			desc: "1x nvidia (10de:2684)",
		},
		{
			name:  "amd",
			build: func(h *fakehost.Host) { h.AddGPU(amd0) },
			want: Inventory{Vendor: vmafxv1.VendorAMD, CPUs: 8, Devices: []Device{{
				Vendor: vmafxv1.VendorAMD, PCIAddress: amd0.PCI, PCIVendor: "1002", PCIDevice: "744c",
				SysfsDir: "/sys/devices/pci0000:00/" + amd0.PCI, Slots: 4,
				Nodes: []Node{{Path: "/dev/dri/renderD128"}, {Path: "/dev/kfd"}},
			}}},
			desc: "1x amd (1002:744c)",
		},
		{
			name:  "intel",
			build: func(h *fakehost.Host) { h.AddGPU(intel0) },
			opts:  Options{SlotsPerDevice: 2},
			want: Inventory{Vendor: vmafxv1.VendorIntel, CPUs: 8, Devices: []Device{{
				Vendor: vmafxv1.VendorIntel, PCIAddress: intel0.PCI, PCIVendor: "8086", PCIDevice: "56a0",
				SysfsDir: "/sys/devices/pci0000:00/" + intel0.PCI, Slots: 2,
				Nodes: []Node{{Path: "/dev/dri/renderD128"}},
			}}},
			desc: "1x intel (8086:56a0)",
		},
		{
			name: "vendor from sysfs, not the device name",
			build: func(h *fakehost.Host) {
				// An Intel render node in /dev/dri looks like any other; its vendor
				// file says AMD, so AMD it is.
				g := fakehost.Intel(0)
				g.Vendor = fakehost.VendorAMD
				h.AddGPU(g)
			},
			want: Inventory{Vendor: vmafxv1.VendorAMD, CPUs: 8, Devices: []Device{{
				Vendor: vmafxv1.VendorAMD, PCIAddress: intel0.PCI, PCIVendor: "1002", PCIDevice: "56a0",
				SysfsDir: "/sys/devices/pci0000:00/" + intel0.PCI, Slots: 4,
				Nodes: []Node{{Path: "/dev/dri/renderD128"}, {Path: "/dev/kfd"}},
			}}},
			desc: "1x amd (1002:56a0)",
		},
		{
			name: "mixed node offers the first vendor, ignores the rest",
			build: func(h *fakehost.Host) {
				h.AddGPU(intel0) // integrated GPU: card0, renderD128
				h.AddGPU(fakehost.NVIDIA(0))
			},
			want: Inventory{
				Vendor: vmafxv1.VendorNVIDIA, CPUs: 8,
				Devices: []Device{func() Device {
					d := nvidiaDevice(0, 0)
					return d
				}()},
				Ignored: []Device{{
					Vendor: vmafxv1.VendorIntel, PCIAddress: intel0.PCI, PCIVendor: "8086", PCIDevice: "56a0",
					SysfsDir: "/sys/devices/pci0000:00/" + intel0.PCI,
					Nodes:    []Node{{Path: "/dev/dri/renderD128"}},
				}},
			},
			desc: "1x nvidia (10de:2684)",
		},
		{
			name: "mixed node with the vendor overridden",
			build: func(h *fakehost.Host) {
				h.AddGPU(intel0)
				h.AddGPU(fakehost.NVIDIA(0))
			},
			opts: Options{Vendor: "intel"},
			want: Inventory{
				Vendor: vmafxv1.VendorIntel, CPUs: 8,
				Devices: []Device{{
					Vendor: vmafxv1.VendorIntel, PCIAddress: intel0.PCI, PCIVendor: "8086", PCIDevice: "56a0",
					SysfsDir: "/sys/devices/pci0000:00/" + intel0.PCI, Slots: 4,
					Nodes: []Node{{Path: "/dev/dri/renderD128"}},
				}},
				Ignored: []Device{func() Device { d := nvidiaDevice(0, 0); d.Slots = 0; return d }()},
			},
			desc: "1x intel (8086:56a0)",
		},
		{
			name: "a BMC display and a display-only device are not GPUs",
			build: func(h *fakehost.Host) {
				h.AddGPU(fakehost.GPU{PCI: "0000:02:00.0", Vendor: "0x1a03", Device: "0x2000"})
			},
			want: Inventory{Vendor: vmafxv1.VendorCPU, CPUs: 8, Devices: []Device{{Vendor: vmafxv1.VendorCPU, Slots: 4}}},
			desc: "cpu (8 CPUs)",
		},
		{
			name:  "no GPU: CPU slots from CPUs per slot",
			build: func(h *fakehost.Host) {},
			want:  Inventory{Vendor: vmafxv1.VendorCPU, CPUs: 8, Devices: []Device{{Vendor: vmafxv1.VendorCPU, Slots: 4}}},
			desc:  "cpu (8 CPUs)",
		},
		{
			name:  "no GPU: at least one CPU slot",
			build: func(h *fakehost.Host) { h.SetCPUs(1) },
			want:  Inventory{Vendor: vmafxv1.VendorCPU, CPUs: 1, Devices: []Device{{Vendor: vmafxv1.VendorCPU, Slots: 1}}},
			desc:  "cpu (1 CPUs)",
		},
		{
			name:  "no GPU: CPU slot count overridden",
			build: func(h *fakehost.Host) {},
			opts:  Options{CPUSlots: 3},
			want:  Inventory{Vendor: vmafxv1.VendorCPU, CPUs: 8, Devices: []Device{{Vendor: vmafxv1.VendorCPU, Slots: 3}}},
			desc:  "cpu (8 CPUs)",
		},
		{
			name:  "cpu forced on a GPU node",
			build: func(h *fakehost.Host) { h.AddGPU(fakehost.NVIDIA(0)) },
			opts:  Options{Vendor: "cpu"},
			want: Inventory{Vendor: vmafxv1.VendorCPU, CPUs: 8, Devices: []Device{{Vendor: vmafxv1.VendorCPU, Slots: 4}},
				Ignored: []Device{func() Device { d := nvidiaDevice(0, 0); d.Slots = 0; return d }()}},
			desc: "cpu (8 CPUs)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := fakehost.New(t, 8)
			tc.build(h)
			opts := Options{Root: h.Root, Vendor: "auto", SlotsPerDevice: 4, CPUsPerSlot: 2}
			if tc.opts.Vendor != "" {
				opts.Vendor = tc.opts.Vendor
			}
			if tc.opts.SlotsPerDevice != 0 {
				opts.SlotsPerDevice = tc.opts.SlotsPerDevice
			}
			opts.CPUSlots = tc.opts.CPUSlots
			got, err := Discover(opts)
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("inventory (-want +got):\n%s", diff)
			}
			if d := got.Description(); d != tc.desc {
				t.Errorf("Description() = %q, want %q", d, tc.desc)
			}
		})
	}
}

func TestDiscoverVendorMissing(t *testing.T) {
	h := fakehost.New(t, 4)
	h.AddGPU(fakehost.Intel(0))
	_, err := Discover(Options{Root: h.Root, Vendor: "nvidia", SlotsPerDevice: 4, CPUsPerSlot: 1})
	if !errors.Is(err, ErrNoDevices) {
		t.Fatalf("Discover error = %v, want ErrNoDevices", err)
	}
}

func TestNamesAndIDs(t *testing.T) {
	d := Device{Vendor: vmafxv1.VendorAMD, Index: 1}
	if got, want := d.Name(), "amd-1"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	if got, want := d.SlotID(3), "amd-1-slot-3"; got != want {
		t.Errorf("SlotID(3) = %q, want %q", got, want)
	}
	cpu := Device{Vendor: vmafxv1.VendorCPU}
	if got, want := cpu.Name(), "cpu"; got != want {
		t.Errorf("cpu Name() = %q, want %q", got, want)
	}
	if got, want := cpu.SlotID(0), "cpu-0-slot-0"; got != want {
		t.Errorf("cpu SlotID(0) = %q, want %q", got, want)
	}
}

func TestProbe(t *testing.T) {
	g := fakehost.NVIDIA(0)
	tests := []struct {
		name   string
		change func(h *fakehost.Host)
		gone   bool
	}{
		{name: "present", change: func(h *fakehost.Host) {}},
		{name: "optional node missing", change: func(h *fakehost.Host) { h.Remove("/dev/nvidia-uvm-tools") }},
		{name: "gpu node missing", change: func(h *fakehost.Host) { h.Remove("/dev/nvidia0") }, gone: true},
		{name: "control node missing", change: func(h *fakehost.Host) { h.Remove("/dev/nvidiactl") }, gone: true},
		{name: "sysfs entry removed", change: func(h *fakehost.Host) { h.Remove("/sys/devices/pci0000:00/" + g.PCI) }, gone: true},
		{name: "fell off the bus", change: func(h *fakehost.Host) { h.SetVendor(g.PCI, fakehost.VendorGone) }, gone: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := fakehost.New(t, 4)
			h.AddGPU(g)
			inv, err := Discover(Options{Root: h.Root, Vendor: "auto", SlotsPerDevice: 1, CPUsPerSlot: 1})
			if err != nil {
				t.Fatal(err)
			}
			tc.change(h)
			err = inv.Devices[0].Probe(h.Root)
			if got := errors.Is(err, ErrDeviceGone); got != tc.gone {
				t.Errorf("Probe() = %v, want gone=%v", err, tc.gone)
			}
		})
	}
	if err := (Device{Vendor: vmafxv1.VendorCPU}).Probe(t.TempDir()); err != nil {
		t.Errorf("cpu Probe() = %v, want nil", err)
	}
}

func TestCountCPUs(t *testing.T) {
	tests := map[string]int{"0-3\n": 4, "0\n": 1, "0-3,8-11\n": 8, "0,2,4\n": 3}
	for online, want := range tests {
		h := fakehost.New(t, 1)
		h.SetCPUs(1)
		if err := writeFile(h.Path("/sys/devices/system/cpu/online"), online); err != nil {
			t.Fatal(err)
		}
		if got := countCPUs(h.Root); got != want {
			t.Errorf("countCPUs(%q) = %d, want %d", online, got, want)
		}
	}
}
