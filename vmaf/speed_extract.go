package vmaf

import (
	"fmt"
	"math"
)

// speedScores are one frame pair's SpEED chroma metrics, as libvmaf writes
// them: each capped at speed_max_val (MIN in extract_chroma).
type speedScores struct {
	U, V, UV float64
}

// speedResult is est_params' output for one picture: each block's
// entropy and variance (SpeedResultBuffers).
type speedResult struct {
	ent, vari []float32
}

// speedState is one worker's SpEED chroma state for one frame geometry and
// option set (SpeedChromaState, SpeedState): the dimensions, the filters and
// every buffer, allocated once; compute allocates nothing.
type speedState struct {
	o      speedOptions
	w, h   int // frame size
	cw, ch int // the chroma plane size SpEED uses (speedPlaneSize)
	sw, sh int // after speed_prescale
	dw, dh int // decimated by 16
	tw, th int // dw, dh truncated to whole blocks
	bw, nb int // blocks across, blocks in all
	scale  bool
	sigma  float32 // speed_sigma_nn as est_params gets it

	aa, lp []float32 // anti-alias filter (scale 1's size) and local-mean filter (scale 4)
	plane  []float32 // the converted chroma plane, when it is rescaled
	row    []float32 // one row of the rescaled plane
	vrow   []float32 // one row of the anti-alias filter's vertical pass
	img    []float32 // dw x dh: decimated, then mean-subtracted
	blur   []float32 // dw x dh: img under the local-mean filter
	tmp    []float32 // dw: the local-mean filter's vertical pass

	cov          [speedN * speedN]float32
	means, eig   [speedN]float32
	indep, sol   []float32 // speedN x nb
	rect         []float32 // speedN x nb: Q^T Y
	la           speedLinalg
	conv         speedConv
	refRes, disR speedResult
}

// newSpeedState returns a state for w x h frames in pf under o, running
// cpu's kernels (CPUAuto: BestCPU's). It refuses what checkSpeedSize
// refuses.
func newSpeedState(w, h int, pf PixelFormat, o speedOptions, cpu CPU) (*speedState, error) {
	if err := checkSpeedSize(w, h, pf, o); err != nil {
		return nil, err
	}
	cw, ch, _ := speedPlaneSize(w, h, pf)
	s := &speedState{o: o, w: w, h: h, cw: cw, ch: ch, sigma: float32(o.sigmaNN)}
	s.la.axpy = speedAxpyFor(cpu)
	s.conv = speedConvFor(cpu)
	// speed_init_dimensions
	s.sw, s.sh = speedScaled(cw, o.prescale), speedScaled(ch, o.prescale)
	s.scale = o.prescale != 1 && (s.sw != cw || s.sh != ch)
	if !s.scale { // ALMOST_EQUAL(prescale, 1), or a rescale to the same size (a copy)
		s.sw, s.sh = cw, ch
	}
	s.dw, s.dh = s.sw>>speedScales, s.sh>>speedScales
	s.tw, s.th = s.dw/speedBlock*speedBlock, s.dh/speedBlock*speedBlock
	s.bw = s.tw / speedBlock
	s.nb = s.bw * (s.th / speedBlock)

	// filter_and_downscale's filters (vif_tools.c).
	ks := float32(o.kernelscale)
	aw := speedFilterSize(1, ks)
	s.aa = speedGaussian(aw, float32(math.Sqrt(speedScales)*float64(aw)/5.0))
	lw := speedFilterSize(speedScales, ks)
	s.lp = speedGaussian(lw, float32(lw)/5.0)

	if s.scale {
		s.plane = make([]float32, cw*ch)
	}
	s.row = make([]float32, s.sw)
	s.vrow = make([]float32, s.sw)
	s.img = make([]float32, s.dw*s.dh)
	s.blur = make([]float32, s.dw*s.dh)
	s.tmp = make([]float32, s.dw)
	s.indep = make([]float32, speedN*s.nb)
	s.sol = make([]float32, speedN*s.nb)
	s.rect = make([]float32, speedN*s.nb)
	for _, r := range []*speedResult{&s.refRes, &s.disR} {
		r.ent = make([]float32, s.nb)
		r.vari = make([]float32, s.nb)
	}
	return s, nil
}

