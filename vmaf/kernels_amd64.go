package vmaf

import "math"

// The AVX2 kernels (zz_generated_kernels_amd64.s, written by asmgen) cover
// the largest multiple of 4 pixels of a row (8 for some of ADM's scale 0);
// the scalar code does the rest.

var avx2Kernels = kernels{
	cpu:         CPUAVX2,
	vifFill:     vifFillAVX2Row,
	vifTapInit:  vifTapInitAVX2,
	vifTapPair:  vifTapPairAVX2,
	vifRow:      vifRowAVX2,
	vifStatRow:  vifStatRowAVX2,
	vifRound:    vifRoundAVX2,
	vifSubInit:  vifSubInitAVX2,
	vifSubPair:  vifSubPairAVX2,
	vifSubRound: vifSubRoundAVX2Row,
	vifSubRow:   vifSubRowAVX2,
	motionSAD:   motionSADAVX2,
	admDWT0V:    dwt0VAVX2,
	admDWT0H:    dwt0HAVX2,
	admCM0Row:   admCM0RowAVX2,
	admCMSRow:   admCMSRowAVX2,
	admCSFS:     admCSFSAVX2Row,
	admCSF0:     admCSF0AVX2Row,
	admDecouple: admDecoupleAVX2Row,
	admDWTSV:    dwtSVAVX2,
	admDen0Row:  admDen0AVX2Row,
	admDenSRow:  admDenSAVX2Row,
	admDWTSH:    dwtSHAVX2,
	// CAMBI (cambi_kernels_amd64.go).
	cambiConv:       cambiConvAVX2Row,
	cambiAntiDither: cambiAntiDitherAVX2Row,
	cambiMode3:      cambiMode3AVX2Row,
	cambiZeroDeriv:  cambiZeroDerivAVX2Row,
	cambiColSum:     cambiColSumAVX2Row,
	cambiMaskRow:    cambiMaskRowAVX2Row,
	cambiBand:       cambiBandAVX2Row,
	cambiHistRow:    cambiHistAVX2Row,
	cambiCValuesRow: cambiCValuesAVX2Row,
	cambiDecimate16: cambiDecimate16AVX2Row,
	cambiDecimate8:  cambiDecimate8AVX2Row,
	cambiScan:       cambiScanAVX2Row,
}

// avx512Kernels are the AVX2 kernels (AVX-512 processors have AVX2) with
// the AVX-512 ones this build has in their place: VIF's statistic (and its
// 16-bit lane passes, vif8_amd64.go), motion, ADM's DWT at every scale and
// its CSF.
var avx512Kernels = func() kernels {
	k := avx2Kernels
	k.cpu = CPUAVX512
	k.vifStatRow = vifStatRowAVX512
	k.motionSAD = motionSADAVX512
	k.admDWT0V = dwt0VAVX512
	k.admDWT0H = dwt0HAVX512
	k.admCSF0 = admCSF0AVX512Row
	k.admCSFS = admCSFSAVX512Row
	k.admDWTSV = dwtSVAVX512
	k.admDWTSH = dwtSHAVX512
	k.vifSubInit = vifSubInitAVX512
	k.vifSubPair = vifSubPairAVX512
	k.admCM0Row = admCM0RowAVX512
	k.admCMSRow = admCMSRowAVX512
	k.admDecouple = admDecoupleAVX512Row
	k.admDen0Row = admDen0AVX512Row
	k.admDenSRow = admDenSAVX512Row
	return k
}()

func vectorKernels(c CPU) *kernels {
	switch c {
	case CPUAVX2:
		return &avx2Kernels
	case CPUAVX512:
		return &avx512Kernels
	}
	return nil
}

// vecLen is the part of n that the 4-pixel kernels cover.
func vecLen(n int) int { return n &^ 3 }

// tapInit32 and the other helpers below run one kernel on the vector part
// of a row: 32 for packed words, 64 for unpacked ones.
func tapInit32(f uint64, src, dst []uint64, n int) {
	if n > 0 {
		vifTapInit32AVX2(f, &src[0], &dst[0], n)
	}
}

func tapInit64(f uint64, src, dst []uint64, n int) {
	if n > 0 {
		vifTapInit64AVX2(f, &src[0], &dst[0], n)
	}
}

func tapPair32(f uint64, a, b, dst []uint64, n int) {
	if n > 0 {
		vifTapPair32AVX2(f, &a[0], &b[0], &dst[0], n)
	}
}

func tapPair64(f uint64, a, b, dst []uint64, n int) {
	if n > 0 {
		vifTapPair64AVX2(f, &a[0], &b[0], &dst[0], n)
	}
}

func vifTapInitAVX2(f uint64, p, q, y, x, accP, accQ, accY, accX []uint64, packSq bool) {
	w := len(accP)
	n := vecLen(w)
	p, q, y, x = p[:w], q[:w], y[:w], x[:w]
	tapInit32(f, p, accP, n)
	tapInit64(f, x, accX, n)
	if packSq {
		tapInit32(f, q, accQ, n)
	} else {
		tapInit64(f, q, accQ, n)
		tapInit64(f, y, accY, n)
	}
	if n < w {
		vifTapInit(f, p[n:], q[n:], y[n:], x[n:], accP[n:], accQ[n:], accY[n:], accX[n:], packSq)
	}
}

