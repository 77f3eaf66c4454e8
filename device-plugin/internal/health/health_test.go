package health

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/vmafx/vmafx/device-plugin/internal/discovery"
	"github.com/vmafx/vmafx/device-plugin/internal/slots"
	"github.com/vmafx/vmafx/device-plugin/testing/fakehost"
	"github.com/vmafx/vmafx/internal/testutil"
)

// twoGPUs is a fake host with two NVIDIA GPUs of 4 slots each, discovered.
func twoGPUs(t *testing.T) (*fakehost.Host, discovery.Inventory) {
	t.Helper()
	h := fakehost.New(t, 4)
	h.AddGPU(fakehost.NVIDIA(0))
	h.AddGPU(fakehost.NVIDIA(1))
	inv, err := discovery.Discover(discovery.Options{Root: h.Root, Vendor: "auto", SlotsPerDevice: 4, CPUsPerSlot: 1})
	if err != nil {
		t.Fatal(err)
	}
	return h, inv
}

// node builds a fake node with two NVIDIA GPUs, their slots and a watcher of them.
func node(t *testing.T, clk *testingclock.FakeClock, delay time.Duration) (*fakehost.Host, *slots.Set, *Watcher) {
	t.Helper()
	h, inv := twoGPUs(t)
	set := slots.New(inv.Devices, slots.Options{})
	opts := Options{Root: h.Root, Interval: 500 * time.Millisecond, RecoveryDelay: delay}
	if clk != nil {
		opts.Clock = clk
	}
	return h, set, New(inv.Devices, set, opts)
}

// health returns the health of every slot of the set, by slot ID.
func health(s *slots.Set) map[string]string {
	list, _ := s.List()
	out := map[string]string{}
	for _, d := range list {
		out[d.ID] = d.Health
	}
	return out
}

func want(unhealthy ...string) map[string]string {
	out := map[string]string{}
	for _, dev := range []string{"nvidia-0", "nvidia-1"} {
		h := pluginapi.Healthy
		for _, u := range unhealthy {
			if u == dev {
				h = pluginapi.Unhealthy
			}
		}
		for k := 0; k < 4; k++ {
			out[dev+"-slot-"+string(rune('0'+k))] = h
		}
	}
	return out
}

