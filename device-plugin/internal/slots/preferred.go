package slots

import (
	"fmt"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Preferred answers GetPreferredAllocation. Per container: the slots it must include
// come first; a single slot goes to the least-used device (the one with the most free
// slots, ties to the lowest index) so single-slot workers spread over the GPUs; several
// slots are packed onto one device when one has room for them all, choosing the
// fullest such device so that larger holes stay free for larger requests; otherwise
// they are taken from the devices with the most free slots first, to span as few
// devices as possible. Unknown or unhealthy available slots are never preferred.
func (s *Set) Preferred(req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, cr := range req.GetContainerRequests() {
		ids, err := s.preferred(cr.GetAvailableDeviceIDs(), cr.GetMustIncludeDeviceIDs(), int(cr.GetAllocationSize()))
		if err != nil {
			return nil, err
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: ids})
	}
	return resp, nil
}

// preferred chooses size slots. Callers hold mu for reading.
func (s *Set) preferred(available, must []string, size int) ([]string, error) {
	if size <= 0 {
		return nil, fmt.Errorf("allocation size %d: %w", size, ErrInvalidRequest)
	}
	if len(must) > size {
		return nil, fmt.Errorf("%d slots must be included in an allocation of %d: %w", len(must), size, ErrInvalidRequest)
	}
	chosen := make([]string, 0, size)
	taken := make(map[string]bool, size)
	used := make([]bool, len(s.devices)) // devices the must-include slots are on
	for _, id := range must {
		ref, ok := s.byID[id]
		if !ok {
			return nil, fmt.Errorf("slot %q: %w", id, ErrUnknownSlot)
		}
		if !taken[id] {
			taken[id] = true
			chosen = append(chosen, id)
			used[ref.dev] = true
		}
	}
	need := size - len(chosen)
	if need == 0 {
		return chosen, nil
	}
	// Free slots per device, in slot order.
	free := make([][]string, len(s.devices))
	for _, id := range available {
		ref, ok := s.byID[id]
		if !ok || taken[id] || !s.devices[ref.dev].healthy {
			continue
		}
		taken[id] = true
		free[ref.dev] = append(free[ref.dev], id)
	}
	for i := range free {
		sortBySlot(free[i], s)
	}
	take := func(dev, n int) {
		n = min(n, len(free[dev]))
		chosen = append(chosen, free[dev][:n]...)
		free[dev] = free[dev][n:]
		need -= n
	}
	// Stay on a device the container already has slots on.
	for dev := range s.devices {
		if used[dev] && len(free[dev]) >= need {
			take(dev, need)
			return chosen, nil
		}
	}
	best := -1
	for dev := range s.devices {
		n := len(free[dev])
		if n < need {
			continue
		}
		switch {
		case best < 0:
			best = dev
		case need == 1 && n > len(free[best]): // least used
			best = dev
		case need > 1 && n < len(free[best]): // fullest that fits
			best = dev
		}
	}
	if best >= 0 {
		take(best, need)
		return chosen, nil
	}
	for need > 0 {
		most := -1
		for dev := range s.devices {
			if len(free[dev]) > 0 && (most < 0 || len(free[dev]) > len(free[most])) {
				most = dev
			}
		}
		if most < 0 {
			break // fewer free slots than asked: the kubelet reports the shortage
		}
		take(most, need)
	}
	return chosen, nil
}

func sortBySlot(ids []string, s *Set) {
	// Insertion sort: a device has a handful of slots.
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && s.byID[ids[j]].k < s.byID[ids[j-1]].k; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}
