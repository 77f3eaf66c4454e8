package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// fakeGPU stands in for the Vulkan backend in the selection table, so that
// each case can have, or lack, a usable device.
type fakeGPU struct{ CPU }

func (fakeGPU) Name() string { return "vulkan" }

func TestSelect(t *testing.T) {
	noDevice := fmt.Errorf("%w: no Vulkan device", vulkan.ErrUnavailable)
	tests := []struct {
		requested string
		// gpu and cpuDevice say whether a GPU, or only a CPU implementation
		// of Vulkan (lavapipe), is usable.
		gpu, cpuDevice bool
		want           string
		reason         string // a substring of the fallback reason; "" for none
		err            string // a substring of the error; "" for none
	}{
		{requested: "", gpu: true, want: "cpu"},
		{requested: "cpu", gpu: true, want: "cpu"},
		{requested: "auto", want: "cpu"},
		{requested: "auto", cpuDevice: true, want: "cpu"},
		{requested: "auto", gpu: true, want: "vulkan"},
		{requested: "vulkan", gpu: true, want: "vulkan"},
		{requested: "vulkan", cpuDevice: true, want: "vulkan"},
		{requested: "vulkan", err: "backend unavailable: backend vulkan is not usable on this node: vulkan unavailable: no Vulkan device"},
		{requested: "cuda", gpu: true, want: "vulkan"},
		{requested: "hip", gpu: true, want: "vulkan"},
		{requested: "sycl", gpu: true, want: "vulkan"},
		{requested: "cuda", cpuDevice: true, err: "backend cuda has no vendor kernel"},
		{requested: "hip", err: "no Vulkan device"},
		{requested: "tpu", gpu: true, want: "cpu", reason: "backend tpu is not built into this worker"},
	}
	defer func(orig func(bool, string) (Backend, error)) { openVulkan = orig }(openVulkan)
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s gpu=%v lavapipe=%v", tc.requested, tc.gpu, tc.cpuDevice), func(t *testing.T) {
			openVulkan = func(gpuOnly bool, _ string) (Backend, error) {
				if tc.gpu || (tc.cpuDevice && !gpuOnly) {
					return fakeGPU{}, nil
				}
				return nil, noDevice
			}
			b, reason, err := Select(tc.requested, "")
			if tc.err != "" {
				if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want ErrUnavailable containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.Name()); diff != "" {
				t.Errorf("backend (-want +got):\n%s", diff)
			}
			if (reason == "") != (tc.reason == "") || !strings.Contains(reason, tc.reason) {
				t.Errorf("reason = %q, want one containing %q", reason, tc.reason)
			}
		})
	}
}

// TestVulkan selects the real Vulkan backend (lavapipe in CI) and scores a
// clip with it: the result names the device and the features it computed.
func TestVulkan(t *testing.T) {
	b, _, err := Select("vulkan", "")
	if err != nil {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") != "1" {
			t.Skipf("no usable Vulkan device (VMAFX_REQUIRE_VULKAN=1 fails instead): %v", err)
		}
		t.Fatal(err)
	}
	defer b.Close()
	d := b.Device()
	if b.Name() != "vulkan" || d == nil || d.Name == "" || d.Driver == "" || !strings.HasPrefix(d.API, "Vulkan 1.") {
		t.Fatalf("backend %q, device %+v: want vulkan with a device name, driver and API version", b.Name(), d)
	}
	// Every feature runs somewhere, once; motion always on the device.
	all := append(append([]string{}, d.Features...), d.HostFeatures...)
	slices.Sort(all)
	if diff := cmp.Diff([]string{"adm", "cambi", "motion", "speed_chroma", "vif"}, all); diff != "" || !slices.Contains(d.Features, "motion") {
		t.Errorf("device features %v, host features %v: want motion on the device and each feature once", d.Features, d.HostFeatures)
	}
	open := func() vmaf.FrameSource { return clip(t, "p02_ref.yuv") }
	res, err := b.Score(context.Background(), open(), open(), vmaf.Options{Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := CPU{}.Score(context.Background(), open(), open(), vmaf.Options{Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cpu.Frames, res.Frames); diff != "" {
		t.Errorf("frames (-cpu +vulkan):\n%s", diff)
	}
}

// TestDefaultThreads: without --threads the CPU scores on every CPU and a GPU backend on
// at most DefaultGPUThreads of them, whether its device is open or still opening.
func TestDefaultThreads(t *testing.T) {
	pending := Start("vulkan", func() (Backend, string, error) { return CPU{}, "", nil }, nil)
	defer pending.Close()
	for _, c := range []struct {
		name string
		b    Backend
		cpus int
		want int
	}{
		{"cpu on 16", CPU{}, 16, 16},
		{"cpu on 2", CPU{}, 2, 2},
		{"vulkan on 16", &Vulkan{}, 16, DefaultGPUThreads},
		{"vulkan on 2", &Vulkan{}, 2, 2},
		{"opening on 16", pending, 16, DefaultGPUThreads},
		{"opening on 1", pending, 1, 1},
	} {
		if got := DefaultThreads(c.b, c.cpus); got != c.want {
			t.Errorf("%s: %d threads, want %d", c.name, got, c.want)
		}
	}
}

// TestSlotDrivers: a GPU slot's device loads its vendor's Vulkan drivers alone;
// anything else loads every driver.
func TestSlotDrivers(t *testing.T) {
	for device, want := range map[string]string{
		"nvidia-0":          "*nvidia*",
		"nvidia-0,nvidia-1": "*nvidia*",
		"amd-1":             "*radeon*,*amd*",
		"intel-0, intel-1":  "*intel*",
		"nvidia-0,amd-0":    "",
		"cpu":               "",
		"":                  "",
		"something-else-0":  "",
	} {
		if got := strings.Join(SlotDrivers(device), ","); got != want {
			t.Errorf("SlotDrivers(%q) = %q, want %q", device, got, want)
		}
	}
}
