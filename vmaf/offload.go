package vmaf

// Offload computes some of each frame pair's features on another device (a
// GPU backend) for Score, which computes the rest on the CPU. Offloaded
// features must give the CPU kernel's integers exactly, so that scores do
// not depend on where they ran.
type Offload interface {
	// NewWorker prepares one scoring goroutine's device state. Score calls
	// it once per goroutine and closes what it returns.
	NewWorker(cfg OffloadConfig) (OffloadWorker, error)
}

// OffloadConfig is what an OffloadWorker needs to know of a run.
type OffloadConfig struct {
	// Width, Height and BitDepth describe the luma planes.
	Width, Height, BitDepth int
	// VIFEnhnGainLimit is the model's VIF enhancement gain limit (100, or
	// 1 for the "neg" models).
	VIFEnhnGainLimit float64
	// ADMEnhnGainLimit is the model's ADM enhancement gain limit.
	ADMEnhnGainLimit float64
	// ADMWeights are the CSF weights of the model's ADM options (the v1
	// models' CSF mode and viewing conditions change them). The zero value
	// stands for the default options' (DefaultADMWeights).
	ADMWeights ADMWeights
	// Speed describes SpEED chroma's per-pixel stages for workers that
	// offer them (SpeedOffloader); nil when the model has no SpEED
	// feature. Model.OffloadConfig leaves it nil: Score sets it from
	// Model.SpeedConfig, which needs the pixel format.
	Speed *SpeedConfig
	// CAMBI describes the model's CAMBI up to its pooling for workers that
	// offer it (CAMBIOffloader); nil when the model has no CAMBI feature.
	// Score sets it from the worker's CAMBI state (the encode's size and
	// depth included).
	CAMBI *CAMBIConfig
	// Workers is how many workers the Score makes, one a thread (0 counts
	// as 1). Score keeps FramesInFlight(w, h) frames queued for all of
	// them together, so a FrameOffload may give each worker that share of
	// its frames in flight, and the host memory they take, rather than
	// the whole.
	Workers int
	// Planes, when set, is the memory that the luma plane of every frame
	// Score reads lies in: Frame.Y8 of an 8-bit frame read Packed, Frame.Y's
	// samples above 8 bits, each plane at a multiple of 4 KiB with room to
	// the next, the block at a multiple of 64 KiB and a multiple of it long.
	// A FrameOffloader may have its device copy a queued frame's planes from
	// there, where the readers put them, rather than copy them on the host
	// first (a Vulkan device imports it). Score leaves a queued frame's
	// planes, and those of the frame its motion reads, as they are until
	// Next has returned the frame's sums, and Planes in place until the
	// worker is closed. Planes a source put elsewhere (its own memory) lie
	// outside it, and take the copy.
	Planes []byte
}

// ADMWeights are ADM's contrast sensitivity weights in the fixed point the
// integer kernel applies them in, per scale, for the h, v and d bands:
// scale 0's i_rfactor (Q21, Q21 and Q23, truncated to 16 bits), which
// weighs the CSF (adm_csf) and the contrast measure (adm_cm) in int32
// products, and the Q32 weights of scales 1..3 (i4_adm_csf, i4_adm_cm),
// truncated to 32 bits, in int64 products. Under the default options scale
// 0's are libvmaf's constants 36453, 36453 and 49417.
type ADMWeights [4][3]int64

// DefaultADMWeights are the CSF weights of the default ADM options
// (vmaf_v0.6.1's and every model's before v1).
func DefaultADMWeights() ADMWeights { return defaultADMOptions().weights() }

// weights returns the options' CSF weights as ADMWeights.
func (o admOptions) weights() ADMWeights {
	irf0 := o.irf0()
	w := ADMWeights{{int64(irf0[0]), int64(irf0[1]), int64(irf0[2])}}
	for sc := 1; sc < 4; sc++ {
		w[sc] = admIRF(o.rfactors(sc))
	}
	return w
}