func TestLostDeviceTakesAllItsSlots(t *testing.T) {
	tests := []struct {
		name      string
		change    func(h *fakehost.Host)
		unhealthy []string
	}{
		{name: "gpu node removed", change: func(h *fakehost.Host) { h.Remove("/dev/nvidia1") }, unhealthy: []string{"nvidia-1"}},
		{name: "fell off the bus", change: func(h *fakehost.Host) { h.SetVendor(fakehost.NVIDIA(0).PCI, fakehost.VendorGone) }, unhealthy: []string{"nvidia-0"}},
		{name: "hot-unplugged from sysfs", change: func(h *fakehost.Host) { h.Remove("/sys/devices/pci0000:00/" + fakehost.NVIDIA(1).PCI) }, unhealthy: []string{"nvidia-1"}},
		{name: "shared control node removed", change: func(h *fakehost.Host) { h.Remove("/dev/nvidiactl") }, unhealthy: []string{"nvidia-0", "nvidia-1"}},
		{name: "optional node removed", change: func(h *fakehost.Host) { h.Remove("/dev/nvidia-uvm-tools") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			h, set, w := node(t, testingclock.NewFakeClock(time.Now()), time.Second)
			w.Check(ctx)
			if diff := cmp.Diff(want(), health(set)); diff != "" {
				t.Fatalf("health before (-want +got):\n%s", diff)
			}
			tc.change(h)
			w.Check(ctx)
			if diff := cmp.Diff(want(tc.unhealthy...), health(set)); diff != "" {
				t.Errorf("health after (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecoveryHysteresis(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Now())
	h, set, w := node(t, clk, 3*time.Second)
	w.Check(ctx)

	h.Remove("/dev/nvidia1")
	if next := w.Check(ctx); !next.IsZero() {
		t.Errorf("Check while missing returned a recovery time %v", next)
	}
	h.Create("/dev/nvidia1")
	back := clk.Now()
	if next := w.Check(ctx); !next.Equal(back.Add(3 * time.Second)) {
		t.Errorf("Check after return = %v, want recovery due at %v", next, back.Add(3*time.Second))
	}
	if diff := cmp.Diff(want("nvidia-1"), health(set)); diff != "" {
		t.Fatalf("healthy without waiting out the delay (-want +got):\n%s", diff)
	}

	// It flaps: gone again after 2 s, back at once; the delay starts over.
	clk.Step(2 * time.Second)
	h.Remove("/dev/nvidia1")
	w.Check(ctx)
	h.Create("/dev/nvidia1")
	w.Check(ctx)
	clk.Step(2 * time.Second)
	w.Check(ctx)
	if diff := cmp.Diff(want("nvidia-1"), health(set)); diff != "" {
		t.Fatalf("healthy before the delay after a flap (-want +got):\n%s", diff)
	}
	clk.Step(time.Second)
	if next := w.Check(ctx); !next.IsZero() {
		t.Errorf("Check after recovery returned a recovery time %v", next)
	}
	if diff := cmp.Diff(want(), health(set)); diff != "" {
		t.Errorf("not healthy after the delay (-want +got):\n%s", diff)
	}
}

func TestFirstCheckTakesDevicesAsTheyAre(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	h, set, w := node(t, testingclock.NewFakeClock(time.Now()), time.Hour)
	h.Remove("/dev/nvidia0")
	w.Check(ctx)
	if diff := cmp.Diff(want("nvidia-0"), health(set)); diff != "" {
		t.Errorf("health after the first check (-want +got):\n%s", diff)
	}
}

// recorder is a Target that forwards every call to a channel.
type recorder struct {
	set *slots.Set
	ch  chan string
}

func (r *recorder) SetHealth(name string, healthy bool, reason string) bool {
	changed := r.set.SetHealth(name, healthy, reason)
	if changed {
		state := "healthy"
		if !healthy {
			state = "unhealthy"
		}
		r.ch <- name + " " + state
	}
	return changed
}

func await(t *testing.T, ch <-chan string, want string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Fatalf("got change %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no change %q within 10 s", want)
	}
}

// TestRunReactsToEvents runs the watcher with a periodic check far too slow to matter,
// so only fsnotify events can explain the changes.
func TestRunReactsToEvents(t *testing.T) {
	_, tctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(tctx)
	defer cancel()
	h := fakehost.New(t, 4)
	h.AddGPU(fakehost.Intel(0))
	inv, err := discovery.Discover(discovery.Options{Root: h.Root, Vendor: "auto", SlotsPerDevice: 2, CPUsPerSlot: 1})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{set: slots.New(inv.Devices, slots.Options{}), ch: make(chan string, 10)}
	w := New(inv.Devices, rec, Options{Root: h.Root, Interval: time.Hour, RecoveryDelay: 50 * time.Millisecond})
	ready := make(chan struct{})
	w.ready = func() { close(ready) }
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	<-ready // the removal below must come after the watch is set up

	h.Remove("/dev/dri/renderD128")
	await(t, rec.ch, "intel-0 unhealthy")
	h.Create("/dev/dri/renderD128")
	// Recovery needs the device present for 50 ms: the event starts the clock, the
	// recovery timer (not the hourly tick) ends it.
	await(t, rec.ch, "intel-0 healthy")
	cancel()
	<-done
}

// TestRunPollsSysfs drives the periodic check with a fake clock: sysfs changes make
// no inotify events, so the tick is what finds them.
func TestRunPollsSysfs(t *testing.T) {
	_, tctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(tctx)
	defer cancel()
	clk := testingclock.NewFakeClock(time.Now())
	h := fakehost.New(t, 4)
	g := fakehost.AMD(0)
	h.AddGPU(g)
	inv, err := discovery.Discover(discovery.Options{Root: h.Root, Vendor: "auto", SlotsPerDevice: 2, CPUsPerSlot: 1})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{set: slots.New(inv.Devices, slots.Options{}), ch: make(chan string, 10)}
	w := New(inv.Devices, rec, Options{Root: h.Root, Interval: 500 * time.Millisecond, RecoveryDelay: time.Second, Clock: clk})
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	testutil.Eventually(t, 10*time.Second, "the watcher to wait on the clock", func(context.Context) error {
		if !clk.HasWaiters() {
			return errors.New("no waiter")
		}
		return nil
	})
	h.SetVendor(g.PCI, fakehost.VendorGone)
	clk.Step(500 * time.Millisecond)
	await(t, rec.ch, "amd-0 unhealthy")
	h.SetVendor(g.PCI, fakehost.VendorAMD)
	clk.Step(500 * time.Millisecond) // seen present
	select {
	case got := <-rec.ch:
		t.Fatalf("changed to %q before the recovery delay", got)
	case <-time.After(100 * time.Millisecond):
	}
	clk.Step(time.Second) // recovery due
	await(t, rec.ch, "amd-0 healthy")
	cancel()
	<-done
}
