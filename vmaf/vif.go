package vmaf

import (
	"math"
	"math/bits"
	"sync"
)

// vifFilters are the integer Gaussian kernels of each VIF scale, summing to
// 2^16 (libvmaf integer_vif.h, vif_filter1d_table).
var vifFilters = [4][]uint64{
	{489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640, 935, 489},
	{1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244},
	{3571, 16004, 26386, 16004, 3571},
	{10904, 43728, 10904},
}

// vifSigmaNsq is the noise variance 2.0 in the Q16 fixed point of the
// statistics (integer_vif.c, sigma_nsq = 65536 << 1).
const vifSigmaNsq = 65536 << 1

// vifMaxPad is half the widest VIF filter: the padding of the row buffers.
const vifMaxPad = 8

// defaultEnhnGainLimit is libvmaf's DEFAULT_VIF_ENHN_GAIN_LIMIT and
// DEFAULT_ADM_ENHN_GAIN_LIMIT; the _egl_1 features use 1.0.
const defaultEnhnGainLimit = 100.0

var (
	log2Once  sync.Once
	log2Table []uint16
)

// vifLog2Table returns libvmaf's log2 lookup table: round(log2f(i) * 2048)
// for i in [32767, 65535] (integer_vif.c, log_generate). log2f is emulated by
// rounding the double result to float32, as glibc's log2f is correctly
// rounded.
func vifLog2Table() []uint16 {
	log2Once.Do(func() {
		// Two words of padding past the end: the vector kernels gather
		// 32 bits at a 16-bit entry.
		t := make([]uint16, 65536, 65538)
		for i := 32767; i < 65536; i++ {
			l := float32(math.Log2(float64(i)))
			t[i] = uint16(math.Round(float64(l * 2048)))
		}
		log2Table = t
	})
	return log2Table
}

// log2of32 is libvmaf's log2_32: log2(x)*2048 from the table's best 16 bits.
func log2of32(t []uint16, x uint32) int64 {
	k := 16 - bits.LeadingZeros32(x)
	return int64(t[x>>uint(k)]) + 2048*int64(k)
}

// log2of64 is libvmaf's log2_64; x is at least 2^17.
func log2of64(t []uint16, x uint64) int64 {
	k := 48 - bits.LeadingZeros64(x)
	return int64(t[x>>uint(k)]) + 2048*int64(k)
}

// mirror reflects an index into [0, n) without repeating the edge sample
// (…2 1 | 0 1 2 … n-2 n-1 | n-2 …), as VIF's padding does.
func mirror(i, n int) int {
	if i < 0 {
		return -i
	}
	if i >= n {
		return 2*n - i - 2
	}
	return i
}

// vifScaleScore holds the numerator and denominator of one VIF scale, in
// float32 as libvmaf keeps them.
type vifScaleScore struct {
	num, den float32
}

// vifState is the per-worker scratch of the VIF extractor.
type vifState struct {
	w, h int
	egl  float64
	log2 []uint16
	// Images of scales 1..3 (index 0 unused).
	ref, dis [4][]uint16
	// Vertically filtered row, padded by vifMaxPad on each side: mu packs
	// mu1 | mu2<<32; sub is the subsampling pass's row.
	mu, xx, yy, xy, sub []uint64
	// Vertical sums of the current row and the ring of row products.
	accP, accQ, accY, accX []uint64
	ring                   vifRing
	lastAcc                vifAcc // the last statistic's sums (VIFStatistic)
	// sig holds one row's local variances for the vector row kernels.
	sig vifSigmas
	acc vifAcc
	k   *kernels
	// v8 is the scratch of the 8-bit statistic (vif8.go).
	v8 *vif8Rows
	// lead, when not nil, is told after each row of the first scale the last
	// input row read so far: the passes that follow VIF read their rows then
	// (rowWalk).
	lead func(r int)
}

// vifSigmas are one row's sigma1², sigma2² and sigma12 (the local
// variances and covariance, Q16 as libvmaf's int32s).
type vifSigmas struct {
	s1, s2, s12 []int32
}

