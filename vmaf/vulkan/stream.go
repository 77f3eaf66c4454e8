package vulkan

import (
	"fmt"
	"unsafe"
)

// Stream records commands into one command buffer and submits them to the
// device's queue, with a fence to wait on. A Stream belongs to one
// goroutine; several streams share the device's queue.
type Stream struct {
	d       *Device
	pool    uint64
	cmd     uintptr
	fence   uint64
	pending bool // submitted and not yet waited for
	err     error
}

// NewStream creates a command buffer and its fence.
func (d *Device) NewStream() (*Stream, error) {
	s := &Stream{d: d}
	pci := &commandPoolCreateInfo{sType: stCommandPoolInfo, flags: commandPoolResetBuffer, queueFamilyIndex: d.family}
	if err := call(d.fn.createCommandPool, d.device, uintptr(unsafe.Pointer(pci)), 0, uintptr(unsafe.Pointer(&s.pool))); err != nil {
		return nil, fmt.Errorf("vkCreateCommandPool: %w", err)
	}
	ai := &commandBufferAllocateInfo{sType: stCommandBufferAllocInfo, commandPool: s.pool, commandBufferCount: 1}
	if err := call(d.fn.allocateCommandBuffers, d.device, uintptr(unsafe.Pointer(ai)), uintptr(unsafe.Pointer(&s.cmd))); err != nil {
		s.Close()
		return nil, fmt.Errorf("vkAllocateCommandBuffers: %w", err)
	}
	fci := &fenceCreateInfo{sType: stFenceCreateInfo}
	if err := call(d.fn.createFence, d.device, uintptr(unsafe.Pointer(fci)), 0, uintptr(unsafe.Pointer(&s.fence))); err != nil {
		s.Close()
		return nil, fmt.Errorf("vkCreateFence: %w", err)
	}
	return s, nil
}

// Begin starts recording. The stream must not be pending.
func (s *Stream) Begin() error {
	if s.pending {
		return fmt.Errorf("stream: Begin while a submission is pending")
	}
	s.err = nil
	if err := call(s.d.fn.resetCommandBuffer, s.cmd, 0); err != nil {
		return fmt.Errorf("vkResetCommandBuffer: %w", err)
	}
	bi := &commandBufferBeginInfo{sType: stCommandBufferBeginInfo, flags: commandBufferOneTime}
	if err := call(s.d.fn.beginCommandBuffer, s.cmd, uintptr(unsafe.Pointer(bi))); err != nil {
		return fmt.Errorf("vkBeginCommandBuffer: %w", err)
	}
	return nil
}

// Copy records a copy of size bytes from src at srcOff to dst at dstOff.
func (s *Stream) Copy(dst *Buffer, dstOff int64, src *Buffer, srcOff int64, size int64) {
	r := []bufferCopy{{srcOffset: uint64(srcOff), dstOffset: uint64(dstOff), size: uint64(size)}}
	if dst.mapped != nil {
		s.d.stats.readback.Add(uint64(size))
	} else if src.mapped != nil {
		s.d.stats.upload.Add(uint64(size))
	}
	callVoid(s.d.fn.cmdCopyBuffer, s.cmd, uintptr(src.buffer), uintptr(dst.buffer), 1, uintptr(unsafe.Pointer(&r[0])))
}

// Fill records filling size bytes of b from off with the 32-bit word v.
func (s *Stream) Fill(b *Buffer, off, size int64, v uint32) {
	callVoid(s.d.fn.cmdFillBuffer, s.cmd, uintptr(b.buffer), uintptr(off), uintptr(size), uintptr(v))
}

// Barrier makes every transfer and shader write recorded (or submitted)
// before it visible to the transfers, shaders and host reads after it. One
// global memory barrier is what compute-only work needs.
func (s *Stream) Barrier() {
	mb := &memoryBarrier{sType: stMemoryBarrier,
		srcAccessMask: accessTransferWrite | accessShaderWrite | accessHostWrite,
		dstAccessMask: accessTransferRead | accessTransferWrite | accessShaderRead | accessShaderWrite | accessHostRead}
	all := uintptr(stageTransfer | stageComputeShader | stageHost)
	s.d.stats.barriers.Add(1)
	callVoid(s.d.fn.cmdPipelineBarrier, s.cmd, all, all, 0, 1, uintptr(unsafe.Pointer(mb)), 0, 0, 0, 0)
}

