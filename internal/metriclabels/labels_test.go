package metriclabels

import "testing"

// A GPUSet keeps the first models it sees and labels later ones OtherGPU; none and
// unknown always pass, and do not use up the bound.
func TestGPUSet(t *testing.T) {
	s := NewGPUSet(2)
	for _, c := range []struct{ in, want string }{
		{NoGPU, NoGPU}, {UnknownGPU, UnknownGPU},
		{"nvidia-h100", "nvidia-h100"}, {"amd-mi300x", "amd-mi300x"},
		{"intel-arc-a770", OtherGPU}, {"nvidia-h100", "nvidia-h100"}, {NoGPU, NoGPU},
	} {
		if got := s.Label(c.in); got != c.want {
			t.Errorf("Label(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// GPU names a device by its model, whatever its driver adds.
func TestGPU(t *testing.T) {
	for in, want := range map[string]string{"NVIDIA H100 80GB HBM3": "nvidia-h100-80gb-hbm3", "(TM)": UnknownGPU, "llvmpipe (LLVM 15.0.6, 256 bits)": "llvmpipe"} {
		if got := GPU(in); got != want {
			t.Errorf("GPU(%q) = %q, want %q", in, got, want)
		}
	}
	if Backend("vulkan") != "vulkan" || Backend("Vulkan") != "other" {
		t.Error("Backend does not keep to its fixed set")
	}
}
