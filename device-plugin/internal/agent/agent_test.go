package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/config"
	"github.com/vmafx/vmafx/device-plugin/internal/metrics"
	"github.com/vmafx/vmafx/device-plugin/internal/server"
	"github.com/vmafx/vmafx/device-plugin/internal/slots"
	"github.com/vmafx/vmafx/device-plugin/testing/fakehost"
	"github.com/vmafx/vmafx/device-plugin/testing/fakekubelet"
	"github.com/vmafx/vmafx/internal/testutil"
)

// countingServer counts the supervisor's attempts to start (and so register) the server.
type countingServer struct {
	*server.Server
	starts atomic.Int32
}

func (c *countingServer) Start(ctx context.Context) error {
	c.starts.Add(1)
	return c.Server.Start(ctx)
}

// supervised runs a supervisor of a one-device server in dir until the test ends.
func supervised(t *testing.T, dir string) (*countingServer, <-chan error) {
	t.Helper()
	_, tctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(tctx)
	set := slots.New(nil, slots.Options{})
	srv := &countingServer{Server: server.New(set, server.Options{Dir: dir, ResourceName: vmafxv1.ResourceSlot, Metrics: metrics.Discard()})}
	done := make(chan error, 1)
	go func() { done <- newSupervisor(srv, dir+"/").run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Logf("supervisor stopped: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("supervisor did not stop within 10 s")
		}
	})
	return srv, done
}

func registration(t *testing.T, k *fakekubelet.Kubelet) *pluginapi.RegisterRequest {
	t.Helper()
	r, err := k.Registration(10 * time.Second)
	if err != nil {
		t.Fatal("no registration within 10 s")
	}
	return r
}

func TestSupervisorRegistersWhenTheKubeletComesUp(t *testing.T) {
	dir := fakekubelet.SocketDir(t)
	srv, _ := supervised(t, dir)
	testutil.Eventually(t, 10*time.Second, "a few failed registration attempts", func(context.Context) error {
		if n := srv.starts.Load(); n < 3 {
			return fmt.Errorf("%d attempts", n)
		}
		return nil
	})
	k := fakekubelet.Start(t, dir)
	registration(t, k)
}

func TestSupervisorReRegistersAfterAKubeletRestart(t *testing.T) {
	dir := fakekubelet.SocketDir(t)
	k := fakekubelet.Start(t, dir)
	supervised(t, dir)
	first := registration(t, k)
	k.Stop()
	k2 := fakekubelet.Start(t, dir)
	second := registration(t, k2)
	if first.Endpoint == second.Endpoint {
		t.Errorf("re-registered with the same socket %s", first.Endpoint)
	}
}

func TestSupervisorReRegistersWhenItsSocketIsRemoved(t *testing.T) {
	dir := fakekubelet.SocketDir(t)
	k := fakekubelet.Start(t, dir)
	srv, _ := supervised(t, dir)
	first := registration(t, k)
	if err := os.Remove(filepath.Join(dir, first.Endpoint)); err != nil {
		t.Fatal(err)
	}
	second := registration(t, k)
	if second.Endpoint == first.Endpoint {
		t.Errorf("re-registered with the removed socket %s", first.Endpoint)
	}
	if _, err := os.Stat(srv.SocketPath()); err != nil {
		t.Errorf("new socket: %v", err)
	}
}