func vifTapPairAVX2(f uint64, pa, pb, qa, qb, ya, yb, xa, xb, accP, accQ, accY, accX []uint64, packSq bool) {
	w := len(accP)
	n := vecLen(w)
	pa, pb, qa, qb, ya, yb, xa, xb = pa[:w], pb[:w], qa[:w], qb[:w], ya[:w], yb[:w], xa[:w], xb[:w]
	tapPair32(f, pa, pb, accP, n)
	tapPair64(f, xa, xb, accX, n)
	if packSq {
		tapPair32(f, qa, qb, accQ, n)
	} else {
		tapPair64(f, qa, qb, accQ, n)
		tapPair64(f, ya, yb, accY, n)
	}
	if n < w {
		vifTapPair(f, pa[n:], pb[n:], qa[n:], qb[n:], ya[n:], yb[n:], xa[n:], xb[n:],
			accP[n:], accQ[n:], accY[n:], accX[n:], packSq)
	}
}

func vifRowAVX2(filt []uint64, mu, xx, yy, xy []uint64, w int, t []uint16, egl float64, acc *vifAcc, sig *vifSigmas) {
	n := vecLen(w)
	half := len(filt) / 2
	if n > 0 {
		b := vifMaxPad - half
		// The kernel reads 2*half+n words from b; the rows hold w+2*vifMaxPad.
		_ = mu[b+2*half+n-1]
		_, _, _ = xx[b+2*half+n-1], yy[b+2*half+n-1], xy[b+2*half+n-1]
		_, _, _ = sig.s1[n-1], sig.s2[n-1], sig.s12[n-1]
		vifSigmaAVX2(&filt[0], half, &mu[b], &xx[b], &yy[b], &xy[b], &sig.s1[0], &sig.s2[0], &sig.s12[0], n)
	}
	vifSigmaRow(filt, mu, xx, yy, xy, n, w, sig)
	vifStatRowAVX2(sig, w, t, egl, acc)
}

// vifStatRowAVX2 is vifStatRow over a whole row of w pixels.
func vifStatRowAVX2(sig *vifSigmas, w int, t []uint16, egl float64, acc *vifAcc) {
	n := w &^ 7 // the kernel takes 8 pixels a step
	if n > 0 {
		_, _, _ = sig.s1[n-1], sig.s2[n-1], sig.s12[n-1]
		// The kernel reads up to 2 words past the table's 65536 entries.
		_ = t[:65538]
		var out [4]int64
		vifStatAVX2(&sig.s1[0], &sig.s2[0], &sig.s12[0], &t[0], egl, &out, n)
		logPixels := -out[3] // the kernel adds each log pixel's all-ones mask, -1
		acc.numLog += out[0]
		acc.denLog += out[1] - 2048*17*logPixels
		acc.numNonLog += out[2]
		acc.denNonLog += int64(n) - logPixels
	}
	vifStatRow(sig, n, w, t, egl, acc)
}

// vifStatRowAVX512 is vifStatRowAVX2 on the AVX-512 kernel, 16 pixels a
// step, in calls of at most 2^16 pixels (the kernel's dword sums).
func vifStatRowAVX512(sig *vifSigmas, w int, t []uint16, egl float64, acc *vifAcc) {
	n := w &^ 15
	_ = t[:65538] // the kernel reads up to 2 words past the table's 65536 entries
	for j0 := 0; j0 < n; j0 += 1 << 16 {
		m := min(n-j0, 1<<16)
		_, _, _ = sig.s1[j0+m-1], sig.s2[j0+m-1], sig.s12[j0+m-1]
		var out [4]int64
		vifStatAVX512(&sig.s1[j0], &sig.s2[j0], &sig.s12[j0], &t[0], egl, &out, m)
		logPixels := out[3]
		acc.numLog += out[0]
		acc.denLog += out[1] - 2048*17*logPixels
		acc.numNonLog += out[2]
		acc.denNonLog += int64(m) - logPixels
	}
	vifStatRow(sig, n, w, t, egl, acc)
}

func vifSubInitAVX2(f uint64, rc, dc []uint16, acc []uint64) {
	w := len(acc)
	n := vecLen(w)
	rc, dc = rc[:w], dc[:w]
	if n > 0 {
		vifSubTapInitAVX2(f, &rc[0], &dc[0], &acc[0], n)
	}
	vifSubInit(f, rc[n:], dc[n:], acc[n:])
}

func vifSubPairAVX2(f uint64, ra, rb, da, db []uint16, acc []uint64) {
	w := len(acc)
	n := vecLen(w)
	ra, rb, da, db = ra[:w], rb[:w], da[:w], db[:w]
	if n > 0 {
		vifSubTapPairAVX2(f, &ra[0], &rb[0], &da[0], &db[0], &acc[0], n)
	}
	vifSubPair(f, ra[n:], rb[n:], da[n:], db[n:], acc[n:])
}

