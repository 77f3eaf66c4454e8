package vulkan

import (
	"fmt"
	"sync"
	"unsafe"
)

// Pipeline is a compute pipeline whose shader reads and writes Bindings
// storage buffers (set 0, bindings 0..Bindings-1) and takes PushSize bytes of
// push constants.
type Pipeline struct {
	d        *Device
	Bindings int
	PushSize int

	module    uint64
	setLayout uint64
	layout    uint64
	pipeline  uint64
	// pool holds the sets Bind allocates. Vulkan leaves a descriptor
	// pool's synchronisation to its user, and a Score's threads make and
	// free their workers' sets at once: poolMu serialises every use of it
	// (allocating, freeing, destroying). Without it lavapipe's pool, a
	// list, broke and the process died in the driver.
	poolMu sync.Mutex
	pool   uint64
}

// NewPipeline builds a compute pipeline from SPIR-V (entry point "main").
// maxSets bounds the descriptor sets bound (Bind) and not yet closed.
func (d *Device) NewPipeline(spirv []byte, bindings, pushSize, maxSets int) (*Pipeline, error) {
	if len(spirv)%4 != 0 || len(spirv) == 0 {
		return nil, fmt.Errorf("SPIR-V of %d bytes is not whole words", len(spirv))
	}
	p := &Pipeline{d: d, Bindings: bindings, PushSize: pushSize}
	code := make([]uint32, len(spirv)/4) // aligned copy
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&code[0])), len(spirv)), spirv)
	smci := &shaderModuleCreateInfo{sType: stShaderModuleCreateInfo, codeSize: uintptr(len(spirv)), pCode: ptr(code)}
	if err := call(d.fn.createShaderModule, d.device, uintptr(unsafe.Pointer(smci)), 0, uintptr(unsafe.Pointer(&p.module))); err != nil {
		return nil, fmt.Errorf("vkCreateShaderModule: %w", err)
	}
	lb := make([]descriptorSetLayoutBinding, bindings)
	for i := range lb {
		lb[i] = descriptorSetLayoutBinding{binding: uint32(i), descriptorType: descriptorStorageBuffer, descriptorCount: 1, stageFlags: shaderStageCompute}
	}
	dslci := &descriptorSetLayoutCreateInfo{sType: stDescriptorSetLayoutInfo, bindingCount: uint32(bindings), pBindings: ptr(lb)}
	if err := call(d.fn.createDescriptorSetLayout, d.device, uintptr(unsafe.Pointer(dslci)), 0, uintptr(unsafe.Pointer(&p.setLayout))); err != nil {
		p.Close()
		return nil, fmt.Errorf("vkCreateDescriptorSetLayout: %w", err)
	}
	layouts := []uint64{p.setLayout}
	plci := &pipelineLayoutCreateInfo{sType: stPipelineLayoutInfo, setLayoutCount: 1, pSetLayouts: ptr(layouts)}
	if pushSize > 0 {
		pcr := []pushConstantRange{{stageFlags: shaderStageCompute, size: uint32(pushSize)}}
		plci.pushConstantRangeCount, plci.pPushConstantRanges = 1, ptr(pcr)
	}
	if err := call(d.fn.createPipelineLayout, d.device, uintptr(unsafe.Pointer(plci)), 0, uintptr(unsafe.Pointer(&p.layout))); err != nil {
		p.Close()
		return nil, fmt.Errorf("vkCreatePipelineLayout: %w", err)
	}
	name := cstring("main")
	cpci := []computePipelineCreateInfo{{
		sType:  stComputePipelineInfo,
		stage:  pipelineShaderStageCreateInfo{sType: stPipelineShaderStageInfo, stage: shaderStageCompute, module: p.module, pName: ptr(name)},
		layout: p.layout, basePipelineIndex: -1,
	}}
	if err := call(d.fn.createComputePipelines, d.device, 0, 1, uintptr(unsafe.Pointer(&cpci[0])), 0, uintptr(unsafe.Pointer(&p.pipeline))); err != nil {
		p.Close()
		return nil, fmt.Errorf("vkCreateComputePipelines: %w", err)
	}
	sizes := []descriptorPoolSize{{typ: descriptorStorageBuffer, count: uint32(bindings * maxSets)}}
	dpci := &descriptorPoolCreateInfo{sType: stDescriptorPoolInfo, flags: descriptorPoolFreeSet, maxSets: uint32(maxSets), poolSizeCount: 1, pPoolSizes: ptr(sizes)}
	if err := call(d.fn.createDescriptorPool, d.device, uintptr(unsafe.Pointer(dpci)), 0, uintptr(unsafe.Pointer(&p.pool))); err != nil {
		p.Close()
		return nil, fmt.Errorf("vkCreateDescriptorPool: %w", err)
	}
	return p, nil
}

