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
}

func newIQADecimator(w, h, factor int, kernel []float32, n int) *iqaDecimator {
	if n > 16 {
		panic("iqaDecimator: kernel wider than 16 taps")
	}
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
	return d
}

// decimate writes the low-passed, decimated img into dst (sw x sh). Each
// output's taps are summed row by row, left to right, in double, as
// _iqa_filter_pixel does. Those sums are long dependency chains (81 taps
// for MS-SSIM), so four outputs are summed side by side, each still in
// its own order; outputs whose taps cross the left or right edge go
// through the column table.
func (d *iqaDecimator) decimate(dst, img []float32) {
	w, n, f := d.w, d.n, d.factor
	uc, vc := n/2, n/2
	// Outputs x in [xLo, xHi) read columns x*f-uc .. x*f-uc+n-1, all inside.
	xLo := min((uc+f-1)/f, d.sw)
	xHi := max(min((w-n+uc)/f+1, d.sw), xLo)
	var rows [16][]float32
	for y := 0; y < d.sh; y++ {
		for v := 0; v < n; v++ {
			r := iqaSymmetric(y*f+v-vc, d.h) * w
			rows[v] = img[r : r+w]
		}
		out := dst[y*d.sw : (y+1)*d.sw]
		edge := func(x int) {
			var sum float64
			for v := 0; v < n; v++ {
				row, k := rows[v], d.kernel[v*n:(v+1)*n]
				for u, kv := range k {
					sum += float64(row[d.cols[u][x]] * kv)
				}
			}
			out[x] = float32(sum)
		}
		for x := 0; x < xLo; x++ {
			edge(x)
		}
		x := xLo
		if n == 9 && f == 2 {
			x = decimate9by2(out, &rows, d.kernel, x, xHi)
		}
		for ; x+4 <= xHi; x += 4 {
			var s0, s1, s2, s3 float64
			c := x*f - uc
			for v := 0; v < n; v++ {
				k := d.kernel[v*n : (v+1)*n]
				row := rows[v][c : c+3*f+n]
				for u, kv := range k {
					s0 += float64(row[u] * kv)
					s1 += float64(row[f+u] * kv)
					s2 += float64(row[2*f+u] * kv)
					s3 += float64(row[3*f+u] * kv)
				}
			}
			out[x], out[x+1], out[x+2], out[x+3] = float32(s0), float32(s1), float32(s2), float32(s3)
		}
		for ; x < d.sw; x++ {
			edge(x)
		}
	}
}

// decimate9by2 is decimate's inner loop for MS-SSIM's 9x9 filter and
// factor 2, with the taps unrolled: outputs x0, x0+4, ... up to xHi, four at
// a time. It returns the first output it did not compute.
func decimate9by2(out []float32, rows *[16][]float32, kernel []float32, x0, xHi int) int {
	x := x0
	for ; x+4 <= xHi; x += 4 {
		var s0, s1, s2, s3 float64
		c := 2*x - 4
		for v := 0; v < 9; v++ {
			k := (*[9]float32)(kernel[v*9 : v*9+9])
			r := (*[15]float32)(rows[v][c : c+15])
			for u := 0; u < 9; u++ {
				kv := k[u]
				s0 += float64(r[u] * kv)
				s1 += float64(r[u+2] * kv)
				s2 += float64(r[u+4] * kv)
				s3 += float64(r[u+6] * kv)
			}
		}
		o := (*[4]float32)(out[x : x+4])
		o[0], o[1], o[2], o[3] = float32(s0), float32(s1), float32(s2), float32(s3)
	}
	return x
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
	vert [5][]float32 // vertical pass: one row of each statistic
}

func newIQASSIM(w int) *iqaSSIM {
	s := &iqaSSIM{}
	dw := max(w-iqaWindowLen+1, 0)
	for i := range s.ring {
		s.ring[i] = make([]float32, iqaWindowLen*dw)
		s.vert[i] = make([]float32, dw)
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
// _iqa_convolve's horizontal pass).
func convolveRow(out, src []float32, k *[iqaWindowLen]float32) {
	k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10 := k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9], k[10]
	src = src[:len(out)+iqaWindowLen-1]
	for x := range out {
		t := (*[iqaWindowLen]float32)(src[x : x+iqaWindowLen])
		var sum float64
		sum += float64(t[0] * k0)
		sum += float64(t[1] * k1)
		sum += float64(t[2] * k2)
		sum += float64(t[3] * k3)
		sum += float64(t[4] * k4)
		sum += float64(t[5] * k5)
		sum += float64(t[6] * k6)
		sum += float64(t[7] * k7)
		sum += float64(t[8] * k8)
		sum += float64(t[9] * k9)
		sum += float64(t[10] * k10)
		out[x] = float32(sum)
	}
}

// convolveColumn writes out[x] = sum over v of rows[v][x]*k[v], in the
// same arithmetic (_iqa_convolve's vertical pass).
func convolveColumn(out []float32, rows *[iqaWindowLen][]float32, k *[iqaWindowLen]float32) {
	n := len(out)
	r0, r1, r2, r3, r4, r5 := rows[0][:n], rows[1][:n], rows[2][:n], rows[3][:n], rows[4][:n], rows[5][:n]
	r6, r7, r8, r9, r10 := rows[6][:n], rows[7][:n], rows[8][:n], rows[9][:n], rows[10][:n]
	for x := range out {
		var sum float64
		sum += float64(r0[x] * k[0])
		sum += float64(r1[x] * k[1])
		sum += float64(r2[x] * k[2])
		sum += float64(r3[x] * k[3])
		sum += float64(r4[x] * k[4])
		sum += float64(r5[x] * k[5])
		sum += float64(r6[x] * k[6])
		sum += float64(r7[x] * k[7])
		sum += float64(r8[x] * k[8])
		sum += float64(r9[x] * k[9])
		sum += float64(r10[x] * k[10])
		out[x] = float32(sum)
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
			convolveRow(s.ring[i][slot:slot+dw], src, &iqaWindow)
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
		for i := range s.vert {
			var rows [n][]float32
			for v := range rows {
				slot := ((oy + v) % n) * dw
				rows[v] = s.ring[i][slot : slot+dw]
			}
			convolveColumn(s.vert[i][:dw], &rows, &iqaWindow)
		}
		vR, vC, vRR, vCC, vRC := s.vert[0][:dw], s.vert[1][:dw], s.vert[2][:dw], s.vert[3][:dw], s.vert[4][:dw]
		for x := range vR {
			muR, muC := vR[x], vC[x]
			muRR, muCC, muRC := float32(muR*muR), float32(muC*muC), float32(muR*muC)
			sigR := vRR[x] - muRR
			sigC := vCC[x] - muCC
			if sigR < 0 { // MAX(0.0, sigma) (zli-nflx)
				sigR = 0
			}
			if sigC < 0 {
				sigC = 0
			}
			sigRC := vRC[x] - muRC
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
