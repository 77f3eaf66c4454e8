package vmaf

import (
	"math"
)

// DB2 wavelet filters in Q15 and the low-pass sum used to centre 8/16-bit
// input (libvmaf integer_adm.h, dwt2_db2_coeffs_lo/hi).
var (
	dwtLo = [4]int32{15826, 27411, 7345, -4240}
	dwtHi = [4]int32{-4240, -7345, 27411, -15826}
)

const dwtLoSum = 46342

// admBorderFactor is the share of each border ADM ignores (ADM_BORDER_FACTOR).
const admBorderFactor = 0.1

// Default viewing conditions (DEFAULT_ADM_NORM_VIEW_DIST,
// DEFAULT_ADM_REF_DISPLAY_HEIGHT).
const (
	admNormViewDist     = 3.0
	admRefDisplayHeight = 1080
)

// Watson et al. 1997 noise-floor model for luma (dwt_7_9_YCbCr_threshold[0])
// and the 7-9 wavelet basis amplitudes (dwt_7_9_basis_function_amplitudes).
var (
	admModelA  = float32(0.495)
	admModelK  = float32(0.466)
	admModelF0 = float32(0.401)
	admModelG  = [4]float32{1.501, 1.0, 0.534, 1.0}
	admAmp     = [4][4]float32{
		{0.62171, 0.67234, 0.72709, 0.67234},
		{0.34537, 0.41317, 0.49428, 0.41317},
		{0.18004, 0.22727, 0.28688, 0.22727},
		{0.091401, 0.11792, 0.15214, 0.11792},
	}
)

// admDisplayResolution is the display's pixels per degree of visual angle
// (dwt_quant_step's r), rounded to float32 from libvmaf's double steps.
func admDisplayResolution(normViewDist float64, refDisplayHeight int) float32 {
	return float32(normViewDist * float64(refDisplayHeight) * math.Pi / 180.0)
}

// admQuantStep is integer_adm.c's dwt_quant_step at display resolution r,
// with its float and double roundings. The exponent k*temp*temp is
// evaluated in float32, as libvmaf 3.2.0 does; doing it in double moves the
// ADM scores by up to 1e-6.
func admQuantStep(r float32, lambda, theta int) float32 {
	temp := float32(math.Log10(math.Pow(2.0, float64(lambda+1)) * float64(admModelF0) * float64(admModelG[theta]) / float64(r)))
	q := float32(2.0 * float64(admModelA) * math.Pow(10.0, float64(admModelK*temp*temp)) / float64(admAmp[lambda][theta]))
	return q
}

// admBands holds the four DWT bands of one image at one scale: a whole,
// the next scale's input; h, v and d in a ring of csfRows rows, which scan
// reads as the transform makes them.
type admBands struct {
	a, h, v, d []int32
}

func newADMBands(n, stride int) admBands {
	ring := func() []int32 { return make([]int32, csfRows*stride) }
	return admBands{a: make([]int32, n), h: ring(), v: ring(), d: ring()}
}

// admState is the per-worker scratch of the ADM extractor. Bands use int32
// storage throughout; scale 0 narrows to int16 where libvmaf stores int16.
type admState struct {
	w, h   int
	stride int // (w+1)/2, libvmaf's buf_stride
	opt    admOptions

	ref, dis admBands
	// r and a are the decoupled parts (decouple_r, decouple_a), and csfOfA
	// and csfOfR their CSF-weighted rows, each a ring of csfRows rows that
	// scan fills just ahead of the rows that read them.
	r, a           [3][]int32
	csfOfA, csfOfR admCSFRing
	tmpLo, tmpHi   []int32
	tmp0Lo         []int16 // dwt0Row's vertical pass, int16 as libvmaf's
	tmp0Hi         []int16
	indY, indX     [4][]int
	rfactor        [4][3]float32 // the CSF weights of the options
	irf0           [3]int32      // scale 0's, in fixed point
	irfS           [4][3]int64   // scales 1 to 3's in Q32 (admIRF); weights has every scale's
	numLimit       float64
	dwtMade        int // the last output row of the scale's transform made (dwtRows)
	// wait, when not nil, is called before the first scale's transform reads
	// an input row, with the last row it reads (rowWalk).
	wait         func(r int)
	cmDLM, cmAIM admCMRow
	rowSums      admRowSums
	decRow       admDecoupleRows
	denShifts    ADMDenShifts
	k            *kernels
}

