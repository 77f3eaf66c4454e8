package deviceplugin_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/vmafx/vmafx/device-plugin/testing/fakehost"
)

// rw is a device node as the container runtime gets it.
func rw(path string) kubecontainer.DeviceInfo {
	return kubecontainer.DeviceInfo{PathOnHost: path, PathInContainer: path, Permissions: "rw"}
}

// TestVendors registers the plugin with the kubelet's device manager on a fake node of
// each kind, and checks capacity and allocatable (devices x slotsPerDevice) and what
// the kubelet hands a worker container for one slot.
func TestVendors(t *testing.T) {
	tests := []struct {
		name     string
		build    func(h *fakehost.Host)
		flags    []string
		slots    int64
		wantEnv  map[string]string
		wantDevs []kubecontainer.DeviceInfo
		wantCDI  []string
	}{
		{
			name: "nvidia",
			build: func(h *fakehost.Host) {
				h.AddGPU(fakehost.NVIDIA(0))
				h.AddGPU(fakehost.NVIDIA(1))
			},
			slots:    8,
			wantEnv:  map[string]string{"VMAFX_BACKEND": "cuda", "VMAFX_DEVICE": "nvidia-0", "VMAFX_SLOTS": "nvidia-0-slot-0", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility,graphics", "VMAFX_SELFTEST_DIR": "/run/vmafx/selftest"},
			wantDevs: []kubecontainer.DeviceInfo{rw("/dev/nvidia0"), rw("/dev/nvidiactl"), rw("/dev/nvidia-uvm"), rw("/dev/nvidia-uvm-tools")},
		},
		{
			name:     "amd with CDI",
			build:    func(h *fakehost.Host) { h.AddGPU(fakehost.AMD(0)) },
			flags:    []string{"--cdi"},
			slots:    4,
			wantEnv:  map[string]string{"VMAFX_BACKEND": "hip", "VMAFX_DEVICE": "amd-0", "VMAFX_SLOTS": "amd-0-slot-0", "VMAFX_SELFTEST_DIR": "/run/vmafx/selftest"},
			wantDevs: []kubecontainer.DeviceInfo{rw("/dev/dri/renderD128"), rw("/dev/kfd")},
			wantCDI:  []string{"amd.com/gpu=0"},
		},
		{
			name:     "intel, 2 slots per device",
			build:    func(h *fakehost.Host) { h.AddGPU(fakehost.Intel(0)) },
			flags:    []string{"--slots-per-device=2"},
			slots:    2,
			wantEnv:  map[string]string{"VMAFX_BACKEND": "sycl", "VMAFX_DEVICE": "intel-0", "VMAFX_SLOTS": "intel-0-slot-0", "VMAFX_SELFTEST_DIR": "/run/vmafx/selftest"},
			wantDevs: []kubecontainer.DeviceInfo{rw("/dev/dri/renderD128")},
		},
		{
			name: "mixed node offers nvidia",
			build: func(h *fakehost.Host) {
				h.AddGPU(fakehost.Intel(0)) // renderD128
				h.AddGPU(fakehost.NVIDIA(0))
			},
			slots:    4,
			wantEnv:  map[string]string{"VMAFX_BACKEND": "cuda", "VMAFX_DEVICE": "nvidia-0", "VMAFX_SLOTS": "nvidia-0-slot-0", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility,graphics", "VMAFX_SELFTEST_DIR": "/run/vmafx/selftest"},
			wantDevs: []kubecontainer.DeviceInfo{rw("/dev/nvidia0"), rw("/dev/nvidiactl"), rw("/dev/nvidia-uvm"), rw("/dev/nvidia-uvm-tools")},
		},
		{
			name: "mixed node, intel chosen by --vendor",
			build: func(h *fakehost.Host) {
				h.AddGPU(fakehost.Intel(0))
				h.AddGPU(fakehost.NVIDIA(0))
			},
			flags:    []string{"--vendor=intel"},
			slots:    4,
			wantEnv:  map[string]string{"VMAFX_BACKEND": "sycl", "VMAFX_DEVICE": "intel-0", "VMAFX_SLOTS": "intel-0-slot-0", "VMAFX_SELFTEST_DIR": "/run/vmafx/selftest"},
			wantDevs: []kubecontainer.DeviceInfo{rw("/dev/dri/renderD128")},
		},
		{
			name:    "no GPU: CPU slots from CPUs",
			build:   func(h *fakehost.Host) {},
			flags:   []string{"--cpus-per-slot=2"},
			slots:   3, // 6 CPUs
			wantEnv: map[string]string{"VMAFX_BACKEND": "cpu", "VMAFX_DEVICE": "cpu", "VMAFX_SLOTS": "cpu-0-slot-0"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := fakehost.New(t, 6)
			tc.build(h)
			k := startKubelet(t, nil)
			p := startPlugin(t, h.Root, tc.flags...)
			k.waitSlots(tc.slots, tc.slots)
			p.waitReady(200)

			opts := k.allocate(workerPod("job-1", 1))
			if diff := cmp.Diff(tc.wantEnv, env(opts)); diff != "" {
				t.Errorf("container env (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDevs, opts.Devices); diff != "" {
				t.Errorf("container devices (-want +got):\n%s", diff)
			}
			// A GPU's workers get its self-test verdict directory, made by the plugin.
			if dev := tc.wantEnv["VMAFX_DEVICE"]; dev != "cpu" {
				if len(opts.Mounts) != 1 || opts.Mounts[0].ContainerPath != "/run/vmafx/selftest/"+dev || filepath.Base(opts.Mounts[0].HostPath) != dev || opts.Mounts[0].ReadOnly {
					t.Errorf("container mounts %+v, want the writable self-test directory of %s", opts.Mounts, dev)
				} else if fi, err := os.Stat(opts.Mounts[0].HostPath); err != nil || !fi.IsDir() {
					t.Errorf("self-test directory %s: %v, want one the plugin made", opts.Mounts[0].HostPath, err)
				}
			} else if len(opts.Mounts) != 0 {
				t.Errorf("cpu slot: container mounts %+v, want none", opts.Mounts)
			}
			var cdi []string
			for _, d := range opts.CDIDevices {
				cdi = append(cdi, d.Name)
			}
			if diff := cmp.Diff(tc.wantCDI, cdi); diff != "" {
				t.Errorf("CDI devices (-want +got):\n%s", diff)
			}
			if got := p.metric(`vmafx_device_plugin_registrations_total{result="success"}`); got != 1 {
				t.Errorf("registrations = %v, want 1", got)
			}
		})
	}
}

// TestAllocationPlacement checks GetPreferredAllocation through the kubelet: single
// slots go to the least-used GPU, a multi-slot request lands on one GPU.
func TestAllocationPlacement(t *testing.T) {
	h := fakehost.New(t, 4)
	h.AddGPU(fakehost.NVIDIA(0))
	h.AddGPU(fakehost.NVIDIA(1))
	k := startKubelet(t, nil)
	startPlugin(t, h.Root)
	k.waitSlots(8, 8)

	first := env(k.allocate(workerPod("job-a", 1)))
	second := env(k.allocate(workerPod("job-b", 1)))
	if first["VMAFX_DEVICE"] == second["VMAFX_DEVICE"] {
		t.Errorf("two single-slot workers share %s while the other GPU is idle", first["VMAFX_DEVICE"])
	}
	multi := env(k.allocate(workerPod("job-c", 3)))
	if strings.Contains(multi["VMAFX_DEVICE"], ",") {
		t.Errorf("a 3-slot worker spans devices %s though one has 3 free", multi["VMAFX_DEVICE"])
	}
	if got := strings.Count(multi["VMAFX_SLOTS"], ",") + 1; got != 3 {
		t.Errorf("VMAFX_SLOTS = %q, want 3 slots", multi["VMAFX_SLOTS"])
	}
	for _, id := range strings.Split(multi["VMAFX_SLOTS"], ",") {
		if !strings.HasPrefix(id, multi["VMAFX_DEVICE"]+"-slot-") {
			t.Errorf("slot %s is not on %s", id, multi["VMAFX_DEVICE"])
		}
	}
}

// TestHealthReachesTheKubelet removes a GPU's device node: the kubelet's allocatable
// drops by that GPU's slots (capacity stays), and returns after the recovery delay
// once the node is back, without restarting anything.
func TestHealthReachesTheKubelet(t *testing.T) {
	h := fakehost.New(t, 4)
	h.AddGPU(fakehost.NVIDIA(0))
	h.AddGPU(fakehost.NVIDIA(1))
	k := startKubelet(t, nil)
	p := startPlugin(t, h.Root, "--recovery-delay=2s")
	k.waitSlots(8, 8)

	h.Remove("/dev/nvidia1")
	took := k.waitSlots(8, 4)
	t.Logf("device loss reached the kubelet in %v", took)
	p.waitMetric(`vmafx_device_plugin_slots{state="unhealthy"}`, 4)

	h.Create("/dev/nvidia1")
	back := time.Now()
	k.waitSlots(8, 8)
	if waited := time.Since(back); waited < 2*time.Second {
		t.Errorf("slots healthy again after %v, before the 2 s recovery delay", waited)
	}
	// The whole GPU is gone from sysfs (hot unplug): same again.
	h.Remove("/sys/devices/pci0000:00/" + fakehost.NVIDIA(0).PCI)
	k.waitSlots(8, 4)
	if got := p.metric(`vmafx_device_plugin_device_health_transitions_total{state="unhealthy"}`); got != 2 {
		t.Errorf("unhealthy transitions = %v, want 2", got)
	}
}

// TestKubeletRestart restarts the device manager as a kubelet restart does (the new
// one removes every socket in the directory and serves a new kubelet.sock): the plugin
// re-registers on its own.
func TestKubeletRestart(t *testing.T) {
	h := fakehost.New(t, 4)
	h.AddGPU(fakehost.AMD(0))
	pods := &podList{}
	k := startKubelet(t, pods)
	p := startPlugin(t, h.Root)
	k.waitSlots(4, 4)
	k.allocate(workerPod("before", 1))

	k.stop()
	k2 := startKubelet(t, pods)
	took := k2.waitSlots(4, 4)
	t.Logf("re-registered with the restarted kubelet in %v", took)
	p.waitMetric(`vmafx_device_plugin_registrations_total{result="success"}`, 2)
	opts := k2.allocate(workerPod("after", 1))
	if got := env(opts)["VMAFX_BACKEND"]; got != "hip" {
		t.Errorf("allocation after the restart: VMAFX_BACKEND = %q", got)
	}
}

// TestPluginSocketRemoved deletes the plugin's socket under a running kubelet: the
// plugin serves a new one and registers it.
func TestPluginSocketRemoved(t *testing.T) {
	h := fakehost.New(t, 4)
	h.AddGPU(fakehost.Intel(0))
	k := startKubelet(t, nil)
	p := startPlugin(t, h.Root)
	k.waitSlots(4, 4)
	socks, _ := filepath.Glob(filepath.Join(pluginDir, "vmafx-slot-*.sock"))
	if len(socks) != 1 {
		t.Fatalf("plugin sockets = %v, want one", socks)
	}
	if err := os.Remove(socks[0]); err != nil {
		t.Fatal(err)
	}
	p.waitMetric(`vmafx_device_plugin_registrations_total{result="success"}`, 2)
	k.waitSlots(4, 4)
	now, _ := filepath.Glob(filepath.Join(pluginDir, "vmafx-slot-*.sock"))
	if len(now) != 1 || slices.Contains(now, socks[0]) {
		t.Errorf("plugin sockets after removal = %v, want one new one", now)
	}
	if got := env(k.allocate(workerPod("job", 1)))["VMAFX_DEVICE"]; got != "intel-0" {
		t.Errorf("allocation through the new socket: VMAFX_DEVICE = %q", got)
	}
}

// TestPluginStartsBeforeTheKubelet starts the plugin with no kubelet.sock at all: it
// is not ready and keeps retrying; once the kubelet is up it registers.
func TestPluginStartsBeforeTheKubelet(t *testing.T) {
	h := fakehost.New(t, 4)
	h.AddGPU(fakehost.NVIDIA(0))
	if _, err := os.Stat(filepath.Join(pluginDir, "kubelet.sock")); !os.IsNotExist(err) {
		t.Fatalf("kubelet.sock exists before the test: %v", err)
	}
	p := startPlugin(t, h.Root)
	p.waitMetric(`vmafx_device_plugin_registrations_total{result="error"}`, 2)
	p.waitReady(503)

	k := startKubelet(t, nil)
	took := k.waitSlots(4, 4)
	t.Logf("registered %v after the kubelet started", took)
	p.waitReady(200)
}
