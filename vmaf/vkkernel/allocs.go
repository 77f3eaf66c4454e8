package vkkernel

import (
	"fmt"

	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// allocs collects a worker's buffers and descriptor sets so that they are
// freed together; after the first failure it allocates nothing more and
// keeps that error.
type allocs struct {
	dev  *vulkan.Device
	bufs []*vulkan.Buffer
	sets []*vulkan.DescriptorSet
	err  error
}

func (a *allocs) buffer(size int64, mem vulkan.Memory) *vulkan.Buffer {
	if a.err != nil {
		return nil
	}
	if limit := int64(a.dev.Info.MaxStorageBufferRange); size > limit {
		a.err = fmt.Errorf("a buffer of %d bytes exceeds the device's storage buffer range (%d bytes)", size, limit)
		return nil
	}
	b, err := a.dev.NewBuffer(max(size, 4), mem)
	if err != nil {
		a.err = err
		return nil
	}
	a.bufs = append(a.bufs, b)
	return b
}

func (a *allocs) bind(p *vulkan.Pipeline, bufs ...*vulkan.Buffer) *vulkan.DescriptorSet {
	if a.err != nil {
		return nil
	}
	s, err := p.Bind(bufs...)
	if err != nil {
		a.err = err
		return nil
	}
	a.sets = append(a.sets, s)
	return s
}

func (a *allocs) close() {
	for _, s := range a.sets {
		s.Close()
	}
	for _, b := range a.bufs {
		b.Close()
	}
	a.sets, a.bufs = nil, nil
}

// pipelines builds compute pipelines with one push constant size until the
// first failure, and keeps that error.
type pipelines struct {
	dev      *vulkan.Device
	pushSize int
	err      error
}

// build makes a pipeline with bindings storage buffers and room for sets
// descriptor sets per worker.
func (p *pipelines) build(spv []byte, bindings, sets int) *vulkan.Pipeline {
	if p.err != nil {
		return nil
	}
	pl, err := p.dev.NewPipeline(spv, bindings, p.pushSize, sets*maxWorkers)
	if err != nil {
		p.err = err
		return nil
	}
	return pl
}

// closePipelines closes the pipelines that were built.
func closePipelines(ps ...*vulkan.Pipeline) {
	for _, p := range ps {
		if p != nil {
			p.Close()
		}
	}
}