// vifSubInitAVX512 is vifSubInitAVX2 8 pixels a step.
func vifSubInitAVX512(f uint64, rc, dc []uint16, acc []uint64) {
	w := len(acc)
	n := w &^ 7
	rc, dc = rc[:w], dc[:w]
	if n > 0 {
		vifSubTapInitAVX512(f, &rc[0], &dc[0], &acc[0], n)
	}
	vifSubInitAVX2(f, rc[n:], dc[n:], acc[n:])
}

// vifSubPairAVX512 is vifSubPairAVX2 8 pixels a step.
func vifSubPairAVX512(f uint64, ra, rb, da, db []uint16, acc []uint64) {
	w := len(acc)
	n := w &^ 7
	ra, rb, da, db = ra[:w], rb[:w], da[:w], db[:w]
	if n > 0 {
		vifSubTapPairAVX512(f, &ra[0], &rb[0], &da[0], &db[0], &acc[0], n)
	}
	vifSubPairAVX2(f, ra[n:], rb[n:], da[n:], db[n:], acc[n:])
}

// vifFillAVX2Row is vifRing.fill with 4 pixels a step.
func vifFillAVX2Row(r *vifRing, slot int, ref, dis []uint16, packSq bool) {
	w := len(ref)
	n := vecLen(w)
	if n > 0 {
		p, q, y, x := r.p[slot][:w], r.q[slot][:w], r.y[slot][:w], r.x[slot][:w]
		_ = dis[w-1]
		pack := uint64(0)
		if packSq {
			pack = 1
		}
		vifFillAVX2(&ref[0], &dis[0], &p[0], &q[0], &y[0], &x[0], pack, n)
	}
	r.fillFrom(slot, ref, dis, packSq, n)
}

// vifSubRoundAVX2Row is vifSubRoundRow with 4 sums a step.
func vifSubRoundAVX2Row(acc, dst []uint64, round uint64, shift uint) {
	w := len(acc)
	n := vecLen(w)
	dst = dst[:w]
	if n > 0 {
		vifSubRoundAVX2(&acc[0], &dst[0], round, uint64(shift), n)
	}
	vifSubRoundRow(acc[n:], dst[n:], round, shift)
}

// vifSubRowAVX2 is vifSubRow with 4 kept columns a step. The kernel reads
// tmp from the first window's start b to b+2*n+2*half-1 (the last group's
// last tap's second load), within the padded row since 2*n <= w.
func vifSubRowAVX2(filt, tmp []uint64, rowR, rowD []uint16) {
	n := vecLen(len(rowR))
	half := len(filt) / 2
	if n > 0 {
		b := vifMaxPad - half
		_ = tmp[b+2*n+2*half-1]
		_ = rowD[n-1]
		vifSubHAVX2(&filt[0], half, &tmp[b], &rowR[0], &rowD[0], n)
	}
	vifSubRow(filt, tmp, rowR, rowD, n)
}

// motionLanes are the motion kernels of one vector width: words is the
// 16-bit samples of a register, which the difference and vertical kernels
// take a step, and the horizontal kernel half as many (dword lanes).
type motionLanes struct {
	words int
	diff  func(prev, cur *uint16, out *int16, n int) uint64
	vert  func(d0, d1, d2, d3, d4 *int16, out *int32, f2r, shift uint64, n int) uint64
	horiz func(row *int32, n int) uint64
}

var (
	motionAVX2   = motionLanes{16, motionDiff16AVX2, motionV16AVX2, motionH8AVX2}
	motionAVX512 = motionLanes{32, motionDiff16AVX512, motionV16AVX512, motionH8AVX512}
)

// motionSADAVX2 is motionSAD with the difference, both filter passes and
// the sum in AVX2: the difference and the vertical pass in 16-bit lanes
// (motion16.go in asmgen), the horizontal pass in 32-bit ones. The 16-bit
// differences are exact for samples of up to 12 bits; deeper ones take the
// scalar code, and so does a frame with a sample above its bit depth (the
// difference kernel reports the bits it saw), from the start.
func motionSADAVX2(prev, cur []uint16, w, h, bpc int, row []int64, m *motionRows) uint64 {
	return motionSADLanes(&motionAVX2, prev, cur, w, h, bpc, row, m)
}

// motionSADAVX512 is motionSADAVX2 in zmm registers, twice the pixels a
// step; rows narrower than a step take the AVX2 kernels.
func motionSADAVX512(prev, cur []uint16, w, h, bpc int, row []int64, m *motionRows) uint64 {
	if w < 32 {
		return motionSADAVX2(prev, cur, w, h, bpc, row, m)
	}
	return motionSADLanes(&motionAVX512, prev, cur, w, h, bpc, row, m)
}

