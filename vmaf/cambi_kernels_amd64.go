package vmaf

import "math"

// CAMBI's AVX2 kernels (asmgen/cambi.go) on the largest multiple of 16
// words of a row; the scalar kernels do the rest.

func vec16(n int) int { return n &^ 15 }

func cambiMode3AVX2Row(a, b, c, dst []uint16) {
	w := len(dst)
	a, b, c = a[:w], b[:w], c[:w]
	n := vec16(w)
	if n > 0 {
		cambiMode3AVX2(&a[0], &b[0], &c[0], &dst[0], n)
	}
	cambiMode3Row(a[n:], b[n:], c[n:], dst[n:])
}

// cambiZeroDerivAVX2Row leaves the last column to the scalar code: the
// kernel reads cur one word past each column.
func cambiZeroDerivAVX2Row(cur, next []uint16, z []uint8) {
	w := len(z)
	cur, next = cur[:w], next[:w]
	n := vec16(w - 1)
	if n > 0 {
		cambiZeroDerivAVX2(&cur[0], &next[0], &z[0], n)
	}
	if n < w {
		cambiZeroDerivRow(cur[n:], next[n:], z[n:])
	}
}

func cambiColSumAVX2Row(cs []uint16, zin, zout []uint8) {
	w := len(cs)
	zin, zout = zin[:w], zout[:w]
	n := vec16(w)
	if n > 0 {
		cambiColSumAVX2(&cs[0], &zin[0], &zout[0], n)
	}
	cambiColSumRow(cs[n:], zin[n:], zout[n:])
}

func cambiMaskRowAVX2Row(cs []uint16, out []bool, threshold int) {
	w := len(out)
	cs = cs[:w+6]
	n := vec16(w)
	if n > 0 {
		cambiMaskRowAVX2(&cs[0], &out[0], uint16(threshold), n)
	}
	cambiMaskRowGo(cs[n:], out[n:], threshold)
}

func cambiBandAVX2Row(img []uint16, mask []bool, out []int16, base, size, nd int) {
	w := len(out)
	img, mask = img[:w], mask[:w]
	n := vec16(w)
	if n > 0 && size > 0 {
		cambiBandAVX2(&img[0], &mask[0], &out[0], uint16(base), uint16(size-1), uint16(nd), n)
	} else {
		n = 0
	}
	cambiBandRow(img[n:], mask[n:], out[n:], base, size, nd)
}

// cambiTailMask gives the last part of a span: &cambiTailMask[16-r] has r
// words of -1, then zeros.
var cambiTailMask = func() (t [32]uint16) {
	for i := range 16 {
		t[i] = 0xffff
	}
	return t
}()

// cambiContrastWeights32 are cambiContrastWeights as the c-values kernel
// reads them.
var cambiContrastWeights32 = func() (t [cambiMaxDiffs]int32) {
	for d, v := range cambiContrastWeights {
		t[d] = int32(v)
	}
	return t
}()

// cambiCValuesAVX2Row is cambiCValuesRowGo with the kernel on 8 pixels a
// step. The kernel's gathers stay within the histogram's rows for every
// pixel of the band, and read a dword for the last word of a row, within
// its slack.
func cambiCValuesAVX2Row(hist []uint16, w int, band []int16, diffs []uint32, out []float32) {
	band = band[:len(out)]
	n := len(out) &^ 7
	if n > 0 && len(hist) >= cambiSlack+w {
		cambiCValuesAVX2(&hist[0], w, &band[0], &diffs[0], &cambiContrastWeights32[0], &cambiReciprocal[0], &out[0], n)
	} else {
		n = 0
	}
	cambiCValuesRowGo(hist[n:], w, band[n:], diffs, out[n:])
}

