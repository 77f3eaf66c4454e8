// Package wrongsum is a test double: a Vulkan kernel that returns one wrong
// device sum (or one frame's wrong CAMBI c-values), the way a miscompiled
// shader would, so that tests of the self-test (vmaf/vkkernel/selftest) and
// of those that act on it see a mismatch caught. Never linked into a binary
// (test/imports).
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

// CValues returns k with every scale-0 CAMBI c-value of the frame-th frame
// (counted from 0) that each worker returns with its sums one too large: a
// v1 model's c-values come with the frame's batch.
func CValues(k *vkkernel.Kernel, frame int) vmaf.FrameOffload {
	return &offload{Kernel: k, frame: frame, cvalues: true}
}

type offload struct {
	*vkkernel.Kernel
	frame   int
	cvalues bool
}

func (o *offload) NewWorker(cfg vmaf.OffloadConfig) (vmaf.OffloadWorker, error) {
	w, err := o.Kernel.NewWorker(cfg)
	if err != nil {
		return nil, err
	}
	return &worker{FrameOffloader: w.(vmaf.FrameOffloader), frame: o.frame, cvalues: o.cvalues}, nil
}

type worker struct {
	vmaf.FrameOffloader
	frame, next int
	cvalues     bool
}

func (w *worker) Next() (*vmaf.OffloadSums, error) {
	s, err := w.FrameOffloader.Next()
	switch {
	case err != nil || w.next != w.frame:
	case w.cvalues && s.CAMBIOK:
		for i := range s.CAMBI[0] {
			s.CAMBI[0][i]++
		}
	case !w.cvalues && s.VIFOK:
		s.VIF[1].NumLog++
	}
	w.next++
	return s, err
}
