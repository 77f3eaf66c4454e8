package vmaf

import (
	"math"
	"math/bits"
)

// admDivLookup is libvmaf's reciprocal table: 2^30/i at 32768+i and its
// negation at 32768-i (integer_adm.h, div_lookup_generator).
var admDivLookup = func() []int32 {
	t := make([]int32, 65537)
	for i := 1; i <= 32768; i++ {
		r := int32((1 << 30) / i)
		t[32768+i] = r
		t[32768-i] = -r
	}
	return t
}()

// admCos1DegSq is cos(1°)² rounded to float32, the decoupling angle test.
var admCos1DegSq = float32(math.Cos(math.Pi/180) * math.Cos(math.Pi/180))

// admOneThird is 1.0f/3.0f, the cube-root exponent libvmaf passes to powf.
const admOneThird = float32(1.0 / 3.0)

// powf emulates C's powf: glibc computes it in double and rounds once.
func powf(x, y float32) float32 { return float32(math.Pow(float64(x), float64(y))) }

// admDecoupleRegion is the band area the decoupling and CSF stages touch:
// the scored area grown by the filter taps.
func admDecoupleRegion(w, h int) (top, bottom, left, right int) {
	left = int(float64(w)*admBorderFactor - 0.5 - 1)
	top = int(float64(h)*admBorderFactor - 0.5 - 1)
	right = w - left + 2
	bottom = h - top + 2
	left, top = max(left, 0), max(top, 0)
	right, bottom = min(right, w), min(bottom, h)
	return
}

// admScoreRegion is the band area that contributes to the scores.
func admScoreRegion(w, h int) (top, bottom, left, right int) {
	left = int(float64(w)*admBorderFactor - 0.5)
	top = int(float64(h)*admBorderFactor - 0.5)
	return top, h - top, left, w - left
}

// decoupleRow splits row i of the distorted bands into a restored part r
// (the reference scaled by the clamped gain, limited by the enhancement gain
// limit when the angles agree within 1°) and an additive part a
// (adm_decouple / adm_decouple_s123), over the decoupled columns, into row
// i's place in their rings. narrow selects scale 0's int16 storage.
func (s *admState) decoupleRow(w, h, i int, narrow bool) {
	_, _, left, right := admDecoupleRegion(w, h)
	// In the state: a local would escape through the kernel's function
	// value.
	d := &s.decRow
	// The bands' h, v and d rows and the parts' are in their rings.
	lo, hi := s.ringOff(i)+left, s.ringOff(i)+right
	d.o = [3][]int32{s.ref.h[lo:hi], s.ref.v[lo:hi], s.ref.d[lo:hi]}
	d.t = [3][]int32{s.dis.h[lo:hi], s.dis.v[lo:hi], s.dis.d[lo:hi]}
	for t := range 3 {
		d.r[t], d.a[t] = s.r[t][lo:hi], s.a[t][lo:hi]
	}
	s.k.admDecouple(d, s.opt.egl, narrow)
}

// admDecoupleRows is one row segment of the decoupling: the reference (o)
// and distorted (t) bands h, v, d, the restored (r) and additive (a)
// outputs, and the vector kernels' scratch for the angle test.
type admDecoupleRows struct {
	o, t, r, a [3][]int32
	angle      []int32
}

// admDecoupleRow decouples columns [j0, j1) of a row segment.
func admDecoupleRow(d *admDecoupleRows, j0, j1 int, egl float64, narrow bool) {
	for j := j0; j < j1; j++ {
		oh, ov, od := d.o[0][j], d.o[1][j], d.o[2][j]
		th, tv, td := d.t[0][j], d.t[1][j], d.t[2][j]
		angle := admAngle(oh, ov, th, tv, float64(admCos1DegSq))
		d.r[0][j], d.a[0][j] = admDecoupleOne(oh, th, angle, egl, narrow)
		d.r[1][j], d.a[1][j] = admDecoupleOne(ov, tv, angle, egl, narrow)
		d.r[2][j], d.a[2][j] = admDecoupleOne(od, td, angle, egl, narrow)
	}
}

