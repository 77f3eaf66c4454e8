package vulkan

import "unsafe"

// Structure types (VkStructureType) of the structures this package passes.
const (
	stApplicationInfo          = 0
	stInstanceCreateInfo       = 1
	stDeviceQueueCreateInfo    = 2
	stDeviceCreateInfo         = 3
	stSubmitInfo               = 4
	stMemoryAllocateInfo       = 5
	stFenceCreateInfo          = 8
	stBufferCreateInfo         = 12
	stShaderModuleCreateInfo   = 16
	stPipelineShaderStageInfo  = 18
	stComputePipelineInfo      = 29
	stPipelineLayoutInfo       = 30
	stDescriptorSetLayoutInfo  = 32
	stDescriptorPoolInfo       = 33
	stDescriptorSetAllocInfo   = 34
	stWriteDescriptorSet       = 35
	stCommandPoolInfo          = 39
	stCommandBufferAllocInfo   = 40
	stCommandBufferBeginInfo   = 42
	stMemoryBarrier            = 46
	stQueryPoolCreateInfo      = 11
	stPhysicalDeviceProps2     = 1000059001
	stPhysicalDeviceDriverProp = 1000196000
)

// Flags and enums, named as in vulkan_core.h.
const (
	apiVersion12 = 1<<22 | 2<<12

	queueCompute = 0x2

	memoryDeviceLocal  = 0x1
	memoryHostVisible  = 0x2
	memoryHostCoherent = 0x4
	memoryHostCached   = 0x8

	memoryHeapDeviceLocal = 0x1

	bufferTransferSrc = 0x1
	bufferTransferDst = 0x2
	bufferStorage     = 0x20

	descriptorStorageBuffer = 7
	descriptorPoolFreeSet   = 0x1
	shaderStageCompute      = 0x20
	pipelineBindCompute     = 1

	stageTransfer      = 0x1000
	stageComputeShader = 0x800
	stageHost          = 0x4000
	stageTopOfPipe     = 0x1

	accessShaderRead    = 0x20
	accessShaderWrite   = 0x40
	accessTransferRead  = 0x800
	accessTransferWrite = 0x1000
	accessHostRead      = 0x2000
	accessHostWrite     = 0x4000

	commandPoolResetBuffer = 0x2
	commandBufferOneTime   = 0x1

	physicalDeviceDiscrete   = 2
	physicalDeviceIntegrated = 1
	physicalDeviceCPU        = 4
)

// Indexes of VkBool32 members of VkPhysicalDeviceFeatures.
const (
	featureShaderFloat64 = 39
	featureShaderInt64   = 40
	featureCount         = 55
)

// Offsets inside VkPhysicalDeviceProperties (raw bytes: the structure is
// 824 bytes of mostly limits this package does not read).
const (
	propAPIVersion        = 0
	propDriverVersion     = 4
	propVendorID          = 8
	propDeviceType        = 16
	propDeviceName        = 20
	propLimits            = 296
	limitMaxStorageRange  = propLimits + 28
	limitMaxSharedMemory  = propLimits + 216
	limitMaxGroupCount    = propLimits + 220
	limitMaxInvocations   = propLimits + 232
	limitTimestampPeriod  = propLimits + 424
	propSize              = 824
	deviceNameSize        = 256
	driverNameSize        = 256
	driverInfoSize        = 256
	queueFamilyPropsSize  = 24
	memoryTypeCountOffset = 0
)

type applicationInfo struct {
	sType              uint32
	pNext              unsafe.Pointer
	pApplicationName   unsafe.Pointer
	applicationVersion uint32
	pEngineName        unsafe.Pointer
	engineVersion      uint32
	apiVersion         uint32
}

type instanceCreateInfo struct {
	sType                   uint32
	pNext                   unsafe.Pointer
	flags                   uint32
	pApplicationInfo        unsafe.Pointer
	enabledLayerCount       uint32
	ppEnabledLayerNames     unsafe.Pointer
	enabledExtensionCount   uint32
	ppEnabledExtensionNames unsafe.Pointer
}

type physicalDeviceProperties2 struct {
	sType      uint32
	pNext      unsafe.Pointer
	properties [propSize]byte
}

type physicalDeviceDriverProperties struct {
	sType              uint32
	pNext              unsafe.Pointer
	driverID           uint32
	driverName         [driverNameSize]byte
	driverInfo         [driverInfoSize]byte
	conformanceVersion [4]byte
}

type queryPoolCreateInfo struct {
	sType              uint32
	pNext              unsafe.Pointer
	flags              uint32
	queryType          uint32
	queryCount         uint32
	pipelineStatistics uint32
}

const (
	queryTypeTimestamp = 2
	queryResult64      = 0x1
	queryResultWait    = 0x2
	stageBottomOfPipe  = 0x2000
)

type queueFamilyProperties struct {
	queueFlags                  uint32
	queueCount                  uint32
	timestampValidBits          uint32
	minImageTransferGranularity [3]uint32
}

type memoryType struct {
	propertyFlags uint32
	heapIndex     uint32
}

type memoryHeap struct {
	size  uint64
	flags uint32
}

