package selftest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vmafx/vmafx/vmaf/vkkernel"
	"github.com/vmafx/vmafx/vmaf/vkkernel/selftest"
	"github.com/vmafx/vmafx/vmaf/vkkernel/testing/vkdevice"
	"github.com/vmafx/vmafx/vmaf/vkkernel/testing/wrongsum"
)

// openOrSkip opens the default device's kernel; without one the test skips
// unless VMAFX_REQUIRE_VULKAN=1 (make test sets it).
func openOrSkip(t *testing.T) *vkkernel.Kernel {
	t.Helper()
	k := vkdevice.Open(t)
	t.Cleanup(k.Close)
	return k
}

func TestRunPasses(t *testing.T) {
	k := openOrSkip(t)
	start := time.Now()
	if err := selftest.Run(context.Background(), k); err != nil {
		t.Fatalf("Run on %s: %v", k.Info().Name, err)
	}
	t.Logf("self-test on %s took %v", k.Info().Name, time.Since(start))
}

// TestWrongSumFails puts one wrong VIF sum on frame 2 between the device
// and the comparison: the self-test must name the device, its driver and
// API version, and the first feature and frame that differ.
func TestWrongSumFails(t *testing.T) {
	k := openOrSkip(t)
	if !k.Info().Float64 {
		t.Skip("VIF runs on the CPU on this device (no shaderFloat64)")
	}
	err := selftest.Check(context.Background(), wrongsum.Offload(k, 2), k.Info())
	var mm *selftest.MismatchError
	if !errors.As(err, &mm) || !errors.Is(err, selftest.ErrFailed) {
		t.Fatalf("Check with a wrong sum = %v, want a MismatchError", err)
	}
	if mm.Frame != 2 || mm.Feature != "integer_vif_scale1" || mm.Case != "vmaf_v0.6.1 128x72" {
		t.Errorf("mismatch at %s frame %d %s, want vmaf_v0.6.1 128x72 frame 2 integer_vif_scale1", mm.Case, mm.Frame, mm.Feature)
	}
	info := k.Info()
	for _, want := range []string{info.Name, info.Driver, "Vulkan " + info.APIVersion, "frame 2 integer_vif_scale1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

// TestWrongCValuesFail: a v1 model's CAMBI c-values come with each frame's
// batch; wrong ones on frame 1 fail the self-test's v1 case at that frame,
// with CAMBI named (everything before it, SpEED chroma included, equal).
func TestWrongCValuesFail(t *testing.T) {
	k := openOrSkip(t)
	err := selftest.Check(context.Background(), wrongsum.CValues(k, 1), k.Info())
	var mm *selftest.MismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("Check with wrong c-values = %v, want a MismatchError", err)
	}
	if mm.Frame != 1 || mm.Feature != "cambi" || mm.Case != "vmaf_v1.0.16_3d0h 352x320" {
		t.Errorf("mismatch at %s frame %d %s, want vmaf_v1.0.16_3d0h 352x320 frame 1 cambi", mm.Case, mm.Frame, mm.Feature)
	}
}

// BenchmarkRun times the self-test on the default device: a fixed cost of a
// worker's start (docs/worker.md).
func BenchmarkRun(b *testing.B) {
	k := vkdevice.Open(b)
	b.Cleanup(k.Close)
	for b.Loop() {
		if err := selftest.Run(context.Background(), k); err != nil {
			b.Fatal(err)
		}
	}
}