// weights returns the state's CSF weights as ADMWeights: those of its
// options, from the weights it computes with.
func (s *admState) weights() ADMWeights {
	w := ADMWeights{{int64(s.irf0[0]), int64(s.irf0[1]), int64(s.irf0[2])}}
	for sc := 1; sc < 4; sc++ {
		w[sc] = s.irfS[sc]
	}
	return w
}

// offloadable reports whether an Offload's ADM kernels take these weights:
// scale 0's in [0, 2^16) (int32 products with int16 coefficients), those
// of scales 1..3 in [0, 2^32) (int64 products with int32 ones). The CPU's
// weights always are (irf0 and admIRF truncate to these widths); the gate
// states the kernels' contract.
func (w ADMWeights) offloadable() bool {
	for sc, band := range w {
		limit := int64(1) << 32
		if sc == 0 {
			limit = 1 << 16
		}
		for _, x := range band {
			if x < 0 || x >= limit {
				return false
			}
		}
	}
	return true
}

// OffloadConfig is the configuration Score gives its Offload's workers for
// w x h frames of bit depth bpc scored with m: the enhancement gain limits
// and the CSF weights of m's options.
func (m *Model) OffloadConfig(w, h, bpc int) OffloadConfig {
	return OffloadConfig{
		Width: w, Height: h, BitDepth: bpc,
		VIFEnhnGainLimit: m.vifEGL, ADMEnhnGainLimit: m.admEGL,
		ADMWeights: m.adm.weights(),
	}
}

// ADMRows are the integer results of ADM's per-row sums, per scale: for
// each band row i (of the scale's band, scored rows only) and band t (h, v,
// d), at index 3*i+t, the row's sum of cubed CSF-weighted reference
// coefficients (Den; libvmaf adm_csf_den) and of the masked contrast of the
// restored (Num, the DLM) and additive (AIM) parts (adm_cm). The CPU kernel
// rounds and adds the rows and derives the scores from them.
type ADMRows struct {
	Den      [4][]uint64
	Num, AIM [4][]int64
}

// ADMRegion returns the band area of a w x h band that ADM scores (rows
// top..bottom-1, columns left..right-1), and the larger area the
// decoupling and CSF stages cover (the scored area grown by the 3x3 mask).
func ADMRegion(w, h int) (score, decouple [4]int) {
	t, b, l, r := admScoreRegion(w, h)
	dt, db, dl, dr := admDecoupleRegion(w, h)
	return [4]int{t, b, l, r}, [4]int{dt, db, dl, dr}
}

// ADMShifts returns the roundings of ADM's row sums at a scale's band size
// w x h: the denominator's (per coefficient at scales 1..3, scale 0 has
// none; and per row, ShiftAccum and AddAccum, at every scale) and the
// contrast measure's.
func ADMShifts(w, h, scale int) (den ADMDenShifts, cm ADMCMShifts) {
	if scale > 0 {
		den = admDenSShifts(w, h, scale)
	} else {
		sh, add := admDen0Shift(w, h)
		den.ShiftAccum, den.AddAccum = uint32(sh), add
	}
	return den, admCMShifts(w, h, scale)
}

// ADMCos1DegSq is the decoupling's angle threshold, cos(1 degree)^2 as
// float32, widened.
func ADMCos1DegSq() float64 { return float64(admCos1DegSq) }

// offloadable reports whether an Offload's ADM rows hold this state's
// integers: the Offload weighs the bands with the weights its
// OffloadConfig carries (Model.OffloadConfig: those of the same options),
// which its kernels take whenever ADMWeights.offloadable says so. The
// enhancement gain limit travels in OffloadConfig too; the noise weight,
// DLM weight, minimum and skipped AIM enter only fromRows' float part,
// which is the CPU's.
func (s *admState) offloadable() bool { return s.weights().offloadable() }

// offloadable reports whether an Offload's ADM rows serve these options (see
// admState.offloadable).
func (o admOptions) offloadable() bool { return o.weights().offloadable() }

