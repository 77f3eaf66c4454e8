package vmaf

import "math"

// psnrPlane returns the PSNR in dB of the top-left w x h samples of a
// plane pair whose rows are stride samples apart, at bit depth bpc
// (integer_psnr.c, psnr and psnr_hbd, default options): the sum of squared
// errors is exact in integers, the peak is 2^bpc-1 (libvmaf's default,
// reduced_hbd_peak off; 8-bit uses 255) and the result is capped at
// 6*bpc+12 dB (psnr_max with min_sse 0), which also keeps identical planes
// finite.
func psnrPlane(ref, dis []uint16, w, h, stride, bpc int) float64 {
	var sse uint64
	for y := 0; y < h; y++ {
		r, d := ref[y*stride:y*stride+w], dis[y*stride:y*stride+w]
		for i, v := range r {
			e := int64(v) - int64(d[i])
			sse += uint64(e * e)
		}
	}
	peak := uint64(1)<<uint(bpc) - 1
	mse := float64(sse) / float64(w*h)
	psnr := 10 * math.Log10(float64(peak*peak)/max(mse, 1e-16))
	return min(psnr, float64(6*bpc+12))
}