func newVIFState(w, h int, egl float64) *vifState {
	s := &vifState{w: w, h: h, egl: egl, log2: vifLog2Table()}
	sw, sh := w, h
	for sc := 1; sc < 4; sc++ {
		sw, sh = sw/2, sh/2
		s.ref[sc] = make([]uint16, sw*sh)
		s.dis[sc] = make([]uint16, sw*sh)
	}
	n := w + 2*vifMaxPad
	s.mu = make([]uint64, n)
	s.xx = make([]uint64, n)
	s.yy = make([]uint64, n)
	s.xy = make([]uint64, n)
	s.sub = make([]uint64, n)
	s.accP, s.accQ, s.accY, s.accX = make([]uint64, w), make([]uint64, w), make([]uint64, w), make([]uint64, w)
	s.sig = vifSigmas{s1: make([]int32, w), s2: make([]int32, w), s12: make([]int32, w)}
	s.k = kernelsFor(CPUGeneric)
	return s
}

// with sets the kernels of a CPU path.
func (s *vifState) with(k *kernels) *vifState {
	s.k = k
	return s
}

// compute returns the four VIF scale scores of a frame pair (integer_vif.c,
// extract). ref and dis are w x h luma planes of bit depth bpc.
func (s *vifState) compute(ref, dis []uint16, bpc int) [4]vifScaleScore {
	var out [4]vifScaleScore
	w, h := s.w, s.h
	r, d := ref, dis
	for scale := 0; scale < 4; scale++ {
		if scale > 0 {
			w, h = w/2, h/2
			r, d = s.ref[scale], s.dis[scale]
		}
		next := 0
		if scale < 3 {
			next = scale + 1
		}
		out[scale] = s.statisticSub(r, d, w, h, scale, bpc, next)
	}
	return out
}

// padRow mirrors the vifMaxPad-padded row buffer b around [pad, pad+w).
func padRow(b []uint64, w, half int) {
	for f := 1; f <= half; f++ {
		b[vifMaxPad-f] = b[vifMaxPad+f]
		b[vifMaxPad+w-1+f] = b[vifMaxPad+w-1-f]
	}
}

// subsample low-passes the scale-1 images with the filter of scale and keeps
// every other row and column (integer_vif.c, subsample_rd_8/16 and
// decimate_and_pad), writing s.ref[scale] and s.dis[scale]. Only the kept
// samples are computed. Reference and distorted share one uint64 as two
// 32-bit lanes: every sum is below 2^32 (the filter sums to 2^16 and samples
// are at most 16 bits), so lanes never carry into each other.
func (s *vifState) subsample(ref, dis []uint16, w, h, scale, bpc int) {
	for oi := range h / 2 {
		s.subsampleRow(ref, dis, w, h, scale, bpc, oi)
	}
}

// subsampleAfter makes the kept row of scale next (0: none) centred on
// input row i, if there is one, once the statistic has done row i.
func (s *vifState) subsampleAfter(ref, dis []uint16, w, h, bpc, next, i int) {
	if next > 0 && i%2 == 0 && i/2 < h/2 {
		s.subsampleRow(ref, dis, w, h, next, bpc, i/2)
	}
}

// subsampleRow is subsample's kept row oi. It reads input rows 2oi-fw/2 to
// 2oi+fw/2 (mirrored) and uses s.accP, s.sub and s.v8's window as scratch,
// which statistic's row loop leaves free between rows (statisticSub).
func (s *vifState) subsampleRow(ref, dis []uint16, w, h, scale, bpc, oi int) {
	filt := vifFilters[scale]
	fw := len(filt)
	half := fw / 2
	shiftV, roundV := uint(16), uint64(32768)
	if scale == 1 {
		shiftV, roundV = uint(bpc), uint64(1)<<uint(bpc-1)
	}
	ow := w / 2
	outR, outD := s.ref[scale], s.dis[scale]
	acc := s.accP[:w]
	tmp := s.sub[:w+2*vifMaxPad]
	vector := vif8Vector(s.k)
	if vector && s.v8 == nil {
		s.v8 = newVIF8Rows(s.w)
	}
	i := 2 * oi
	if vector {
		// Every tap at once, in the 16-bit lane kernels' window.
		v := s.v8
		for k := range fw {
			r := mirror(i-half+k, h) * w
			v.refRows[k], v.disRows[k] = ref[r:r+w], dis[r:r+w]
			v.rref[k], v.rdis[k] = &ref[r], &dis[r]
		}
		row := tmp[vifMaxPad : vifMaxPad+w]
		n := w &^ (vifLanesStep(s.k) - 1)
		if n > 0 {
			vifSubVert8(s.k, scale, &v.rref[0], &v.rdis[0], &row[0], uint32(roundV), uint64(shiftV), n)
		}
		vifSubVertCols(filt, v.refRows[:fw], v.disRows[:fw], row, n, roundV, shiftV)
	} else {
		c := i * w
		s.k.vifSubInit(filt[half], ref[c:c+w], dis[c:c+w], acc)
		for k := 0; k < half; k++ {
			a, b := mirror(i-half+k, h)*w, mirror(i+half-k, h)*w
			s.k.vifSubPair(filt[k], ref[a:a+w], ref[b:b+w], dis[a:a+w], dis[b:b+w], acc)
		}
		s.k.vifSubRound(acc, tmp[vifMaxPad:vifMaxPad+w], roundV, shiftV)
	}
	padRow(tmp, w, half)
	s.k.vifSubRow(filt, tmp, outR[oi*ow:oi*ow+ow], outD[oi*ow:oi*ow+ow])
}

