package vmaf

// VIF's statistic in 16-bit lanes: the vector kernels' pipeline
// (vif8_amd64.go) and its scalar form, which the kernels' tails and tests
// use, for scale 0 of 8-bit input and for scales 1 to 3 of every depth
// (their subsampled images hold means of up to 16 bits at any input depth;
// vifVert16Cols below). Scale 0 of deeper input keeps the 64-bit lane
// pipeline of vif.go.
//
// The vertical pass reads the fw input rows of the window directly (no
// ring of products) and writes one row of each filtered quantity as 16-bit
// values, stored biased (v ^ 0x8000, that is v-32768 as an int16) so that
// VPMADDWD's signed products apply:
//
//   - mu1, mu2: (sum + 128) >> 8 (libvmaf vif_statistic_8's tmp.mu1, at
//     most 65280; rows 0 and 1).
//   - xx, yy, xy: the unshifted 32-bit sums (below 65025 * 2^16), split
//     into a low half (rows 2 to 4) and a high half (rows 5 to 7).
//
// The samples (at most 255) and their products (at most 65025) fit 16 bits,
// and the filter's taps 15, so VPMADDWD computes each folded pair of taps.
// The horizontal pass filters each row; the high and low halves recombine
// into libvmaf's 64-bit sum as hi<<16 + lo, so every result is the integer
// vif_statistic_8 computes.

// vif8Rows is the 8-bit statistic's row scratch.
type vif8Rows struct {
	row [8][]int16 // padded by vifMaxPad on each side
	ptr [8]*int16  // &row[p][vifMaxPad], for the kernels
	// The window's input rows, and their first samples for the kernels.
	refRows, disRows [17][]uint16
	rref, rdis       [17]*uint16
}

func newVIF8Rows(w int) *vif8Rows {
	v := &vif8Rows{}
	for p := range v.row {
		// One word of capacity past the padding: the horizontal kernels
		// of scale 0 read it, with a tap of 0 (vif8Horiz in asmgen).
		v.row[p] = make([]int16, w+2*vifMaxPad, w+2*vifMaxPad+1)
		v.ptr[p] = &v.row[p][vifMaxPad]
	}
	return v
}

// bias16 stores a 16-bit value as the kernels' biased int16.
func bias16(v uint32) int16 { return int16(uint16(v) ^ 0x8000) }

// unbias16 reads a biased int16 back.
func unbias16(v int16) uint64 { return uint64(uint16(v) ^ 0x8000) }

// vifVert8Cols is the vertical pass of columns [j0, j1) of one output row:
// refRows and disRows are the 17 input rows of its window.
func vifVert8Cols(refRows, disRows [][]uint16, rows *[8][]int16, j0, j1 int) {
	filt := vifFilters[0]
	fw := len(filt)
	refRows, disRows = refRows[:fw], disRows[:fw]
	for j := j0; j < j1; j++ {
		var mu1, mu2, xx, yy, xy uint32
		for k, f64 := range filt {
			f := uint32(f64)
			r, d := uint32(refRows[k][j]), uint32(disRows[k][j])
			mu1 += f * r
			mu2 += f * d
			xx += f * r * r
			yy += f * d * d
			xy += f * r * d
		}
		c := vifMaxPad + j
		rows[0][c], rows[1][c] = bias16((mu1+128)>>8), bias16((mu2+128)>>8)
		for p, v := range [3]uint32{xx, yy, xy} {
			rows[2+p][c] = bias16(v & 0xffff)
			rows[5+p][c] = bias16(v >> 16)
		}
	}
}

