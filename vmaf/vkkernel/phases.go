package vkkernel

import "github.com/vmafx/vmafx/vmaf/vulkan"

// recorder is what a feature records its passes with: a stream, or a frame's
// phases, which put the features' passes side by side.
type recorder interface {
	Dispatch(p *vulkan.Pipeline, set *vulkan.DescriptorSet, push []byte, x, y, z int)
	Barrier()
	Copy(dst *vulkan.Buffer, dstOff int64, src *vulkan.Buffer, srcOff, size int64)
	Fill(b *vulkan.Buffer, off, size int64, v uint32)
}

var (
	_ recorder = (*vulkan.Stream)(nil)
	_ recorder = (*phases)(nil)
)

// phases records a frame's features side by side. On one queue a barrier
// waits for all the work recorded before it, so a frame whose features were
// recorded one after another ran in a chain of every feature's barriers
// (about 40 a frame for vmaf_v0.6.1), and the small passes of the upper scales left
// most of a GPU idle (docs/benchmarks.md, "On an NVIDIA H200"). A frame's
// features read the planes uploaded before them and write buffers of their
// own (and their own words of the results and the readback), so none waits
// for another's passes: each feature's commands after its k-th barrier go into
// phase k, and flush records the phases one after another, one barrier after
// each. A frame then takes as many barriers as its longest feature has phases
// (ADM's 11 for vmaf_v0.6.1, CAMBI's for a v1 model), and a phase's passes of
// several features run side by side.
type phases struct {
	at   int         // the phase the feature being recorded is at
	list [][]command // the commands of each phase, in the order recorded
	push []byte      // the dispatches' push constants, copied
}

// command is a recorded dispatch, copy or fill.
type command struct {
	op             commandOp
	p              *vulkan.Pipeline
	set            *vulkan.DescriptorSet
	push0, push1   int // the push constants: push[push0:push1]
	x, y, z        int
	dst, src       *vulkan.Buffer
	dstOff, srcOff int64
	size           int64
	fill           uint32
}

type commandOp int

const (
	opDispatch commandOp = iota
	opCopy
	opFill
)

// begin starts a feature: its first commands go into the first phase.
func (ph *phases) begin() { ph.at = 0 }

func (ph *phases) add(c command) {
	for len(ph.list) <= ph.at {
		ph.list = append(ph.list, nil)
	}
	ph.list[ph.at] = append(ph.list[ph.at], c)
}

// Dispatch records a dispatch in the feature's phase.
func (ph *phases) Dispatch(p *vulkan.Pipeline, set *vulkan.DescriptorSet, push []byte, x, y, z int) {
	at := len(ph.push)
	ph.push = append(ph.push, push...)
	ph.add(command{op: opDispatch, p: p, set: set, push0: at, push1: len(ph.push), x: x, y: y, z: z})
}

// Barrier ends the feature's phase: its next commands go into the next.
func (ph *phases) Barrier() { ph.at++ }

// Copy records a copy in the feature's phase.
func (ph *phases) Copy(dst *vulkan.Buffer, dstOff int64, src *vulkan.Buffer, srcOff, size int64) {
	ph.add(command{op: opCopy, dst: dst, dstOff: dstOff, src: src, srcOff: srcOff, size: size})
}

// Fill records a fill in the feature's phase.
func (ph *phases) Fill(b *vulkan.Buffer, off, size int64, v uint32) {
	ph.add(command{op: opFill, dst: b, dstOff: off, size: size, fill: v})
}

// reset drops what was recorded (and the buffers' references it held).
func (ph *phases) reset() {
	for i := range ph.list {
		clear(ph.list[i])
		ph.list[i] = ph.list[i][:0]
	}
	ph.push, ph.at = ph.push[:0], 0
}

// flush records the phases into s, each followed by a barrier (an empty
// phase needs none) and after, when not nil, with the phase's index and
// commands, and empties them for the next frame.
func (ph *phases) flush(s *vulkan.Stream, after func(k int, cmds []command)) {
	for i, cmds := range ph.list {
		if len(cmds) == 0 {
			continue
		}
		for _, c := range cmds {
			switch c.op {
			case opDispatch:
				s.Dispatch(c.p, c.set, ph.push[c.push0:c.push1], c.x, c.y, c.z)
			case opCopy:
				s.Copy(c.dst, c.dstOff, c.src, c.srcOff, c.size)
			case opFill:
				s.Fill(c.dst, c.dstOff, c.size, c.fill)
			}
		}
		s.Barrier()
		if after != nil {
			after(i, cmds)
		}
	}
	ph.reset()
}