// DescriptorSet binds buffers to a pipeline's bindings.
type DescriptorSet struct {
	p   *Pipeline
	set uint64
}

// Bind allocates a descriptor set that binds bufs, in binding order.
func (p *Pipeline) Bind(bufs ...*Buffer) (*DescriptorSet, error) {
	if len(bufs) != p.Bindings {
		return nil, fmt.Errorf("pipeline has %d bindings, got %d buffers", p.Bindings, len(bufs))
	}
	d := p.d
	layouts := []uint64{p.setLayout}
	ai := &descriptorSetAllocateInfo{sType: stDescriptorSetAllocInfo, descriptorPool: p.pool, descriptorSetCount: 1, pSetLayouts: ptr(layouts)}
	s := &DescriptorSet{p: p}
	p.poolMu.Lock()
	err := call(d.fn.allocateDescriptorSets, d.device, uintptr(unsafe.Pointer(ai)), uintptr(unsafe.Pointer(&s.set)))
	p.poolMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("vkAllocateDescriptorSets: %w", err)
	}
	infos := make([]descriptorBufferInfo, len(bufs))
	writes := make([]writeDescriptorSet, len(bufs))
	for i, b := range bufs {
		infos[i] = descriptorBufferInfo{buffer: b.buffer, rng: uint64(b.size)}
		writes[i] = writeDescriptorSet{sType: stWriteDescriptorSet, dstSet: s.set, dstBinding: uint32(i), descriptorCount: 1,
			descriptorType: descriptorStorageBuffer, pBufferInfo: unsafe.Pointer(&infos[i])}
	}
	callVoid(d.fn.updateDescriptorSets, d.device, uintptr(len(writes)), uintptr(unsafe.Pointer(&writes[0])), 0, 0)
	return s, nil
}

// Close frees the descriptor set.
func (s *DescriptorSet) Close() {
	if s.set == 0 {
		return
	}
	d := s.p.d
	sets := []uint64{s.set}
	s.p.poolMu.Lock()
	// A closed pipeline's pool took its sets with it.
	if s.p.pool != 0 {
		callVoid(d.fn.freeDescriptorSets, d.device, uintptr(s.p.pool), 1, uintptr(unsafe.Pointer(&sets[0])))
	}
	s.p.poolMu.Unlock()
	s.set = 0
}

// Close destroys the pipeline and every descriptor set bound from it.
func (p *Pipeline) Close() {
	d, f := p.d, &p.d.fn
	p.poolMu.Lock()
	if p.pool != 0 {
		callVoid(f.destroyDescriptorPool, d.device, uintptr(p.pool), 0)
		p.pool = 0
	}
	p.poolMu.Unlock()
	if p.pipeline != 0 {
		callVoid(f.destroyPipeline, d.device, uintptr(p.pipeline), 0)
	}
	if p.layout != 0 {
		callVoid(f.destroyPipelineLayout, d.device, uintptr(p.layout), 0)
	}
	if p.setLayout != 0 {
		callVoid(f.destroyDescriptorSetLayout, d.device, uintptr(p.setLayout), 0)
	}
	if p.module != 0 {
		callVoid(f.destroyShaderModule, d.device, uintptr(p.module), 0)
	}
	p.module, p.setLayout, p.layout, p.pipeline = 0, 0, 0, 0
}
