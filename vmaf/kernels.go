package vmaf

// kernels are the inner loops of one CPU path. The generic set is the
// scalar reference; a vector set replaces loops with assembly that gives
// the same integers, and falls back to the scalar code for the tail of a
// row that does not fill a vector.
type kernels struct {
	cpu CPU
	// vifFill is vifRing.fill: one input row's products into a ring slot.
	vifFill func(r *vifRing, slot int, ref, dis []uint16, packSq bool)
	// vifTapInit and vifTapPair run VIF's vertical filter pass (see
	// vifTapInit and vifTapPair).
	vifTapInit func(f uint64, p, q, y, x, accP, accQ, accY, accX []uint64, packSq bool)
	vifTapPair func(f uint64, pa, pb, qa, qb, ya, yb, xa, xb, accP, accQ, accY, accX []uint64, packSq bool)
	// vifRow runs VIF's horizontal pass and statistic of one row; sig is
	// scratch of w pixels.
	vifRow func(filt []uint64, mu, xx, yy, xy []uint64, w int, t []uint16, egl float64, acc *vifAcc, sig *vifSigmas)
	// vifStatRow accumulates the statistic of a row's w variances.
	vifStatRow func(sig *vifSigmas, w int, t []uint16, egl float64, acc *vifAcc)
	// vifRound rounds the vertical sums into the horizontal pass's rows.
	vifRound func(accP, accQ, accY, accX, mu, xx, yy, xy []uint64, r vifRounding)
	// vifSubInit and vifSubPair run the vertical pass of VIF's
	// subsampling (see vifSubInit and vifSubPair).
	vifSubInit func(f uint64, rc, dc []uint16, acc []uint64)
	vifSubPair func(f uint64, ra, rb, da, db []uint16, acc []uint64)
	// vifSubRound and vifSubRow run its rounding and horizontal pass
	// (see vifSubRoundRow and vifSubRow).
	vifSubRound func(acc, dst []uint64, round uint64, shift uint)
	vifSubRow   func(filt, tmp []uint64, rowR, rowD []uint16)
	// motionSAD is motionSAD; m is scratch for the vector kernels, and its
	// wait paces every path (rowWalk).
	motionSAD func(prev, cur []uint16, w, h, bpc int, row []int64, m *motionRows) uint64
	// admDWT0V and admDWT0H run the two passes of ADM's first DWT level.
	admDWT0V func(r0, r1, r2, r3 []uint16, tlo, thi []int16, shiftVP uint, addVP int32)
	admDWT0H func(t []int16, lo, hi []int32, ind *[4][]int)
	// admCM0Row and admCMSRow are one row of ADM's contrast measure (scan)
	// at scale 0 and at scales 1 to 3.
	admCM0Row func(r *admCMRow, up, i, down int) (inH, inV, inD int64)
	admCMSRow func(r *admCMRow, up, i, down int) (inH, inV, inD int64)
	// admCSFS is the CSF of scales 1 to 3 of one band's row segment (csfRow).
	admCSFS func(src, dstA, dstF []int32, irf int64)
	// admCSF0 is scale 0's CSF of one band's row segment (csfRow).
	admCSF0 func(src, dstA, dstF []int32, irf, add int32, shift uint)
	// admDWTSV and admDWTSH run the two passes of ADM's DWT of scales 1
	// to 3.
	admDWTSV func(r0, r1, r2, r3, tlo, thi []int32, add int64, shift uint)
	admDWTSH func(t, lo, hi []int32, ind *[4][]int, add int64, shift uint)
	// admDen0Row and admDenSRow are the inner sums of ADM's denominators
	// over one row of a reference band (scan).
	admDen0Row func(row []int32) uint64
	admDenSRow func(row []int32, p *ADMDenShifts) uint64
	// admDecouple decouples one row segment of the bands (decoupleRow).
	admDecouple func(d *admDecoupleRows, egl float64, narrow bool)
	// CAMBI's rows (cambi_kernels.go): the mode filter's mode3, the
	// spatial mask's zero derivatives, column sums and 7x7 test, the
	// pixels' histogram rows, the histograms' slide and the c-values.
	cambiConv       func(src, dst []uint16, bpc int)
	cambiAntiDither func(r, next []uint16)
	cambiMode3      func(a, b, c, dst []uint16)
	cambiZeroDeriv  func(cur, next []uint16, z []uint8)
	cambiColSum     func(cs []uint16, zin, zout []uint8)
	cambiMaskRow    func(cs []uint16, out []bool, threshold int)
	cambiBand       func(img []uint16, mask []bool, out []int16, base, size, nd int)
	cambiHistRow    func(hist []uint16, w, pad int, out, in []int16)
	cambiCValuesRow func(hist []uint16, w int, band []int16, diffs []uint32, out []float32)
	// cambiDecimate16 and cambiDecimate8 keep a row's even samples of the
	// picture and of the mask, front to back, so that dst may be src.
	cambiDecimate16 func(src, dst []uint16)
	cambiDecimate8  func(src, dst []bool)
	// cambiScan sums a scale's c-values for the pooling (cambiScan).
	cambiScan func(c []float32) (sum float64, nonzero int, exact bool)
}