// ADMSums are ADM's integer accumulators per scale and band (h, v, d): the
// scored rows of ADMRows, each rounded (ADMShifts: the denominator's
// ShiftAccum and AddAccum, the contrast measure's ShiftInner and AddInner)
// and added. Integer sums: an Offload may add the rows in any order.
type ADMSums struct {
	Den      [4][3]uint64
	Num, AIM [4][3]int64
}

// Sums rounds and adds the scored rows of w x h luma planes' ADM rows, as
// the CPU kernel does its own (ADMSums.add).
func (r *ADMRows) Sums(w, h int) *ADMSums {
	out := new(ADMSums)
	for scale := range 4 {
		w, h = (w+1)/2, (h+1)/2
		top, bottom, _, _ := admScoreRegion(w, h)
		dp, cm := ADMShifts(w, h, scale)
		for i := top; i < bottom; i++ {
			den, num, aim := r.Den[scale][3*i:][:3], r.Num[scale][3*i:][:3], r.AIM[scale][3*i:][:3]
			out.add(scale, [3]uint64(den), [3]int64(num), [3]int64(aim), dp, cm)
		}
	}
	return out
}

// add rounds one scored row's sums of a scale (ADMShifts dp and cm) and
// adds them.
func (a *ADMSums) add(scale int, den [3]uint64, num, aim [3]int64, dp ADMDenShifts, cm ADMCMShifts) {
	for t := range 3 {
		a.Den[scale][t] += (den[t] + dp.AddAccum) >> dp.ShiftAccum
		a.Num[scale][t] += (num[t] + cm.AddInner) >> cm.ShiftInner
		a.AIM[scale][t] += (aim[t] + cm.AddInner) >> cm.ShiftInner
	}
}

// fromRows derives the ADM features from an Offload's rows, rounding and
// adding them as the CPU kernel's own loops do.
func (s *admState) fromRows(r *ADMRows) admScore { return s.fromSums(r.Sums(s.w, s.h)) }

// fromSums derives the ADM features from an Offload's sums.
func (s *admState) fromSums(r *ADMSums) admScore {
	var ns, ds, as [4]float32
	w, h := s.w, s.h
	for scale := range 4 {
		w, h = (w+1)/2, (h+1)/2
		if scale == 0 {
			ds[scale] = admDen0Float(r.Den[scale], w, h, s.rfactor[0], s.opt.noiseWeight)
		} else {
			ds[scale] = admDenSFloat(r.Den[scale], w, h, scale, s.rfactor[scale], s.opt.noiseWeight)
		}
		ns[scale] = admCMFloat(r.Num[scale], w, h, scale, s.opt.noiseWeight)
		if !s.opt.skipAIM {
			as[scale] = admCMFloat(r.AIM[scale], w, h, scale, 0)
		}
	}
	return s.combine(ns, ds, as)
}

// ADMRowsCPU returns the ADM rows of a frame pair of w x h luma planes of
// bit depth bpc under m's ADM options, as the CPU kernel computes them, for
// checking an Offload's rows: every band row of every scale, zero outside
// the scored rows, AIM even where the options skip it.
func ADMRowsCPU(ref, dis []uint16, w, h, bpc int, m *Model) *ADMRows {
	return newADMState(w, h, m.adm).rows(ref, dis, bpc)
}

// rows is compute up to the rows: the same stages, each scored row's sums
// kept rather than rounded and added.
func (s *admState) rows(ref, dis []uint16, bpc int) *ADMRows {
	out := new(ADMRows)
	w, h := s.w, s.h
	for scale := range 4 {
		bh := (h + 1) / 2
		out.Den[scale] = make([]uint64, 3*bh)
		out.Num[scale], out.AIM[scale] = make([]int64, 3*bh), make([]int64, 3*bh)
		w, h = s.scan(ref, dis, bpc, scale, w, h, true, func(i int, r *admRowSums) {
			for t := range 3 {
				out.Den[scale][3*i+t], out.Num[scale][3*i+t], out.AIM[scale][3*i+t] = r.den[t], r.num[t], r.aim[t]
			}
		})
	}
	return out
}