func motionSADLanes(k *motionLanes, prev, cur []uint16, w, h, bpc int, row []int64, m *motionRows) uint64 {
	if bpc > 12 || w < k.words {
		return motionSADPaced(prev, cur, w, h, bpc, row, m.wait)
	}
	m.ensure(w)
	for s := range m.tag {
		m.tag[s] = -1
	}
	n := w &^ (k.words - 1)
	hn := (w - 4) &^ (k.words/2 - 1)
	roundY := int32(1) << uint(bpc-1)
	f0, f1, f2 := int32(motionFilter[0]), int32(motionFilter[1]), int32(motionFilter[2])
	f2r := uint64(uint32(f2) | uint32(roundY)<<16)
	v := m.vrow[:w]
	var sad uint64
	for i := 0; i < h; i++ {
		if m.wait != nil {
			m.wait(min(i+2, h-1))
		}
		var d [5][]int16
		for j := range d {
			r := mirror(i-2+j, h)
			slot := r % 5
			if m.tag[slot] != r {
				p, c, out := prev[r*w:r*w+w], cur[r*w:r*w+w], m.diff[slot][:w]
				seen := k.diff(&p[0], &c[0], &out[0], n)
				for x := n; x < w; x++ {
					seen |= uint64(p[x] | c[x])
					out[x] = int16(p[x] - c[x])
				}
				if seen>>uint(bpc) != 0 {
					return motionSADPaced(prev, cur, w, h, bpc, row, m.wait)
				}
				m.tag[slot] = r
			}
			d[j] = m.diff[slot][:w]
		}
		any := k.vert(&d[0][0], &d[1][0], &d[2][0], &d[3][0], &d[4][0], &v[0], f2r, uint64(bpc), n)
		for x := n; x < w; x++ {
			v[x] = (f0*int32(d[0][x]+d[4][x]) + f1*int32(d[1][x]+d[3][x]) + f2*int32(d[2][x]) + roundY) >> uint(bpc)
			if v[x] != 0 {
				any = 1
			}
		}
		if any == 0 {
			continue // a flat row sums to zero, as the scalar code skips it
		}
		// Pixels 2..hn+1 in the kernel; the mirrored edges and the rest
		// in the scalar formula. The row's sum wraps at 32 bits as the
		// scalar one does.
		var rowSAD uint32
		if hn > 0 {
			rowSAD = uint32(k.horiz(&v[0], hn))
		}
		for j := 0; j < 2; j++ {
			rowSAD += motionHPixel(v, j, w)
		}
		for j := 2 + hn; j < w; j++ {
			rowSAD += motionHPixel(v, j, w)
		}
		sad += uint64(rowSAD)
	}
	return sad
}

// motionHPixel is the scalar horizontal pass of one pixel, absolute.
func motionHPixel(v []int32, j, w int) uint32 {
	f0, f1, f2 := motionFilter[0], motionFilter[1], motionFilter[2]
	at := func(k int) int64 { return int64(v[mirror(k, w)]) }
	acc := f0*(at(j-2)+at(j+2)) + f1*(at(j-1)+at(j+1)) + f2*at(j)
	r := (acc + 32768) >> 16
	if r < 0 {
		r = -r
	}
	return uint32(r)
}

// dwt0VAVX2 is admDWT0V with 16 samples per step (8 for rows with samples
// of 2^15 or more); the kernels' int32 arithmetic wraps as the scalar
// code's does.
func dwt0VAVX2(r0, r1, r2, r3 []uint16, tlo, thi []int16, shiftVP uint, addVP int32) {
	w := len(tlo)
	n := w &^ 15
	r0, r1, r2, r3, thi = r0[:w], r1[:w], r2[:w], r3[:w], thi[:w]
	if n > 0 {
		loAdd, hiAdd := uint64(uint32(addVP-dwtLoSum*addVP)), uint64(uint32(addVP))
		// Samples below 2^15 (any input of up to 15 bits that keeps to its
		// depth) take two taps a multiply-add; a row with a larger one
		// goes again the wide way.
		if shiftVP > 15 || admDWT0VMaddAVX2(&r0[0], &r1[0], &r2[0], &r3[0], &tlo[0], &thi[0], loAdd, hiAdd, uint64(shiftVP), n) != 0 {
			admDWT0VAVX2(&r0[0], &r1[0], &r2[0], &r3[0], &tlo[0], &thi[0], loAdd, hiAdd, uint64(shiftVP), n)
		}
	}
	admDWT0V(r0[n:], r1[n:], r2[n:], r3[n:], tlo[n:], thi[n:], shiftVP, addVP)
}

// dwt0HAVX2 is admDWT0H with the interior outputs in groups of 8: a group
// from output g reads t[2g-1] to t[2g+16], so groups start at 1 while
// their last output's window stays inside t; output 0 (whose window
// reflects) and the rest take the scalar code.
//
// Past the groups, one more group ends at the last output whose window is
// inside t, (len(t)-3)/2, and so overlaps the groups before it: it writes
// what they wrote for the outputs they share, and leaves the scalar code at
// most the last output (its window reflects) where it would leave up to 8.
func dwt0HAVX2(t []int16, lo, hi []int32, ind *[4][]int) {
	wh := len(lo)
	m := dwtHVecLen(len(t), wh) &^ 7
	admDWT0HAt(t, lo, hi, ind, 0)
	if m > 0 {
		_ = t[2*m+2] // the last group's last read
		_, _ = lo[m], hi[m]
		admDWT0HAVX2(&t[1], &lo[1], &hi[1], m)
		if last := min((len(t)-3)/2, wh-1); last > m {
			g := last - 7 // the overlapping group's first output, at least 1
			_ = t[2*last+2]
			admDWT0HAVX2(&t[2*g-1], &lo[g], &hi[g], 8)
			m = last
		}
	}
	for j := 1 + m; j < wh; j++ {
		admDWT0HAt(t, lo, hi, ind, j)
	}
}

