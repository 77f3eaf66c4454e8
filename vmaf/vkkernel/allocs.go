package vkkernel

import (
	"fmt"
	"sync"

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

// pipelines builds a kernel's compute pipelines, each on a goroutine of its
// own: the driver compiles a pipeline's shader when it is made (unless its
// disk cache has it, which a new Pod's has not), and made one after another
// they were most of a worker's fixed cost (docs/benchmarks.md). Vulkan lets
// pipelines be created from several threads at once.
type pipelines struct {
	dev   *vulkan.Device
	wg    sync.WaitGroup
	mu    sync.Mutex
	err   error                       // the first failure
	names map[*vulkan.Pipeline]string // each pipeline's shader, for phaseProfile
}

// build makes, on a goroutine of its own, a pipeline of the shader name with
// bindings storage buffers, push bytes of push constants and room for sets
// descriptor sets per worker, and puts it in *dst (left nil on failure) before
// wait returns.
func (p *pipelines) build(dst **vulkan.Pipeline, name string, spv []byte, bindings, push, sets int) {
	p.wg.Go(func() {
		pl, err := p.dev.NewPipeline(spv, bindings, push, sets*maxWorkers)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			if p.err == nil {
				p.err = err
			}
			return
		}
		*dst = pl
		if p.names == nil {
			p.names = map[*vulkan.Pipeline]string{}
		}
		p.names[pl] = name
	})
}

// wait waits for every build and returns the first failure.
func (p *pipelines) wait() error {
	p.wg.Wait()
	return p.err
}

// closePipelines closes the pipelines that were built.
func closePipelines(ps ...*vulkan.Pipeline) {
	for _, p := range ps {
		if p != nil {
			p.Close()
		}
	}
}