// vifSubVertCols is subsample's vertical pass and rounding of columns [j0,
// len(dst)) of one kept row, every tap at once: refRows and disRows are
// the fw input rows of its window, and dst receives what vifSubInit,
// vifSubPair and vifSubRoundRow give, ref | dis<<32.
func vifSubVertCols(filt []uint64, refRows, disRows [][]uint16, dst []uint64, j0 int, round uint64, shift uint) {
	for j := j0; j < len(dst); j++ {
		var r, d uint64
		for k, f := range filt {
			r += f * uint64(refRows[k][j])
			d += f * uint64(disRows[k][j])
		}
		dst[j] = (r+round)>>shift | (d+round)>>shift<<32
	}
}

// vifSubRoundRow rounds subsample's packed vertical sums lane by lane.
func vifSubRoundRow(acc, dst []uint64, round uint64, shift uint) {
	dst = dst[:len(acc)]
	for j, v := range acc {
		dst[j] = (v&0xffffffff+round)>>shift | ((v>>32)+round)>>shift<<32
	}
}

// vifSubRow is subsample's horizontal pass of the kept columns [j0,
// len(rowR)) from the padded row tmp.
func vifSubRow(filt, tmp []uint64, rowR, rowD []uint16, j0 int) {
	fw := len(filt)
	half := fw / 2
	rowD = rowD[:len(rowR)]
	for oj := j0; oj < len(rowR); oj++ {
		b := vifMaxPad + 2*oj - half
		t := tmp[b : b+fw]
		v := filt[half] * t[half]
		for k := 0; k < half; k++ {
			v += filt[k] * (t[k] + t[fw-1-k])
		}
		rowR[oj] = uint16((v&0xffffffff + 32768) >> 16)
		rowD[oj] = uint16(((v >> 32) + 32768) >> 16)
	}
}

// vifSubInit starts subsample's vertical sums with the centre row.
func vifSubInit(f uint64, rc, dc []uint16, acc []uint64) {
	rc, dc = rc[:len(acc)], dc[:len(acc)]
	for j := range acc {
		acc[j] = f * (uint64(rc[j]) | uint64(dc[j])<<32)
	}
}

// vifSubPair adds a pair of symmetric rows to subsample's vertical sums.
func vifSubPair(f uint64, ra, rb, da, db []uint16, acc []uint64) {
	n := len(acc)
	ra, rb, da, db = ra[:n], rb[:n], da[:n], db[:n]
	for j := range acc {
		acc[j] += f * (uint64(ra[j]) + uint64(rb[j]) | (uint64(da[j])+uint64(db[j]))<<32)
	}
}

// statistic computes one scale's VIF numerator and denominator
// (integer_vif.c, vif_statistic_8/16): Gaussian-weighted local means,
// variances and covariance in fixed point, then the information ratio with
// the log2 table.
//
// The arithmetic is libvmaf's, reorganised for speed: each input row's
// products are computed once into a ring of rows, symmetric taps are folded,
// and the reference and distorted sums share one uint64 as two 32-bit lanes
// wherever libvmaf's own bounds keep each lane below 2^32 (the means always;
// the squares of 8-bit scale 0 too), so the lanes never carry into each
// other and the results are identical.
func (s *vifState) statistic(ref, dis []uint16, w, h, scale, bpc int) vifScaleScore {
	return s.statisticSub(ref, dis, w, h, scale, bpc, 0)
}