// admCSFRing is one decoupled part's CSF-weighted rows (csf_a) and the
// masking filter's input |csf_a|/30 (csf_f), per band, in a ring of csfRows
// rows (csfRow).
type admCSFRing struct{ a, f [3][]int32 }

// admScore is the result of the ADM extractor for one frame: adm2 (the
// detail loss measure), aim (the additive impairment measure, normalised by
// the same denominator) and their blend adm3.
type admScore struct {
	adm2, aim, adm3 float64
	num, den        [4]float32
}

// newADMState makes the scratch of w x h frames under the options opt,
// which parseADMOptions has checked (defaultADMOptions for the default
// features).
func newADMState(w, h int, opt admOptions) *admState {
	bw, bh := (w+1)/2, (h+1)/2
	n := bw * bh
	s := &admState{w: w, h: h, stride: bw, opt: opt}
	s.ref, s.dis = newADMBands(n, bw), newADMBands(n, bw)
	ring := func() [3][]int32 {
		return [3][]int32{make([]int32, csfRows*bw), make([]int32, csfRows*bw), make([]int32, csfRows*bw)}
	}
	s.r, s.a = ring(), ring()
	s.csfOfA = admCSFRing{ring(), ring()}
	s.csfOfR = admCSFRing{ring(), ring()}
	s.tmpLo, s.tmpHi = make([]int32, w), make([]int32, w)
	s.tmp0Lo, s.tmp0Hi = make([]int16, w), make([]int16, w)
	s.decRow.angle = make([]int32, bw)
	for k := range 4 {
		s.indY[k] = make([]int, bh)
		s.indX[k] = make([]int, bw)
	}
	for sc := range 4 {
		s.rfactor[sc] = opt.rfactors(sc)
		s.irfS[sc] = admIRF(s.rfactor[sc])
	}
	s.irf0 = opt.irf0()
	s.numLimit = 1e-10 * float64(w*h) / (1920.0 * 1080.0)
	s.k = kernelsFor(CPUGeneric)
	return s
}

// with sets the kernels of a CPU path.
func (s *admState) with(k *kernels) *admState {
	s.k = k
	return s
}

// dwtIndices fills the four source indices of each DWT output position
// (integer_adm.c, dwt2_src_indices_filt): 2i-1 .. 2i+2, reflecting -1 to 1
// and n+k to n-1-k.
func dwtIndices(ind *[4][]int, n int) {
	half := (n + 1) / 2
	for i := 0; i < half; i++ {
		for k := 0; k < 4; k++ {
			idx := 2*i - 1 + k
			if idx < 0 {
				idx = -idx
			} else if idx >= n {
				idx = 2*n - idx - 1
			}
			ind[k][i] = idx
		}
	}
}

// compute returns the ADM features of a frame pair (integer_adm.c,
// integer_compute_adm). Per scale it decouples the distorted bands into a
// restored and an additive part, then measures the CSF-weighted, masked
// energy of the restored part (DLM, numerator of adm2) and of the additive
// part (AIM), both over the CSF-weighted reference energy (denominator).
func (s *admState) compute(ref, dis []uint16, bpc int) admScore {
	var sums ADMSums
	w, h := s.w, s.h
	for scale := range 4 {
		dp, cp := ADMShifts((w+1)/2, (h+1)/2, scale)
		w, h = s.scan(ref, dis, bpc, scale, w, h, !s.opt.skipAIM, func(_ int, r *admRowSums) {
			sums.add(scale, r.den, r.num, r.aim, dp, cp)
		})
	}
	return s.fromSums(&sums)
}

// combine derives the ADM features from each scale's numerator (DLM),
// denominator and AIM.
func (s *admState) combine(ns, ds, as [4]float32) admScore {
	var out admScore
	var num, den, aim float64
	for scale := range 4 {
		num += float64(ns[scale])
		den += float64(ds[scale])
		aim += float64(as[scale])
		out.num[scale], out.den[scale] = ns[scale], ds[scale]
	}
	if num < s.numLimit {
		num = 0
	}
	if den < s.numLimit {
		den = 0
	}
	if den == 0 {
		out.adm2 = 1.0
	} else {
		out.adm2 = num / den
		out.aim = aim / den
	}
	// integer_adm.c, extract: MAX(adm2*w + (1-aim)*(1-w), min_val). The
	// conversions keep the products rounded apart (no fused multiply-add),
	// and the comparison is C's MAX, which takes min_val for a NaN.
	w := s.opt.dlmWeight
	adm3 := float64(out.adm2*w) + float64((1-out.aim)*(1-w))
	out.adm3 = s.opt.minVal
	if adm3 > s.opt.minVal {
		out.adm3 = adm3
	}
	return out
}