// dwt0VAVX512 is dwt0VAVX2 32 samples a step; the rest of the row takes
// dwt0VAVX2, and a step with a sample of 2^15 or more the wide AVX2 kernel.
func dwt0VAVX512(r0, r1, r2, r3 []uint16, tlo, thi []int16, shiftVP uint, addVP int32) {
	w := len(tlo)
	n := w &^ 31
	r0, r1, r2, r3, thi = r0[:w], r1[:w], r2[:w], r3[:w], thi[:w]
	if n > 0 {
		loAdd, hiAdd := uint64(uint32(addVP-dwtLoSum*addVP)), uint64(uint32(addVP))
		if shiftVP > 15 || admDWT0VMaddAVX512(&r0[0], &r1[0], &r2[0], &r3[0], &tlo[0], &thi[0], loAdd, hiAdd, uint64(shiftVP), n) != 0 {
			admDWT0VAVX2(&r0[0], &r1[0], &r2[0], &r3[0], &tlo[0], &thi[0], loAdd, hiAdd, uint64(shiftVP), n)
		}
	}
	dwt0VAVX2(r0[n:], r1[n:], r2[n:], r3[n:], tlo[n:], thi[n:], shiftVP, addVP)
}

// dwt0HAVX512 is dwt0HAVX2 in groups of 16 outputs, with the same
// overlapping last group; rows too short for one take dwt0HAVX2.
func dwt0HAVX512(t []int16, lo, hi []int32, ind *[4][]int) {
	wh := len(lo)
	m := dwtHVecLen(len(t), wh) &^ 15
	if m == 0 {
		dwt0HAVX2(t, lo, hi, ind)
		return
	}
	admDWT0HAt(t, lo, hi, ind, 0)
	_ = t[2*m+2] // the last group's last read
	_, _ = lo[m], hi[m]
	admDWT0HAVX512(&t[1], &lo[1], &hi[1], m)
	if last := min((len(t)-3)/2, wh-1); last > m {
		g := last - 15 // the overlapping group's first output, at least 2
		_ = t[2*last+2]
		admDWT0HAVX512(&t[2*g-1], &lo[g], &hi[g], 16)
		m = last
	}
	for j := 1 + m; j < wh; j++ {
		admDWT0HAt(t, lo, hi, ind, j)
	}
}

// admCSF0AVX512Row is admCSF0AVX2Row 16 coefficients a step.
func admCSF0AVX512Row(src, dstA, dstF []int32, irf, add int32, shift uint) {
	w := len(src)
	n := w &^ 15
	dstA, dstF = dstA[:w], dstF[:w]
	if n > 0 {
		admCSF0AVX512(&src[0], &dstA[0], &dstF[0], uint64(uint32(irf)), uint64(uint32(add)), uint64(shift), n)
	}
	admCSF0AVX2Row(src[n:], dstA[n:], dstF[n:], irf, add, shift)
}

// admCSFSAVX512Row is admCSFSAVX2Row 8 coefficients a step.
func admCSFSAVX512Row(src, dstA, dstF []int32, irf int64) {
	w := len(src)
	n := w &^ 7
	dstA, dstF = dstA[:w], dstF[:w]
	if n > 0 {
		u := uint64(irf)
		admCSFSAVX512(&src[0], &dstA[0], &dstF[0], &u, n)
	}
	admCSFSAVX2Row(src[n:], dstA[n:], dstF[n:], irf)
}

// dwtSVAVX512 is dwtSVAVX2 8 samples a step.
func dwtSVAVX512(r0, r1, r2, r3, tlo, thi []int32, add int64, shift uint) {
	w := len(tlo)
	n := w &^ 7
	r0, r1, r2, r3, thi = r0[:w], r1[:w], r2[:w], r3[:w], thi[:w]
	if n > 0 {
		admDWTSVAVX512(&r0[0], &r1[0], &r2[0], &r3[0], &tlo[0], &thi[0], uint64(add), uint64(shift), n)
	}
	dwtSVAVX2(r0[n:], r1[n:], r2[n:], r3[n:], tlo[n:], thi[n:], add, shift)
}