// statisticSub is statistic that also subsamples its images to scale next
// (1 to 3; 0 for none), writing s.ref[next] and s.dis[next] as subsample
// does: each kept row just after the statistic's row of the same centre,
// whose window of input rows holds the kept row's. The subsampling then reads
// rows the statistic brought into the core's caches, where a pass of its own
// read both planes again from memory: at 1080p 8 MB a frame, of the 50 or so
// a thread's frame moves (docs/benchmarks.md, "Threads and the serial step").
func (s *vifState) statisticSub(ref, dis []uint16, w, h, scale, bpc, next int) vifScaleScore {
	if (scale > 0 || bpc == 8) && vif8Vector(s.k) {
		return s.statistic8(ref, dis, w, h, scale, true, next, bpc)
	}
	filt := vifFilters[scale]
	fw := len(filt)
	half := fw / 2
	// Vertical-pass rounding: scale 0 keeps the input's bit depth.
	shiftMu, roundMu := uint(16), uint64(32768)
	shiftSq, roundSq := uint(16), uint64(32768)
	if scale == 0 {
		shiftMu, roundMu = uint(bpc), uint64(1)<<uint(bpc-1)
		shiftSq = uint(2 * (bpc - 8))
		roundSq = 0
		if bpc > 8 {
			roundSq = uint64(1) << (shiftSq - 1)
		}
	}
	packSq := scale == 0 && bpc == 8
	s.ensureRing(fw)
	rg := &s.ring
	t := s.log2
	egl := s.egl
	// The sums live in the state: a local would escape through the
	// kernel's function value and cost an allocation per scale.
	acc := &s.acc
	*acc = vifAcc{}
	mu, xx, yy, xy := s.mu[:w+2*vifMaxPad], s.xx[:w+2*vifMaxPad], s.yy[:w+2*vifMaxPad], s.xy[:w+2*vifMaxPad]
	accP, accQ, accY, accX := s.accP[:w], s.accQ[:w], s.accY[:w], s.accX[:w]
	filled := 0
	for i := 0; i < h; i++ {
		for ; filled <= min(h-1, i+half); filled++ {
			s.k.vifFill(rg, filled%fw, ref[filled*w:filled*w+w], dis[filled*w:filled*w+w], packSq)
		}
		// Vertical pass: centre tap, then folded pairs.
		c := i % fw
		f := filt[half]
		kn := s.k
		kn.vifTapInit(f, rg.p[c][:w], rg.q[c][:w], rg.y[c][:w], rg.x[c][:w], accP, accQ, accY, accX, packSq)
		for k := 0; k < half; k++ {
			a := mirror(i-half+k, h) % fw
			b := mirror(i+half-k, h) % fw
			kn.vifTapPair(filt[k], rg.p[a][:w], rg.p[b][:w], rg.q[a][:w], rg.q[b][:w], rg.y[a][:w], rg.y[b][:w],
				rg.x[a][:w], rg.x[b][:w], accP, accQ, accY, accX, packSq)
		}
		// Round the vertical sums into the padded rows.
		pd := vifMaxPad
		kn.vifRound(accP, accQ, accY, accX, mu[pd:pd+w], xx[pd:pd+w], yy[pd:pd+w], xy[pd:pd+w],
			vifRounding{roundMu, shiftMu, roundSq, shiftSq, packSq, bpc})
		padRow(mu, w, half)
		padRow(xx, w, half)
		padRow(yy, w, half)
		padRow(xy, w, half)
		kn.vifRow(filt, mu, xx, yy, xy, w, t, egl, acc, &s.sig)
		s.subsampleAfter(ref, dis, w, h, bpc, next, i)
		if scale == 0 && s.lead != nil {
			s.lead(min(i+half, h-1))
		}
	}
	s.lastAcc = *acc
	return acc.score()
}

// vifRounding is how statistic rounds its vertical sums.
type vifRounding struct {
	roundMu uint64
	shiftMu uint
	roundSq uint64
	shiftSq uint
	packSq  bool
	bpc     int
}

// vifRoundRow rounds the vertical sums into the rows the horizontal pass
// reads: mu packs the two rounded means, xx, yy and xy the rounded squares
// and product.
func vifRoundRow(accP, accQ, accY, accX, mu, xx, yy, xy []uint64, r vifRounding) {
	n := len(accP)
	accQ, accY, accX, mu, xx, yy, xy = accQ[:n], accY[:n], accX[:n], mu[:n], xx[:n], yy[:n], xy[:n]
	for j, m := range accP {
		mu[j] = (m&0xffffffff+r.roundMu)>>r.shiftMu | ((m>>32)+r.roundMu)>>r.shiftMu<<32
		if r.packSq {
			q := accQ[j]
			xx[j] = q & 0xffffffff
			yy[j] = q >> 32
		} else {
			xx[j] = (accQ[j] + r.roundSq) >> r.shiftSq
			yy[j] = (accY[j] + r.roundSq) >> r.shiftSq
		}
		xy[j] = (accX[j] + r.roundSq) >> r.shiftSq
	}
}

