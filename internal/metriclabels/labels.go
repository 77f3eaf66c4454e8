// Package metriclabels turns what a worker reports about where it scored (the backend
// that ran, the accelerator's name) into Prometheus label values from small, bounded
// sets, so that no worker, driver or tenant adds series by its own spelling. The worker's
// pushed batch metrics and the operator's job metrics label alike.
package metriclabels

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// backends are the backend label's values beside "other": the backends a worker runs.
var backends = []vmafxv1.Backend{vmafxv1.BackendCPU, vmafxv1.BackendCUDA, vmafxv1.BackendHIP, vmafxv1.BackendSYCL, vmafxv1.BackendVulkan}

// Backend is the backend label of a result that ran on backend: one of the backends, or
// "other".
func Backend(backend string) string {
	if slices.Contains(backends, vmafxv1.Backend(backend)) {
		return backend
	}
	return "other"
}

// Values of the gpu label beside the models' names.
const (
	// NoGPU is the gpu label of a result scored on the CPU.
	NoGPU = "none"
	// UnknownGPU is the gpu label of a device that gives no usable name.
	UnknownGPU = "unknown"
	// OtherGPU is the gpu label of a model beyond a GPUSet's bound.
	OtherGPU = "other"
)

// MaxGPU bounds the gpu label: a model's name ("nvidia-h100-80gb-hbm3",
// "amd-radeon-rx-7900-xtx") is well under it.
const MaxGPU = 48

var (
	// driverDetails are the parts of a device's name that say how the driver sees it,
	// not which model it is: "(RADV NAVI31)", "(LLVM 15.0.6, 256 bits)", "(R)", "(TM)".
	driverDetails = regexp.MustCompile(`\([^)]*\)`)
	nonAlnum      = regexp.MustCompile(`[^a-z0-9]+`)
)

// GPU is the gpu label of a device named name: the model's name, lower-case, its
// driver's details in parentheses dropped, runs of other characters turned into one "-",
// at most MaxGPU characters; UnknownGPU when nothing is left. The CPU is NoGPU, which the
// caller, who knows whether a device ran, gives.
func GPU(name string) string {
	name = driverDetails.ReplaceAllString(strings.ToLower(name), " ")
	name = strings.Trim(nonAlnum.ReplaceAllString(name, "-"), "-")
	if len(name) > MaxGPU {
		name = strings.TrimRight(name[:MaxGPU], "-")
	}
	if name == "" {
		return UnknownGPU
	}
	return name
}

// GPUSet bounds the gpu label values one process exports to the first max models it
// sees (a cluster has a handful); later ones are OtherGPU. A long-running process (the
// operator) labels with it, where a worker's single push needs no bound.
type GPUSet struct {
	mu   sync.Mutex
	max  int
	seen map[string]bool
}

// NewGPUSet returns a set of at most max models.
func NewGPUSet(max int) *GPUSet { return &GPUSet{max: max, seen: map[string]bool{}} }

// Label is label itself while the set holds it or has room, else OtherGPU; NoGPU and
// UnknownGPU always pass.
func (s *GPUSet) Label(label string) string {
	if label == NoGPU || label == UnknownGPU {
		return label
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[label] {
		return label
	}
	if len(s.seen) >= s.max {
		return OtherGPU
	}
	s.seen[label] = true
	return label
}
