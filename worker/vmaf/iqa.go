package vmaf

import "math"

// This file ports the parts of the IQA library that libvmaf's float_ssim
// and float_ms_ssim use (libvmaf/src/feature/iqa: convolve.c, decimate.c,
// ssim_tools.c, math_utils.c). IQA works on float images and sums filter
// taps in double, each tap's product rounded to float first; the code below
// keeps those roundings and the order of every sum, so results match
// libvmaf's to the last bit or close to it. Where a float32 product feeds a
// sum it is converted explicitly, which keeps Go from fusing it into an FMA
// (the C is built without FMA contraction for its plain path).

// iqaWindow is the 11-tap Gaussian (sigma 1.5) both SSIMs filter with
// (ssim_tools.h, g_gaussian_window_h and _v, applied separably since
// libvmaf defines IQA_CONVOLVE_1D).
var iqaWindow = [iqaWindowLen]float32{0.001028, 0.007599, 0.036001, 0.109361, 0.213006, 0.266012,
	0.213006, 0.109361, 0.036001, 0.007599, 0.001028}

const iqaWindowLen = 11

// SSIM's stabilising constants for L = 255 (ssim_tools.c, _iqa_ssim
// defaults K1 = 0.01, K2 = 0.03), computed in float as libvmaf does: C1 =
// (K1*L)^2, C2 = (K2*L)^2, C3 = C2/2. Higher bit depths are scaled to the
// 8-bit range before (picture_copy), so L stays 255.
var iqaC1, iqaC2, iqaC3 = func() (float32, float32, float32) {
	k1, k2, l := float32(0.01), float32(0.03), float32(255)
	a, b := k1*l, k2*l
	c2 := b * b
	return a * a, c2, c2 / 2
}()

// iqaRound is IQA's _round for the positive values it gets: halves round up.
func iqaRound(a float32) int {
	i := int(a)
	if a-float32(i) >= 0.5 {
		return i + 1
	}
	return i
}

// toFloatPlane converts a plane to floats scaled to the 8-bit range as
// libvmaf's picture_copy does for the float features (sample / 2^(bpc-8);
// multiplying by the power-of-two reciprocal is exact, like the division).
func toFloatPlane(dst []float32, src []uint16, bpc int) {
	dst = dst[:len(src)]
	scale := float32(1) / float32(int(1)<<uint(bpc-8))
	for i, v := range src {
		dst[i] = float32(v) * scale
	}
}

// iqaSymmetric maps an index into [0, n) by IQA's KBND_SYMMETRIC
// boundary, which repeats the edge sample (…1 0 | 0 1 … n-1 | n-1 n-2 …).
func iqaSymmetric(i, n int) int {
	if i < 0 {
		return -1 - i
	}
	if i >= n {
		return 2*n - i - 1
	}
	return i
}

// iqaDecimator low-passes a float image with a square kernel centred on
// every factor-th sample (decimate.c, _iqa_decimate, whose taps go through
// _iqa_filter_pixel). The output is w/factor + w%2 by h/factor + h%2, IQA's
// size rule (not a ceiling: for factor 3 and odd w it is one more).
type iqaDecimator struct {
	factor, n int
	kernel    []float32 // n x n, row-major
	w, h      int
	sw, sh    int
	cols      [][]int32 // cols[u][x]: input column of tap u for output x
	acc       []float64
}

func newIQADecimator(w, h, factor int, kernel []float32, n int) *iqaDecimator {
	d := &iqaDecimator{factor: factor, n: n, kernel: kernel, w: w, h: h,
		sw: w/factor + w&1, sh: h/factor + h&1}
	d.cols = make([][]int32, n)
	uc := n / 2
	for u := range d.cols {
		d.cols[u] = make([]int32, d.sw)
		for x := range d.cols[u] {
			d.cols[u][x] = int32(iqaSymmetric(x*factor+u-uc, w))
		}
	}
	d.acc = make([]float64, d.sw)
	return d
}

// decimate writes the low-passed, decimated img into dst (sw x sh). Each
// output's taps are summed row by row, left to right, in double, as
// _iqa_filter_pixel does; the outputs of a row are accumulated side by side
// so that their independent sums overlap in the CPU.
func (d *iqaDecimator) decimate(dst, img []float32) {
	w, n, vc := d.w, d.n, d.n/2
	acc := d.acc
	for y := 0; y < d.sh; y++ {
		clear(acc)
		for v := 0; v < n; v++ {
			r := iqaSymmetric(y*d.factor+v-vc, d.h) * w
			row := img[r : r+w]
			for u, cols := range d.cols {
				k := d.kernel[v*n+u]
				for x, c := range cols {
					acc[x] += float64(row[c] * k)
				}
			}
		}
		out := dst[y*d.sw : (y+1)*d.sw]
		for x, s := range acc {
			out[x] = float32(s)
		}
	}
}

