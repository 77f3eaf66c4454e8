package slots

import (
	"fmt"
	"slices"
	"strings"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/selftestverdict"
)

// Allocate validates every container request and returns, per container, the device
// nodes behind its slots, the CDI devices (when enabled), each GPU's self-test verdict
// directory (when enabled, with VMAFX_SELFTEST_DIR) and the environment
// VMAFX_BACKEND, VMAFX_DEVICE and VMAFX_SLOTS. A request naming an unknown or unhealthy
// slot fails as a whole, with an error wrapping ErrUnknownSlot or ErrUnhealthySlot.
func (s *Set) Allocate(req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	if len(req.GetContainerRequests()) == 0 {
		return nil, fmt.Errorf("no container requests: %w", ErrInvalidRequest)
	}
	resp := &pluginapi.AllocateResponse{ContainerResponses: make([]*pluginapi.ContainerAllocateResponse, 0, len(req.ContainerRequests))}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, cr := range req.ContainerRequests {
		r, err := s.containerResponse(cr.GetDevicesIds())
		if err != nil {
			return nil, err
		}
		resp.ContainerResponses = append(resp.ContainerResponses, r)
	}
	return resp, nil
}

// containerResponse answers one container. Callers hold mu for reading.
func (s *Set) containerResponse(ids []string) (*pluginapi.ContainerAllocateResponse, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("container requests no slots: %w", ErrInvalidRequest)
	}
	refs := make([]slotRef, len(ids))
	single := true
	for i, id := range ids {
		ref, ok := s.byID[id]
		if !ok {
			return nil, fmt.Errorf("slot %q: %w", id, ErrUnknownSlot)
		}
		d := s.devices[ref.dev]
		if !d.healthy {
			return nil, fmt.Errorf("slot %q of device %s (%s): %w", id, d.name, d.reason, ErrUnhealthySlot)
		}
		if slices.Contains(refs[:i], ref) {
			return nil, fmt.Errorf("slot %q requested twice: %w", id, ErrInvalidRequest)
		}
		refs[i] = ref
		single = single && ref.dev == refs[0].dev
	}
	if single {
		// The common case, one or more slots of one device: everything but the slot
		// list is precomputed.
		d := s.devices[refs[0].dev]
		envs := map[string]string{
			vmafxv1.EnvBackend: d.backend,
			vmafxv1.EnvDevice:  d.name,
			vmafxv1.EnvSlots:   s.slotList(ids, refs),
		}
		addVendorEnvs(envs, d.backend)
		if len(d.mounts) > 0 {
			envs[vmafxv1.EnvSelfTestDir] = selftestverdict.ContainerDir
		}
		return &pluginapi.ContainerAllocateResponse{Envs: envs, Devices: d.specs, CdiDevices: d.cdi, Mounts: d.mounts}, nil
	}
	// Slots on several devices: the union of their nodes (shared ones, like
	// /dev/nvidiactl or /dev/kfd, once), devices in index order.
	devs := make([]int, 0, 2)
	for _, r := range refs {
		if !slices.Contains(devs, r.dev) {
			devs = append(devs, r.dev)
		}
	}
	slices.Sort(devs)
	r := &pluginapi.ContainerAllocateResponse{Envs: map[string]string{}}
	names := make([]string, 0, len(devs))
	seen := map[string]bool{}
	for _, i := range devs {
		d := s.devices[i]
		names = append(names, d.name)
		r.Envs[vmafxv1.EnvBackend] = d.backend
		for _, spec := range d.specs {
			if !seen[spec.HostPath] {
				seen[spec.HostPath] = true
				r.Devices = append(r.Devices, spec)
			}
		}
		r.CdiDevices = append(r.CdiDevices, d.cdi...)
		r.Mounts = append(r.Mounts, d.mounts...)
	}
	if len(r.Mounts) > 0 {
		r.Envs[vmafxv1.EnvSelfTestDir] = selftestverdict.ContainerDir
	}
	r.Envs[vmafxv1.EnvDevice] = strings.Join(names, ",")
	r.Envs[vmafxv1.EnvSlots] = s.slotList(ids, refs)
	addVendorEnvs(r.Envs, r.Envs[vmafxv1.EnvBackend])
	return r, nil
}

// envNVIDIACapabilities is read by the NVIDIA container runtime: only with the graphics
// capability does it mount the driver's Vulkan ICD, which the worker's vulkan backend
// (the one GPU path of cuda slots) needs.
const envNVIDIACapabilities = "NVIDIA_DRIVER_CAPABILITIES"

// addVendorEnvs adds what a vendor's container runtime needs to give the worker its GPU.
func addVendorEnvs(envs map[string]string, backend string) {
	if backend == string(vmafxv1.BackendCUDA) {
		envs[envNVIDIACapabilities] = "compute,utility,graphics"
	}
}

// slotList is VMAFX_SLOTS: the slot IDs in device and slot order, comma-separated.
func (s *Set) slotList(ids []string, refs []slotRef) string {
	if len(ids) == 1 {
		return ids[0]
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if refs[a].dev != refs[b].dev {
			return refs[a].dev - refs[b].dev
		}
		return refs[a].k - refs[b].k
	})
	var b strings.Builder
	for i, o := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(ids[o])
	}
	return b.String()
}