func TestSupervisorStopsCleanly(t *testing.T) {
	dir := fakekubelet.SocketDir(t)
	k := fakekubelet.Start(t, dir)
	_, tctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(tctx)
	srv := server.New(slots.New(nil, slots.Options{}), server.Options{Dir: dir, ResourceName: vmafxv1.ResourceSlot})
	done := make(chan error, 1)
	go func() { done <- newSupervisor(srv, dir).run(ctx) }()
	r := registration(t, k)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, r.Endpoint)); !os.IsNotExist(err) {
		t.Errorf("socket left after stop: %v", err)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := testutil.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRun runs the whole agent on a fake AMD node against a fake kubelet: it
// registers, streams the slots, reports a lost device, serves probes and metrics, and
// stops cleanly.
func TestRun(t *testing.T) {
	_, tctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(tctx)
	defer cancel()
	h := fakehost.New(t, 8)
	h.AddGPU(fakehost.AMD(0))
	h.AddGPU(fakehost.AMD(1))
	dir := fakekubelet.SocketDir(t)
	addr := freeAddr(t)
	cfg := config.Default()
	cfg.HostRoot, cfg.DevicePluginDir, cfg.PodResourcesSocket = h.Root, dir, ""
	cfg.HeartbeatInterval, cfg.HTTPAddress, cfg.RecoveryDelay = 0, addr, 0
	cfg.SelfTestDir = t.TempDir() // never the host's /run

	var readyBefore int
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	// /readyz answers 503 until the kubelet is there.
	testutil.Eventually(t, 10*time.Second, "the probes to serve", func(context.Context) error {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return err
		}
		readyBefore = resp.StatusCode
		return resp.Body.Close()
	})
	if code := readyBefore; code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before registration = %d, want 503", code)
	}
	k := fakekubelet.Start(t, dir)
	p := k.Connect(registration(t, k))
	lists, err := p.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unhealthy := func(list []*pluginapi.Device) []string {
		var out []string
		for _, d := range list {
			if d.Health != pluginapi.Healthy {
				out = append(out, d.ID)
			}
		}
		return out
	}
	if l := <-lists; len(l) != 8 || len(unhealthy(l)) != 0 {
		t.Fatalf("first list: %d slots, unhealthy %v", len(l), unhealthy(l))
	}
	// The fake kubelet records the registration just before the plugin hears back.
	testutil.Eventually(t, 10*time.Second, "/readyz after registration", func(context.Context) error {
		if code, _ := get(t, "http://"+addr+"/readyz"); code != http.StatusOK {
			return fmt.Errorf("status %d", code)
		}
		return nil
	})
	h.Remove("/dev/dri/renderD129")
	select {
	case l := <-lists:
		if got := strings.Join(unhealthy(l), ","); got != "amd-1-slot-0,amd-1-slot-1,amd-1-slot-2,amd-1-slot-3" {
			t.Errorf("unhealthy after renderD129 went away: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no update within 10 s")
	}
	resp, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"amd-0-slot-2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if env := resp.ContainerResponses[0].Envs; env["VMAFX_BACKEND"] != "hip" || env["VMAFX_DEVICE"] != "amd-0" {
		t.Errorf("Allocate env = %v", env)
	}
	testutil.Eventually(t, 10*time.Second, "the metrics to show the state", func(context.Context) error {
		_, body := get(t, "http://"+addr+"/metrics")
		if strings.Contains(body, `vmafx_device_plugin_slots{state="unhealthy"} 4`) &&
			strings.Contains(body, `vmafx_device_plugin_registrations_total{result="success"} 1`) &&
			strings.Contains(body, `vmafx_device_plugin_allocate_requests_total{result="success"} 1`) {
			return nil
		}
		return fmt.Errorf("metrics:\n%s", body)
	})
	if code, _ := get(t, "http://"+addr+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10 s of cancellation")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "vmafx-slot-*")); len(left) != 0 {
		t.Errorf("sockets left after Run: %v", left)
	}
}

func TestRunFailsWithoutTheConfiguredVendor(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	h := fakehost.New(t, 2)
	cfg := config.Default()
	cfg.HostRoot, cfg.DevicePluginDir, cfg.Vendor, cfg.HeartbeatInterval, cfg.HTTPAddress = h.Root, fakekubelet.SocketDir(t), "nvidia", 0, ""
	cfg.SelfTestDir = t.TempDir()
	if err := Run(ctx, cfg); err == nil || !strings.Contains(err.Error(), "no devices") {
		t.Errorf("Run = %v, want a no-devices error", err)
	}
}
