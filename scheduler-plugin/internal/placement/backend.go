package placement

import (
	"fmt"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// backendIndex numbers the backends a worker Pod can ask for, so that per-Pod facts are
// array lookups in Filter and Score rather than map lookups or string compares.
type backendIndex uint8

var backends = [...]vmafxv1.Backend{
	vmafxv1.BackendCUDA, vmafxv1.BackendHIP, vmafxv1.BackendSYCL,
	vmafxv1.BackendVulkan, vmafxv1.BackendCPU, vmafxv1.BackendAuto,
}

const numBackends = len(backends)

// vendorIndex numbers the vendors a VmafxNode can offer; unknownVendor stands for a value
// the API does not define (an object written under an older or newer schema).
type vendorIndex uint8

var vendors = [...]vmafxv1.GPUVendor{vmafxv1.VendorNVIDIA, vmafxv1.VendorAMD, vmafxv1.VendorIntel, vmafxv1.VendorCPU}

const (
	unknownVendor = vendorIndex(len(vendors))
	numVendors    = len(vendors) + 1
)

// backendFits[b][v] says whether a node of vendor v can run backend b: a backend with a
// vendor of its own (cuda, hip, sycl, cpu) needs that vendor; vulkan runs on any GPU; auto
// runs anywhere, CPU last: the vendor part of the score ranks a cpu node below every GPU
// vendor (see vendorScores). The mapping itself is the API's (Backend.Vendor).
var backendFits [numBackends][numVendors]bool

// mismatchReasons[b][v] is the Filter reason for a node of vendor v and a Pod wanting backend
// b, written out once so that rejecting a node formats nothing.
var mismatchReasons [numBackends][numVendors]string

func init() {
	for b, backend := range backends {
		want, pinned := backend.Vendor()
		for v, vendor := range vendors {
			switch {
			case pinned:
				backendFits[b][v] = vendor == want
				mismatchReasons[b][v] = fmt.Sprintf("node(s) offer %s but the job needs %s", vendor, backend)
			case backend == vmafxv1.BackendAuto:
				backendFits[b][v] = true
			default:
				backendFits[b][v] = vendor != vmafxv1.VendorCPU
				mismatchReasons[b][v] = fmt.Sprintf("node(s) offer %s but the job needs a GPU (%s)", vendor, backend)
			}
		}
		mismatchReasons[b][unknownVendor] = ErrReasonUnknownVendor
	}
}

func lookupBackend(s string) (backendIndex, bool) {
	for i, b := range backends {
		if string(b) == s {
			return backendIndex(i), true
		}
	}
	return 0, false
}

func lookupVendor(v vmafxv1.GPUVendor) vendorIndex {
	for i, known := range vendors {
		if v == known {
			return vendorIndex(i)
		}
	}
	return unknownVendor
}

// backendNames lists the backends for error messages: "cuda, hip, sycl, vulkan, cpu, auto".
func backendNames() string {
	names := make([]string, len(backends))
	for i, b := range backends {
		names[i] = string(b)
	}
	return strings.Join(names, ", ")
}
