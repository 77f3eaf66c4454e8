package v1

// Backend is the compute backend a job asks for.
// +kubebuilder:validation:Enum=cuda;hip;sycl;vulkan;cpu;auto
type Backend string

// The backends a job can ask for.
const (
	BackendCUDA   Backend = "cuda"
	BackendHIP    Backend = "hip"
	BackendSYCL   Backend = "sycl"
	BackendVulkan Backend = "vulkan"
	BackendCPU    Backend = "cpu"
	BackendAuto   Backend = "auto"
)

// GPUVendor is the kind of device a node offers its scoring slots on.
// +kubebuilder:validation:Enum=nvidia;amd;intel;cpu
type GPUVendor string

// The vendors a node can offer.
const (
	VendorNVIDIA GPUVendor = "nvidia"
	VendorAMD    GPUVendor = "amd"
	VendorIntel  GPUVendor = "intel"
	VendorCPU    GPUVendor = "cpu"
)

// GPUVendors lists the GPU vendors (every vendor but cpu) in a stable order.
var GPUVendors = []GPUVendor{VendorNVIDIA, VendorAMD, VendorIntel}

// Vendor returns the one vendor that serves backend b, and false for the backends that
// any GPU vendor can serve (vulkan, auto) or for an unknown backend.
func (b Backend) Vendor() (GPUVendor, bool) {
	switch b {
	case BackendCUDA:
		return VendorNVIDIA, true
	case BackendHIP:
		return VendorAMD, true
	case BackendSYCL:
		return VendorIntel, true
	case BackendCPU:
		return VendorCPU, true
	}
	return "", false
}

// NativeBackend returns the backend a device of vendor v runs natively.
func (v GPUVendor) NativeBackend() Backend {
	switch v {
	case VendorNVIDIA:
		return BackendCUDA
	case VendorAMD:
		return BackendHIP
	case VendorIntel:
		return BackendSYCL
	}
	return BackendCPU
}
