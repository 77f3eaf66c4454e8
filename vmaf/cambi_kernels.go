package vmaf

import "math/bits"

// CAMBI's inner loops, one row each, as the kernels struct holds them. These
// scalar ones are the reference (the generic path); the AVX2 ones
// (cambi_kernels_amd64.go) give the same bits.

// cambiSlack is how many words past the histogram's last row a kernel may
// read and write back unchanged (the AVX2 range updates work in 16 words).
const cambiSlack = 32

// mode3 is the majority of three values, or their minimum when all differ.
func mode3(a, b, c uint16) uint16 {
	if a == b || a == c {
		return a
	}
	if b == c {
		return b
	}
	return min(a, b, c)
}

// cambiMode3Row sets dst[j] = mode3(a[j], b[j], c[j]).
func cambiMode3Row(a, b, c, dst []uint16) {
	a, b, c = a[:len(dst)], b[:len(dst)], c[:len(dst)]
	for j := range dst {
		dst[j] = mode3(a[j], b[j], c[j])
	}
}

// cambiZeroDerivRow sets z[c] to 1 when cur[c] equals cur[c+1] (the last
// column counts as equal) and next[c], else 0.
func cambiZeroDerivRow(cur, next []uint16, z []uint8) {
	w := len(z)
	cur, next = cur[:w], next[:w]
	for c := 0; c < w-1; c++ {
		z[c] = b2u8(cur[c] == cur[c+1] && cur[c] == next[c])
	}
	if w > 0 {
		z[w-1] = b2u8(cur[w-1] == next[w-1])
	}
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// cambiColSumRow adds the zero-derivative row zin to the column sums and
// takes zout from them.
func cambiColSumRow(cs []uint16, zin, zout []uint8) {
	zin, zout = zin[:len(cs)], zout[:len(cs)]
	for c := range cs {
		cs[c] += uint16(zin[c]) - uint16(zout[c])
	}
}

// cambiMaskRowGo sets out[c] to whether cs[c] + ... + cs[c+6], the 7x7
// square around pixel c of the column sums padded with 3 zeros each side,
// exceeds threshold.
func cambiMaskRowGo(cs []uint16, out []bool, threshold int) {
	cs = cs[:len(out)+6]
	sum := int(cs[0]) + int(cs[1]) + int(cs[2]) + int(cs[3]) + int(cs[4]) + int(cs[5])
	for c := range out {
		sum += int(cs[c+6])
		out[c] = sum > threshold
		sum -= int(cs[c])
	}
}

// cambiBandRow sets out[k] to pixel k's histogram row, nd+img[k]-base, when
// it is masked and img[k]-base < size, else to -1.
func cambiBandRow(img []uint16, mask []bool, out []int16, base, size, nd int) {
	img, mask = img[:len(out)], mask[:len(out)]
	for k, v := range img {
		out[k] = -1
		if b := int(v) - base; mask[k] && uint(b) < uint(size) {
			out[k] = int16(b + nd)
		}
	}
}

// cambiHistRowGo slides the histograms of w columns down one row: for each
// column j where the leaving row's histogram row out[j] and the entering
// row's in[j] differ, the columns within pad of j count one less of out[j]
// (when not -1) and one more of in[j] (likewise).
func cambiHistRowGo(hist []uint16, w, pad int, out, in []int16) {
	out, in = out[:w], in[:w]
	for j := range w {
		vo, vi := out[j], in[j]
		if vo == vi {
			continue // the decrement and increment cancel
		}
		lo, hi := max(j-pad, 0), min(j+pad+1, w)
		if vo >= 0 {
			seg := hist[int(vo)*w+lo : int(vo)*w+hi]
			for k := range seg {
				seg[k]--
			}
		}
		if vi >= 0 {
			seg := hist[int(vi)*w+lo : int(vi)*w+hi]
			for k := range seg {
				seg[k]++
			}
		}
	}
}

// cambiCValuesRowGo fills the c-values of one row (c_value_pixel): 0 where
// band is -1, else the largest over the diffs d of diffs[band] of
// weight(d)*p0*p / (p0+p) in float32, where p0 counts the pixel's own
// histogram row r at its column and p the larger of rows r+d+1 and r-d-1
// (the zero rows beyond the band count 0).
func cambiCValuesRowGo(hist []uint16, w int, band []int16, diffs []uint32, out []float32) {
	band = band[:len(out)]
	for j, r := range band {
		if r < 0 {
			out[j] = 0
			continue
		}
		col := hist[j:]
		p0 := int(col[int(r)*w])
		var best float32
		for m := diffs[r]; m != 0; m &= m - 1 {
			d := bits.TrailingZeros32(m)
			p := int(max(col[(int(r)+d+1)*w], col[(int(r)-d-1)*w]))
			val := float32(cambiContrastWeights[d]*p0*p) * cambiReciprocal[p+p0]
			best = max(best, val)
		}
		out[j] = best
	}
}

// cambiConvShifts are the conversion of bpc-bit samples to 10 bits:
// 8- and 9-bit ones shifted up, 12-bit and deeper ones rounded down.
func cambiConvShifts(bpc int) (round uint16, up, down uint) {
	switch {
	case bpc < 10:
		return 0, uint(10 - bpc), 0
	case bpc > 10:
		return uint16(1) << (bpc - 11), 0, uint(bpc - 10)
	}
	return 0, 0, 0
}

// cambiConvRow converts src, of depth bpc, to 10 bits into dst.
func cambiConvRow(src, dst []uint16, bpc int) {
	round, up, down := cambiConvShifts(bpc)
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = ((v + round) << up) >> down
	}
}

// cambiAntiDitherRow is one row of anti_dithering_filter, in place: each
// sample becomes the mean of its 2x2 block to the right and below, read
// before being overwritten; the last column's block is its column's two.
func cambiAntiDitherRow(r, next []uint16) {
	w := len(r)
	next = next[:w]
	for j := 0; j < w-1; j++ {
		r[j] = uint16((uint32(r[j]) + uint32(r[j+1]) + uint32(next[j]) + uint32(next[j+1])) >> 2)
	}
	if w > 0 {
		r[w-1] = uint16((uint32(r[w-1]) + uint32(next[w-1])) >> 1)
	}
}