// Dispatch records a dispatch of p with set bound and push as its push
// constants (exactly p.PushSize bytes).
func (s *Stream) Dispatch(p *Pipeline, set *DescriptorSet, push []byte, x, y, z int) {
	if len(push) != p.PushSize {
		s.err = fmt.Errorf("push constants of %d bytes, pipeline wants %d", len(push), p.PushSize)
		return
	}
	for i, n := range [3]int{x, y, z} {
		if n <= 0 || uint64(n) > uint64(s.d.Info.MaxWorkGroupCount[i]) {
			s.err = fmt.Errorf("dispatch of %dx%dx%d groups, the device allows %v", x, y, z, s.d.Info.MaxWorkGroupCount)
			return
		}
	}
	f := &s.d.fn
	s.d.stats.dispatches.Add(1)
	callVoid(f.cmdBindPipeline, s.cmd, pipelineBindCompute, uintptr(p.pipeline))
	sets := []uint64{set.set}
	callVoid(f.cmdBindDescriptorSets, s.cmd, pipelineBindCompute, uintptr(p.layout), 0, 1, uintptr(unsafe.Pointer(&sets[0])), 0, 0)
	if len(push) > 0 {
		callVoid(f.cmdPushConstants, s.cmd, uintptr(p.layout), shaderStageCompute, 0, uintptr(len(push)), uintptr(unsafe.Pointer(&push[0])))
	}
	callVoid(f.cmdDispatch, s.cmd, uintptr(x), uintptr(y), uintptr(z))
}

// Pending reports whether a submission has not been waited for.
func (s *Stream) Pending() bool { return s.pending }

// Submit ends recording and submits the commands; Wait waits for them.
func (s *Stream) Submit() error {
	if s.err != nil {
		callVoid(s.d.fn.endCommandBuffer, s.cmd)
		return s.err
	}
	if err := call(s.d.fn.endCommandBuffer, s.cmd); err != nil {
		return fmt.Errorf("vkEndCommandBuffer: %w", err)
	}
	cmds := []uintptr{s.cmd}
	si := &submitInfo{sType: stSubmitInfo, commandBufferCount: 1, pCommandBuffers: ptr(cmds)}
	s.d.submitMu.Lock()
	err := call(s.d.fn.queueSubmit, s.d.queue, 1, uintptr(unsafe.Pointer(si)), uintptr(s.fence))
	s.d.submitMu.Unlock()
	if err != nil {
		return fmt.Errorf("vkQueueSubmit: %w", err)
	}
	s.pending = true
	s.d.stats.submits.Add(1)
	return nil
}

// Wait blocks until the last submission has run, then readies the stream
// for the next Begin. Waiting with nothing pending returns at once.
func (s *Stream) Wait() error {
	if !s.pending {
		return nil
	}
	fences := []uint64{s.fence}
	s.d.stats.waits.Add(1)
	// The timeout is in nanoseconds; a minute is far beyond any frame, so
	// hitting it means a lost or hung device.
	if err := call(s.d.fn.waitForFences, s.d.device, 1, uintptr(unsafe.Pointer(&fences[0])), 1, uintptr(60e9)); err != nil {
		return fmt.Errorf("vkWaitForFences: %w", err)
	}
	s.pending = false
	if err := call(s.d.fn.resetFences, s.d.device, 1, uintptr(unsafe.Pointer(&fences[0]))); err != nil {
		return fmt.Errorf("vkResetFences: %w", err)
	}
	return nil
}

// Close waits for pending work and frees the stream.
func (s *Stream) Close() {
	_ = s.Wait()
	f := &s.d.fn
	if s.fence != 0 {
		callVoid(f.destroyFence, s.d.device, uintptr(s.fence), 0)
		s.fence = 0
	}
	if s.pool != 0 {
		callVoid(f.destroyCommandPool, s.d.device, uintptr(s.pool), 0)
		s.pool = 0
	}
}