// scale returns the per-scale ratio libvmaf reports as integer_adm_scaleN.
func (a admScore) scale(i int) float64 { return float64(a.num[i]) / float64(a.den[i]) }

// dwtRows runs scale's wavelet transform of both pictures (w x h at that
// scale: the frames at scale 0, the previous scale's a bands after) up to
// output row i, from the row after the last one made (s.dwtMade).
func (s *admState) dwtRows(ref, dis []uint16, bpc, scale, w, i int) {
	for s.dwtMade < i {
		s.dwtMade++
		if scale == 0 {
			if s.wait != nil {
				s.wait(s.dwt0Reads(s.dwtMade))
			}
			s.dwt0Row(ref, &s.ref, w, s.dwtMade, bpc)
			s.dwt0Row(dis, &s.dis, w, s.dwtMade, bpc)
		} else {
			// In place, as libvmaf does: output row i only overwrites input
			// rows that later rows (which read rows >= 2i+1) no longer need.
			s.dwtSRow(s.ref.a, &s.ref, w, s.dwtMade, scale)
			s.dwtSRow(s.dis.a, &s.dis, w, s.dwtMade, scale)
		}
	}
}

// dwt0Reads is the last input row that dwt0Row reads for output row i.
func (s *admState) dwt0Reads(i int) int {
	return max(s.indY[0][i], s.indY[1][i], s.indY[2][i], s.indY[3][i])
}

// dwt0Row is output row i of the first DWT level on the luma plane
// (adm_dwt2_8 / adm_dwt2_16): the input is centred by subtracting half the
// range, the vertical pass is rounded to the input bit depth and the
// horizontal pass to Q16, both into int16.
func (s *admState) dwt0Row(src []uint16, dst *admBands, w, i, bpc int) {
	shiftVP := uint(bpc)
	addVP := int32(1) << uint(bpc-1)
	tlo, thi := s.tmp0Lo[:w], s.tmp0Hi[:w]
	wh := (w + 1) / 2
	r0 := src[s.indY[0][i]*w:][:w]
	r1 := src[s.indY[1][i]*w:][:w]
	r2 := src[s.indY[2][i]*w:][:w]
	r3 := src[s.indY[3][i]*w:][:w]
	s.k.admDWT0V(r0, r1, r2, r3, tlo, thi, shiftVP, addVP)
	row, ring := i*s.stride, s.ringOff(i)
	s.k.admDWT0H(tlo, dst.a[row:row+wh], dst.v[ring:ring+wh], &s.indX)
	s.k.admDWT0H(thi, dst.h[ring:ring+wh], dst.d[ring:ring+wh], &s.indX)
}

// admDWT0V is dwt0's vertical pass of one output row from four input rows.
func admDWT0V(r0, r1, r2, r3 []uint16, tlo, thi []int16, shiftVP uint, addVP int32) {
	n := len(tlo)
	r0, r1, r2, r3, thi = r0[:n], r1[:n], r2[:n], r3[:n], thi[:n]
	for j := range tlo {
		u0, u1, u2, u3 := int32(r0[j]), int32(r1[j]), int32(r2[j]), int32(r3[j])
		lo := dwtLo[0]*u0 + dwtLo[1]*u1 + dwtLo[2]*u2 + dwtLo[3]*u3 - dwtLoSum*addVP
		hi := dwtHi[0]*u0 + dwtHi[1]*u1 + dwtHi[2]*u2 + dwtHi[3]*u3
		tlo[j] = int16((lo + addVP) >> shiftVP)
		thi[j] = int16((hi + addVP) >> shiftVP)
	}
}

// admDWT0H is dwt0's horizontal pass of one vertically filtered row t into
// its low (lo) and high (hi) halves; ind holds the source columns.
func admDWT0H(t []int16, lo, hi []int32, ind *[4][]int) {
	for j := range lo {
		admDWT0HAt(t, lo, hi, ind, j)
	}
}