// OffloadWorker computes features for one scoring goroutine.
type OffloadWorker interface {
	// MotionSAD returns what MotionSAD returns for the two luma planes.
	MotionSAD(prev, cur []uint16) (uint64, error)
	// VIF returns the four scales' integer sums of a frame pair's luma
	// planes, or ok false when this worker leaves VIF to the CPU.
	VIF(ref, dis []uint16) (sums [4]VIFSums, ok bool, err error)
	// ADM returns the rows of a frame pair's ADM sums, or ok false when
	// this worker leaves ADM to the CPU. The rows stay the worker's.
	ADM(ref, dis []uint16) (rows *ADMRows, ok bool, err error)
	// Close frees the worker's device state.
	Close()
}

// FrameOffload is an Offload whose workers take whole frames
// (FrameOffloader): Score keeps up to FramesInFlight frames of w x h
// queued on each worker, so that the device computes some while the host
// prepares the next and finishes the last; fewer on a worker that has a
// FramesInFlight() int method saying it holds fewer for its run.
type FrameOffload interface {
	Offload
	FramesInFlight(w, h int) int
}

// FrameOffloader is an OffloadWorker that computes a frame's motion, VIF
// and ADM (and a v1 model's SpEED chroma pictures and CAMBI c-values, when
// it offers them) in one piece of device work and keeps several frames in
// flight: Queue hands it a frame, Next returns the oldest queued frame's
// sums. With frames queued, its one-frame methods (MotionSAD, VIF, ADM,
// SpeedOffloader's Speed, CAMBIOffloader's CAMBICValues) may fail: Score
// takes everything through Queue and Next.
type FrameOffloader interface {
	OffloadWorker
	// Queue copies the frame's planes for the device and records its
	// work; the device may run it later (Next submits what is recorded).
	// The planes are the caller's again when Queue returns, but for those
	// inside OffloadConfig.Planes, which the device may read until Next has
	// returned the frame's sums.
	Queue(f *OffloadFrame) error
	// Next returns the oldest queued frame's sums, waiting for the
	// device when they are not back yet. They stay valid until the next
	// call of Queue or Next.
	Next() (*OffloadSums, error)
}

// OffloadFrame is one frame's work for a FrameOffloader.
type OffloadFrame struct {
	// Index numbers the frames of one Score: a worker may keep a frame's
	// reference plane to compare a later frame with (PrevIndex).
	Index int
	// Ref and Dis are the luma planes; Ref only when motion, VIF or ADM is
	// asked or Index is not negative, Dis only when VIF, ADM or CAMBI is.
	Ref, Dis []uint16
	// Prev is the reference plane motion compares Ref with, frame
	// PrevIndex's; nil for no motion (the SAD is then 0).
	Prev      []uint16
	PrevIndex int
	// Ref8, Dis8 and Prev8 are the same planes of 8-bit frames read Packed
	// (Frame.Packed), as bytes: each plane comes in one form or the other,
	// and a FrameOffloader takes both.
	Ref8, Dis8, Prev8 []byte
	// VIF and ADM ask for those features' sums.
	VIF, ADM bool
	// SpeedRef and SpeedDis, when set, ask for SpEED chroma's pictures of
	// the frames' U and V planes (what SpeedOffloader's Speed returns).
	SpeedRef, SpeedDis *Frame
	// CAMBI asks for CAMBI's c-values of Dis, every scale's (what
	// CAMBIOffloader's CAMBICValues returns).
	CAMBI bool
}

// Motion says the frame asks for motion: it has a previous plane, in either
// form.
func (f *OffloadFrame) Motion() bool { return f.Prev != nil || f.Prev8 != nil }