// iqaSSIM computes IQA's default SSIM of two float images (ssim_tools.c,
// _iqa_ssim with args NULL): Gaussian means, variances and covariance over
// the "valid" region (the window inside the image, so the map is 10 pixels
// smaller each way), then libvmaf's l*c*s per pixel with its corner-case
// fix, averaged.
//
// libvmaf convolves five whole images; this keeps only the horizontal pass
// of the last 11 rows of each statistic in a ring and finishes every map
// row as soon as its rows are in. The sums and roundings are the same.
type iqaSSIM struct {
	ring [5][]float32 // horizontal pass of ref, cmp, ref², cmp², ref·cmp: 11 rows of w-10
	prod [3][]float32 // ref², cmp², ref·cmp of one input row, in float as libvmaf stores them
	acc  [5][]float64
}

func newIQASSIM(w int) *iqaSSIM {
	s := &iqaSSIM{}
	dw := max(w-iqaWindowLen+1, 0)
	for i := range s.ring {
		s.ring[i] = make([]float32, iqaWindowLen*dw)
		s.acc[i] = make([]float64, dw)
	}
	for i := range s.prod {
		s.prod[i] = make([]float32, w)
	}
	return s
}

// ssimMeans holds the means over the SSIM map of the index and of its
// luminance, contrast and structure terms, as float like libvmaf returns them.
type ssimMeans struct {
	ssim, l, c, s float32
}

// convolveRow writes out[x] = sum over u of src[x+u]*k[u], each product
// rounded to float and summed in double in tap order (convolve.c,
// _iqa_convolve's 1D passes), into acc then out.
func convolveRow(out, src []float32, k *[iqaWindowLen]float32, acc []float64) {
	acc = acc[:len(out)]
	clear(acc)
	for u, kv := range k {
		s := src[u : u+len(acc)]
		for x := range acc {
			acc[x] += float64(s[x] * kv)
		}
	}
	for x, v := range acc {
		out[x] = float32(v)
	}
}

// compute returns the SSIM means of ref and cmp, w x h images of at least
// 11x11.
func (s *iqaSSIM) compute(ref, cmp []float32, w, h int) ssimMeans {
	const n = iqaWindowLen
	dw, dh := w-n+1, h-n+1
	rr, cc, rc := s.prod[0][:w], s.prod[1][:w], s.prod[2][:w]
	horizontal := func(y int) {
		r, c := ref[y*w:(y+1)*w], cmp[y*w:(y+1)*w]
		for x := range r {
			rr[x], cc[x], rc[x] = r[x]*r[x], c[x]*c[x], r[x]*c[x]
		}
		slot := (y % n) * dw
		for i, src := range [5][]float32{r, c, rr, cc, rc} {
			convolveRow(s.ring[i][slot:slot+dw], src, &iqaWindow, s.acc[i])
		}
	}
	for y := 0; y < n-1; y++ {
		horizontal(y)
	}
	c1, c2, c3 := iqaC1, iqaC2, iqaC3
	var ssimSum, lSum, cSum, sSum float64
	for oy := 0; oy < dh; oy++ {
		horizontal(oy + n - 1)
		// Vertical pass: rows oy..oy+10 of each statistic, in tap order.
		for i := range s.acc {
			acc := s.acc[i][:dw]
			clear(acc)
			for v, kv := range iqaWindow {
				slot := ((oy + v) % n) * dw
				row := s.ring[i][slot : slot+dw]
				for x := range acc {
					acc[x] += float64(row[x] * kv)
				}
			}
		}
		aR, aC, aRR, aCC, aRC := s.acc[0][:dw], s.acc[1][:dw], s.acc[2][:dw], s.acc[3][:dw], s.acc[4][:dw]
		for x := range aR {
			muR, muC := float32(aR[x]), float32(aC[x])
			muRR, muCC, muRC := float32(muR*muR), float32(muC*muC), float32(muR*muC)
			sigR := float32(aRR[x]) - muRR
			sigC := float32(aCC[x]) - muCC
			if sigR < 0 { // MAX(0.0, sigma) (zli-nflx)
				sigR = 0
			}
			if sigC < 0 {
				sigC = 0
			}
			sigRC := float32(aRC[x]) - muRC
			sigRsigC := float32(math.Sqrt(float64(float32(sigR * sigC))))
			l := (float64(2*float64(muR)*float64(muC)) + float64(c1)) / float64(muRR+muCC+c1)
			c := (float64(2*float64(sigRsigC)) + float64(c2)) / float64(sigR+sigC+c2)
			// libvmaf's fix for flat identical regions: a covariance made
			// negative by rounding where the deviations are 0 counts as 0,
			// so that the structure term is 1.
			if sigRC < 0 && sigRsigC <= 0 {
				sigRC = 0
			}
			st := float64((sigRC + c3) / (sigRsigC + c3))
			ssimSum += float64(float64(l*c) * st)
			lSum += l
			cSum += c
			sSum += st
		}
	}
	n2 := float64(dw * dh)
	return ssimMeans{ssim: float32(ssimSum / n2), l: float32(lSum / n2), c: float32(cSum / n2), s: float32(sSum / n2)}
}