type physicalDeviceMemoryProperties struct {
	memoryTypeCount uint32
	memoryTypes     [32]memoryType
	memoryHeapCount uint32
	memoryHeaps     [16]memoryHeap
}

type deviceQueueCreateInfo struct {
	sType            uint32
	pNext            unsafe.Pointer
	flags            uint32
	queueFamilyIndex uint32
	queueCount       uint32
	pQueuePriorities unsafe.Pointer
}

type deviceCreateInfo struct {
	sType                   uint32
	pNext                   unsafe.Pointer
	flags                   uint32
	queueCreateInfoCount    uint32
	pQueueCreateInfos       unsafe.Pointer
	enabledLayerCount       uint32
	ppEnabledLayerNames     unsafe.Pointer
	enabledExtensionCount   uint32
	ppEnabledExtensionNames unsafe.Pointer
	pEnabledFeatures        unsafe.Pointer
}

type bufferCreateInfo struct {
	sType                 uint32
	pNext                 unsafe.Pointer
	flags                 uint32
	size                  uint64
	usage                 uint32
	sharingMode           uint32
	queueFamilyIndexCount uint32
	pQueueFamilyIndices   unsafe.Pointer
}

type memoryRequirements struct {
	size           uint64
	alignment      uint64
	memoryTypeBits uint32
}

type memoryAllocateInfo struct {
	sType           uint32
	pNext           unsafe.Pointer
	allocationSize  uint64
	memoryTypeIndex uint32
}

type descriptorSetLayoutBinding struct {
	binding         uint32
	descriptorType  uint32
	descriptorCount uint32
	stageFlags      uint32
	_               unsafe.Pointer // pImmutableSamplers: none
}

type descriptorSetLayoutCreateInfo struct {
	sType        uint32
	pNext        unsafe.Pointer
	flags        uint32
	bindingCount uint32
	pBindings    unsafe.Pointer
}

type pushConstantRange struct {
	stageFlags uint32
	_          uint32 // offset: always 0
	size       uint32
}

type pipelineLayoutCreateInfo struct {
	sType                  uint32
	pNext                  unsafe.Pointer
	flags                  uint32
	setLayoutCount         uint32
	pSetLayouts            unsafe.Pointer
	pushConstantRangeCount uint32
	pPushConstantRanges    unsafe.Pointer
}

type shaderModuleCreateInfo struct {
	sType    uint32
	pNext    unsafe.Pointer
	flags    uint32
	codeSize uintptr
	pCode    unsafe.Pointer
}

type pipelineShaderStageCreateInfo struct {
	sType               uint32
	pNext               unsafe.Pointer
	flags               uint32
	stage               uint32
	module              uint64
	pName               unsafe.Pointer
	pSpecializationInfo unsafe.Pointer
}

type computePipelineCreateInfo struct {
	sType              uint32
	pNext              unsafe.Pointer
	flags              uint32
	stage              pipelineShaderStageCreateInfo
	layout             uint64
	basePipelineHandle uint64
	basePipelineIndex  int32
}

type descriptorPoolSize struct {
	typ   uint32
	count uint32
}

type descriptorPoolCreateInfo struct {
	sType         uint32
	pNext         unsafe.Pointer
	flags         uint32
	maxSets       uint32
	poolSizeCount uint32
	pPoolSizes    unsafe.Pointer
}

type descriptorSetAllocateInfo struct {
	sType              uint32
	pNext              unsafe.Pointer
	descriptorPool     uint64
	descriptorSetCount uint32
	pSetLayouts        unsafe.Pointer
}

type descriptorBufferInfo struct {
	buffer uint64
	offset uint64
	rng    uint64
}

type writeDescriptorSet struct {
	sType            uint32
	pNext            unsafe.Pointer
	dstSet           uint64
	dstBinding       uint32
	dstArrayElement  uint32
	descriptorCount  uint32
	descriptorType   uint32
	pImageInfo       unsafe.Pointer
	pBufferInfo      unsafe.Pointer
	pTexelBufferView unsafe.Pointer
}

type commandPoolCreateInfo struct {
	sType            uint32
	pNext            unsafe.Pointer
	flags            uint32
	queueFamilyIndex uint32
}

type commandBufferAllocateInfo struct {
	sType              uint32
	pNext              unsafe.Pointer
	commandPool        uint64
	level              uint32
	commandBufferCount uint32
}

type commandBufferBeginInfo struct {
	sType            uint32
	pNext            unsafe.Pointer
	flags            uint32
	pInheritanceInfo unsafe.Pointer
}

type bufferCopy struct {
	srcOffset, dstOffset, size uint64
}

type memoryBarrier struct {
	sType         uint32
	pNext         unsafe.Pointer
	srcAccessMask uint32
	dstAccessMask uint32
}

type submitInfo struct {
	sType                uint32
	pNext                unsafe.Pointer
	waitSemaphoreCount   uint32
	pWaitSemaphores      unsafe.Pointer
	pWaitDstStageMask    unsafe.Pointer
	commandBufferCount   uint32
	pCommandBuffers      unsafe.Pointer
	signalSemaphoreCount uint32
	pSignalSemaphores    unsafe.Pointer
}

type fenceCreateInfo struct {
	sType uint32
	pNext unsafe.Pointer
	flags uint32
}