// vifAcc accumulates one scale's log and non-log terms.
type vifAcc struct {
	numLog, denLog, numNonLog, denNonLog int64
}

// vifRing holds the per-row products of the last fw input rows: p packs
// ref | dis<<32, q packs ref² | dis²<<32 (or holds ref² alone, with dis² in
// y, when the squares need more than 32 bits), x holds ref*dis.
type vifRing struct {
	p, q, y, x [][]uint64
}

func (r *vifRing) fill(slot int, ref, dis []uint16, packSq bool) {
	r.fillFrom(slot, ref, dis, packSq, 0)
}

// fillFrom is fill of the pixels from j0 on.
func (r *vifRing) fillFrom(slot int, ref, dis []uint16, packSq bool, j0 int) {
	p, q, y, x := r.p[slot][:len(ref)], r.q[slot][:len(ref)], r.y[slot][:len(ref)], r.x[slot][:len(ref)]
	dis = dis[:len(ref)]
	for j := j0; j < len(ref); j++ {
		a, b := uint64(ref[j]), uint64(dis[j])
		p[j] = a | b<<32
		x[j] = a * b
		if packSq {
			q[j] = a*a | (b*b)<<32
		} else {
			q[j] = a * a
			y[j] = b * b
		}
	}
}

func (s *vifState) ensureRing(fw int) {
	if len(s.ring.p) >= fw {
		return
	}
	mk := func() [][]uint64 {
		rows := make([][]uint64, fw)
		for i := range rows {
			rows[i] = make([]uint64, s.w)
		}
		return rows
	}
	s.ring = vifRing{p: mk(), q: mk(), y: mk(), x: mk()}
}

// vifTapInit starts the vertical sums with the centre tap.
func vifTapInit(f uint64, p, q, y, x, accP, accQ, accY, accX []uint64, packSq bool) {
	p, q, y, x = p[:len(accP)], q[:len(accP)], y[:len(accP)], x[:len(accP)]
	accQ, accY, accX = accQ[:len(accP)], accY[:len(accP)], accX[:len(accP)]
	for j := range accP {
		accP[j] = f * p[j]
		accQ[j] = f * q[j]
		accX[j] = f * x[j]
	}
	if !packSq {
		for j := range accY {
			accY[j] = f * y[j]
		}
	}
}

// vifTapPair adds a pair of symmetric taps to the vertical sums.
func vifTapPair(f uint64, pa, pb, qa, qb, ya, yb, xa, xb, accP, accQ, accY, accX []uint64, packSq bool) {
	n := len(accP)
	pa, pb, qa, qb, xa, xb = pa[:n], pb[:n], qa[:n], qb[:n], xa[:n], xb[:n]
	accQ, accX = accQ[:n], accX[:n]
	for j := range accP {
		accP[j] += f * (pa[j] + pb[j])
		accQ[j] += f * (qa[j] + qb[j])
		accX[j] += f * (xa[j] + xb[j])
	}
	if !packSq {
		ya, yb, accY = ya[:n], yb[:n], accY[:n]
		for j := range accY {
			accY[j] += f * (ya[j] + yb[j])
		}
	}
}

// vifRow runs the horizontal pass of one row and accumulates the pixel
// statistics. mu packs mu1 | mu2<<32; all rows are padded by vifMaxPad.
func vifRow(filt []uint64, mu, xx, yy, xy []uint64, w int, t []uint16, egl float64, acc *vifAcc) {
	for j := 0; j < w; j++ {
		pm, pxx, pyy, pxy := vifSums(filt, mu, xx, yy, xy, j)
		vifPixel(pm&0xffffffff, pm>>32, pxx, pyy, pxy, t, egl, acc)
	}
}

// vifSums is the horizontal filter of pixel j over the padded rows.
func vifSums(filt []uint64, mu, xx, yy, xy []uint64, j int) (pm, pxx, pyy, pxy uint64) {
	fw := len(filt)
	half := fw / 2
	b := vifMaxPad + j - half
	m, sxx, syy, sxy := mu[b:b+fw], xx[b:b+fw], yy[b:b+fw], xy[b:b+fw]
	f := filt[half]
	pm, pxx, pyy, pxy = f*m[half], f*sxx[half], f*syy[half], f*sxy[half]
	for k := 0; k < half; k++ {
		f, e := filt[k], fw-1-k
		pm += f * (m[k] + m[e])
		pxx += f * (sxx[k] + sxx[e])
		pyy += f * (syy[k] + syy[e])
		pxy += f * (sxy[k] + sxy[e])
	}
	return pm, pxx, pyy, pxy
}

