package vkkernel

import (
	_ "embed"
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

var (
	//go:embed shaders/adm_dwt_v.spv
	admDWTVSPV []byte
	//go:embed shaders/adm_dwt_h.spv
	admDWTHSPV []byte
	//go:embed shaders/adm_decouple.spv
	admDecoupleSPV []byte
	//go:embed shaders/adm_den.spv
	admDenSPV []byte
	//go:embed shaders/adm_cm.spv
	admCMSPV []byte
	//go:embed shaders/adm_reduce.spv
	admReduceSPV []byte
)

// admReducePushSize is adm_reduce.comp's push constant block: dst, the
// measures' distance, per scale the first row, the rows and the shifts,
// then per scale the two 64-bit addends.
const admReducePushSize = 120

// admPushSize is the push constant block of adm_common.glsl.
const admPushSize = 112

// admPipelines are the ADM passes.
type admPipelines struct {
	dwtV, dwtH, decouple, den, cm *vulkan.Pipeline
	reduce                        *vulkan.Pipeline
}

// buildADMPipelines has b build the ADM passes.
func buildADMPipelines(b *pipelines) *admPipelines {
	p := &admPipelines{}
	b.build(&p.dwtV, "adm_dwt_v", admDWTVSPV, 2, admPushSize, 4)
	b.build(&p.dwtH, "adm_dwt_h", admDWTHSPV, 2, admPushSize, 2)
	b.build(&p.decouple, "adm_decouple", admDecoupleSPV, 5, admPushSize, 1)
	b.build(&p.den, "adm_den", admDenSPV, 2, admPushSize, 1)
	b.build(&p.cm, "adm_cm", admCMSPV, 3, admPushSize, 2)
	b.build(&p.reduce, "adm_reduce", admReduceSPV, 2, admReducePushSize, 1)
	return p
}

func (p *admPipelines) close() {
	closePipelines(p.dwtV, p.dwtH, p.decouple, p.den, p.cm, p.reduce)
}

// admPush is adm_common.glsl's push constant block.
type admPush struct {
	w, h, stride, plane, scale, bpc, src, rowsOff int32
	irf                                           [3]int64
	eglBits, cosBits                              uint64
	shiftA, shiftB                                uint32
	addA, addB                                    uint64
	top, bottom, left, right                      int32
}

func (p admPush) bytes() []byte {
	b := make([]byte, admPushSize)
	le := binary.LittleEndian
	for i, v := range []int32{p.w, p.h, p.stride, p.plane, p.scale, p.bpc, p.src, p.rowsOff} {
		le.PutUint32(b[4*i:], uint32(v))
	}
	for i, v := range p.irf {
		le.PutUint64(b[32+8*i:], uint64(v))
	}
	le.PutUint64(b[56:], p.eglBits)
	le.PutUint64(b[64:], p.cosBits)
	le.PutUint32(b[72:], p.shiftA)
	le.PutUint32(b[76:], p.shiftB)
	le.PutUint64(b[80:], p.addA)
	le.PutUint64(b[88:], p.addB)
	for i, v := range []int32{p.top, p.bottom, p.left, p.right} {
		le.PutUint32(b[96+4*i:], uint32(v))
	}
	return b
}

// admScale is one scale's dispatches, their push constants recorded once.
type admScale struct {
	inW, inH, bw, bh        int // the DWT's input and the bands' size
	dwt, decouple, den, dlm []byte
	aim                     []byte
	decW, decH, scoreRows   int
}

// admWorker is one goroutine's ADM buffers: the DWT's vertical pass (low
// and high planes per image), the bands of both images (a, h, v, d), the
// decoupled parts (r then a), the CSF of a and of r, and the row sums of
// every scale, which the reduce pass adds into the worker's results. The
// frame's planes are the worker's (ref0, dis0). back, the rows' readback,
// exists only once rows (vmaf.OffloadWorker.ADM, for checking) are asked.
type admWorker struct {
	k            *Kernel
	w, h         int
	stride, bsz  int // band stride and words per band plane
	rowsPerScale int // words of rows per scale: 3 measures x 3 bands x band rows
	back         *vulkan.Buffer
	rowsBuf      *vulkan.Buffer
	mem          allocs
	scales       [4]admScale

	dwtV0Ref, dwtV0Dis, dwtVRef, dwtVDis *vulkan.DescriptorSet
	dwtHRef, dwtHDis, decouple, den      *vulkan.DescriptorSet
	dlm, aim, reduce                     *vulkan.DescriptorSet
	rows                                 vmaf.ADMRows
	// reducePush is adm_reduce.comp's push constants but for dst (the
	// first word): the scored rows of every scale and their roundings
	// (vmaf.ADMRows.Sums).
	reducePush []byte
}

func newADMWorker(k *Kernel, cfg vmaf.OffloadConfig, ref0, dis0, results *vulkan.Buffer) (*admWorker, error) {
	w, h, bpc := cfg.Width, cfg.Height, cfg.BitDepth
	bw, bh := (w+1)/2, (h+1)/2
	aw := &admWorker{k: k, w: w, h: h, stride: bw, bsz: bw * bh, rowsPerScale: 9 * bh, mem: allocs{dev: k.dev}}
	p := k.adm
	a := &aw.mem
	words := func(n int) int64 { return int64(4 * n) }
	tmpR, tmpD := a.buffer(words(2*bh*w), vulkan.DeviceLocal), a.buffer(words(2*bh*w), vulkan.DeviceLocal)
	refB, disB := a.buffer(words(4*aw.bsz), vulkan.DeviceLocal), a.buffer(words(4*aw.bsz), vulkan.DeviceLocal)
	dec := a.buffer(words(6*aw.bsz), vulkan.DeviceLocal)
	csfA, csfR := a.buffer(words(6*aw.bsz), vulkan.DeviceLocal), a.buffer(words(6*aw.bsz), vulkan.DeviceLocal)
	aw.rowsBuf = a.buffer(int64(8*4*aw.rowsPerScale), vulkan.DeviceLocal)
	aw.dwtV0Ref, aw.dwtV0Dis = a.bind(p.dwtV, ref0, tmpR), a.bind(p.dwtV, dis0, tmpD)
	aw.dwtVRef, aw.dwtVDis = a.bind(p.dwtV, refB, tmpR), a.bind(p.dwtV, disB, tmpD)
	aw.dwtHRef, aw.dwtHDis = a.bind(p.dwtH, tmpR, refB), a.bind(p.dwtH, tmpD, disB)
	aw.decouple = a.bind(p.decouple, refB, disB, dec, csfA, csfR)
	aw.den = a.bind(p.den, refB, aw.rowsBuf)
	// DLM: the restored part (planes 0..2) masked by the CSF of the additive part;
	// AIM: the additive part (planes 3..5) masked by the CSF of the restored part.
	aw.dlm, aw.aim = a.bind(p.cm, dec, csfA, aw.rowsBuf), a.bind(p.cm, dec, csfR, aw.rowsBuf)
	aw.reduce = a.bind(p.reduce, aw.rowsBuf, results)
	if err := a.err; err != nil {
		aw.close()
		return nil, err
	}

	base := admPush{stride: int32(bw), plane: int32(aw.bsz), bpc: int32(bpc),
		eglBits: math.Float64bits(cfg.ADMEnhnGainLimit), cosBits: math.Float64bits(vmaf.ADMCos1DegSq())}
	// The CSF weights of the run's ADM options: the zero value stands for
	// the defaults'.
	weights := cfg.ADMWeights
	if weights == (vmaf.ADMWeights{}) {
		weights = vmaf.DefaultADMWeights()
	}
	aw.reducePush = make([]byte, admReducePushSize)
	le := binary.LittleEndian
	le.PutUint32(aw.reducePush[4:], uint32(3*bh))
	sw, sh := w, h
	for sc := range 4 {
		s := &aw.scales[sc]
		s.inW, s.inH = sw, sh
		sw, sh = (sw+1)/2, (sh+1)/2
		s.bw, s.bh = sw, sh
		score, decouple := vmaf.ADMRegion(sw, sh)
		denSh, cmSh := vmaf.ADMShifts(sw, sh, sc)
		rows := int32(sc * aw.rowsPerScale)
		p := base
		p.scale = int32(sc)
		p.irf = weights[sc]
		dwt := p
		dwt.w, dwt.h = int32(s.inW), int32(s.inH)
		s.dwt = dwt.bytes()
		band := p
		band.w, band.h = int32(sw), int32(sh)
		dec := band
		dec.top, dec.bottom, dec.left, dec.right = int32(decouple[0]), int32(decouple[1]), int32(decouple[2]), int32(decouple[3])
		s.decouple = dec.bytes()
		s.decW, s.decH = decouple[3]-decouple[2], decouple[1]-decouple[0]
		sco := band
		sco.top, sco.bottom, sco.left, sco.right = int32(score[0]), int32(score[1]), int32(score[2]), int32(score[3])
		s.scoreRows = score[1] - score[0]
		den := sco
		den.rowsOff = rows
		den.shiftA, den.addA, den.shiftB, den.addB = denSh.ShiftSq, denSh.AddSq, denSh.ShiftCub, denSh.AddCub
		s.den = den.bytes()
		cm := sco
		cm.shiftA, cm.addA, cm.shiftB, cm.addB = cmSh.ShiftCub, uint64(cmSh.AddCub), cmSh.ShiftDCub, uint64(cmSh.AddDCub)
		cm.src, cm.rowsOff = 0, rows+int32(3*bh)
		s.dlm = cm.bytes()
		cm.src, cm.rowsOff = 3, rows+int32(6*bh)
		s.aim = cm.bytes()
		// The rows' roundings before they are added: vmaf's ADMRows.Sums.
		rp := aw.reducePush
		le.PutUint32(rp[8+4*sc:], uint32(int(rows)+3*score[0]))
		le.PutUint32(rp[24+4*sc:], uint32(s.scoreRows))
		le.PutUint32(rp[40+4*sc:], denSh.ShiftAccum|cmSh.ShiftInner<<16)
		le.PutUint64(rp[56+16*sc:], denSh.AddAccum)
		le.PutUint64(rp[64+16*sc:], uint64(cmSh.AddInner))
	}
	return aw, nil
}

// admResultWords are a frame's ADM sums in the worker's results: per
// scale den, num and aim of the h, v and d bands.
const admResultWords = 36

// clear records zeroing the rows of the frame's sums (the rows no pass
// writes stay zero for recordRows): with the frame's uploads, before their
// barrier, so that it is no link of ADM's chain of passes.
func (aw *admWorker) clear(s recorder) { s.Fill(aw.rowsBuf, 0, aw.rowsBuf.Size(), 0) }

// record records every scale's passes on the worker's planes and the
// reduction of their rows into results at word dst; clear must be recorded
// before the barrier that ends the frame's uploads.
func (aw *admWorker) record(s recorder, dst int) {
	// A scale's DWT needs only the scale before's DWT (its a band), not its
	// decoupling or masking, so the next scale's DWT runs beside them: DWT
	// 0 vertical | horizontal | decouple 0 + DWT 1 vertical | masking 0 +
	// DWT 1 horizontal | ... Each pass still waits for what it reads and
	// for the readers of what it writes: the horizontal DWT rewrites the
	// bands that the decoupling before it read, and the decoupling the
	// buffers that the masking before it read. 11 phases where one scale
	// after another took 17.
	aw.recordDWTV(s, 0)
	s.Barrier()
	aw.recordDWTH(s, 0)
	s.Barrier()
	for sc := range aw.scales {
		aw.recordDecouple(s, sc)
		if sc+1 < len(aw.scales) {
			aw.recordDWTV(s, sc+1)
		}
		s.Barrier()
		aw.recordMask(s, sc)
		if sc+1 < len(aw.scales) {
			aw.recordDWTH(s, sc+1)
		}
		s.Barrier()
	}
	binary.LittleEndian.PutUint32(aw.reducePush, uint32(dst))
	s.Dispatch(aw.k.adm.reduce, aw.reduce, aw.reducePush, admResultWords, 1, 1)
}

// recordDWTV records scale sc's vertical DWT of both images: of the frame's planes
// at scale 0, else of the scale before's a band.
func (aw *admWorker) recordDWTV(s recorder, sc int) {
	p, c := aw.k.adm, &aw.scales[sc]
	vr, vd := aw.dwtVRef, aw.dwtVDis
	if sc == 0 {
		vr, vd = aw.dwtV0Ref, aw.dwtV0Dis
	}
	s.Dispatch(p.dwtV, vr, c.dwt, (c.inW+63)/64, (c.bh+3)/4, 1)
	s.Dispatch(p.dwtV, vd, c.dwt, (c.inW+63)/64, (c.bh+3)/4, 1)
}

// recordDWTH records scale sc's horizontal DWT of both images into their bands.
func (aw *admWorker) recordDWTH(s recorder, sc int) {
	p, c := aw.k.adm, &aw.scales[sc]
	s.Dispatch(p.dwtH, aw.dwtHRef, c.dwt, (c.bw+63)/64, (c.bh+3)/4, 1)
	s.Dispatch(p.dwtH, aw.dwtHDis, c.dwt, (c.bw+63)/64, (c.bh+3)/4, 1)
}

// recordDecouple records scale sc's decoupling (with the CSF) and the reference's
// denominator rows.
func (aw *admWorker) recordDecouple(s recorder, sc int) {
	p, c := aw.k.adm, &aw.scales[sc]
	if c.decW > 0 && c.decH > 0 {
		s.Dispatch(p.decouple, aw.decouple, c.decouple, (c.decW+63)/64, (c.decH+3)/4, 1)
	}
	if c.scoreRows > 0 {
		s.Dispatch(p.den, aw.den, c.den, c.scoreRows, 1, 1)
	}
}

// recordMask records scale sc's contrast masking rows of DLM and AIM.
func (aw *admWorker) recordMask(s recorder, sc int) {
	p, c := aw.k.adm, &aw.scales[sc]
	if c.scoreRows > 0 {
		s.Dispatch(p.cm, aw.dlm, c.dlm, c.scoreRows, 1, 1)
		s.Dispatch(p.cm, aw.aim, c.aim, c.scoreRows, 1, 1)
	}
}

// admSums reads a frame's ADM sums from its results.
func admSums(words []uint64) vmaf.ADMSums {
	var out vmaf.ADMSums
	for sc := range 4 {
		w := words[9*sc:]
		for t := range 3 {
			out.Den[sc][t] = w[t]
			out.Num[sc][t] = int64(w[3+t])
			out.AIM[sc][t] = int64(w[6+t])
		}
	}
	return out
}

// recordRows records the copy of the last frame's rows to the host, for
// Rows; it makes the readback buffer the first time.
func (aw *admWorker) recordRows(s *vulkan.Stream) error {
	if aw.back == nil {
		a := allocs{dev: aw.k.dev}
		aw.back = a.buffer(aw.rowsBuf.Size(), vulkan.Host)
		if a.err != nil {
			return a.err
		}
		aw.mem.bufs = append(aw.mem.bufs, aw.back)
	}
	s.Copy(aw.back, 0, aw.rowsBuf, 0, aw.rowsBuf.Size())
	return nil
}

// readRows is the rows recordRows copied back.
func (aw *admWorker) readRows() *vmaf.ADMRows {
	b := aw.back.Bytes()
	all := unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), 4*aw.rowsPerScale)
	bh := aw.rowsPerScale / 9
	for sc := range 4 {
		r := all[sc*aw.rowsPerScale:]
		aw.rows.Den[sc] = r[:3*bh]
		aw.rows.Num[sc] = unsafe.Slice((*int64)(unsafe.Pointer(&r[3*bh])), 3*bh)
		aw.rows.AIM[sc] = unsafe.Slice((*int64)(unsafe.Pointer(&r[6*bh])), 3*bh)
	}
	return &aw.rows
}

func (aw *admWorker) close() { aw.mem.close() }