// speedFilterSize is vif_get_filter_size: 2^(4-scale)+1 taps times the
// kernel scale (in float), rounded up to odd, at least 3.
func speedFilterSize(scale int, ks float32) int {
	n := (1 << (4 - scale)) + 1
	c := int(math.Ceil(float64(float32(n) * ks)))
	if c%2 == 0 {
		c++
	}
	return max(c, 3)
}

// speedGaussian is get_1d_gaussian_kernel: a normalised Gaussian of size
// taps, each tap get_gaussian_pdf's float quotient of a double exp and a
// double normaliser, the sum in float.
func speedGaussian(size int, stdev float32) []float32 {
	out := make([]float32, size)
	sd := float64(stdev)
	den := float32(1 / (sd * math.Sqrt(2*math.Pi)))
	var sum float32
	k := (size - 1) / 2
	for i := range out {
		x := float64(float32(i - k))
		num := float32(math.Exp(-0.5 * x / sd * x / sd))
		out[i] = num / den
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// speedMirror is vif_filter1d_s's boundary: reflection without repeating
// the edge sample.
func speedMirror(i, n int) int {
	if i < 0 {
		return -i
	}
	if i >= n {
		return 2*n - i - 2
	}
	return i
}

// compute returns the SpEED chroma metrics of one frame pair
// (extract_chroma): U, then V, each plane of the reference then of the
// distorted frame. Both frames must be the state's size with their chroma
// planes read (Frame.Chroma); it uses nothing but this pair.
func (s *speedState) compute(ref, dis *Frame) (speedScores, error) {
	if err := s.check(ref, dis); err != nil {
		return speedScores{}, err
	}
	u, errU := s.channel(ref.U, ref.ChromaWidth, ref.BitDepth, dis.U, dis.ChromaWidth, dis.BitDepth)
	v, errV := s.channel(ref.V, ref.ChromaWidth, ref.BitDepth, dis.V, dis.ChromaWidth, dis.BitDepth)
	return s.combine(u, v, errU, errV), nil
}

// check refuses a frame pair the state cannot score: frames of another
// size, chroma planes missing or too small.
func (s *speedState) check(ref, dis *Frame) error {
	for _, f := range []*Frame{ref, dis} {
		if f.Width != s.w || f.Height != s.h {
			return fmt.Errorf("%w: SpEED state for %dx%d got a %dx%d frame", ErrSizeMismatch, s.w, s.h, f.Width, f.Height)
		}
		n := f.ChromaWidth * f.ChromaHeight
		if f.ChromaWidth < s.cw || f.ChromaHeight < s.ch || len(f.U) < n || len(f.V) < n {
			return fmt.Errorf("%w: SpEED chroma needs %dx%d chroma planes, got %dx%d with %d and %d samples",
				ErrNoChroma, s.cw, s.ch, f.ChromaWidth, f.ChromaHeight, len(f.U), len(f.V))
		}
	}
	return nil
}

// combine makes the metrics from the two channels' scores and whether
// each had a singular covariance matrix.
func (s *speedState) combine(u, v float32, errU, errV bool) speedScores {
	// A channel whose covariance could not be inverted (a flat plane, say)
	// takes the other channel's score in uv.
	var uv float32
	switch {
	case errU && !errV:
		uv = v
	case errV && !errU:
		uv = u
	default:
		uv = float32(float64(u+v) / 2.0)
	}
	return speedScores{U: s.capped(u), V: s.capped(v), UV: s.capped(uv)}
}

// capped is MIN(score, speed_max_val) in double; a NaN score gives the cap,
// as the macro does.
func (s *speedState) capped(x float32) float64 {
	if float64(x) < s.o.maxVal {
		return float64(x)
	}
	return s.o.maxVal
}

// channel is extract_channel and speed_extract_score for one chroma plane
// of each frame: the score, and whether either picture's covariance matrix
// was singular. Where only one was, the score is 0.
func (s *speedState) channel(ref []uint16, refStride, refBPC int, dis []uint16, disStride, disBPC int) (float32, bool) {
	s.prepare(ref, refStride, refBPC)
	okRef := s.estParams(&s.refRes)
	s.prepare(dis, disStride, disBPC)
	okDis := s.estParams(&s.disR)
	return s.channelScore(okRef, okDis)
}

// channelScore is the channel's score once est_params has run on both
// pictures (s.refRes, s.disR), okRef and okDis saying whether each
// picture's covariance matrix was regular.
func (s *speedState) channelScore(okRef, okDis bool) (float32, bool) {
	if okRef != okDis {
		return 0, true
	}
	return s.score(), !okRef
}

// prepare is picture_copy followed by filter_and_downscale: s.img becomes
// the plane (scaled to the 8-bit range, minus 128, optionally rescaled)
// blurred by the anti-alias filter and decimated by 16, minus its own blur
// by the local-mean filter. libvmaf filters the whole plane and then keeps
// every 16th sample; only the rows and columns kept are computed here, each
// with the same operations.
func (s *speedState) prepare(p []uint16, stride, bpc int) {
	scaler := float32(int(1) << uint(bpc-8))
	if s.scale {
		for i := range s.ch {
			s.conv(p[i*stride:i*stride+s.cw], s.plane[i*s.cw:(i+1)*s.cw], scaler)
		}
	}
	fw := len(s.aa)
	half := fw / 2
	for r := range s.dh {
		i := r << speedScales
		clear(s.vrow)
		for fi, f := range s.aa {
			s.sourceRow(speedMirror(i-half+fi, s.sh), p, stride, scaler)
			s.la.axpy(s.vrow, s.row, f)
		}
		out := s.img[r*s.dw : (r+1)*s.dw]
		for c := range out {
			j := c << speedScales
			var acc float32
			for fj, f := range s.aa {
				acc += float32(f * s.vrow[speedMirror(j-half+fj, s.sw)])
			}
			out[c] = acc
		}
	}
	// The local-mean filter on the decimated image, and its subtraction.
	w, h := s.dw, s.dh
	half = len(s.lp) / 2
	for i := range h {
		for j := range w {
			var acc float32
			for fi, f := range s.lp {
				acc += float32(f * s.img[speedMirror(i-half+fi, h)*w+j])
			}
			s.tmp[j] = acc
		}
		for j := range w {
			var acc float32
			for fj, f := range s.lp {
				acc += float32(f * s.tmp[speedMirror(j-half+fj, w)])
			}
			s.blur[i*w+j] = acc
		}
	}
	for i, b := range s.blur {
		s.img[i] -= b
	}
}

// sourceRow fills s.row with row y of the plane as filter_and_downscale
// filters it: converted (picture_copy), or rescaled (vif_scale_frame_s).
func (s *speedState) sourceRow(y int, p []uint16, stride int, scaler float32) {
	if !s.scale {
		s.conv(p[y*stride:y*stride+s.cw], s.row[:s.cw], scaler)
		return
	}
	speedScaleRow(s.o.prescaleMethod, s.plane, s.cw, s.ch, s.row, s.sw, s.sh, y)
}

// estParams is est_params on s.img: the Gaussian scale mixture's entropy
// and variance per 5x5 block into out. It reports false where the
// covariance matrix is singular (an eigenvalue below EIGENVALUE_EPS, or a
// QR pivot): the variances are then 0.
func (s *speedState) estParams(out *speedResult) bool {
	s.covariance()
	return s.estFromCov(out)
}

// covariance is est_params' step 1 on s.img, into s.cov.
func (s *speedState) covariance() { s.covSums(s.setCov) }

// covSums computes the means of step 1 into s.means and passes each
// covariance element's double sum, (x, y) with y <= x, to set.
func (s *speedState) covSums(set func(x, y int, sum float64)) {
	const n = speedN
	img, stride := s.img, s.dw
	subW, subH := s.covSize()
	cnt := subW * subH

	// Step 1: the covariance of the 25 positions in a block, each over the
	// submatrix of the truncated image starting at that position
	// (compute_covariance_matrix; means in float, sums in double). Each
	// mean and each double sum is a chain of additions in libvmaf's order,
	// which the result depends on; the loops below advance several chains
	// together, each still in that order, so that their additions overlap
	// instead of each waiting on the one before.
	for r0 := range speedBlock {
		var s0, s1, s2, s3, s4 float32 // the means of positions (r0, 0..4)
		for i := range subH {
			row := img[(r0+i)*stride : (r0+i)*stride+subW+speedBlock-1]
			for j := range subW {
				r := row[j : j+speedBlock : j+speedBlock]
				s0 += r[0]
				s1 += r[1]
				s2 += r[2]
				s3 += r[3]
				s4 += r[4]
			}
		}
		for c, sum := range [speedBlock]float32{s0, s1, s2, s3, s4} {
			s.means[r0*speedBlock+c] = sum / float32(cnt)
		}
	}
	off := func(p int) int { return p/speedBlock*stride + p%speedBlock }
	for x := range n {
		ox, mx := off(x), float64(s.means[x])
		y := 0
		for ; y+4 <= x+1; y += 4 {
			var oy [4]int
			var my [4]float64
			for k := range 4 {
				oy[k], my[k] = off(y+k), float64(s.means[y+k])
			}
			sums := speedCov4Go(img, ox, oy, stride, subW, subH, mx, my)
			for k, sum := range sums {
				set(x, y+k, sum)
			}
		}
		for ; y <= x; y++ {
			set(x, y, speedCovGo(img[ox:], img[off(y):], stride, subW, subH, mx, float64(s.means[y])))
		}
	}
}

// speedCov4Go is speedCovGo of image position ox with four others, oy, at
// once: four independent chains of additions, each in speedCovGo's order.
// The explicit conversions keep each product rounded before its addition,
// as in libvmaf's C, so that no compiler fuses them.
func speedCov4Go(img []float32, ox int, oy [4]int, stride, w, h int, mx float64, my [4]float64) [4]float64 {
	var s0, s1, s2, s3 float64
	for i := range h {
		b := i * stride
		rx := img[ox+b : ox+b+w]
		r0, r1 := img[oy[0]+b:oy[0]+b+w], img[oy[1]+b:oy[1]+b+w]
		r2, r3 := img[oy[2]+b:oy[2]+b+w], img[oy[3]+b:oy[3]+b+w]
		for j, vx := range rx {
			dx := float64(vx) - mx
			s0 += float64(dx * (float64(r0[j]) - my[0]))
			s1 += float64(dx * (float64(r1[j]) - my[1]))
			s2 += float64(dx * (float64(r2[j]) - my[2]))
			s3 += float64(dx * (float64(r3[j]) - my[3]))
		}
	}
	return [4]float64{s0, s1, s2, s3}
}

// covSize is the size of the submatrices the covariance runs over.
func (s *speedState) covSize() (subW, subH int) { return s.tw - speedBlock + 1, s.th - speedBlock + 1 }

// setCov sets elements (x, y) and (y, x) of the covariance matrix from
// their double sum over the submatrices.
func (s *speedState) setCov(x, y int, sum float64) {
	subW, subH := s.covSize()
	c := float32(sum / float64(subW*subH))
	s.cov[x*speedN+y], s.cov[y*speedN+x] = c, c
}

// estFromCov is est_params from step 2 on, with s.cov and s.img set.
func (s *speedState) estFromCov(out *speedResult) bool {
	const n = speedN
	img, stride := s.img, s.dw

	// Step 2: its eigenvalues.
	s.la.eigenvalues(s.cov[:], s.eig[:])

	// Step 3: Y, row p holding every block's pixel at position p
	// (compute_independent_term).
	nb, bw := s.nb, s.bw
	for p := range n {
		r0, c0 := p/speedBlock, p%speedBlock
		dst := s.indep[p*nb : (p+1)*nb]
		for b := range dst {
			dst[b] = img[(b/bw*speedBlock+r0)*stride+b%bw*speedBlock+c0]
		}
	}

	// Step 4: K X = Y, unless K is singular.
	ok := true
	for _, e := range s.eig {
		if float64(e) < speedEigenEps {
			ok = false
			break
		}
	}
	if ok {
		ok = s.la.solve(s.cov[:], s.indep, s.sol, s.rect, nb)
	}
	if !ok {
		clear(s.sol)
	}

	// Steps 5 and 6: S = the column sums of X * Y / 25.
	sol := s.sol
	for i, y := range s.indep {
		sol[i] = float32(sol[i]*y) / speedN
	}
	s0 := sol[:nb]
	for p := 1; p < n; p++ {
		for b, v := range sol[p*nb : (p+1)*nb] {
			s0[b] += v
		}
	}

	// Steps 8 and 9: the entropies, one eigenvalue at a time
	// (update_entropy: log2 in double, the sum rounded to float each time).
	ent := out.ent
	clear(ent)
	for _, l := range s.eig {
		if l < 0 {
			l = 0
		}
		for b, v := range s0 {
			ent[b] = float32(float64(ent[b]) + (math.Log2(float64(float32(l*v)+s.sigma)) + speedLog2TwoPiE))
		}
	}
	copy(out.vari, s0)
	return ok
}

// speedCovGo is compute_cov_kernel_scalar: the double sum of the products
// of two equally sized submatrices' deviations from their means, row by row.
func speedCovGo(x, y []float32, stride, w, h int, mx, my float64) float64 {
	var sum float64
	for i := range h {
		rx, ry := x[i*stride:i*stride+w], y[i*stride:i*stride+w]
		for j, vx := range rx {
			sum += float64((float64(vx) - mx) * (float64(ry[j]) - my))
		}
	}
	return sum
}

// score is get_speed_score over s.refRes and s.disR: the mean over the
// blocks of |H_ref * log2(1 + w_ref) - H_dis * log2(1 + w_dis)|, the
// weights chosen by speed_weight_var_mode, blocks whose entropies are both
// below the noise floor's counting 0.
func (s *speedState) score() float32 {
	nnf := float32(s.o.nnFloor)
	base := float32(speedN * (math.Log2(float64((1+nnf)*s.sigma)) + speedLog2TwoPiE))
	lg := func(x float64) float64 { return math.Log2(x) }
	var score float32
	for i := range s.nb {
		re, de := s.refRes.ent[i], s.disR.ent[i]
		if re < base && de < base {
			continue
		}
		rv, dv := s.refRes.vari[i], s.disR.vari[i]
		var wr, wd float64 // the arguments of log2
		switch s.o.weightVarMode {
		case 0:
			wr, wd = float64(1+rv), float64(1+dv)
		case 1:
			wr, wd = float64(1+rv), float64(1+rv)
		case 2:
			wr, wd = float64(1+dv), float64(1+dv)
		case 3:
			m := 1 + float64(rv+dv)/2.0
			wr, wd = m, m
		case 4:
			wr, wd = float64(1+rv), 1+float64(rv+dv)/2.0
		case 5:
			wr, wd = float64(1+rv), 1+(float64(0.75*float64(rv))+float64(0.25*float64(dv)))
		case 6:
			wr, wd = float64(1+rv), 1+(float64(0.25*float64(rv))+float64(0.75*float64(dv)))
		}
		sr := float32(float64(re) * lg(wr))
		sd := float32(float64(de) * lg(wd))
		score += speedAbs(sr - sd)
	}
	return score / float32(s.nb)
}
