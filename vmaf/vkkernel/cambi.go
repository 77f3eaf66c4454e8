package vkkernel

import (
	_ "embed"
	"fmt"
	"math"
	"unsafe"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// CAMBI on the device (vmaf.CAMBIOffloader): from the distorted luma
// plane the batch uploads for the frame (the worker's dis0), every scale's
// c-values, shaders/cambi.comp's passes recorded into the frame's batch;
// the c-values come back with the batch and the CPU pools them.

//go:embed shaders/cambi.spv
var cambiSPV []byte

// cambiPushWords is cambi.comp's push constant block, in 32-bit words.
const cambiPushWords = 19

// cambiBindings are cambi.comp's buffers: input, tables, work, diffs,
// weights, reciprocals, c-values.
const cambiBindings = 7

// The passes (cambi.comp's op).
const (
	cambiConv = iota
	cambiDither
	cambiMask
	cambiDecimate
	cambiMode
	cambiCValues
	cambiBand
)

// cambiWorker is one goroutine's CAMBI buffers: the tables, the work
// buffer (two pictures and two masks of the encode's size, one word a
// pixel) and the c-values of every scale on the device, which every frame
// of a batch uses in turn, and per ring slot the readback of its frames'
// c-values, a frame's at its place in the batch. The input is the
// worker's distorted plane.
type cambiWorker struct {
	k      *Kernel
	cfg    *vmaf.CAMBIConfig
	scales [5][2]int
	outOff [5]int
	outN   int
	cvals  *vulkan.Buffer
	back   [ringSlots]*vulkan.Buffer // batch x every scale's c-values
	set    *vulkan.DescriptorSet
	mem    allocs
	// tab is the tables' staging and dev their device buffers, copied by
	// the first batch recorded after the worker is made (tabPending).
	tab         *vulkan.Buffer
	dev         [4]*vulkan.Buffer
	offs, sizes [4]int64
	tabPending  bool
	// spare are c-value buffers handed out and given back, for the next
	// frames.
	spare []*[5][]float32
}

// cambiOutN is the number of c-values of every scale under cfg.
func cambiOutN(cfg *vmaf.CAMBIConfig) int {
	n := 0
	for _, sz := range cfg.CAMBIScales() {
		n += sz[0] * sz[1]
	}
	return n
}

// newCAMBIWorker makes the buffers for batches of batch frames whose
// distorted planes the batch copies into in (w x h, bpc bits).
func newCAMBIWorker(k *Kernel, cfg *vmaf.CAMBIConfig, in *vulkan.Buffer, w, h, bpc, batch int) (*cambiWorker, error) {
	if cfg.InWidth != w || cfg.InHeight != h || cfg.BitDepth != bpc {
		return nil, fmt.Errorf("vulkan cambi: a %dx%d %d-bit input, the frames are %dx%d %d-bit",
			cfg.InWidth, cfg.InHeight, cfg.BitDepth, w, h, bpc)
	}
	cw := &cambiWorker{k: k, cfg: cfg, scales: cfg.CAMBIScales(), mem: allocs{dev: k.dev}}
	for s, sz := range cw.scales {
		cw.outOff[s] = cw.outN
		cw.outN += sz[0] * sz[1]
	}
	a := &cw.mem
	n := cfg.Width * cfg.Height
	work := a.buffer(int64(4*4*n), vulkan.DeviceLocal)
	cw.cvals = a.buffer(int64(4*cw.outN), vulkan.DeviceLocal)
	for i := range cw.back {
		cw.back[i] = a.buffer(int64(batch*4*cw.outN), vulkan.Host)
	}
	// The tables, written once into a host-visible buffer and copied.
	var tab []uint32
	add := func(v []uint32) (off, size int64) {
		off = int64(4 * len(tab))
		tab = append(tab, v...)
		return off, int64(4 * len(v))
	}
	var rc []uint32
	for _, v := range append(append([]int32(nil), cfg.Rows...), cfg.Cols...) {
		rc = append(rc, uint32(v))
	}
	var ws, rs []uint32
	for _, v := range cfg.Weights {
		ws = append(ws, uint32(v))
	}
	for _, v := range cfg.Reciprocal {
		rs = append(rs, math.Float32bits(v))
	}
	parts := [][]uint32{rc, cfg.Diffs, ws, rs}
	for i, p := range parts {
		cw.offs[i], cw.sizes[i] = add(p)
	}
	cw.tab = a.buffer(int64(4*len(tab)), vulkan.Host)
	for i := range cw.dev {
		cw.dev[i] = a.buffer(cw.sizes[i], vulkan.DeviceLocal)
	}
	cw.set = a.bind(k.cambi, in, cw.dev[0], work, cw.dev[1], cw.dev[2], cw.dev[3], cw.cvals)
	if a.err != nil {
		cw.close()
		return nil, a.err
	}
	copy(cw.tab.Uint32s(), tab)
	cw.tabPending = true
	return cw, nil
}

// upload records the tables' copies when the worker has not uploaded them
// yet, at the start of a batch.
func (cw *cambiWorker) upload(s *vulkan.Stream) {
	if !cw.tabPending {
		return
	}
	for i, d := range cw.dev {
		if cw.sizes[i] > 0 {
			s.Copy(d, 0, cw.tab, cw.offs[i], cw.sizes[i])
		}
	}
	cw.tabPending = false
}

// push is cambi.comp's push constants for one pass.
type cambiPush struct {
	op, w, h, srcW, src, dst, srcM, dstM, outOff int
}

// dispatch records pass p; record places the barriers, so that passes that
// do not wait for each other share a phase.
func (cw *cambiWorker) dispatch(s recorder, p cambiPush) {
	c := cw.cfg
	var up, down, round int32
	switch {
	case c.BitDepth < 10:
		up = int32(10 - c.BitDepth)
	case c.BitDepth > 10:
		down, round = int32(c.BitDepth-10), int32(1)<<(c.BitDepth-11)
	}
	words := push(int32(p.op), int32(p.w), int32(p.h), int32(p.srcW), int32(p.src), int32(p.dst), int32(p.srcM), int32(p.dstM),
		int32(p.outOff), int32(c.InWidth), up, down, round, int32(c.MaskThreshold), int32(c.BandBase), int32(c.BandSize),
		int32(c.Pad), int32(c.NumDiffs), int32(c.Height))
	s.Dispatch(cw.k.cambi, cw.set, words, (p.w+15)/16, (p.h+15)/16, 1)
}

// record records the passes of every scale's c-values of the distorted
// plane the batch uploaded for its frame i, with their copy to slot's
// readback.
func (cw *cambiWorker) record(s recorder, slot, i int) {
	c := cw.cfg
	// Work: pictures at 0 and n, masks at 2n and 3n.
	n := c.Width * c.Height
	w, h := c.Width, c.Height
	img, mask := 0, 2*n
	other := func(off, base int) int { return base + n - (off - base) }
	pass := func(p cambiPush) {
		cw.dispatch(s, p)
		s.Barrier()
	}
	decimate := func(nw, nh int) {
		cw.dispatch(s, cambiPush{op: cambiDecimate, w: nw, h: nh, srcW: w, src: img, dst: other(img, 0), srcM: mask, dstM: other(mask, 2*n)})
	}
	pass(cambiPush{op: cambiConv, w: w, h: h, dst: img})
	if c.AntiDither {
		pass(cambiPush{op: cambiDither, w: w, h: h, src: img, dst: other(img, 0)})
		img = other(img, 0)
	}
	pass(cambiPush{op: cambiMask, w: w, h: h, src: img, dstM: mask})
	if c.SpeedUp {
		sz := cw.scales[0]
		decimate(sz[0], sz[1])
		s.Barrier()
		img, mask = other(img, 0), other(mask, 2*n)
		w, h = sz[0], sz[1]
	}
	pass(cambiPush{op: cambiMode, w: w, h: h, src: img, dst: other(img, 0)})
	img = other(img, 0)
	// The next scale needs only this scale's mode-filtered picture and
	// mask, so its decimation runs beside this scale's band, and its mode
	// filter beside this scale's c-values: two phases a scale where one pass
	// after another took four. The band goes where the picture before the
	// mode filter was, at the end of that area, and the next scale's
	// decimation at its start; where the two do not fit side by side (the
	// first scale at full size), the passes run one after another as before,
	// the band at the area's start.
	for scale := range cw.scales {
		next := scale+1 < len(cw.scales)
		var nw, nh int
		if next {
			nw, nh = cw.scales[scale+1][0], cw.scales[scale+1][1]
		}
		overlap := next && w*h+nw*nh <= n
		band := other(img, 0)
		if overlap {
			band += n - w*h
		}
		cw.dispatch(s, cambiPush{op: cambiBand, w: w, h: h, src: img, srcM: mask, dst: band})
		if overlap {
			decimate(nw, nh)
		}
		s.Barrier()
		cw.dispatch(s, cambiPush{op: cambiCValues, w: w, h: h, src: band, outOff: cw.outOff[scale]})
		if next && !overlap {
			s.Barrier()
			decimate(nw, nh)
			s.Barrier()
		}
		if next {
			img, mask = other(img, 0), other(mask, 2*n)
			w, h = nw, nh
			cw.dispatch(s, cambiPush{op: cambiMode, w: w, h: h, src: img, dst: other(img, 0)})
			img = other(img, 0)
		}
		s.Barrier()
	}
	s.Copy(cw.back[slot], int64(i*4*cw.outN), cw.cvals, 0, int64(4*cw.outN))
}

// read returns the c-values of the batch's frame i from slot's readback,
// in a buffer of the worker's (give it back with release).
func (cw *cambiWorker) read(slot, i int) *[5][]float32 {
	var out *[5][]float32
	if n := len(cw.spare); n > 0 {
		out, cw.spare = cw.spare[n-1], cw.spare[:n-1]
	} else {
		out = new([5][]float32)
	}
	all := unsafe.Slice((*float32)(unsafe.Pointer(&cw.back[slot].Bytes()[i*4*cw.outN])), cw.outN)
	for scale, sz := range cw.scales {
		out[scale] = append(out[scale][:0], all[cw.outOff[scale]:cw.outOff[scale]+sz[0]*sz[1]]...)
	}
	return out
}

// release gives back c-values read.
func (cw *cambiWorker) release(c *[5][]float32) {
	if c != nil {
		cw.spare = append(cw.spare, c)
	}
}

func (cw *cambiWorker) close() { cw.mem.close() }