// cambiHistAVX2Row runs the kernel on the columns whose window lies within
// the row, the scalar code on the pad columns at each end. The kernel
// writes back up to 15 words past a span, within the histogram's slack.
func cambiHistAVX2Row(hist []uint16, w, pad int, out, in []int16) {
	out, in = out[:w], in[:w]
	span := 2*pad + 1
	n := w - 2*pad // columns pad .. w-pad-1
	if n <= 0 || span > 0x7fff {
		cambiHistRowGo(hist, w, pad, out, in)
		return
	}
	// Bounds: the last row's last span, written 16 words at a time.
	rows := (len(hist) - cambiSlack) / w
	_ = hist[(rows-1)*w+(w-span)+(span+15)&^15-1]
	// Columns step apart, step past a span and the 15 words the kernel
	// writes back after it, so that no update overlaps the one before.
	cambiHistAVX2(&hist[0], w, &out[pad], &in[pad], span>>4, (*[16]uint16)(cambiTailMask[16-span&15:]), n, span+16)
	// The edge columns, whose windows are clipped.
	edge := func(lo, hi int) {
		for j := lo; j < hi; j++ {
			vo, vi := out[j], in[j]
			if vo == vi {
				continue
			}
			a, b := max(j-pad, 0), min(j+pad+1, w)
			if vo >= 0 {
				seg := hist[int(vo)*w+a : int(vo)*w+b]
				for k := range seg {
					seg[k]--
				}
			}
			if vi >= 0 {
				seg := hist[int(vi)*w+a : int(vi)*w+b]
				for k := range seg {
					seg[k]++
				}
			}
		}
	}
	edge(0, pad)
	edge(w-pad, w)
}

func cambiConvAVX2Row(src, dst []uint16, bpc int) {
	w := len(dst)
	src = src[:w]
	n := vec16(w)
	if n > 0 {
		round, up, down := cambiConvShifts(bpc)
		cambiConvAVX2(&src[0], &dst[0], round, uint64(up), uint64(down), n)
	}
	cambiConvRow(src[n:], dst[n:], bpc)
}

// cambiAntiDitherAVX2Row leaves the last column and the rest of a vector
// to the scalar code; the kernel has read r[n] but not written it.
func cambiAntiDitherAVX2Row(r, next []uint16) {
	w := len(r)
	next = next[:w]
	n := (w - 1) &^ 7
	if n > 0 {
		cambiAntiDitherAVX2(&r[0], &next[0], n)
	}
	cambiAntiDitherRow(r[n:], next[n:])
}

// cambiDecimate16AVX2Row runs the kernel on the largest multiple of 16
// outputs whose sources lie within src, the scalar code on the rest.
func cambiDecimate16AVX2Row(src, dst []uint16) {
	n := vec16(min(len(dst), len(src)/2))
	if n > 0 {
		_, _ = src[2*n-1], dst[n-1]
		cambiDecimate16AVX2(&src[0], &dst[0], n)
	}
	decimateRow(src[2*n:], dst[n:])
}

// cambiDecimate8AVX2Row is cambiDecimate16AVX2Row for the mask, 32
// outputs a step.
func cambiDecimate8AVX2Row(src, dst []bool) {
	n := min(len(dst), len(src)/2) &^ 31
	if n > 0 {
		_, _ = src[2*n-1], dst[n-1]
		cambiDecimate8AVX2(&src[0], &dst[0], n)
	}
	decimateRow(src[2*n:], dst[n:])
}

// cambiScanAVX2Row is cambiScan with 8 values a step (its sums in another
// order, which matters only where the sum is not exact).
func cambiScanAVX2Row(c []float32) (sum float64, nonzero int, exact bool) {
	n := len(c) &^ 7
	if n == 0 || n > 1<<31 {
		return cambiScan(c)
	}
	// Per dword lane: min(bits-1), max(bits), count(bits == 0); the sums.
	var l [16]uint64
	cambiScanAVX2(&c[0], n, &l)
	minNZ, maxB, zeros := ^uint32(0), uint32(0), 0
	for k := range 4 {
		minNZ = min(minNZ, uint32(l[k]), uint32(l[k]>>32))
		maxB = max(maxB, uint32(l[4+k]), uint32(l[4+k]>>32))
		zeros += int(uint32(l[8+k])) + int(l[8+k]>>32)
	}
	f := func(k int) float64 { return math.Float64frombits(l[12+k]) }
	sum = (f(0) + f(1)) + (f(2) + f(3))
	for _, v := range c[n:] {
		b := math.Float32bits(v)
		minNZ, maxB = min(minNZ, b-1), max(maxB, b)
		if b == 0 {
			zeros++
		}
		sum += float64(v)
	}
	return sum, len(c) - zeros, cambiExact(sum, minNZ+1, maxB)
}