// admDWT0HAt is admDWT0H of output j.
func admDWT0HAt(t []int16, lo, hi []int32, ind *[4][]int, j int) {
	s0, s1, s2, s3 := int32(t[ind[0][j]]), int32(t[ind[1][j]]), int32(t[ind[2][j]]), int32(t[ind[3][j]])
	lo[j] = int32(int16((dwtLo[0]*s0 + dwtLo[1]*s1 + dwtLo[2]*s2 + dwtLo[3]*s3 + 32768) >> 16))
	hi[j] = int32(int16((dwtHi[0]*s0 + dwtHi[1]*s1 + dwtHi[2]*s2 + dwtHi[3]*s3 + 32768) >> 16))
}

// Rounding of the DWT of scales 1..3 (adm_dwt2_s123_combined), indexed by
// scale-1.
var (
	dwtSAddVP   = [3]int64{0, 32768, 32768}
	dwtSShiftVP = [3]uint{0, 16, 16}
	dwtSAddHP   = [3]int64{16384, 32768, 16384}
	dwtSShiftHP = [3]uint{15, 16, 15}
)

// dwtSRow is output row i of one DWT level of scales 1..3 on the previous
// scale's band a, in 64-bit accumulators truncated to int32.
func (s *admState) dwtSRow(src []int32, dst *admBands, w, i, scale int) {
	addV, shV := dwtSAddVP[scale-1], dwtSShiftVP[scale-1]
	addH, shH := dwtSAddHP[scale-1], dwtSShiftHP[scale-1]
	bw := s.stride
	tlo, thi := s.tmpLo[:w], s.tmpHi[:w]
	wh := (w + 1) / 2
	r0 := src[s.indY[0][i]*bw:][:w]
	r1 := src[s.indY[1][i]*bw:][:w]
	r2 := src[s.indY[2][i]*bw:][:w]
	r3 := src[s.indY[3][i]*bw:][:w]
	s.k.admDWTSV(r0, r1, r2, r3, tlo, thi, addV, shV)
	row, ring := i*bw, s.ringOff(i)
	s.k.admDWTSH(tlo, dst.a[row:row+wh], dst.v[ring:ring+wh], &s.indX, addH, shH)
	s.k.admDWTSH(thi, dst.h[ring:ring+wh], dst.d[ring:ring+wh], &s.indX, addH, shH)
}

// admDWTSV is dwtS's vertical pass of one output row from four input rows.
func admDWTSV(r0, r1, r2, r3, tlo, thi []int32, add int64, shift uint) {
	n := len(tlo)
	r0, r1, r2, r3, thi = r0[:n], r1[:n], r2[:n], r3[:n], thi[:n]
	lo0, lo1, lo2, lo3 := int64(dwtLo[0]), int64(dwtLo[1]), int64(dwtLo[2]), int64(dwtLo[3])
	hi0, hi1, hi2, hi3 := int64(dwtHi[0]), int64(dwtHi[1]), int64(dwtHi[2]), int64(dwtHi[3])
	for j := range tlo {
		u0, u1, u2, u3 := int64(r0[j]), int64(r1[j]), int64(r2[j]), int64(r3[j])
		tlo[j] = int32((lo0*u0 + lo1*u1 + lo2*u2 + lo3*u3 + add) >> shift)
		thi[j] = int32((hi0*u0 + hi1*u1 + hi2*u2 + hi3*u3 + add) >> shift)
	}
}

// admDWTSH is dwtS's horizontal pass of one vertically filtered row t into
// its low (lo) and high (hi) halves; ind holds the source columns.
func admDWTSH(t, lo, hi []int32, ind *[4][]int, add int64, shift uint) {
	for j := range lo {
		admDWTSHAt(t, lo, hi, ind, j, add, shift)
	}
}

// admDWTSHAt is admDWTSH of output j.
func admDWTSHAt(t, lo, hi []int32, ind *[4][]int, j int, add int64, shift uint) {
	s0, s1, s2, s3 := int64(t[ind[0][j]]), int64(t[ind[1][j]]), int64(t[ind[2][j]]), int64(t[ind[3][j]])
	lo[j] = int32((int64(dwtLo[0])*s0 + int64(dwtLo[1])*s1 + int64(dwtLo[2])*s2 + int64(dwtLo[3])*s3 + add) >> shift)
	hi[j] = int32((int64(dwtHi[0])*s0 + int64(dwtHi[1])*s1 + int64(dwtHi[2])*s2 + int64(dwtHi[3])*s3 + add) >> shift)
}
