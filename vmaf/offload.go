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
// w x h: the denominator's (scales 1..3; scale 0 has none per coefficient)
// and the contrast measure's.
func ADMShifts(w, h, scale int) (den ADMDenShifts, cm ADMCMShifts) {
	if scale > 0 {
		den = admDenSShifts(w, h, scale)
	}
	return den, admCMShifts(w, h, scale)
}

// ADMIRF returns a scale's CSF weights in Q32 (scales 1..3), for the
// h, v and d bands, under the default ADM options (vmaf_v0.6.1's): an
// Offload's ADM rows use these weights only (see admState.offloadable).
func ADMIRF(scale int) [3]int64 { return admIRF(defaultADMOptions().rfactors(scale)) }

// ADMCos1DegSq is the decoupling's angle threshold, cos(1 degree)^2 as
// float32, widened.
func ADMCos1DegSq() float64 { return float64(admCos1DegSq) }

// offloadable reports whether an Offload's ADM rows hold this state's
// integers: the rows weigh the bands with the default options' CSF (the
// Vulkan kernel's fixed weights), so other CSF modes and viewing
// conditions (the v1 models) must run on the CPU. The enhancement gain
// limit travels in OffloadConfig; the noise weight, DLM weight, minimum
// and skipped AIM enter only fromRows' float part, which is the CPU's.
func (s *admState) offloadable() bool {
	def := defaultADMOptions()
	for sc := range 4 {
		if s.rfactor[sc] != def.rfactors(sc) {
			return false
		}
	}
	return s.irf0 == def.irf0()
}

// offloadable reports whether an Offload's ADM rows serve these options (see
// admState.offloadable).
func (o admOptions) offloadable() bool {
	def := defaultADMOptions()
	for sc := range 4 {
		if o.rfactors(sc) != def.rfactors(sc) {
			return false
		}
	}
	return o.irf0() == def.irf0()
}

// fromRows derives the ADM features from an Offload's rows, rounding and
// adding them as the CPU kernel's own loops do.
func (s *admState) fromRows(r *ADMRows) admScore {
	var ns, ds, as [4]float32
	w, h := s.w, s.h
	for scale := range 4 {
		w, h = (w+1)/2, (h+1)/2
		top, bottom, _, _ := admScoreRegion(w, h)
		var den [3]uint64
		var num, aim [3]int64
		dsh, dadd := admDen0Shift(w, h)
		if scale > 0 {
			p := admDenSShifts(w, h, scale)
			dsh, dadd = int(p.ShiftAccum), p.AddAccum
		}
		cm := admCMShifts(w, h, scale)
		for i := top; i < bottom; i++ {
			for t := range 3 {
				den[t] += (r.Den[scale][3*i+t] + dadd) >> uint(dsh)
				num[t] += (r.Num[scale][3*i+t] + cm.AddInner) >> cm.ShiftInner
				aim[t] += (r.AIM[scale][3*i+t] + cm.AddInner) >> cm.ShiftInner
			}
		}
		if scale == 0 {
			ds[scale] = admDen0Float(den, w, h, s.rfactor[0], s.opt.noiseWeight)
		} else {
			ds[scale] = admDenSFloat(den, w, h, scale, s.rfactor[scale], s.opt.noiseWeight)
		}
		ns[scale] = admCMFloat(num, w, h, scale, s.opt.noiseWeight)
		if !s.opt.skipAIM {
			as[scale] = admCMFloat(aim, w, h, scale, 0)
		}
	}
	return s.combine(ns, ds, as)
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