// admAngle is the decoupling's test that the reference and distorted
// (h, v) vectors point the same way within 1°, on their int64 products
// rounded to float32 as libvmaf does; cos1 is cos(1°)², a parameter for
// the tests.
func admAngle(oh, ov, th, tv int32, cos1 float64) bool {
	otDp := int64(oh)*int64(th) + int64(ov)*int64(tv)
	oMag := int64(oh)*int64(oh) + int64(ov)*int64(ov)
	tMag := int64(th)*int64(th) + int64(tv)*int64(tv)
	dp := float64(float32(otDp)) / 4096.0
	return dp >= 0 && dp*dp >= cos1*(float64(float32(oMag))/4096.0)*(float64(float32(tMag))/4096.0)
}

// admDecoupleOne decouples one coefficient pair: k = clamp(t/o, 0, 1) in
// Q15 through the reciprocal table (with the best-15-bit normalisation of
// large denominators), r = k*o, a = t - r.
func admDecoupleOne(o, t int32, angle bool, egl float64, narrow bool) (r, a int32) {
	var k int64 = 32768
	if o != 0 {
		abs := uint32(o)
		sign := int64(1)
		if o < 0 {
			abs = uint32(-o)
			sign = -1
		}
		shift := uint(0)
		msb := abs
		if abs >= 32768 {
			shift = uint(17 - bits.LeadingZeros32(abs))
			msb = (abs + 1<<(shift-1)) >> shift
		}
		k = (int64(admDivLookup[msb+32768])*int64(t)*sign + int64(1)<<(14+shift)) >> (15 + shift)
		k = min(max(k, 0), 32768)
	}
	r = int32((k*int64(o) + 16384) >> 15)
	if narrow {
		r = int32(int16(r))
	}
	if angle && k > 0 && o != 0 {
		v := float64(r) * egl
		if o > 0 {
			if !(v < float64(t)) {
				v = float64(t)
			}
		} else if !(v > float64(t)) {
			v = float64(t)
		}
		r = int32(v)
		if narrow {
			r = int32(int16(r))
		}
	}
	a = t - r
	if narrow {
		a = int32(int16(a))
	}
	return r, a
}

// csfRows is the rows of the decoupled parts and of their CSF-weighted
// bands that the contrast measure keeps, each in a ring: a row and its two
// neighbours. Whole bands (twelve arrays the size of a band, 25 MB a thread
// at 1080p) were written by one pass and read by the next, out of every
// cache.
const csfRows = 3

// ringOff is where row i starts in the state's rings of csfRows rows (the
// contrast measure's kernels find it with admCMRow.csfOff).
func (s *admState) ringOff(i int) int { return (i % csfRows) * s.stride }

// csfRow applies a scale's contrast sensitivity weights to row i of the
// decoupled part src (a ring) in fixed point and derives the masking filter
// input |csf_a|/30 (scale 0: integer_adm.c, adm_csf, with the options'
// i_rfactor; scales 1 to 3: i4_adm_csf with 32-bit Q32 weights), over the
// decoupled columns, into row i's place in the ring dst.
func (s *admState) csfRow(w, h, scale, i int, src [3][]int32, dst *admCSFRing) {
	_, _, left, right := admDecoupleRegion(w, h)
	lo, hi := s.ringOff(i)+left, s.ringOff(i)+right
	if scale == 0 {
		shifts := [3]uint{15, 15, 17}
		adds := [3]int32{16384, 16384, 65535}
		for t := 0; t < 3; t++ {
			s.k.admCSF0(src[t][lo:hi], dst.a[t][lo:hi], dst.f[t][lo:hi], s.irf0[t], adds[t], shifts[t])
		}
		return
	}
	irf := &s.irfS[scale]
	for t := 0; t < 3; t++ {
		s.k.admCSFS(src[t][lo:hi], dst.a[t][lo:hi], dst.f[t][lo:hi], irf[t])
	}
}

// admCSF0Row is csfRow of one band's row segment at scale 0.
func admCSF0Row(src, dstA, dstF []int32, irf, add int32, shift uint) {
	dstA, dstF = dstA[:len(src)], dstF[:len(src)]
	for j, x := range src {
		v := int32(int16((irf*x + add) >> shift))
		dstA[j] = v
		dstF[j] = int32(int16((4369*abs32(v) + 2048) >> 12))
	}
}

// admFltRound is the rounding constant libvmaf adds before the >>32 of the
// 1/30 and 1/15 filters of scales 1..3: (1u << 31) stored in an int32_t,
// which wraps to -2^31 (i4_adm_csf, i4_adm_cm add_bef_shift_flt).
const admFltRound = int64(math.MinInt32)