// dwtSHAVX512 is dwtSHAVX2 in groups of 8 outputs, with an overlapping last
// group as dwt0HAVX2's; rows too short for one take dwtSHAVX2.
func dwtSHAVX512(t, lo, hi []int32, ind *[4][]int, add int64, shift uint) {
	wh := len(lo)
	m := dwtHVecLen(len(t), wh) &^ 7
	if m == 0 {
		dwtSHAVX2(t, lo, hi, ind, add, shift)
		return
	}
	admDWTSHAt(t, lo, hi, ind, 0, add, shift)
	_ = t[2*m+2] // the last group's last read
	_, _ = lo[m], hi[m]
	admDWTSHAVX512(&t[1], &lo[1], &hi[1], uint64(add), uint64(shift), m)
	if last := min((len(t)-3)/2, wh-1); last > m {
		g := last - 7 // the overlapping group's first output, at least 2
		_ = t[2*last+2]
		admDWTSHAVX512(&t[2*g-1], &lo[g], &hi[g], uint64(add), uint64(shift), 8)
		m = last
	}
	for j := 1 + m; j < wh; j++ {
		admDWTSHAt(t, lo, hi, ind, j, add, shift)
	}
}

// dwtHVecLen is how many outputs from output 1 on the horizontal DWT
// kernels cover for a row of w samples and wh outputs.
func dwtHVecLen(w, wh int) int {
	if w < 11 {
		return 0
	}
	g := (w - 9) / 2
	return min(((g-1)/4+1)*4, wh-1) &^ 3
}

// dwtSVAVX2 is admDWTSV with 4 samples per step.
func dwtSVAVX2(r0, r1, r2, r3, tlo, thi []int32, add int64, shift uint) {
	w := len(tlo)
	n := vecLen(w)
	r0, r1, r2, r3, thi = r0[:w], r1[:w], r2[:w], r3[:w], thi[:w]
	if n > 0 {
		admDWTSVAVX2(&r0[0], &r1[0], &r2[0], &r3[0], &tlo[0], &thi[0], uint64(add), uint64(shift), n)
	}
	admDWTSV(r0[n:], r1[n:], r2[n:], r3[n:], tlo[n:], thi[n:], add, shift)
}

// dwtSHAVX2 is admDWTSH with the interior outputs in groups of 4, as
// dwt0HAVX2.
func dwtSHAVX2(t, lo, hi []int32, ind *[4][]int, add int64, shift uint) {
	wh := len(lo)
	m := dwtHVecLen(len(t), wh)
	admDWTSHAt(t, lo, hi, ind, 0, add, shift)
	if m > 0 {
		_ = t[2*m+2]
		_, _ = lo[m], hi[m]
		admDWTSHAVX2(&t[1], &lo[1], &hi[1], uint64(add), uint64(shift), m)
	}
	for j := 1 + m; j < wh; j++ {
		admDWTSHAt(t, lo, hi, ind, j, add, shift)
	}
}

// admCM0RowAVX2 is admCM0Row with 8 columns a step; columns whose 3x3
// window reaches past the band's edge (none at libvmaf's borders) and the
// rest of the row take the scalar code.
func admCM0RowAVX2(r *admCMRow, up, i, down int) (inH, inV, inD int64) {
	return admCMRowAVX2(r, up, i, down, false)
}

// admCMSRowAVX2 is admCM0RowAVX2 for scales 1 to 3 (admCMSRow).
func admCMSRowAVX2(r *admCMRow, up, i, down int) (inH, inV, inD int64) {
	return admCMRowAVX2(r, up, i, down, true)
}

func admCMRowAVX2(r *admCMRow, up, i, down int, scaleS bool) (inH, inV, inD int64) {
	return admCMRowLanes(r, up, i, down, scaleS, false)
}

// admCM0RowAVX512 and admCMSRowAVX512 are admCM0RowAVX2 and admCMSRowAVX2
// 16 columns a step, the rest 8 a step, then the scalar code.
func admCM0RowAVX512(r *admCMRow, up, i, down int) (inH, inV, inD int64) {
	return admCMRowLanes(r, up, i, down, false, true)
}

func admCMSRowAVX512(r *admCMRow, up, i, down int) (inH, inV, inD int64) {
	return admCMRowLanes(r, up, i, down, true, true)
}

