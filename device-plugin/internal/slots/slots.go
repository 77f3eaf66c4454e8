package slots

import (
	"errors"
	"path"
	"path/filepath"
	"strconv"
	"sync"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/discovery"
	"github.com/vmafx/vmafx/internal/selftestverdict"
)

// Errors of allocation requests. Callers branch on them with errors.Is.
var (
	// ErrInvalidRequest is a malformed request: no slots, a slot twice, a bad size.
	ErrInvalidRequest = errors.New("invalid allocation request")
	// ErrUnknownSlot is a slot ID this plugin never advertised.
	ErrUnknownSlot = errors.New("unknown slot")
	// ErrUnhealthySlot is a slot whose device is unhealthy.
	ErrUnhealthySlot = errors.New("slot unhealthy")
)

// DeviceSpecPermissions are the cgroup permissions a container gets on each device
// node: read and write, which compute needs; never mknod ("m"), which it does not.
const DeviceSpecPermissions = "rw"

// DefaultCDIKind returns the CDI kind the vendor's CDI spec generators use, or "" for
// cpu, which has no CDI devices.
func DefaultCDIKind(v vmafxv1.GPUVendor) string {
	switch v {
	case vmafxv1.VendorNVIDIA:
		return "nvidia.com/gpu"
	case vmafxv1.VendorAMD:
		return "amd.com/gpu"
	case vmafxv1.VendorIntel:
		return "intel.com/gpu"
	}
	return ""
}

// Options configure a Set.
type Options struct {
	// CDIKind, when not empty, adds the CDI device <CDIKind>=<index> of each device to
	// Allocate responses.
	CDIKind string
	// SelfTestDir, when not empty, is the host directory of the workers' Vulkan
	// self-test verdicts: Allocate mounts each GPU's subdirectory (SelfTestDir/<device>)
	// writable into the worker, at selftestverdict.ContainerDir/<device>, and sets
	// VMAFX_SELFTEST_DIR to selftestverdict.ContainerDir.
	SelfTestDir string
}

// Set is the node's slots and their health. It is safe for concurrent use.
type Set struct {
	devices []*device
	byID    map[string]slotRef
	total   int

	mu      sync.RWMutex
	list    []*pluginapi.Device // published snapshot; never modified once published
	changed chan struct{}       // closed, and replaced, at every health change
}

type device struct {
	info    discovery.Device
	name    string
	ids     []string
	backend string
	// specs, cdi and mounts are built once; every response for the device shares them
	// (they are only ever marshalled).
	specs  []*pluginapi.DeviceSpec
	cdi    []*pluginapi.CDIDevice
	mounts []*pluginapi.Mount // the self-test verdict directory; none for cpu

	healthy bool   // guarded by Set.mu
	reason  string // why unhealthy; guarded by Set.mu
}

type slotRef struct{ dev, k int }

// New returns the slots of devs, all healthy.
func New(devs []discovery.Device, opts Options) *Set {
	s := &Set{byID: map[string]slotRef{}, changed: make(chan struct{})}
	for i, d := range devs {
		dev := &device{
			info:    d,
			name:    d.Name(),
			backend: string(d.Vendor.NativeBackend()),
			healthy: true,
		}
		for k := 0; k < d.Slots; k++ {
			id := d.SlotID(k)
			dev.ids = append(dev.ids, id)
			s.byID[id] = slotRef{dev: i, k: k}
		}
		s.total += d.Slots
		for _, n := range d.Nodes {
			dev.specs = append(dev.specs, &pluginapi.DeviceSpec{ContainerPath: n.Path, HostPath: n.Path, Permissions: DeviceSpecPermissions})
		}
		if opts.CDIKind != "" && d.Vendor != vmafxv1.VendorCPU {
			dev.cdi = []*pluginapi.CDIDevice{{Name: opts.CDIKind + "=" + strconv.Itoa(d.Index)}}
		}
		if opts.SelfTestDir != "" && d.Vendor != vmafxv1.VendorCPU {
			dev.mounts = []*pluginapi.Mount{{
				ContainerPath: path.Join(selftestverdict.ContainerDir, dev.name),
				HostPath:      filepath.Join(opts.SelfTestDir, dev.name),
			}}
		}
		s.devices = append(s.devices, dev)
	}
	s.publish()
	return s
}

// publish rebuilds the ListAndWatch snapshot. Callers hold mu (or own s exclusively).
func (s *Set) publish() {
	list := make([]*pluginapi.Device, 0, s.total)
	for _, d := range s.devices {
		health := pluginapi.Healthy
		if !d.healthy {
			health = pluginapi.Unhealthy
		}
		for _, id := range d.ids {
			list = append(list, &pluginapi.Device{ID: id, Health: health})
		}
	}
	s.list = list
}

// List returns the slots with their health and a channel closed at the next change.
// The returned slice must not be modified.
func (s *Set) List() ([]*pluginapi.Device, <-chan struct{}) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list, s.changed
}

// Devices returns the devices behind the slots.
func (s *Set) Devices() []discovery.Device {
	out := make([]discovery.Device, len(s.devices))
	for i, d := range s.devices {
		out[i] = d.info
	}
	return out
}

// SetHealth marks every slot of the named device healthy or not, together, and
// reports whether that changed anything. reason says why a device is unhealthy.
func (s *Set) SetHealth(name string, healthy bool, reason string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, d := range s.devices {
		if d.name != name {
			continue
		}
		if d.healthy != healthy {
			d.healthy, changed = healthy, true
		}
		if healthy {
			d.reason = ""
		} else {
			d.reason = reason
		}
	}
	if changed {
		s.publish()
		close(s.changed)
		s.changed = make(chan struct{})
	}
	return changed
}

// Healthy reports whether the named device is healthy.
func (s *Set) Healthy(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, d := range s.devices {
		if d.name == name {
			return d.healthy
		}
	}
	return false
}

// Counts returns the number of slots and of healthy slots.
func (s *Set) Counts() (total, healthy int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, d := range s.devices {
		if d.healthy {
			healthy += len(d.ids)
		}
	}
	return s.total, healthy
}
