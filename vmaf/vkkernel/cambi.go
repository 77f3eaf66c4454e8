package vkkernel

import (
	_ "embed"
	"fmt"
	"math"
	"unsafe"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// CAMBI on the device (vmaf.CAMBIOffloader): the distorted luma plane in,
// every scale's c-values out, in one submission of shaders/cambi.comp's
// passes; the CPU pools them.

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

// cambiWorker is one goroutine's CAMBI buffers: the input plane (packed
// 16-bit, staged and on the device), the tables, the work buffer (two
// pictures and two masks of the encode's size, one word a pixel), and the
// c-values of every scale with their readback.
type cambiWorker struct {
	k       *Kernel
	cfg     *vmaf.CAMBIConfig
	planeN  int
	scales  [5][2]int
	outOff  [5]int
	outN    int
	stream  *vulkan.Stream
	staging *vulkan.Buffer
	in      *vulkan.Buffer
	cvals   *vulkan.Buffer
	back    *vulkan.Buffer
	set     *vulkan.DescriptorSet
	mem     allocs
}

func newCAMBIWorker(k *Kernel, cfg *vmaf.CAMBIConfig) (*cambiWorker, error) {
	cw := &cambiWorker{k: k, cfg: cfg, planeN: cfg.InWidth * cfg.InHeight, scales: cfg.CAMBIScales(), mem: allocs{dev: k.dev}}
	for s, sz := range cw.scales {
		cw.outOff[s] = cw.outN
		cw.outN += sz[0] * sz[1]
	}
	a := &cw.mem
	n := cfg.Width * cfg.Height
	cw.staging = a.buffer(int64(2*cw.planeN), vulkan.Host)
	cw.in = a.buffer(int64(2*cw.planeN), vulkan.DeviceLocal)
	work := a.buffer(int64(4*4*n), vulkan.DeviceLocal)
	cw.cvals = a.buffer(int64(4*cw.outN), vulkan.DeviceLocal)
	cw.back = a.buffer(int64(4*cw.outN), vulkan.Host)
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
	var offs, sizes [4]int64
	for i, p := range parts {
		offs[i], sizes[i] = add(p)
	}
	tabStage := a.buffer(int64(4*len(tab)), vulkan.Host)
	var dev [4]*vulkan.Buffer
	for i := range dev {
		dev[i] = a.buffer(sizes[i], vulkan.DeviceLocal)
	}
	cw.set = a.bind(k.cambi, cw.in, dev[0], work, dev[1], dev[2], dev[3], cw.cvals)
	err := a.err
	if err == nil {
		cw.stream, err = k.dev.NewStream()
	}
	if err == nil {
		copy(tabStage.Uint32s(), tab)
		if err = cw.stream.Begin(); err == nil {
			for i := range dev {
				if sizes[i] > 0 {
					cw.stream.Copy(dev[i], 0, tabStage, offs[i], sizes[i])
				}
			}
			err = submitWait(cw.stream)
		}
	}
	if err != nil {
		cw.close()
		return nil, err
	}
	return cw, nil
}

// push is cambi.comp's push constants for one pass.
type cambiPush struct {
	op, w, h, srcW, src, dst, srcM, dstM, outOff int
}

func (cw *cambiWorker) dispatch(p cambiPush) {
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
	cw.stream.Dispatch(cw.k.cambi, cw.set, words, (p.w+15)/16, (p.h+15)/16, 1)
	cw.stream.Barrier()
}

// run computes every scale's c-values of the plane y into out; ok is false
// for a plane of another size (the CPU computes those).
func (cw *cambiWorker) run(y []uint16, out *[5][]float32) (bool, error) {
	c := cw.cfg
	if len(y) < cw.planeN {
		return false, nil
	}
	copy(cw.staging.Bytes(), samples(y[:cw.planeN]))
	s := cw.stream
	if err := s.Begin(); err != nil {
		return false, fmt.Errorf("vulkan cambi: %w", err)
	}
	s.Copy(cw.in, 0, cw.staging, 0, int64(2*cw.planeN))
	s.Barrier()
	// Work: pictures at 0 and n, masks at 2n and 3n.
	n := c.Width * c.Height
	w, h := c.Width, c.Height
	img, mask := 0, 2*n
	other := func(off, base int) int { return base + n - (off - base) }
	cw.dispatch(cambiPush{op: cambiConv, w: w, h: h, dst: img})
	if c.AntiDither {
		cw.dispatch(cambiPush{op: cambiDither, w: w, h: h, src: img, dst: other(img, 0)})
		img = other(img, 0)
	}
	cw.dispatch(cambiPush{op: cambiMask, w: w, h: h, src: img, dstM: mask})
	for scale, sz := range cw.scales {
		if scale > 0 || c.SpeedUp {
			cw.dispatch(cambiPush{op: cambiDecimate, w: sz[0], h: sz[1], srcW: w, src: img, dst: other(img, 0), srcM: mask, dstM: other(mask, 2*n)})
			img, mask = other(img, 0), other(mask, 2*n)
			w, h = sz[0], sz[1]
		}
		cw.dispatch(cambiPush{op: cambiMode, w: w, h: h, src: img, dst: other(img, 0)})
		img = other(img, 0)
		// The band goes where the picture before the mode filter was; the next
		// scale's decimation overwrites it.
		cw.dispatch(cambiPush{op: cambiBand, w: w, h: h, src: img, srcM: mask, dst: other(img, 0)})
		cw.dispatch(cambiPush{op: cambiCValues, w: w, h: h, src: other(img, 0), outOff: cw.outOff[scale]})
	}
	s.Copy(cw.back, 0, cw.cvals, 0, int64(4*cw.outN))
	if err := submitWait(s); err != nil {
		return false, fmt.Errorf("vulkan cambi: %w", err)
	}
	all := unsafe.Slice((*float32)(unsafe.Pointer(&cw.back.Bytes()[0])), cw.outN)
	for scale, sz := range cw.scales {
		out[scale] = append(out[scale][:0], all[cw.outOff[scale]:cw.outOff[scale]+sz[0]*sz[1]]...)
	}
	return true, nil
}

func (cw *cambiWorker) close() {
	if cw.stream != nil {
		cw.stream.Close()
		cw.stream = nil
	}
	cw.mem.close()
}