// vifRow17 is vifRow for the 17-tap filter of scale 0, with fixed-size
// windows so the compiler drops the bounds checks.
func vifRow17(mu, xx, yy, xy []uint64, w int, t []uint16, egl float64, acc *vifAcc) {
	fl := (*[17]uint64)(vifFilters[0])
	for j := 0; j < w; j++ {
		b := vifMaxPad + j - 8
		m := (*[17]uint64)(mu[b : b+17])
		sxx := (*[17]uint64)(xx[b : b+17])
		syy := (*[17]uint64)(yy[b : b+17])
		sxy := (*[17]uint64)(xy[b : b+17])
		f := fl[8]
		pm, pxx, pyy, pxy := f*m[8], f*sxx[8], f*syy[8], f*sxy[8]
		for k := 0; k < 8; k++ {
			f, e := fl[k], 16-k
			pm += f * (m[k] + m[e])
			pxx += f * (sxx[k] + sxx[e])
			pyy += f * (syy[k] + syy[e])
			pxy += f * (sxy[k] + sxy[e])
		}
		vifPixel(pm&0xffffffff, pm>>32, pxx, pyy, pxy, t, egl, acc)
	}
}

// vifPixel turns one pixel's filtered sums into its contribution to the
// numerator and denominator.
func vifPixel(m1, m2, sxx, syy, sxy uint64, t []uint16, egl float64, acc *vifAcc) {
	sigma1Sq, sigma2Sq, sigma12 := vifSigma(m1, m2, sxx, syy, sxy)
	vifPixelSigma(sigma1Sq, sigma2Sq, sigma12, t, egl, acc)
}

// vifSigma turns one pixel's filtered sums (means, squares and product)
// into its variances and covariance.
func vifSigma(m1, m2, sxx, syy, sxy uint64) (sigma1Sq, sigma2Sq, sigma12 int32) {
	mu1Sq := uint32((m1*m1 + 0x80000000) >> 32)
	mu2Sq := uint32((m2*m2 + 0x80000000) >> 32)
	mu1mu2 := uint32((m1*m2 + 0x80000000) >> 32)
	sigma1Sq = int32(uint32((sxx+32768)>>16) - mu1Sq)
	sigma2Sq = max(int32(uint32((syy+32768)>>16)-mu2Sq), 0)
	sigma12 = int32(uint32((sxy+32768)>>16) - mu1mu2)
	return sigma1Sq, sigma2Sq, sigma12
}

// vifPixelSigma adds one pixel's variances to the numerator and
// denominator.
func vifPixelSigma(sigma1Sq, sigma2Sq, sigma12 int32, t []uint16, egl float64, acc *vifAcc) {
	if sigma1Sq >= vifSigmaNsq {
		acc.denLog += log2of32(t, uint32(vifSigmaNsq+sigma1Sq)) - 2048*17
		if sigma12 > 0 && sigma2Sq > 0 {
			acc.numLog += vifNumLog(t, sigma1Sq, sigma2Sq, sigma12, egl)
		}
	} else {
		acc.numNonLog += int64(sigma2Sq)
		acc.denNonLog++
	}
}

// vifNumLog is the log-domain numerator term of one pixel: log2 of
// (sv_sq + sigma_nsq + g^2 sigma1_sq) / (sv_sq + sigma_nsq), with the gain g
// limited to egl. The double arithmetic and truncations follow
// integer_vif.c exactly.
func vifNumLog(t []uint16, sigma1Sq, sigma2Sq, sigma12 int32, egl float64) int64 {
	const eps = 65536 * 1.0e-10
	g := float64(sigma12) / (float64(sigma1Sq) + eps)
	svSq := int32(float64(sigma2Sq) - float64(g*float64(sigma12)))
	svSq = max(svSq, 0)
	g = min(g, egl)
	numer1 := uint32(svSq + vifSigmaNsq)
	numer1Tmp := int64(float64(g*g)*float64(sigma1Sq)) + int64(numer1)
	return log2of64(t, uint64(numer1Tmp)) - log2of64(t, uint64(numer1))
}

// score returns the scale's VIF value as libvmaf reports it: a float32
// division widened to double.
func (v vifScaleScore) score() float64 { return float64(v.num / v.den) }
