package vulkan

import (
	"errors"
	"fmt"
	"unsafe"
)

// Host memory imported as a buffer (VK_EXT_external_memory_host): the device
// copies from the worker's own memory, where a Host buffer is memory the
// driver allocated, which the host must first copy into. A worker's frames are
// read from their files straight into memory the device can then take them
// from, with no copy on the host between (docs/worker.md, "Frames the device
// reads where they were read").
const (
	extExternalMemoryHost = "VK_EXT_external_memory_host"

	stImportMemoryHostPointer        = 1000178000
	stMemoryHostPointerProperties    = 1000178001
	stPhysicalDeviceExternalHostProp = 1000178002
	stExternalMemoryBufferCreateInfo = 1000072000

	handleTypeHostAllocation = 0x80

	extensionNameSize       = 256
	extensionPropertiesSize = extensionNameSize + 4
)

type physicalDeviceExternalMemoryHostProperties struct {
	sType                           uint32
	pNext                           unsafe.Pointer
	minImportedHostPointerAlignment uint64
}

type externalMemoryBufferCreateInfo struct {
	sType       uint32
	pNext       unsafe.Pointer
	handleTypes uint32
}

type importMemoryHostPointerInfo struct {
	sType        uint32
	pNext        unsafe.Pointer
	handleType   uint32
	pHostPointer unsafe.Pointer
}

type memoryHostPointerProperties struct {
	sType          uint32
	pNext          unsafe.Pointer
	memoryTypeBits uint32
}

// hostImportAlignment is the alignment (and size granule) of host memory that
// physical device p imports, or 0 when it cannot: it lacks the extension, or
// its Vulkan is older than 1.1, which the extension builds on.
func (d *Device) hostImportAlignment(p uintptr, api uint32) uint64 {
	if api < 1<<22|1<<12 || !d.hasExtension(p, extExternalMemoryHost) {
		return 0
	}
	getProps2 := d.lib.instanceProc(d.instance, "vkGetPhysicalDeviceProperties2")
	hp := &physicalDeviceExternalMemoryHostProperties{sType: stPhysicalDeviceExternalHostProp}
	props := &physicalDeviceProperties2{sType: stPhysicalDeviceProps2, pNext: unsafe.Pointer(hp)}
	callVoid(getProps2, p, uintptr(unsafe.Pointer(props)))
	a := hp.minImportedHostPointerAlignment
	if a == 0 || a&(a-1) != 0 {
		return 0 // not a power of two: nothing this package can align to
	}
	return a
}

// hasExtension says whether physical device p offers the device extension name.
func (d *Device) hasExtension(p uintptr, name string) bool {
	enum := d.lib.instanceProc(d.instance, "vkEnumerateDeviceExtensionProperties")
	if enum == 0 {
		return false
	}
	var n uint32
	if err := call(enum, p, 0, uintptr(unsafe.Pointer(&n)), 0); err != nil || n == 0 {
		return false
	}
	raw := make([]byte, int(n)*extensionPropertiesSize)
	if err := call(enum, p, 0, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&raw[0]))); err != nil && !errors.Is(err, Result(5)) {
		return false
	}
	for i := range int(n) {
		if gostring(raw[i*extensionPropertiesSize:i*extensionPropertiesSize+extensionNameSize]) == name {
			return true
		}
	}
	return false
}

// CanImportHost says whether the device takes host memory as a buffer
// (ImportHost); Info.HostImportAlignment is the alignment it asks.
func (d *Device) CanImportHost() bool {
	return d.Info.HostImportAlignment != 0 && d.fn.getMemoryHostPointerProperties != 0
}

// ImportHost makes mem a buffer the device copies from (Stream.Copy), without
// copying it: the device reads mem itself when the copies run, so mem must
// hold what they should read from the submission until the copies are done.
// mem must start at a multiple of Info.HostImportAlignment and be a multiple
// of it long. The buffer holds mem (pinned, runtime.Pinner) until it is closed.
// A driver may refuse memory it already imported elsewhere: callers copy
// through a Host buffer instead.
func (d *Device) ImportHost(mem []byte) (*Buffer, error) {
	a := d.Info.HostImportAlignment
	switch {
	case !d.CanImportHost():
		return nil, fmt.Errorf("%s cannot import host memory (%s)", d.Info.Name, extExternalMemoryHost)
	case len(mem) == 0 || uint64(len(mem))%a != 0 || uint64(uintptr(unsafe.Pointer(&mem[0])))%a != 0:
		return nil, fmt.Errorf("importing %d bytes of host memory: start and size must be multiples of %d", len(mem), a)
	}
	size := int64(len(mem))
	ext := &externalMemoryBufferCreateInfo{sType: stExternalMemoryBufferCreateInfo, handleTypes: handleTypeHostAllocation}
	ci := &bufferCreateInfo{sType: stBufferCreateInfo, pNext: unsafe.Pointer(ext), size: uint64(size), usage: bufferTransferSrc}
	b := &Buffer{d: d, size: size, imported: true}
	b.pin.Pin(&mem[0])
	if err := call(d.fn.createBuffer, d.device, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&b.buffer))); err != nil {
		b.Close()
		return nil, fmt.Errorf("vkCreateBuffer (%d bytes of host memory): %w", size, err)
	}
	var req memoryRequirements
	callVoid(d.fn.getBufferMemoryRequirements, d.device, uintptr(b.buffer), uintptr(unsafe.Pointer(&req)))
	hp := &memoryHostPointerProperties{sType: stMemoryHostPointerProperties}
	if err := call(d.fn.getMemoryHostPointerProperties, d.device, handleTypeHostAllocation, uintptr(unsafe.Pointer(&mem[0])), uintptr(unsafe.Pointer(hp))); err != nil {
		b.Close()
		return nil, fmt.Errorf("vkGetMemoryHostPointerPropertiesEXT: %w", err)
	}
	if req.size > uint64(size) {
		b.Close()
		return nil, fmt.Errorf("a buffer of %d bytes of host memory needs %d", size, req.size)
	}
	idx, err := d.memoryType(req.memoryTypeBits&hp.memoryTypeBits, 0, 0)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("importing host memory: %w", err)
	}
	imp := &importMemoryHostPointerInfo{sType: stImportMemoryHostPointer, handleType: handleTypeHostAllocation, pHostPointer: unsafe.Pointer(&mem[0])}
	ai := &memoryAllocateInfo{sType: stMemoryAllocateInfo, pNext: unsafe.Pointer(imp), allocationSize: uint64(size), memoryTypeIndex: idx}
	if err := call(d.fn.allocateMemory, d.device, uintptr(unsafe.Pointer(ai)), 0, uintptr(unsafe.Pointer(&b.memory))); err != nil {
		b.Close()
		return nil, fmt.Errorf("vkAllocateMemory (importing %d bytes of host memory): %w", size, err)
	}
	if err := call(d.fn.bindBufferMemory, d.device, uintptr(b.buffer), uintptr(b.memory), 0); err != nil {
		b.Close()
		return nil, fmt.Errorf("vkBindBufferMemory (host memory): %w", err)
	}
	// Bytes and the counters see it as host memory: copies from it cross the bus.
	b.mapped = mem
	return b, nil
}

// unpin lets the garbage collector have an imported buffer's memory again, once
// the device no longer holds it.
func (b *Buffer) unpin() {
	if b.imported {
		b.pin.Unpin()
		b.imported = false
	}
}
