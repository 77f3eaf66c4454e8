package vmaf

import (
	"fmt"
	"math"
)

// msssimScales is the number of MS-SSIM scales (ssim_tools.h, SCALES).
const msssimScales = 5

// msssimLPF is the 9x9 low-pass filter MS-SSIM decimates with, the 9/7
// biorthogonal wavelet's (ms_ssim.c, g_lpf). libvmaf applies it as this
// 2D table, not as its separable 1D factors, whose product differs in the
// last digits.
var msssimLPF = [9 * 9]float32{
	0.000714, -0.000450, -0.002090, 0.007132, 0.016114, 0.007132, -0.002090, -0.000450, 0.000714,
	-0.000450, 0.000283, 0.001316, -0.004490, -0.010146, -0.004490, 0.001316, 0.000283, -0.000450,
	-0.002090, 0.001316, 0.006115, -0.020867, -0.047149, -0.020867, 0.006115, 0.001316, -0.002090,
	0.007132, -0.004490, -0.020867, 0.071207, 0.160885, 0.071207, -0.020867, -0.004490, 0.007132,
	0.016114, -0.010146, -0.047149, 0.160885, 0.363505, 0.160885, -0.047149, -0.010146, 0.016114,
	0.007132, -0.004490, -0.020867, 0.071207, 0.160885, 0.071207, -0.020867, -0.004490, 0.007132,
	-0.002090, 0.001316, 0.006115, -0.020867, -0.047149, -0.020867, 0.006115, 0.001316, -0.002090,
	-0.000450, 0.000283, 0.001316, -0.004490, -0.010146, -0.004490, 0.001316, 0.000283, -0.000450,
	0.000714, -0.000450, -0.002090, 0.007132, 0.016114, 0.007132, -0.002090, -0.000450, 0.000714,
}

// The exponents of the luminance, contrast and structure terms of each
// scale (ms_ssim.c, g_alphas, g_betas, g_gammas: Wang et al.'s weights).
var (
	msssimAlphas = [msssimScales]float32{0, 0, 0, 0, 0.1333}
	msssimBetas  = [msssimScales]float32{0.0448, 0.2856, 0.3001, 0.2363, 0.1333}
	msssimGammas = [msssimScales]float32{0.0448, 0.2856, 0.3001, 0.2363, 0.1333}
)

// checkMSSSIMSize refuses frames libvmaf's float_ms_ssim refuses
// (ms_ssim.c, compute_ms_ssim, "scale below 1x1"): each of the five scales,
// halving with rounding down, must hold the 11x11 window, so both sides
// need at least 176 pixels.
func checkMSSSIMSize(w, h int) error {
	cw, ch := w, h
	for range msssimScales {
		if cw < iqaWindowLen || ch < iqaWindowLen {
			return fmt.Errorf("%w: %dx%d, MS-SSIM needs at least %dx%d", ErrTooSmall, w, h,
				iqaWindowLen<<(msssimScales-1), iqaWindowLen<<(msssimScales-1))
		}
		cw, ch = cw/2, ch/2
	}
	return nil
}

// msssimState is one worker's scratch for float_ms_ssim (float_ms_ssim.c
// and ms_ssim.c, compute_ms_ssim, default options: Wang's MS-SSIM with the
// Gaussian window).
type msssimState struct {
	w, h     int
	dec      [msssimScales - 1]*iqaDecimator // scale i to i+1
	ref, dis [msssimScales][]float32         // scales 1..4; 0 is the input
	core     *iqaSSIM
}

func newMSSSIMState(w, h int) *msssimState {
	s := &msssimState{w: w, h: h, core: newIQASSIM(w)}
	cw, ch := w, h
	for i := range s.dec {
		d := newIQADecimator(cw, ch, 2, msssimLPF[:], 9)
		s.dec[i] = d
		s.ref[i+1] = make([]float32, d.sw*d.sh)
		s.dis[i+1] = make([]float32, d.sw*d.sh)
		cw, ch = d.sw, d.sh
	}
	return s
}

// compute returns float_ms_ssim of two luma planes already converted by
// toFloatPlane: the product over the scales of each one's mean luminance,
// contrast and structure terms raised to the scale's exponents.
func (s *msssimState) compute(ref, dis []float32) float64 {
	msssim := 1.0
	w, h := s.w, s.h
	for i := range msssimScales {
		if i > 0 {
			d := s.dec[i-1]
			d.decimate(s.ref[i], ref)
			d.decimate(s.dis[i], dis)
			ref, dis, w, h = s.ref[i], s.dis[i], d.sw, d.sh
		}
		m := s.core.compute(ref, dis, w, h)
		msssim *= math.Pow(float64(m.l), float64(msssimAlphas[i])) *
			math.Pow(float64(m.c), float64(msssimBetas[i])) *
			math.Pow(float64(m.s), float64(msssimGammas[i]))
	}
	return msssim
}
