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
}

// OffloadWorker computes features for one scoring goroutine.
type OffloadWorker interface {
	// MotionSAD returns what MotionSAD returns for the two luma planes.
	MotionSAD(prev, cur []uint16) (uint64, error)
	// VIF returns the four scales' integer sums of a frame pair's luma
	// planes, or ok false when this worker leaves VIF to the CPU.
	VIF(ref, dis []uint16) (sums [4]VIFSums, ok bool, err error)
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