// motionRows is the vector motion kernel's scratch: the difference rows of
// the filter window, each computed once per frame, and the vertically
// filtered row.
type motionRows struct {
	diff [5][]int16
	tag  [5]int // the input row each diff row holds
	vrow []int32
	// wait, when not nil, is called before a row further down the planes
	// than those read is read (rowWalk).
	wait func(r int)
}

func (m *motionRows) ensure(w int) {
	if len(m.vrow) >= w {
		return
	}
	for k := range m.diff {
		m.diff[k] = make([]int16, w)
	}
	m.vrow = make([]int32, w)
}

var genericKernels = kernels{
	cpu:        CPUGeneric,
	vifFill:    (*vifRing).fill,
	vifTapInit: vifTapInit,
	vifTapPair: vifTapPair,
	vifRow:     vifRowGeneric,
	vifStatRow: func(sig *vifSigmas, w int, t []uint16, egl float64, acc *vifAcc) {
		vifStatRow(sig, 0, w, t, egl, acc)
	},
	vifRound:    vifRoundRow,
	vifSubInit:  vifSubInit,
	vifSubPair:  vifSubPair,
	vifSubRound: vifSubRoundRow,
	vifSubRow: func(filt, tmp []uint64, rowR, rowD []uint16) {
		vifSubRow(filt, tmp, rowR, rowD, 0)
	},
	motionSAD: func(prev, cur []uint16, w, h, bpc int, row []int64, m *motionRows) uint64 {
		return motionSADPaced(prev, cur, w, h, bpc, row, m.wait)
	},
	admDWT0V: admDWT0V,
	admDWT0H: admDWT0H,
	admCM0Row: func(r *admCMRow, up, i, down int) (int64, int64, int64) {
		return admCM0Row(r, up, i, down, r.left, r.right)
	},
	admCMSRow: func(r *admCMRow, up, i, down int) (int64, int64, int64) {
		return admCMSRow(r, up, i, down, r.left, r.right)
	},
	admCSF0:    admCSF0Row,
	admCSFS:    admCSFSRow,
	admDWTSV:   admDWTSV,
	admDen0Row: admDen0Row,
	admDenSRow: admDenSRow,
	admDWTSH:   admDWTSH,
	admDecouple: func(d *admDecoupleRows, egl float64, narrow bool) {
		admDecoupleRow(d, 0, len(d.o[0]), egl, narrow)
	},
	cambiConv:       cambiConvRow,
	cambiAntiDither: cambiAntiDitherRow,
	cambiMode3:      cambiMode3Row,
	cambiZeroDeriv:  cambiZeroDerivRow,
	cambiColSum:     cambiColSumRow,
	cambiMaskRow:    cambiMaskRowGo,
	cambiBand:       cambiBandRow,
	cambiHistRow:    cambiHistRowGo,
	cambiCValuesRow: cambiCValuesRowGo,
	cambiDecimate16: decimateRow[uint16],
	cambiDecimate8:  decimateRow[bool],
	cambiScan:       cambiScan,
}

// kernelsFor returns the kernel set of a resolved path.
func kernelsFor(c CPU) *kernels {
	switch c {
	case CPUAVX2, CPUAVX512:
		if k := vectorKernels(c); k != nil {
			return k
		}
	}
	return &genericKernels
}

func vifRowGeneric(filt []uint64, mu, xx, yy, xy []uint64, w int, t []uint16, egl float64, acc *vifAcc, _ *vifSigmas) {
	if len(filt) == 17 {
		vifRow17(mu, xx, yy, xy, w, t, egl, acc)
	} else {
		vifRow(filt, mu, xx, yy, xy, w, t, egl, acc)
	}
}

// vifSigmaRow computes the variances of pixels [j0, j1) of a row into sig:
// the scalar form of the vector kernels' horizontal pass, used for a row's
// tail.
func vifSigmaRow(filt []uint64, mu, xx, yy, xy []uint64, j0, j1 int, sig *vifSigmas) {
	for j := j0; j < j1; j++ {
		pm, pxx, pyy, pxy := vifSums(filt, mu, xx, yy, xy, j)
		sig.s1[j], sig.s2[j], sig.s12[j] = vifSigma(pm&0xffffffff, pm>>32, pxx, pyy, pxy)
	}
}

// vifStatRow accumulates the statistic of pixels [j0, j1) from their
// variances.
func vifStatRow(sig *vifSigmas, j0, j1 int, t []uint16, egl float64, acc *vifAcc) {
	s1, s2, s12 := sig.s1[j0:j1], sig.s2[j0:j1], sig.s12[j0:j1]
	for j := range s1 {
		vifPixelSigma(s1[j], s2[j], s12[j], t, egl, acc)
	}
}
