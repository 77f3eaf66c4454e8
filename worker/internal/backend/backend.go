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
}

// CPU runs the Go kernel on the CPU, with opts.Threads goroutines.
type CPU struct{}

// Name returns "cpu".
func (CPU) Name() string { return string(vmafxv1.BackendCPU) }

// Score calls vmaf.Score.
func (CPU) Score(ctx context.Context, ref, dist vmaf.FrameSource, opts vmaf.Options) (*vmaf.Result, error) {
	return vmaf.Score(ctx, ref, dist, opts)
}

// probe returns a usable backend, or an error saying why there is none.
type probe func() (Backend, error)

// gpuBackends lists the GPU backends this build knows, in the order "auto"
// and "vulkan" try them. It is empty until a GPU backend exists.
var gpuBackends = []struct {
	name  vmafxv1.Backend
	probe probe
}{}

// Select returns the backend to run for requested, the value of
// VMAFX_BACKEND. When requested is a GPU backend this build lacks or cannot
// use, it returns the CPU backend and a one-line reason; the reason is empty
// when the worker runs what was asked (or nothing in particular was asked).
func Select(requested string) (Backend, string) {
	switch vmafxv1.Backend(requested) {
	case "", vmafxv1.BackendCPU:
		return CPU{}, ""
	case vmafxv1.BackendAuto, vmafxv1.BackendVulkan:
		for _, g := range gpuBackends {
			if b, err := g.probe(); err == nil {
				return b, ""
			}
		}
		if requested == string(vmafxv1.BackendAuto) {
			return CPU{}, ""
		}
	}
	for _, g := range gpuBackends {
		if string(g.name) != requested {
			continue
		}
		b, err := g.probe()
		if err != nil {
			return CPU{}, fmt.Sprintf("backend %s is not usable (%v); running on cpu", requested, err)
		}
		return b, ""
	}
	return CPU{}, fmt.Sprintf("backend %s is not built into this worker; running on cpu", requested)
}

// Names lists the backends this build can run.
func Names() []string {
	names := []string{string(vmafxv1.BackendCPU)}
	for _, g := range gpuBackends {
		names = append(names, string(g.name))
	}
	return names
}
