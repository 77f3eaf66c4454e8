package health

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/klog/v2/ktesting"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/vmafx/vmafx/device-plugin/internal/metrics"
	"github.com/vmafx/vmafx/device-plugin/internal/slots"
	"github.com/vmafx/vmafx/internal/selftestverdict"
	"github.com/vmafx/vmafx/vmaf/vkkernel/selftest"
	"github.com/vmafx/vmafx/vmaf/vkkernel/testing/vkdevice"
	"github.com/vmafx/vmafx/vmaf/vkkernel/testing/wrongsum"
)

// selfTestNode is node with self-test verdicts read from a directory, as Allocate
// mounts it into the workers.
func selfTestNode(t *testing.T, clk *testingclock.FakeClock) (dir string, set *slots.Set, w *Watcher, m *metrics.Metrics) {
	t.Helper()
	h, inv := twoGPUs(t)
	dir = t.TempDir()
	for _, d := range inv.Devices {
		if err := os.Mkdir(filepath.Join(dir, d.Name()), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	set = slots.New(inv.Devices, slots.Options{SelfTestDir: dir})
	m = metrics.Discard()
	w = New(inv.Devices, set, Options{Root: h.Root, Interval: time.Second, RecoveryDelay: time.Second, Clock: clk, Metrics: m, SelfTestDir: dir})
	return dir, set, w, m
}

// failedSelfTest is a worker's verdict on a device that fails the self-test: the real
// self-test on the machine's Vulkan device (lavapipe in CI) with one wrong VIF sum put
// between the device and the comparison, as a miscompiled shader would give.
func failedSelfTest(t *testing.T) selftestverdict.Verdict {
	t.Helper()
	k := vkdevice.Open(t)
	defer k.Close()
	if !k.Info().Float64 {
		t.Skip("VIF runs on the CPU on this device: the wrong sum is never used")
	}
	err := selftest.Check(context.Background(), wrongsum.Offload(k, 2), k.Info())
	var mm *selftest.MismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("self-test with a wrong sum: %v, want a mismatch", err)
	}
	return selftestverdict.Verdict{Result: selftestverdict.Fail, Device: mm.Device.Name, Driver: mm.Device.Driver,
		API: "Vulkan " + mm.Device.APIVersion, Message: err.Error()}
}

// TestSelfTestFailMakesDeviceUnhealthy: a worker's fail verdict for nvidia-1 makes all of
// its slots Unhealthy at the next check, with the self-test's message as the reason, and
// Allocate refuses them; the verdict is counted once; the device is Healthy again once
// the verdict is gone and the recovery delay has passed. A pass changes nothing.
func TestSelfTestFailMakesDeviceUnhealthy(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Now())
	dir, set, w, m := selfTestNode(t, clk)
	w.Check(ctx)
	if err := selftestverdict.Write(filepath.Join(dir, "nvidia-0"), selftestverdict.Verdict{Result: selftestverdict.Pass, Device: "GPU"}); err != nil {
		t.Fatal(err)
	}
	fail := failedSelfTest(t)
	if err := selftestverdict.Write(filepath.Join(dir, "nvidia-1"), fail); err != nil {
		t.Fatal(err)
	}
	w.Check(ctx)
	w.Check(ctx)
	if diff := cmp.Diff(want("nvidia-1"), health(set)); diff != "" {
		t.Fatalf("slot health after a failed self-test (-want +got):\n%s", diff)
	}
	if r := w.state[1].reason; !strings.Contains(r, "vulkan self-test failed") || !strings.Contains(r, "integer_vif_scale1") || !strings.Contains(r, fail.Driver) {
		t.Errorf("reason %q, want the self-test's failure naming the driver and the feature", r)
	}
	if _, err := set.Allocate(&pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"nvidia-1-slot-0"}}}}); !errors.Is(err, slots.ErrUnhealthySlot) {
		t.Errorf("Allocate of a slot of the failed device: %v, want ErrUnhealthySlot", err)
	}
	if f, p := promtest.ToFloat64(m.SelfTestVerdicts.WithLabelValues(metrics.VerdictFail)), promtest.ToFloat64(m.SelfTestVerdicts.WithLabelValues(metrics.VerdictPass)); f != 1 || p != 1 {
		t.Errorf("verdicts counted: fail %v, pass %v; want each once", f, p)
	}

	if err := os.Remove(filepath.Join(dir, "nvidia-1", selftestverdict.FileName)); err != nil {
		t.Fatal(err)
	}
	w.Check(ctx)
	clk.Step(time.Second)
	w.Check(ctx)
	if diff := cmp.Diff(want(), health(set)); diff != "" {
		t.Errorf("slot health once the verdict is gone (-want +got):\n%s", diff)
	}
}

// TestSelfTestInvalidVerdict: a file that is not a verdict is counted as invalid and
// does not take the device's slots.
func TestSelfTestInvalidVerdict(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir, set, w, m := selfTestNode(t, testingclock.NewFakeClock(time.Now()))
	if err := os.WriteFile(filepath.Join(dir, "nvidia-0", selftestverdict.FileName), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Check(ctx)
	if diff := cmp.Diff(want(), health(set)); diff != "" {
		t.Errorf("slot health (-want +got):\n%s", diff)
	}
	if n := promtest.ToFloat64(m.SelfTestVerdicts.WithLabelValues(metrics.VerdictInvalid)); n != 1 {
		t.Errorf("invalid verdicts counted %v, want 1", n)
	}
}
