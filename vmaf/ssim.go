package vmaf

// ssimState is one worker's scratch for float_ssim (float_ssim.c and
// ssim.c, compute_ssim, default options).
type ssimState struct {
	w, h int
	// scale is libvmaf's automatic decimation factor, max(1,
	// round(min(w, h) / 256)): SSIM is meant for a viewing distance at which
	// about 256 pixels span the picture's smaller side, so 720p is
	// computed at a third of its size and 1080p at a quarter.
	scale      int
	dec        *iqaDecimator // nil when scale is 1
	refD, disD []float32
	core       *iqaSSIM
}

func newSSIMState(w, h int) *ssimState {
	s := &ssimState{w: w, h: h, scale: max(1, iqaRound(float32(min(w, h))/256))}
	cw := w
	if s.scale > 1 {
		// A box filter of scale x scale taps of 1/scale² each, centred
		// on every scale-th sample (compute_ssim's low_pass).
		n := s.scale
		k := make([]float32, n*n)
		for i := range k {
			k[i] = 1 / float32(n*n)
		}
		s.dec = newIQADecimator(w, h, n, k, n)
		s.refD = make([]float32, s.dec.sw*s.dec.sh)
		s.disD = make([]float32, s.dec.sw*s.dec.sh)
		cw = s.dec.sw
	}
	s.core = newIQASSIM(cw)
	return s
}

// compute returns float_ssim of two luma planes already converted by
// toFloatPlane.
func (s *ssimState) compute(ref, dis []float32) float64 {
	w, h := s.w, s.h
	if s.dec != nil {
		s.dec.decimate(s.refD, ref)
		s.dec.decimate(s.disD, dis)
		ref, dis, w, h = s.refD, s.disD, s.dec.sw, s.dec.sh
	}
	return float64(s.core.compute(ref, dis, w, h).ssim)
}