func admCMRowLanes(r *admCMRow, up, i, down int, scaleS, wide bool) (inH, inV, inD int64) {
	scalar := admCM0Row
	if scaleS {
		scalar = admCMSRow
	}
	j0, j1 := r.left, r.right
	if j0 < 1 || j1 > r.w-1 || j1 <= j0 {
		return scalar(r, up, i, down, j0, j1)
	}
	n := (j1 - j0) &^ 7
	if n > 0 {
		// src and the CSF rows are in their rings (csfOff): row i is at
		// the same place in each.
		rc := r.csfOff(i) + j0
		ru, rd := r.csfOff(up)+j0, r.csfOff(down)+j0
		_ = r.src[0][rc+n-1]
		_, _, _ = r.src[1][rc+n-1], r.src[2][rc+n-1], r.ca[0][rc+n-1]
		_, _ = r.ca[1][rc+n-1], r.ca[2][rc+n-1]
		for _, f := range r.fl {
			_, _ = f[ru-1], f[ru+n]
			_, _ = f[rc-1], f[rc+n]
			_, _ = f[rd-1], f[rd+n]
		}
		cub := [7]uint64{uint64(r.addHCub) + 1<<62, uint64(r.addDCub) + 1<<62, uint64(r.shiftHCub), uint64(r.shiftDCub),
			uint64(r.irf[0]), uint64(r.irf[1]), uint64(r.irf[2])}
		upOff, downOff := 4*(ru-rc), 4*(rd-rc)
		// The kernels are called directly, not through a function value:
		// their noescape pragma keeps cub and out on the stack.
		var out [3]int64
		done := 0
		if wide && n >= 16 {
			done = n &^ 15
			c := rc
			if scaleS {
				admCMSAVX512(&r.fl[0][c], &r.fl[1][c], &r.fl[2][c], &r.ca[0][c], &r.ca[1][c], &r.ca[2][c],
					&r.src[0][c], &r.src[1][c], &r.src[2][c], upOff, downOff, &cub, &out, done)
			} else {
				admCM0AVX512(&r.fl[0][c], &r.fl[1][c], &r.fl[2][c], &r.ca[0][c], &r.ca[1][c], &r.ca[2][c],
					&r.src[0][c], &r.src[1][c], &r.src[2][c], upOff, downOff, &cub, &out, done)
			}
			inH, inV, inD = out[0], out[1], out[2]
		}
		if n > done {
			c := rc + done
			if scaleS {
				admCMSAVX2(&r.fl[0][c], &r.fl[1][c], &r.fl[2][c], &r.ca[0][c], &r.ca[1][c], &r.ca[2][c],
					&r.src[0][c], &r.src[1][c], &r.src[2][c], upOff, downOff, &cub, &out, n-done)
			} else {
				admCM0AVX2(&r.fl[0][c], &r.fl[1][c], &r.fl[2][c], &r.ca[0][c], &r.ca[1][c], &r.ca[2][c],
					&r.src[0][c], &r.src[1][c], &r.src[2][c], upOff, downOff, &cub, &out, n-done)
			}
			inH, inV, inD = inH+out[0], inV+out[1], inD+out[2]
		}
	}
	h, v, d := scalar(r, up, i, down, j0+n, j1)
	return inH + h, inV + v, inD + d
}

// admCSFSAVX2Row is admCSFSRow with 4 coefficients a step.
func admCSFSAVX2Row(src, dstA, dstF []int32, irf int64) {
	w := len(src)
	n := vecLen(w)
	dstA, dstF = dstA[:w], dstF[:w]
	if n > 0 {
		w := uint64(irf)
		admCSFSAVX2(&src[0], &dstA[0], &dstF[0], &w, n)
	}
	admCSFSRow(src[n:], dstA[n:], dstF[n:], irf)
}

// vifRoundAVX2 is vifRoundRow; the means' 32-bit lanes are exact up to
// 15-bit samples, so deeper ones take the scalar code.
func vifRoundAVX2(accP, accQ, accY, accX, mu, xx, yy, xy []uint64, r vifRounding) {
	w := len(accP)
	n := vecLen(w)
	if r.bpc > 15 {
		n = 0
	}
	accQ, accY, accX, mu, xx, yy, xy = accQ[:w], accY[:w], accX[:w], mu[:w], xx[:w], yy[:w], xy[:w]
	if n > 0 {
		kern := vifRoundWideAVX2
		if r.packSq {
			kern = vifRoundPackedAVX2
		}
		kern(&accP[0], &accQ[0], &accY[0], &accX[0], &mu[0], &xx[0], &yy[0], &xy[0],
			r.roundMu, uint64(r.shiftMu), r.roundSq, uint64(r.shiftSq), n)
	}
	vifRoundRow(accP[n:], accQ[n:], accY[n:], accX[n:], mu[n:], xx[n:], yy[n:], xy[n:], r)
}

// admCSF0AVX2Row is admCSF0Row with 8 coefficients a step.
func admCSF0AVX2Row(src, dstA, dstF []int32, irf, add int32, shift uint) {
	w := len(src)
	n := w &^ 7
	dstA, dstF = dstA[:w], dstF[:w]
	if n > 0 {
		admCSF0AVX2(&src[0], &dstA[0], &dstF[0], uint64(uint32(irf)), uint64(uint32(add)), uint64(shift), n)
	}
	admCSF0Row(src[n:], dstA[n:], dstF[n:], irf, add, shift)
}

// admDecoupleAVX2Row is admDecoupleRow over a whole row segment: the angle
// test into d.angle, 4 coefficients a step, then each band. Scale 0
// (narrow) has int16 coefficients: the angle kernel converts their
// products the short way, and its bands take 8 coefficients a step.
func admDecoupleAVX2Row(d *admDecoupleRows, egl float64, narrow bool) {
	w := len(d.o[0])
	n := vecLen(w)
	if narrow {
		n = w &^ 7
	}
	if n > 0 {
		for b := range 3 {
			_, _, _, _ = d.o[b][n-1], d.t[b][n-1], d.r[b][n-1], d.a[b][n-1]
		}
		_ = d.angle[n-1]
		wide := uint64(1)
		if narrow {
			wide = 0
		}
		admAngleAVX2(&d.o[0][0], &d.o[1][0], &d.t[0][0], &d.t[1][0], &d.angle[0], float64(admCos1DegSq), wide, n)
		// A whole gain limit (v0.6.1's 100, v1's 1) takes scale 0's
		// integer form.
		intGain := egl == math.Trunc(egl) && egl >= 0 && egl <= 65535
		for b := range 3 {
			if narrow && intGain {
				admDecouple0IntAVX2(&d.o[b][0], &d.t[b][0], &d.angle[0], &d.r[b][0], &d.a[b][0], &admDivLookup[32768], egl, n)
			} else if narrow {
				admDecouple0AVX2(&d.o[b][0], &d.t[b][0], &d.angle[0], &d.r[b][0], &d.a[b][0], &admDivLookup[32768], egl, n)
			} else {
				admDecoupleAVX2(&d.o[b][0], &d.t[b][0], &d.angle[0], &d.r[b][0], &d.a[b][0], &admDivLookup[32768], egl, n)
			}
		}
	}
	admDecoupleRow(d, n, w, egl, narrow)
}

