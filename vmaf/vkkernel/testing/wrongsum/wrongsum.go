// Package wrongsum is a test double: a Vulkan kernel that returns one wrong
// device sum, the way a miscompiled shader would, so that tests of the
// self-test (vmaf/vkkernel/selftest) and of those that act on it see a
// mismatch caught. Never linked into a binary (test/imports).
package wrongsum

import (
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vkkernel"
)

// Offload returns k with VIF scale 1's log numerator one too large in the
// sums of the frame-th frame (counted from 0) that each worker returns.
func Offload(k *vkkernel.Kernel, frame int) vmaf.FrameOffload {
	return &offload{Kernel: k, frame: frame}
}

type offload struct {
	*vkkernel.Kernel
	frame int
}

func (o *offload) NewWorker(cfg vmaf.OffloadConfig) (vmaf.OffloadWorker, error) {
	w, err := o.Kernel.NewWorker(cfg)
	if err != nil {
		return nil, err
	}
	return &worker{FrameOffloader: w.(vmaf.FrameOffloader), frame: o.frame}, nil
}

type worker struct {
	vmaf.FrameOffloader
	frame, next int
}

func (w *worker) Next() (*vmaf.OffloadSums, error) {
	s, err := w.FrameOffloader.Next()
	if err == nil && w.next == w.frame && s.VIFOK {
		s.VIF[1].NumLog++
	}
	w.next++
	return s, err
}
