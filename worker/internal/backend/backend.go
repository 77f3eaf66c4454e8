package backend

import (
	"context"
	"errors"
	"fmt"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vkkernel/selftest"
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

// openVulkan opens the Vulkan backend on the slot's device with its self-test
// running beside (openDevice); gpuOnly refuses CPU implementations of Vulkan
// (lavapipe). Tests replace it.
var openVulkan = func(gpuOnly bool, device string) (Backend, error) {
	v, err := openDevice(gpuOnly, device)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// ErrUnavailable marks a GPU slot whose device cannot run this worker's kernels: the
// attempt fails with reason BackendUnavailable rather than scoring on the CPU, which
// would hide a misconfigured node and hold a GPU slot for a CPU's speed.
var ErrUnavailable = errors.New("backend unavailable")

// Select returns the backend to run for requested, the value of VMAFX_BACKEND that the
// device plugin gives the slot, on device, VMAFX_DEVICE's (openDevice); the caller
// closes what it gets. A GPU's device has passed its self-test when Select returns.
//
//   - cpu (or nothing) runs the CPU kernel;
//   - vulkan runs the Vulkan kernels on the first usable device, a CPU
//     implementation such as lavapipe included;
//   - cuda, hip and sycl have no vendor kernels in this build: their GPU
//     runs the Vulkan kernels, as does auto, on a GPU only (on lavapipe the
//     CPU kernel is faster); auto without one runs on the CPU.
//
// A GPU backend whose device cannot run the Vulkan kernels is an error wrapping
// ErrUnavailable that names what is missing. So is a device that fails the
// self-test (vmaf/vkkernel/selftest), even under auto: its numbers cannot be
// trusted, and the attempt fails with reason BackendUnavailable naming it. A backend this build does not know runs on
// the CPU, with a one-line reason; the reason is empty when the worker runs what was asked.
func Select(requested, device string) (Backend, string, error) {
	b, fellBack, err := SelectBeside(requested, device)
	if err != nil {
		return nil, "", err
	}
	if err := Verify(requested, b); err != nil {
		b.Close()
		return nil, "", err
	}
	return b, fellBack, nil
}

// SelectBeside is Select that returns a GPU's backend as soon as its device is open,
// with the device's self-test running beside: Verify waits for its verdict. Meanwhile
// the backend may score (Pending does), but nothing it scores may be reported before
// Verify returned nil; its own Score waits for the verdict.
func SelectBeside(requested, device string) (Backend, string, error) {
	switch b := vmafxv1.Backend(requested); b {
	case "", vmafxv1.BackendCPU:
		return CPU{}, "", nil
	case vmafxv1.BackendAuto:
		gpu, err := openVulkan(true, device)
		if r, ok := gpu.(interface{ ready() error }); ok && err == nil {
			// A GPU that cannot build the kernels' pipelines is left alone, as
			// one that cannot open: auto runs on the CPU.
			if err = r.ready(); err != nil {
				gpu.Close()
			}
		}
		switch {
		case err == nil:
			return gpu, "", nil
		case errors.Is(err, selftest.ErrFailed):
			return nil, "", unusable(requested, err)
		}
		return CPU{}, "", nil
	case vmafxv1.BackendVulkan, vmafxv1.BackendCUDA, vmafxv1.BackendHIP, vmafxv1.BackendSYCL:
		// A GPU is expected here (under auto, most nodes have none): the self-test's
		// side on the CPU is scored while the device opens, and the self-test after
		// the open waits only for the device's.
		selftest.Prepare()
		gpu, err := openVulkan(b != vmafxv1.BackendVulkan, device)
		if err != nil {
			return nil, "", unusable(requested, err)
		}
		return gpu, "", nil
	}
	return CPU{}, fmt.Sprintf("backend %s is not built into this worker; running on cpu", requested), nil
}

// Verify waits for the self-test of b's device, selected for requested (SelectBeside),
// and returns Select's error for a device that failed it; nil at once for a backend
// without a device or with its verdict known. The caller still closes b.
func Verify(requested string, b Backend) error {
	v, ok := b.(interface{ verify() error })
	if !ok {
		return nil
	}
	if err := v.verify(); err != nil {
		return unusable(requested, err)
	}
	return nil
}

// unusable is the error of a GPU backend, asked for as requested, whose device cannot
// run the Vulkan kernels or failed the self-test (err).
func unusable(requested string, err error) error {
	switch vmafxv1.Backend(requested) {
	case vmafxv1.BackendAuto:
		// A GPU that scores wrong is a broken node, not a CPU node.
		return fmt.Errorf("%w: backend auto: %w", ErrUnavailable, err)
	case vmafxv1.BackendVulkan:
		return fmt.Errorf("%w: backend vulkan is not usable on this node: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("%w: backend %s has no vendor kernel in this worker and its GPU cannot run the Vulkan kernels: %w", ErrUnavailable, requested, err)
}

// Staging is what b holds beside the kernel's own memory when it scores model m (the
// distorted video's encode enc) on frames of info: each scoring thread's host memory
// outside the Go heap (the vulkan backend's mapped staging, vkkernel's
// HostBytesPerWorkerFor), and the frames Score keeps queued on the device
// (vmaf.FrameOffload.FramesInFlight), which vmaf.MemoryEstimateFor counts; 0 and 0 for
// the CPU.
func Staging(b Backend, m *vmaf.Model, info vmaf.VideoInfo, enc vmaf.Encode) (hostPerThread int64, framesInFlight int) {
	if s, ok := b.(interface {
		Staging(*vmaf.Model, vmaf.VideoInfo, vmaf.Encode) (int64, int)
	}); ok {
		return s.Staging(m, info, enc)
	}
	return 0, 0
}

// DefaultGPUThreads is the most threads a GPU backend scores on when none are asked
// for (--threads 0). On the H200 the whole process at 1080p was fastest on 4 threads:
// 262 frames/s, against 197 on 16, whether the 16 all scored with the device or some
// on the CPU beside it; and the kernel's steady state on 16 threads was no higher than
// on 4 (docs/benchmarks.md, "On the H200 again"). Each further thread maps its own
// staging and takes frames the device would score sooner.
const DefaultGPUThreads = 4

// DefaultThreads is how many threads to score on with b when none are asked for: cpus
// (one per CPU the process may use) on the CPU, at most DefaultGPUThreads on a GPU
// backend.
func DefaultThreads(b Backend, cpus int) int {
	if _, ok := b.(CPU); ok || b == nil {
		return cpus
	}
	return min(cpus, DefaultGPUThreads)
}

// Names lists the backends this build can run.
func Names() []string {
	return []string{string(vmafxv1.BackendCPU), string(vmafxv1.BackendVulkan)}
}
