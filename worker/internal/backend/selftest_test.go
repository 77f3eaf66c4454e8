package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vkkernel"
	"github.com/vmafx/vmafx/vmaf/vkkernel/selftest"
	"github.com/vmafx/vmafx/vmaf/vkkernel/testing/vkdevice"
	"github.com/vmafx/vmafx/vmaf/vkkernel/testing/wrongsum"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// useSelfTest replaces the self-test for one test, with a fresh cache.
func useSelfTest(t *testing.T, run func(context.Context, *vkkernel.Kernel) error) {
	orig := selfTests
	selfTests = &selfTestCache{run: run, done: map[vulkan.Info]*verdict{}}
	t.Cleanup(func() { selfTests = orig })
}

// TestVulkanSelfTestFails opens the real device (lavapipe in CI) with a
// self-test that sees one wrong device sum, as a miscompiled shader would
// give: the backend must refuse the device with ErrUnavailable naming the
// device, its driver and API version and the first wrong feature and frame,
// for vulkan and auto alike, and the self-test must run once per device.
func TestVulkanSelfTestFails(t *testing.T) {
	runs := 0
	useSelfTest(t, func(ctx context.Context, k *vkkernel.Kernel) error {
		runs++
		return selftest.Check(ctx, wrongsum.Offload(k, 2), k.Info())
	})
	k := vkdevice.Open(t)
	info := k.Info()
	k.Close()
	if !info.Float64 {
		t.Skip("VIF runs on the CPU on this device (no shaderFloat64)")
	}
	for range 2 {
		b, _, err := Select("vulkan", "")
		if err == nil {
			b.Close()
			t.Fatal("Select(vulkan) with a wrong device sum succeeded")
		}
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, selftest.ErrFailed) {
			t.Fatalf("err = %v, want ErrUnavailable and selftest.ErrFailed", err)
		}
		for _, want := range []string{info.Name, info.Driver, "Vulkan " + info.APIVersion, "frame 2 integer_vif_scale1"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
		}
	}
	if runs != 1 {
		t.Errorf("self-test ran %d times for two opens of one device, want once", runs)
	}
}

// TestVulkanSelfTestPasses opens the real device with the real self-test.
func TestVulkanSelfTestPasses(t *testing.T) {
	useSelfTest(t, selftest.Run)
	b, _, err := Select("vulkan", "")
	if err != nil {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") != "1" && errors.Is(err, vulkan.ErrUnavailable) && !errors.Is(err, selftest.ErrFailed) {
			t.Skipf("no usable Vulkan device (VMAFX_REQUIRE_VULKAN=1 fails instead): %v", err)
		}
		t.Fatal(err)
	}
	defer b.Close()
	hd := vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV420P}
	def, err := vmaf.LoadModel(vmaf.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	k := b.(*Vulkan).k
	hd10 := vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV420P10LE}
	if got, inFlight := Staging(b, def, hd10, vmaf.Encode{}); got != vkkernel.HostBytesPerWorker(1920, 1080) || got == 0 || inFlight != k.FramesInFlight(1920, 1080) {
		t.Errorf("vulkan Staging at 10 bits = %d bytes, %d frames in flight; want the worker's staging, %d, and the kernel's %d",
			got, inFlight, vkkernel.HostBytesPerWorker(1920, 1080), k.FramesInFlight(1920, 1080))
	}
	// 8-bit frames are staged as bytes: half the staging.
	if got, _ := Staging(b, def, hd, vmaf.Encode{}); got < vkkernel.HostBytesPerWorker(1920, 1080)/2 || got > vkkernel.HostBytesPerWorker(1920, 1080)*51/100 {
		t.Errorf("vulkan Staging at 8 bits = %d bytes, want about half of %d", got, vkkernel.HostBytesPerWorker(1920, 1080))
	}
	// A v1 model's frame at 4K takes more than the batches' bound: counted.
	v1, err := vmaf.LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		t.Fatal(err)
	}
	uhd := vmaf.VideoInfo{Width: 3840, Height: 2160, Format: vmaf.YUV420P10LE}
	if got, _ := Staging(b, v1, uhd, vmaf.Encode{}); got <= vkkernel.HostBytesPerWorker(3840, 2160) {
		t.Errorf("vulkan Staging of vmaf_v1 at 4K = %d bytes, want more than vmaf_v0.6.1's %d", got, vkkernel.HostBytesPerWorker(3840, 2160))
	}
	if got, inFlight := Staging(CPU{}, def, hd, vmaf.Encode{}); got != 0 || inFlight != 0 {
		t.Errorf("cpu Staging = %d bytes, %d frames in flight; want 0, 0", got, inFlight)
	}
}

// TestSelectAutoSelfTestFailed: under auto, a GPU that fails the self-test
// fails the attempt rather than scoring on the CPU and hiding the node's
// broken GPU; a node without a GPU still runs on the CPU.
func TestSelectAutoSelfTestFailed(t *testing.T) {
	defer func(orig func(bool, string) (Backend, error)) { openVulkan = orig }(openVulkan)
	openVulkan = func(bool, string) (Backend, error) {
		return nil, fmt.Errorf("%w on device GPU: frame 0 integer_motion differs", selftest.ErrFailed)
	}
	if _, _, err := Select("auto", ""); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "integer_motion") {
		t.Errorf("Select(auto) with a failed self-test: err = %v, want ErrUnavailable naming the mismatch", err)
	}
}

// TestVulkanStartup: the backend says how long opening the device and its
// self-test took (the worker logs both): the self-test's time on the open
// that ran it, none on a later open of the same device, whose verdict was
// kept.
func TestVulkanStartup(t *testing.T) {
	k := vkdevice.Open(t)
	k.Close()
	useSelfTest(t, func(ctx context.Context, k *vkkernel.Kernel) error {
		time.Sleep(20 * time.Millisecond) // a self-test takes time
		return nil
	})
	for i, wantTest := range []bool{true, false} {
		v, err := openDevice(false, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := v.verify(); err != nil {
			t.Fatal(err)
		}
		open, test := v.Startup()
		v.Close()
		if open <= 0 || (test >= 20*time.Millisecond) != wantTest {
			t.Errorf("open %d: Startup() = %v, %v; want the open's time, and the self-test's %v", i+1, open, test, wantTest)
		}
	}
}
