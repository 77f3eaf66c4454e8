package vulkan

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Memory says where a buffer lives.
type Memory int

const (
	// DeviceLocal memory is the GPU's own; the host reaches it only through
	// copies from or to a Host buffer.
	DeviceLocal Memory = iota
	// Host memory is mapped into the worker (host-visible and coherent):
	// staging for uploads and readback.
	Host
)

// Buffer is a storage buffer bound to its own memory allocation.
type Buffer struct {
	d      *Device
	buffer uint64
	memory uint64
	size   int64
	mapped []byte // Host buffers only, and imported ones
	// imported says the memory is the caller's (ImportHost), pinned by pin
	// until Close.
	imported bool
	pin      runtime.Pinner
}

// NewBuffer creates a buffer of size bytes usable as a storage buffer and
// as a copy source and destination.
func (d *Device) NewBuffer(size int64, mem Memory) (*Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("buffer size %d", size)
	}
	size = (size + 3) &^ 3 // shaders address 32-bit words
	ci := &bufferCreateInfo{sType: stBufferCreateInfo, size: uint64(size), usage: bufferStorage | bufferTransferSrc | bufferTransferDst}
	b := &Buffer{d: d, size: size}
	if err := call(d.fn.createBuffer, d.device, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&b.buffer))); err != nil {
		return nil, fmt.Errorf("vkCreateBuffer (%d bytes): %w", size, err)
	}
	var req memoryRequirements
	callVoid(d.fn.getBufferMemoryRequirements, d.device, uintptr(b.buffer), uintptr(unsafe.Pointer(&req)))
	want, prefer := uint32(memoryDeviceLocal), uint32(memoryDeviceLocal)
	if mem == Host {
		want, prefer = memoryHostVisible|memoryHostCoherent, memoryHostVisible|memoryHostCoherent|memoryHostCached
	}
	idx, err := d.memoryType(req.memoryTypeBits, want, prefer)
	if err != nil && mem == DeviceLocal {
		// Some devices (software ones) have no memory flagged device-local.
		idx, err = d.memoryType(req.memoryTypeBits, 0, 0)
	}
	if err != nil {
		b.Close()
		return nil, err
	}
	ai := &memoryAllocateInfo{sType: stMemoryAllocateInfo, allocationSize: req.size, memoryTypeIndex: idx}
	if err := call(d.fn.allocateMemory, d.device, uintptr(unsafe.Pointer(ai)), 0, uintptr(unsafe.Pointer(&b.memory))); err != nil {
		b.Close()
		return nil, fmt.Errorf("vkAllocateMemory (%d bytes): %w", req.size, err)
	}
	if err := call(d.fn.bindBufferMemory, d.device, uintptr(b.buffer), uintptr(b.memory), 0); err != nil {
		b.Close()
		return nil, fmt.Errorf("vkBindBufferMemory: %w", err)
	}
	if mem == Host {
		var p unsafe.Pointer
		if err := call(d.fn.mapMemory, d.device, uintptr(b.memory), 0, uintptr(size), 0, uintptr(unsafe.Pointer(&p))); err != nil {
			b.Close()
			return nil, fmt.Errorf("vkMapMemory: %w", err)
		}
		b.mapped = unsafe.Slice((*byte)(p), size)
	}
	return b, nil
}

// Size is the buffer's size in bytes (rounded up to 4).
func (b *Buffer) Size() int64 { return b.size }

// Bytes is a Host buffer's mapped memory; nil for DeviceLocal buffers. The
// device reads and writes it: touch it only while no submitted work uses it.
func (b *Buffer) Bytes() []byte { return b.mapped }

// Uint32s is Bytes seen as 32-bit words.
func (b *Buffer) Uint32s() []uint32 {
	if b.mapped == nil {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b.mapped[0])), len(b.mapped)/4)
}

// Close frees the buffer and its memory.
func (b *Buffer) Close() {
	d := b.d
	if b.mapped != nil && !b.imported {
		callVoid(d.fn.unmapMemory, d.device, uintptr(b.memory))
	}
	b.mapped = nil
	if b.buffer != 0 {
		callVoid(d.fn.destroyBuffer, d.device, uintptr(b.buffer), 0)
		b.buffer = 0
	}
	if b.memory != 0 {
		callVoid(d.fn.freeMemory, d.device, uintptr(b.memory), 0)
		b.memory = 0
	}
	b.unpin()
}
