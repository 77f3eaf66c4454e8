package vkkernel

import (
	_ "embed"
	"encoding/binary"
	"math"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

var (
	//go:embed shaders/vif_subsample_v.spv
	vifSubVSPV []byte
	//go:embed shaders/vif_subsample_h.spv
	vifSubHSPV []byte
	//go:embed shaders/vif_stat_v.spv
	vifStatVSPV []byte
	//go:embed shaders/vif_stat_h.spv
	vifStatHSPV []byte
)

// vifPushSize is the push constant block of vif_common.glsl: eight 32-bit
// words, two 64-bit ones and the 17 filter taps (within the 128 bytes every
// device offers).
const vifPushSize = 48 + 4*17

// vifFilters are vmaf's VIF filters, per scale (vif.go, vifFilters;
// libvmaf integer_vif.h), pushed to the shaders with each dispatch.
var vifFilters = [4][]uint32{
	{489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640, 935, 489},
	{1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244},
	{3571, 16004, 26386, 16004, 3571},
	{10904, 43728, 10904},
}

// vifEps is vif.go's epsilon, 65536 * 1.0e-10, rounded once to a double as
// Go rounds the constant; the shader receives its bits so that no GLSL
// literal parsing can change it.
const vifEps = 65536 * 1.0e-10

// vifPipelines are the VIF passes and the log2 table they share.
type vifPipelines struct {
	subV, subH, statV, statH *vulkan.Pipeline
	log2                     *vulkan.Buffer
}

// buildVIFPipelines has b build the VIF passes (Open waits for them and then
// uploads the log2 table).
func buildVIFPipelines(b *pipelines) *vifPipelines {
	p := &vifPipelines{}
	b.build(&p.subV, "vif_subsample_v", vifSubVSPV, 4, vifPushSize, 3)
	b.build(&p.subH, "vif_subsample_h", vifSubHSPV, 4, vifPushSize, 3)
	b.build(&p.statV, "vif_stat_v", vifStatVSPV, 7, vifPushSize, 4)
	b.build(&p.statH, "vif_stat_h", vifStatHSPV, 7, vifPushSize, 4)
	return p
}

// uploadLog2 puts the CPU kernel's log2 table, one entry per 32-bit word,
// into a device buffer that every worker binds.
func (p *vifPipelines) uploadLog2(dev *vulkan.Device) error {
	t := vmaf.VIFLog2Table()
	size := int64(4 * len(t))
	stage, err := dev.NewBuffer(size, vulkan.Host)
	if err != nil {
		return err
	}
	defer stage.Close()
	for i, v := range t {
		stage.Uint32s()[i] = uint32(v)
	}
	if p.log2, err = dev.NewBuffer(size, vulkan.DeviceLocal); err != nil {
		return err
	}
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Begin(); err != nil {
		return err
	}
	s.Copy(p.log2, 0, stage, 0, size)
	s.Barrier()
	if err := s.Submit(); err != nil {
		return err
	}
	return s.Wait()
}

func (p *vifPipelines) close() {
	closePipelines(p.subV, p.subH, p.statV, p.statH)
	if p.log2 != nil {
		p.log2.Close()
	}
}

// vifScale is one scale's geometry and descriptor sets.
type vifScale struct {
	w, h          int
	subV, subH    *vulkan.DescriptorSet // scales 1..3: made from the previous scale
	statV, statH  *vulkan.DescriptorSet
	reduce        *vulkan.DescriptorSet // rows -> the worker's results
	subPush, push []byte
	rows          *vulkan.Buffer // 4 int64 per row
}

// vifWorker is one goroutine's VIF buffers: the images of scales 1..3
// (32-bit samples), the subsampling's vertical pass, the statistic's five
// vertical planes, and the per-row sums of every scale, which the reduce
// pass adds into the worker's results. The frame's planes are the
// worker's (ref0, dis0).
type vifWorker struct {
	k      *Kernel
	w, h   int
	mem    allocs
	scales [4]vifScale
}

func newVIFWorker(k *Kernel, cfg vmaf.OffloadConfig, ref0, dis0, results *vulkan.Buffer) (*vifWorker, error) {
	w, h, bpc := cfg.Width, cfg.Height, cfg.BitDepth
	vw := &vifWorker{k: k, w: w, h: h, mem: allocs{dev: k.dev}}
	p := k.vif
	a := &vw.mem
	buf, bind := a.buffer, a.bind
	tmpR, tmpD := buf(int64(w*(h/2)*4), vulkan.DeviceLocal), buf(int64(w*(h/2)*4), vulkan.DeviceLocal)
	var vert []*vulkan.Buffer // the statistic's five vertical planes
	for range 5 {
		vert = append(vert, buf(int64(w*h*4), vulkan.DeviceLocal))
	}
	ref, dis := ref0, dis0
	sw, sh := w, h
	egl, eps := math.Float64bits(cfg.VIFEnhnGainLimit), math.Float64bits(vifEps)
	for sc := range 4 {
		s := &vw.scales[sc]
		if sc > 0 {
			// The subsampling reads the previous scale (sw x sh) with this scale's filter.
			shift, round := uint32(16), uint32(32768)
			if sc == 1 {
				shift, round = uint32(bpc), uint32(1)<<(bpc-1)
			}
			packed := int32(0)
			if sc == 1 {
				packed = 1
			}
			s.subPush = vifPush(sw, sh, sc, packed, shift, round, 0, 0, 0, 0)
			nr, nd := buf(int64((sw/2)*(sh/2)*4), vulkan.DeviceLocal), buf(int64((sw/2)*(sh/2)*4), vulkan.DeviceLocal)
			s.subV = bind(p.subV, ref, dis, tmpR, tmpD)
			s.subH = bind(p.subH, tmpR, tmpD, nr, nd)
			ref, dis = nr, nd
			sw, sh = sw/2, sh/2
		}
		s.w, s.h = sw, sh
		shiftMu, roundMu := uint32(16), uint32(32768)
		shiftSq, roundSq := uint32(16), uint32(32768)
		packed := int32(0)
		if sc == 0 {
			packed = 1
			shiftMu, roundMu = uint32(bpc), uint32(1)<<(bpc-1)
			shiftSq, roundSq = uint32(2*(bpc-8)), 0
			if bpc > 8 {
				roundSq = uint32(1) << (shiftSq - 1)
			}
		}
		s.push = vifPush(sw, sh, sc, packed, shiftMu, roundMu, shiftSq, roundSq, egl, eps)
		s.rows = buf(int64(sh*32), vulkan.DeviceLocal)
		s.statV = bind(p.statV, append([]*vulkan.Buffer{ref, dis}, vert...)...)
		s.statH = bind(p.statH, append(vert[:5:5], p.log2, s.rows)...)
		s.reduce = bind(k.reduce, s.rows, results)
	}
	if err := a.err; err != nil {
		vw.close()
		return nil, err
	}
	return vw, nil
}

func vifPush(w, h, scale int, packed int32, shiftA, roundA, shiftB, roundB uint32, egl, eps uint64) []byte {
	b := make([]byte, vifPushSize)
	le := binary.LittleEndian
	for i, v := range []uint32{uint32(w), uint32(h), uint32(scale), uint32(packed), shiftA, roundA, shiftB, roundB} {
		le.PutUint32(b[4*i:], v)
	}
	le.PutUint64(b[32:], egl)
	le.PutUint64(b[40:], eps)
	for i, f := range vifFilters[scale] {
		le.PutUint32(b[48+4*i:], f)
	}
	return b
}

// vifResultWords are a frame's VIF sums in the worker's results: per scale
// numLog, denLog, numNonLog, denNonLog.
const vifResultWords = 16

// record records the four scales' passes on the worker's planes and the
// reduction of their rows into results at word dst.
func (vw *vifWorker) record(s recorder, dst int) {
	// A scale's statistic and the next scale's subsampling both only read
	// the scale's images, into buffers of their own (the statistic's
	// vertical planes, the subsampling's temporaries), so they run side by
	// side: statistic 0 vertical + subsampling 1 vertical | both horizontal |
	// statistic 1 vertical + subsampling 2 vertical | ... 8 phases and the
	// reductions' where one pass after another took 14.
	p := vw.k.vif
	for sc := range vw.scales {
		c := &vw.scales[sc]
		var next *vifScale
		if sc+1 < len(vw.scales) {
			next = &vw.scales[sc+1]
		}
		s.Dispatch(p.statV, c.statV, c.push, (c.w+63)/64, (c.h+3)/4, 1)
		if next != nil {
			s.Dispatch(p.subV, next.subV, next.subPush, (c.w+63)/64, (c.h/2+3)/4, 1)
		}
		s.Barrier()
		s.Dispatch(p.statH, c.statH, c.push, c.h, 1, 1)
		if next != nil {
			s.Dispatch(p.subH, next.subH, next.subPush, (c.w/2+63)/64, (c.h/2+3)/4, 1)
		}
		s.Barrier()
	}
	for sc := range vw.scales {
		c := &vw.scales[sc]
		r := reduceOp{n: c.h, stride: 4, lanes: 4, wide: true}
		r.record(s, vw.k.reduce, c.reduce, dst+4*sc)
	}
}

// vifSums reads a frame's VIF sums from its results.
func vifSums(words []uint64) [4]vmaf.VIFSums {
	var out [4]vmaf.VIFSums
	for sc := range out {
		w := words[4*sc:]
		out[sc] = vmaf.VIFSums{NumLog: int64(w[0]), DenLog: int64(w[1]), NumNonLog: int64(w[2]), DenNonLog: int64(w[3])}
	}
	return out
}

func (vw *vifWorker) close() { vw.mem.close() }