// OffloadSums are a queued frame's results: the motion SAD, the VIF and
// ADM sums, SpEED chroma's pictures and CAMBI's c-values, each when asked
// and computed (VIFOK, ADMOK, SpeedOK, CAMBIOK; false where the worker
// leaves the feature, or this frame's planes, to the CPU). Speed and CAMBI
// are the worker's buffers: the caller may change them (CAMBI's pooling
// reorders the c-values) until the next Next.
type OffloadSums struct {
	SAD          uint64
	VIF          [4]VIFSums
	ADM          ADMSums
	Speed        *SpeedPictures
	CAMBI        [5][]float32
	VIFOK, ADMOK bool
	SpeedOK      bool
	CAMBIOK      bool
}

// MotionSAD is the motion feature's integer: the sum of absolute values of
// the Gaussian-blurred difference prev−cur of two w x h luma planes of bit
// depth bpc (libvmaf integer_motion.c). The per-frame motion score is this
// sum / 256 / (w*h), clipped. It is exported so that other implementations
// (Offload) can be checked against it.
func MotionSAD(prev, cur []uint16, w, h, bpc int) uint64 {
	return motionSAD(prev, cur, w, h, bpc, make([]int64, w))
}

// VIFSums are one VIF scale's integer sums over the pixels (libvmaf
// integer_vif.c's accumulators): the log-domain numerator and denominator
// terms in Q11, and the sum of sigma2Sq and the count of the pixels below
// the noise floor. The scale's score derives from them alone.
type VIFSums struct {
	NumLog, DenLog, NumNonLog, DenNonLog int64
}

// VIFLog2Table is VIF's log2 lookup table (round(log2(i)*2048) for i in
// [32767, 65535], 0 below), for implementations of VIFSums.
func VIFLog2Table() []uint16 { return vifLog2Table() }

// VIFStatistic returns the sums of one VIF scale's statistic on w x h
// images (scale 0: the luma planes; scales 1..3: the subsampled images the
// kernel makes), as the CPU kernel computes them, for checking other
// implementations stage by stage.
func VIFStatistic(ref, dis []uint16, w, h, scale, bpc int, egl float64) VIFSums {
	s := newVIFState(w, h, egl)
	s.statistic(ref, dis, w, h, scale, bpc)
	a := s.lastAcc
	return VIFSums{NumLog: a.numLog, DenLog: a.denLog, NumNonLog: a.numNonLog, DenNonLog: a.denNonLog}
}

// score is the scale's numerator and denominator as libvmaf derives them
// from the sums, in float32.
func (a vifAcc) score() vifScaleScore {
	num := float64(a.numLog)/2048.0 + (float64(a.denNonLog) - (float64(a.numNonLog)/16384.0)/65025.0)
	den := float64(a.denLog)/2048.0 + float64(a.denNonLog)
	return vifScaleScore{num: float32(num), den: float32(den)}
}

// OffloadOpening is an Offload that opens while Score scores the first
// frames on the CPU (Options.Opening): a GPU's device takes a fraction of a
// second to open and pass its self-test, more in a new Pod whose driver
// compiles the shaders, which the frames need not wait for. Every frame is
// the same whichever side scores it: the Offload gives the CPU kernel's
// integers exactly.
//
// The opener sets Offload, Threads and Err, then closes Ready, once.
type OffloadOpening struct {
	// Ready is closed when the open has ended, well or not.
	Ready chan struct{}
	// FramesInFlight is what the Offload's FramesInFlight (FrameOffload)
	// will say for the frames' size, known before it opens: Score sizes its
	// frame slots at its start. 0 when it keeps no frames in flight.
	FramesInFlight int
	// Offload is the open Offload. Nil with a nil Err means that none
	// opened and the run goes on on the CPU (a backend that falls back).
	Offload Offload
	// Threads is how many of Score's threads the Offload holds workers for:
	// that many (at most Options.OffloadThreads when it is set) go on with
	// it, each from its next frame (at least 1; more than Options.Threads
	// counts as all). The others stop once their frame is done, but for
	// those that Options.OffloadThreads keeps on the CPU beside it.
	Threads int
	// Err fails the run: the frames not yet scored fail with it.
	Err error
}