// admCSFSRow is csfRow of one band's row segment at scales 1 to 3.
func admCSFSRow(src, dstA, dstF []int32, irf int64) {
	dstA, dstF = dstA[:len(src)], dstF[:len(src)]
	for j, x := range src {
		v := int32((irf*int64(x) + 1<<27) >> 28)
		dstA[j] = v
		dstF[j] = int32((143165577*int64(abs32(v)) + admFltRound) >> 32)
	}
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// admDen0Row is scale 0's denominator (adm_csf_den_scale) over one row of
// a reference band: the sum of the cubed coefficients.
func admDen0Row(row []int32) uint64 {
	var inner uint64
	for _, c := range row {
		u := uint64(uint16(abs32(c)))
		inner += u * u * u
	}
	return inner
}

// admDen0Shift is scale 0's denominator's per-row rounding shift and addend.
func admDen0Shift(w, h int) (shift int, add uint64) {
	top, bottom, left, right := admScoreRegion(w, h)
	area := (bottom - top) * (right - left)
	shift = max(int(math.Ceil(math.Log2(float64(area))-20)), 0)
	if shift > 0 {
		add = 1 << uint(shift-1)
	}
	return shift, add
}

// admDen0Float is scale 0's denominator's float part: from the bands'
// accumulators, the cube root of the summed cubed reference coefficients
// weighted by the CSF, plus the noise floor of weight nw.
func admDen0Float(acc [3]uint64, w, h int, rf [3]float32, nw float64) float32 {
	top, bottom, left, right := admScoreRegion(w, h)
	area := (bottom - top) * (right - left)
	shiftAccum, _ := admDen0Shift(w, h)
	shiftCsf := math.Pow(2, float64(18-shiftAccum))
	powAdd := admNoiseFloor(area, nw)
	var den float32
	for t := range 3 {
		csf := float64(acc[t]) / shiftCsf * math.Pow(float64(rf[t]), 3)
		den += powf(float32(csf), admOneThird) + powAdd
	}
	return den
}

// admDenSRow is admDen0Row for scales 1 to 3 (adm_csf_den_s123).
func admDenSRow(row []int32, p *ADMDenShifts) uint64 {
	var inner uint64
	for _, c := range row {
		u := uint64(uint32(abs32(c)))
		inner += ((((u*u)+p.AddSq)>>p.ShiftSq)*u + p.AddCub) >> p.ShiftCub
	}
	return inner
}

// ADMDenShifts are the roundings of the denominator of ADM scales 1..3
// (adm_csf_den_s123): per coefficient ((u*u + AddSq) >> ShiftSq) * u,
// rounded by AddCub, ShiftCub; per row by AddAccum, ShiftAccum.
type ADMDenShifts struct {
	ShiftSq, ShiftCub, ShiftAccum uint32
	AddSq, AddCub, AddAccum       uint64
}

func admDenSShifts(w, h, scale int) ADMDenShifts {
	top, bottom, left, right := admScoreRegion(w, h)
	p := ADMDenShifts{ShiftSq: [3]uint32{31, 30, 31}[scale-1]}
	p.AddSq = uint64(1) << p.ShiftSq
	p.ShiftCub = uint32(math.Ceil(math.Log2(float64(right - left))))
	p.AddCub = uint64(math.Pow(2, float64(int(p.ShiftCub)-1)))
	p.ShiftAccum = uint32(math.Ceil(math.Log2(float64(bottom - top))))
	p.AddAccum = uint64(math.Pow(2, float64(int(p.ShiftAccum)-1)))
	return p
}

// admDenSFloat is admDen0Float for scales 1 to 3.
func admDenSFloat(acc [3]uint64, w, h, scale int, rf [3]float32, nw float64) float32 {
	top, bottom, left, right := admScoreRegion(w, h)
	p := admDenSShifts(w, h, scale)
	conv := [3]uint32{32, 27, 23}[scale-1]
	shiftCsf := math.Pow(2, float64(conv-p.ShiftAccum-p.ShiftCub))
	area := (bottom - top) * (right - left)
	powAdd := admNoiseFloor(area, nw)
	var den float32
	for t := range 3 {
		csf := float64(acc[t]) / shiftCsf * math.Pow(float64(rf[t]), 3)
		den += powf(float32(csf), admOneThird) + powAdd
	}
	return den
}

// admNeighbors returns the rows (or columns) above and below i for the 3x3
// masking window: reflected at the start (−1 → 1), repeated at the end
// (n → n−1), as libvmaf's ADM_CM_THRESH_* macros do.
func admNeighbors(i, n int) (int, int) {
	lo, hi := i-1, i+1
	if i == 0 {
		lo = 1
	}
	if i == n-1 {
		hi = n - 1
	}
	return lo, hi
}

// admRowSums are one scored row's sums per band (h, v, d): the
// denominator's cubed CSF-weighted reference (adm_csf_den_scale,
// adm_csf_den_s123), and the contrast measure (adm_cm, i4_adm_cm) of the
// restored part masked by the additive part (num, DLM) and of the additive
// part masked by the restored part (aim, measure_aim).
type admRowSums struct {
	den      [3]uint64
	num, aim [3]int64
}

// scan measures one scale of a frame pair whose input is w x h (the
// frames at scale 0, the previous scale's a bands after), a scored row at a
// time, in order, handing each row's sums to each, and returns the bands'
// size, the next scale's input. Each coefficient of the contrast measure's
// source, CSF weighted, is reduced by a masking threshold from the 3x3
// neighbourhood of the CSF-weighted masking part, clamped at zero and
// cubed, with libvmaf's intermediate roundings. The rows are transformed,
// decoupled and CSF weighted into their rings just ahead of the first row
// that reads them, so that every pass reads rows still in cache; only the a
// bands, the next scale's input, are whole. Without withAIM the AIM sums
// are zero.
func (s *admState) scan(ref, dis []uint16, bpc, scale, w, h int, withAIM bool, each func(i int, r *admRowSums)) (int, int) {
	dwtIndices(&s.indY, h)
	dwtIndices(&s.indX, w)
	iw := w
	w, h = (w+1)/2, (h+1)/2
	s.dwtMade = -1
	s.measure(ref, dis, bpc, scale, iw, w, h, withAIM, each)
	// Every row of the a bands is the next scale's input; the last scale's
	// are not needed past the rows measured.
	if scale < 3 {
		s.dwtRows(ref, dis, bpc, scale, iw, h-1)
	}
	return w, h
}

// measure is scan's loop over the scored rows of w x h bands, whose
// transform's input is iw wide.
func (s *admState) measure(ref, dis []uint16, bpc, scale, iw, w, h int, withAIM bool, each func(i int, r *admRowSums)) {
	top, bottom, left, right := admScoreRegion(w, h)
	dTop, dBottom, dLeft, dRight := admDecoupleRegion(w, h)
	if dRight <= dLeft || bottom <= top {
		return
	}
	p := admCMShifts(w, h, scale)
	irf := s.weights()[scale]
	// In the state: a local would escape through the kernel's function
	// value.
	s.cmDLM = admCMRow{
		stride: s.stride, w: w, left: left, right: right, src: s.r,
		fl: s.csfOfA.f, ca: s.csfOfA.a,
		addHCub: p.AddCub, addDCub: p.AddDCub, shiftHCub: p.ShiftCub, shiftDCub: p.ShiftDCub,
		irf: irf,
	}
	s.cmAIM = s.cmDLM
	s.cmAIM.src, s.cmAIM.fl, s.cmAIM.ca = s.a, s.csfOfR.f, s.csfOfR.a
	row, den0, denS := s.k.admCM0Row, s.k.admDen0Row, s.k.admDenSRow
	if scale > 0 {
		row = s.k.admCMSRow
		s.denShifts = admDenSShifts(w, h, scale)
	}
	bands := [3][]int32{s.ref.h, s.ref.v, s.ref.d}
	sums := &s.rowSums // in the state: each may keep a pointer
	*sums = admRowSums{}
	taken := dTop - 1 // the last row in the rings
	for i := top; i < bottom; i++ {
		up, down := admNeighbors(i, h)
		// The rows read are decoupled rows (admDecoupleRegion reaches a
		// row past the scored ones); rings of three hold up, i and down.
		for need := max(i, up, down); taken < need && taken+1 < dBottom; {
			taken++
			s.dwtRows(ref, dis, bpc, scale, iw, taken)
			s.decoupleRow(w, h, taken, scale == 0)
			s.csfRow(w, h, scale, taken, s.a, &s.csfOfA)
			if withAIM {
				s.csfRow(w, h, scale, taken, s.r, &s.csfOfR)
			}
		}
		o := s.ringOff(i)
		for t, b := range bands {
			if scale == 0 {
				sums.den[t] = den0(b[o+left : o+right])
			} else {
				sums.den[t] = denS(b[o+left:o+right], &s.denShifts)
			}
		}
		sums.num[0], sums.num[1], sums.num[2] = row(&s.cmDLM, up, i, down)
		if withAIM {
			sums.aim[0], sums.aim[1], sums.aim[2] = row(&s.cmAIM, up, i, down)
		}
		each(i, sums)
	}
}

// ADMCMShifts are the roundings of the contrast measure (adm_cm, i4_adm_cm):
// each coefficient's cube by AddCub, ShiftCub (scale 0's d band by AddDCub,
// ShiftDCub), each row's sum by AddInner, ShiftInner.
type ADMCMShifts struct {
	ShiftCub, ShiftDCub, ShiftInner uint32
	AddCub, AddDCub, AddInner       int64
}

func admCMShifts(w, h, scale int) ADMCMShifts {
	var p ADMCMShifts
	if scale == 0 {
		p.ShiftCub = uint32(math.Ceil(math.Log2(float64(w)) - 4))
		p.ShiftDCub = uint32(math.Ceil(math.Log2(float64(w)) - 3))
	} else {
		p.ShiftCub = uint32(math.Ceil(math.Log2(float64(w))))
		p.ShiftDCub = p.ShiftCub
	}
	p.AddCub = int64(uint32(math.Pow(2, float64(int(p.ShiftCub)-1))))
	p.AddDCub = int64(uint32(math.Pow(2, float64(int(p.ShiftDCub)-1))))
	p.ShiftInner = uint32(math.Ceil(math.Log2(float64(h))))
	p.AddInner = int64(uint32(math.Pow(2, float64(int(p.ShiftInner)-1))))
	return p
}

// admCMFloat is the contrast measure's float part: the bands' accumulators
// (h, v, d) to the sum of their cube roots.
func admCMFloat(acc [3]int64, w, h, scale int, nw float64) float32 {
	top, bottom, left, right := admScoreRegion(w, h)
	p := admCMShifts(w, h, scale)
	var fH, fV, fD float32
	if scale == 0 {
		fH = float32(float64(acc[0]) / math.Pow(2, float64(52-p.ShiftCub-p.ShiftInner)))
		fV = float32(float64(acc[1]) / math.Pow(2, float64(52-p.ShiftCub-p.ShiftInner)))
		fD = float32(float64(acc[2]) / math.Pow(2, float64(57-p.ShiftDCub-p.ShiftInner)))
	} else {
		finalShift := float32(math.Pow(2, float64([3]uint32{45, 39, 36}[scale-1]-p.ShiftCub-p.ShiftInner)))
		fH = float32(acc[0]) / finalShift
		fV = float32(acc[1]) / finalShift
		fD = float32(acc[2]) / finalShift
	}
	return admCubeRoots(fH, fV, fD, (bottom-top)*(right-left), nw)
}

// admCMRow is what the contrast measure's rows share: the bands, the
// scored columns, the cube's rounding and the bands' CSF weights (scale 0:
// i_rfactor, below 2^16; scales 1 to 3: Q32).
type admCMRow struct {
	stride, w, left, right int
	// src is the part measured and fl, ca the masking part's CSF-weighted
	// rows, each in a ring of csfRows rows (csfOff).
	src, fl, ca          [3][]int32
	addHCub, addDCub     int64
	shiftHCub, shiftDCub uint32
	irf                  [3]int64
}

// csfOff is where row i starts in the rings.
func (r *admCMRow) csfOff(i int) int { return (i % csfRows) * r.stride }

// admCM0Row sums the cubed masked contrast of columns [j0, j1) of row i,
// per band.
func admCM0Row(r *admCMRow, up, i, down, j0, j1 int) (inH, inV, inD int64) {
	return admCMRowScalar(r, up, i, down, j0, j1, false)
}

// admCMSRow is admCM0Row for scales 1 to 3 (i4_adm_cm).
func admCMSRow(r *admCMRow, up, i, down, j0, j1 int) (inH, inV, inD int64) {
	return admCMRowScalar(r, up, i, down, j0, j1, true)
}

// admCMRowScalar is admCM0Row, or with scaleS admCMSRow: the centre of the
// masking window, the weighting and the cube's roundings differ.
func admCMRowScalar(r *admCMRow, up, i, down, j0, j1 int, scaleS bool) (inH, inV, inD int64) {
	ru, rc, rd := r.csfOff(up), r.csfOff(i), r.csfOff(down)
	sc := rc
	for j := j0; j < j1; j++ {
		lj, rj := admNeighbors(j, r.w)
		var thr int32
		for t := 0; t < 3; t++ {
			c := abs32(r.ca[t][rc+j])
			center := int32(int16((8738*c + 2048) >> 12))
			if scaleS {
				center = int32((286331153*int64(c) + admFltRound) >> 32)
			}
			f := r.fl[t]
			thr += f[ru+lj] + f[ru+j] + f[ru+rj] + f[rc+lj] + center + f[rc+rj] + f[rd+lj] + f[rd+j] + f[rd+rj]
		}
		if scaleS {
			xh := int32((int64(r.src[0][sc+j])*r.irf[0] + 1<<27) >> 28)
			xv := int32((int64(r.src[1][sc+j])*r.irf[1] + 1<<27) >> 28)
			xd := int32((int64(r.src[2][sc+j])*r.irf[2] + 1<<27) >> 28)
			inH += admCubeAccum(xh, thr, 1<<29, 30, r.addHCub, r.shiftHCub)
			inV += admCubeAccum(xv, thr, 1<<29, 30, r.addHCub, r.shiftHCub)
			inD += admCubeAccum(xd, thr, 1<<29, 30, r.addHCub, r.shiftHCub)
			continue
		}
		// int32 products that wrap, as libvmaf's int multiplications do.
		xh := r.src[0][sc+j] * int32(r.irf[0])
		xv := r.src[1][sc+j] * int32(r.irf[1])
		xd := r.src[2][sc+j] * int32(r.irf[2])
		inH += admCubeAccum(xh, thr<<10, 1<<28, 29, r.addHCub, r.shiftHCub)
		inV += admCubeAccum(xv, thr<<10, 1<<28, 29, r.addHCub, r.shiftHCub)
		inD += admCubeAccum(xd, thr<<12, 1<<29, 30, r.addDCub, r.shiftDCub)
	}
	return inH, inV, inD
}

// admCubeRoots sums the cube roots of the three band energies, each plus
// the noise floor of weight nw (adm_cm's num_scale_*); AIM runs with nw 0,
// whose floor is 0.
func admCubeRoots(fH, fV, fD float32, area int, nw float64) float32 {
	add := admNoiseFloor(area, nw)
	return (powf(fH, admOneThird) + add) + (powf(fV, admOneThird) + add) + (powf(fD, admOneThird) + add)
}

// admNoiseFloor is the cube root of a scale's noise floor, the scored
// area times the noise weight: powf of the double product rounded to
// float, as adm_cm and adm_csf_den_* compute it. At the default weight
// 1/32 it is powf(area/32).
func admNoiseFloor(area int, nw float64) float32 {
	return powf(float32(float64(area)*nw), admOneThird)
}

// admCubeAccum is ADM_CM_ACCUM_ROUND: max(|x| - thr, 0) cubed with two
// rounding shifts.
func admCubeAccum(x, thr int32, addSq int64, shiftSq uint, addCub int64, shiftCub uint32) int64 {
	x = abs32(x) - thr
	if x < 0 {
		x = 0
	}
	x64 := int64(x)
	xsq := int64(int32((x64*x64 + addSq) >> shiftSq))
	return (xsq*x64 + addCub) >> shiftCub
}

// admIRF is a scale's reciprocal quantisation steps in Q32, as i4_adm_csf
// and i4_adm_cm truncate them.
func admIRF(rf [3]float32) [3]int64 {
	return [3]int64{int64(uint32(float64(rf[0]) * (1 << 32))), int64(uint32(float64(rf[1]) * (1 << 32))), int64(uint32(float64(rf[2]) * (1 << 32)))}
}
