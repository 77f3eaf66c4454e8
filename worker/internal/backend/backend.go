package backend

import (
	"context"
	"fmt"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/worker/vmaf"
)

// Backend computes VMAF for a pair of videos on one kind of device.
type Backend interface {
	// Name is the backend's name, as in VMAFX_BACKEND (e.g. "cpu").
	Name() string
	// Score scores dist against ref, as vmaf.Score does.
	Score(ctx context.Context, ref, dist vmaf.FrameSource, opts vmaf.Options) (*vmaf.Result, error)
	// Device describes the accelerator that scores and what it computes;
	// nil for the CPU.
	Device() *vmafxv1.WorkerDevice
	// Close frees the backend's device.
	Close()
}

// CPU runs the Go kernel on the CPU, with opts.Threads goroutines.
type CPU struct{}

// Name returns "cpu".
func (CPU) Name() string { return string(vmafxv1.BackendCPU) }

// Score calls vmaf.Score.
func (CPU) Score(ctx context.Context, ref, dist vmaf.FrameSource, opts vmaf.Options) (*vmaf.Result, error) {
	return vmaf.Score(ctx, ref, dist, opts)
}

// Device returns nil: the CPU is not an accelerator.
func (CPU) Device() *vmafxv1.WorkerDevice { return nil }

// Close does nothing.
func (CPU) Close() {}

// openVulkan opens the Vulkan backend; gpuOnly refuses CPU implementations
// of Vulkan (lavapipe). Tests replace it.
var openVulkan = func(gpuOnly bool) (Backend, error) {
	v, err := OpenVulkan(gpuOnly)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Select returns the backend to run for requested, the value of
// VMAFX_BACKEND, and closes nothing: the caller closes what it gets.
//
//   - cpu (or nothing) runs the CPU kernel;
//   - vulkan runs the Vulkan kernels on the first usable device, a CPU
//     implementation such as lavapipe included;
//   - cuda, hip and sycl have no vendor kernels in this build: their GPU
//     runs the Vulkan kernels, as does auto, on a GPU only (on lavapipe the
//     CPU kernel is faster).
//
// When what was asked for cannot run, Select returns the CPU backend and a
// one-line reason naming what is missing; the reason is empty when the
// worker runs what was asked (auto falls back silently: any backend fits).
func Select(requested string) (Backend, string) {
	switch b := vmafxv1.Backend(requested); b {
	case "", vmafxv1.BackendCPU:
		return CPU{}, ""
	case vmafxv1.BackendAuto:
		if gpu, err := openVulkan(true); err == nil {
			return gpu, ""
		}
		return CPU{}, ""
	case vmafxv1.BackendVulkan, vmafxv1.BackendCUDA, vmafxv1.BackendHIP, vmafxv1.BackendSYCL:
		gpu, err := openVulkan(b != vmafxv1.BackendVulkan)
		if err == nil {
			return gpu, ""
		}
		if b == vmafxv1.BackendVulkan {
			return CPU{}, fmt.Sprintf("backend vulkan is not usable (%v); running on cpu", err)
		}
		return CPU{}, fmt.Sprintf("backend %s has no vendor kernel in this worker and its GPU cannot run the Vulkan kernels (%v); running on cpu", requested, err)
	}
	return CPU{}, fmt.Sprintf("backend %s is not built into this worker; running on cpu", requested)
}

// Names lists the backends this build can run.
func Names() []string {
	return []string{string(vmafxv1.BackendCPU), string(vmafxv1.BackendVulkan)}
}