// admDecoupleAVX512Row is admDecoupleAVX2Row with the angle test and the
// bands of scales 1 to 3 8 coefficients a step in AVX-512, and scale 0's
// bands under a whole gain limit 16 a step; scale 0's under a fractional
// limit take the AVX2 kernel.
func admDecoupleAVX512Row(d *admDecoupleRows, egl float64, narrow bool) {
	w := len(d.o[0])
	n := vecLen(w)
	if narrow {
		n = w &^ 7
	}
	if n > 0 {
		for b := range 3 {
			_, _, _, _ = d.o[b][n-1], d.t[b][n-1], d.r[b][n-1], d.a[b][n-1]
		}
		_ = d.angle[n-1]
		n8 := n &^ 7
		if n8 > 0 {
			admAngleAVX512(&d.o[0][0], &d.o[1][0], &d.t[0][0], &d.t[1][0], &d.angle[0], float64(admCos1DegSq), n8)
		}
		if n > n8 { // scales 1 to 3: 4 more
			admAngleAVX2(&d.o[0][n8], &d.o[1][n8], &d.t[0][n8], &d.t[1][n8], &d.angle[n8], float64(admCos1DegSq), 1, n-n8)
		}
		intGain := egl == math.Trunc(egl) && egl >= 0 && egl <= 65535
		n16 := 0
		if narrow && intGain {
			n16 = w &^ 15
		}
		for b := range 3 {
			if n16 > 0 {
				admDecouple0IntAVX512(&d.o[b][0], &d.t[b][0], &d.angle[0], &d.r[b][0], &d.a[b][0], &admDivLookup[32768], egl, n16)
			}
			if n == n16 {
				continue
			}
			o, t, angle, r, a := &d.o[b][n16], &d.t[b][n16], &d.angle[n16], &d.r[b][n16], &d.a[b][n16]
			switch {
			case narrow && intGain:
				admDecouple0IntAVX2(o, t, angle, r, a, &admDivLookup[32768], egl, n-n16)
			case narrow:
				admDecouple0AVX2(o, t, angle, r, a, &admDivLookup[32768], egl, n-n16)
			default:
				// Scales 1 to 3: 8 a step, then 4.
				n8 := n &^ 7
				if n8 > 0 {
					admDecoupleAVX512(o, t, angle, r, a, &admDivLookup[32768], egl, n8)
				}
				if n > n8 {
					admDecoupleAVX2(&d.o[b][n8], &d.t[b][n8], &d.angle[n8], &d.r[b][n8], &d.a[b][n8], &admDivLookup[32768], egl, n-n8)
				}
			}
		}
	}
	admDecoupleRow(d, n, w, egl, narrow)
}

// admDen0AVX512Row is admDen0AVX2Row 8 coefficients a step.
func admDen0AVX512Row(row []int32) uint64 {
	n := len(row) &^ 7
	var inner uint64
	if n > 0 {
		inner = admDen0AVX512(&row[0], n)
	}
	return inner + admDen0AVX2Row(row[n:])
}

// admDenSAVX512Row is admDenSAVX2Row 8 coefficients a step.
func admDenSAVX512Row(row []int32, p *ADMDenShifts) uint64 {
	n := len(row) &^ 7
	var inner uint64
	if n > 0 {
		q := [4]uint64{p.AddSq, uint64(p.ShiftSq), p.AddCub, uint64(p.ShiftCub)}
		inner = admDenSAVX512(&row[0], &q, n)
	}
	return inner + admDenSAVX2Row(row[n:], p)
}

// admDen0AVX2Row is admDen0Row with 4 coefficients a step.
func admDen0AVX2Row(row []int32) uint64 {
	n := vecLen(len(row))
	var inner uint64
	if n > 0 {
		inner = admDen0AVX2(&row[0], n)
	}
	return inner + admDen0Row(row[n:])
}

// admDenSAVX2Row is admDenSRow with 4 coefficients a step.
func admDenSAVX2Row(row []int32, p *ADMDenShifts) uint64 {
	n := vecLen(len(row))
	var inner uint64
	if n > 0 {
		q := [4]uint64{p.AddSq, uint64(p.ShiftSq), p.AddCub, uint64(p.ShiftCub)}
		inner = admDenSAVX2(&row[0], &q, n)
	}
	return inner + admDenSRow(row[n:], p)
}