// vifVert16Cols is the vertical pass of columns [j0, j1) of one output row
// at scale (1 to 3), whose samples have up to 16 bits: the means rounded
// (sum + 2^15) >> 16, biased; the squares and the product rounded alike, up
// to 32 bits, in a low half (rows 2 to 4) and a high half (rows 5 to 7),
// each biased: the values the 64-bit pipeline's vifRoundRow gives.
func vifVert16Cols(scale int, refRows, disRows [][]uint16, rows *[8][]int16, j0, j1 int) {
	filt := vifFilters[scale]
	fw := len(filt)
	refRows, disRows = refRows[:fw], disRows[:fw]
	for j := j0; j < j1; j++ {
		var mu1, mu2, xx, yy, xy uint64
		for k, f := range filt {
			r, d := uint64(refRows[k][j]), uint64(disRows[k][j])
			mu1 += f * r
			mu2 += f * d
			xx += f * r * r
			yy += f * d * d
			xy += f * r * d
		}
		c := vifMaxPad + j
		rows[0][c], rows[1][c] = bias16(uint32((mu1+32768)>>16)), bias16(uint32((mu2+32768)>>16))
		for p, v := range [3]uint64{xx, yy, xy} {
			r := uint32((v + 32768) >> 16)
			rows[2+p][c] = bias16(r & 0xffff)
			rows[5+p][c] = bias16(r >> 16)
		}
	}
}

// vifHoriz8Cols is the horizontal pass of pixels [j0, j1) of the padded
// rows at scale and their variances.
func vifHoriz8Cols(scale int, rows *[8][]int16, j0, j1 int, sig *vifSigmas) {
	filt := vifFilters[scale]
	fw := len(filt)
	for j := j0; j < j1; j++ {
		b := vifMaxPad + j - fw/2
		var sum [8]uint64
		for p := range rows {
			r := rows[p][b : b+fw]
			for k, f := range filt {
				sum[p] += f * unbias16(r[k])
			}
		}
		sxx, syy, sxy := sum[2]+sum[5]<<16, sum[3]+sum[6]<<16, sum[4]+sum[7]<<16
		sig.s1[j], sig.s2[j], sig.s12[j] = vifSigma(sum[0], sum[1], sxx, syy, sxy)
	}
}

// pad16 mirrors a padded row around [vifMaxPad, vifMaxPad+w).
func pad16(b []int16, w, half int) {
	for f := 1; f <= half; f++ {
		b[vifMaxPad-f] = b[vifMaxPad+f]
		b[vifMaxPad+w-1+f] = b[vifMaxPad+w-1-f]
	}
}

// statistic8 is statistic in 16-bit lanes: for scale 0 of 8-bit input and
// for scales 1 to 3. The vector kernels cover the largest multiple of their
// step (16 pixels, 32 on AVX-512) of each row when vector is set, the
// scalar form the rest.
//
// next and bpc are statisticSub's: the scale to subsample to beside it, if
// any, and the input's bit depth.
func (s *vifState) statistic8(ref, dis []uint16, w, h, scale int, vector bool, next, bpc int) vifScaleScore {
	if s.v8 == nil {
		s.v8 = newVIF8Rows(s.w)
	}
	v := s.v8
	fw := len(vifFilters[scale])
	half := fw / 2
	n := 0
	if vector {
		n = w &^ (vifLanesStep(s.k) - 1)
	}
	acc := &s.acc
	*acc = vifAcc{}
	for i := 0; i < h; i++ {
		for k := range fw {
			r := mirror(i-half+k, h) * w
			v.refRows[k], v.disRows[k] = ref[r:r+w], dis[r:r+w]
			v.rref[k], v.rdis[k] = &ref[r], &dis[r]
		}
		if n > 0 {
			vifVert8(s.k, scale, &v.rref[0], &v.rdis[0], &v.ptr[0], n)
		}
		if scale == 0 {
			vifVert8Cols(v.refRows[:], v.disRows[:], &v.row, n, w)
		} else {
			vifVert16Cols(scale, v.refRows[:], v.disRows[:], &v.row, n, w)
		}
		for p := range v.row {
			pad16(v.row[p], w, half)
		}
		if n > 0 {
			_, _, _ = s.sig.s1[n-1], s.sig.s2[n-1], s.sig.s12[n-1]
			vifHoriz8(s.k, scale, &v.ptr[0], &s.sig.s1[0], &s.sig.s2[0], &s.sig.s12[0], n)
		}
		vifHoriz8Cols(scale, &v.row, n, w, &s.sig)
		vifStat8Row(s.k, vector, &s.sig, w, s.log2, s.egl, acc)
		s.subsampleAfter(ref, dis, w, h, bpc, next, i)
		if scale == 0 && s.lead != nil {
			s.lead(min(i+half, h-1))
		}
	}
	s.lastAcc = *acc
	return acc.score()
}
