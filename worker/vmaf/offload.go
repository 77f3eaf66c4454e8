package vmaf

// Offload computes some of each frame pair's features on another device (a
// GPU backend) for Score, which computes the rest on the CPU. Offloaded
// features must give the CPU kernel's integers exactly, so that scores do
// not depend on where they ran.
type Offload interface {
	// NewWorker prepares one scoring goroutine's device state for frames of
	// w x h luma samples of bit depth bpc. Score calls it once per
	// goroutine and closes what it returns.
	NewWorker(w, h, bpc int) (OffloadWorker, error)
}

// OffloadWorker computes features for one scoring goroutine.
type OffloadWorker interface {
	// MotionSAD returns what MotionSAD returns for the two luma planes.
	MotionSAD(prev, cur []uint16) (uint64, error)
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
