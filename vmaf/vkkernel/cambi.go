package vkkernel

import (
	_ "embed"
	"fmt"
	"math"
	"unsafe"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// CAMBI's c-values (vmaf.CAMBIOffloader): one pass per scale over the
// band the CPU made; the c-values come back for its pooling.

//go:embed shaders/cambi_cvalues.spv
var cambiCValuesSPV []byte

// cambiPushSize is cambi_cvalues.comp's push constant block: w, h, pad, nd.
const cambiPushSize = 16

// cambiWorker is one goroutine's CAMBI buffers: the band (int32 per pixel,
// staged and on the device), the tables (diffs, weights, reciprocals) and
// the c-values with their readback, sized for the largest scale.
type cambiWorker struct {
	k       *Kernel
	cfg     *vmaf.CAMBIConfig
	stream  *vulkan.Stream
	staging *vulkan.Buffer
	band    *vulkan.Buffer
	cvals   *vulkan.Buffer
	back    *vulkan.Buffer
	set     *vulkan.DescriptorSet
	mem     allocs
}

func newCAMBIWorker(k *Kernel, cfg *vmaf.CAMBIConfig) (*cambiWorker, error) {
	cw := &cambiWorker{k: k, cfg: cfg, mem: allocs{dev: k.dev}}
	a := &cw.mem
	n := int64(cfg.Width * cfg.Height * 4)
	cw.staging = a.buffer(n, vulkan.Host)
	cw.band = a.buffer(n, vulkan.DeviceLocal)
	cw.cvals = a.buffer(n, vulkan.DeviceLocal)
	cw.back = a.buffer(n, vulkan.Host)
	// The tables, written once into a host-visible buffer and copied.
	var tab []uint32
	for _, d := range cfg.Diffs {
		tab = append(tab, d)
	}
	wOff := len(tab)
	for _, v := range cfg.Weights {
		tab = append(tab, uint32(v))
	}
	rOff := len(tab)
	for _, v := range cfg.Reciprocal {
		tab = append(tab, math.Float32bits(v))
	}
	tabStage := a.buffer(int64(4*len(tab)), vulkan.Host)
	diffs := a.buffer(int64(4*wOff), vulkan.DeviceLocal)
	weights := a.buffer(int64(4*(rOff-wOff)), vulkan.DeviceLocal)
	recip := a.buffer(int64(4*(len(tab)-rOff)), vulkan.DeviceLocal)
	cw.set = a.bind(k.cambi, cw.band, diffs, weights, recip, cw.cvals)
	err := a.err
	if err == nil {
		cw.stream, err = k.dev.NewStream()
	}
	if err == nil {
		copy(tabStage.Uint32s(), tab)
		if err = cw.stream.Begin(); err == nil {
			cw.stream.Copy(diffs, 0, tabStage, 0, int64(4*wOff))
			cw.stream.Copy(weights, 0, tabStage, int64(4*wOff), int64(4*(rOff-wOff)))
			cw.stream.Copy(recip, 0, tabStage, int64(4*rOff), int64(4*(len(tab)-rOff)))
			err = submitWait(cw.stream)
		}
	}
	if err != nil {
		cw.close()
		return nil, err
	}
	return cw, nil
}

// run computes one scale's c-values; ok is false for a scale larger than
// the configuration's (the CPU computes those).
func (cw *cambiWorker) run(band []int16, w, h int, out []float32) (bool, error) {
	n := w * h
	if w <= 0 || h <= 0 || n > cw.cfg.Width*cw.cfg.Height || len(band) < n || len(out) < n {
		return false, nil
	}
	st := cw.staging.Uint32s()
	for i, b := range band[:n] {
		st[i] = uint32(int32(b))
	}
	s := cw.stream
	if err := s.Begin(); err != nil {
		return false, fmt.Errorf("vulkan cambi: %w", err)
	}
	s.Copy(cw.band, 0, cw.staging, 0, int64(4*n))
	s.Barrier()
	s.Dispatch(cw.k.cambi, cw.set, push(int32(w), int32(h), int32(cw.cfg.Pad), int32(cw.cfg.NumDiffs)), (w+15)/16, (h+15)/16, 1)
	s.Barrier()
	s.Copy(cw.back, 0, cw.cvals, 0, int64(4*n))
	if err := submitWait(s); err != nil {
		return false, fmt.Errorf("vulkan cambi: %w", err)
	}
	copy(out[:n], unsafe.Slice((*float32)(unsafe.Pointer(&cw.back.Bytes()[0])), n))
	return true, nil
}

func (cw *cambiWorker) close() {
	if cw.stream != nil {
		cw.stream.Close()
		cw.stream = nil
	}
	cw.mem.close()
}
