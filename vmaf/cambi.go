package vmaf

import (
	"math"
	"unsafe"
)

// CAMBI (Contrast Aware Multiscale Banding Index) is libvmaf's no-reference
// banding detector (cambi.c; its options in cambi_options.go, the defaults
// those libvmaf 3.2.0 uses when the feature is asked for by name). It looks
// at the distorted luma only, converted to 10 bits (and scaled down to the
// encode's size): pixels inside flat areas (the spatial mask) whose
// neighbourhood holds a band one to four 10-bit codes brighter or darker,
// a step the eye can see at that luminance (the TVI threshold) and above the
// visibility luminance threshold, score by how much of the window the two
// levels fill. Scores are pooled over the worst 60% of pixels at five scales
// and weighted towards the fine ones.
//
// Everything up to the per-pixel scores is integer, ported exactly; the
// scores are float as libvmaf's, and pooled in the same order.

// libvmaf's CAMBI defaults (cambi.c).
const (
	cambiWindowSize     = 65     // DEFAULT_CAMBI_WINDOW_SIZE, ~1 degree at 4K
	cambiTopK           = 0.6    // DEFAULT_CAMBI_TOPK_POOLING
	cambiTVIThreshold   = 0.019  // DEFAULT_CAMBI_TVI, for BT.1886
	cambiMaxLogContrast = 2      // DEFAULT_CAMBI_MAX_LOG_CONTRAST
	cambiMaxVal         = 1000.0 // DEFAULT_CAMBI_MAX_VAL
	cambiMinWidthHeight = 216    // CAMBI_MIN_WIDTH_HEIGHT
	cambiMaskFilterSize = 7      // MASK_FILTER_SIZE
	cambiNumScales      = 5      // NUM_SCALES
	// cambiReciprocalLUTSize bounds window_size²: libvmaf 3.2.0 refuses
	// windows whose pixel count reaches its reciprocal table's size
	// (CAMBI_RECIPROCAL_LUT_SIZE).
	cambiReciprocalLUTSize = 4226
)

// cambiScaleWeights weight the scales' pooled scores (g_scale_weights).
var cambiScaleWeights = [cambiNumScales]float64{16, 8, 4, 2, 1}

// cambiMaxDiffs is the most steps CAMBI looks for (max_log_contrast 5).
const cambiMaxDiffs = 32

// cambiContrastWeights is the suprathreshold contrast response of diffs
// 1..32 (g_contrast_weights).
var cambiContrastWeights = [cambiMaxDiffs]int{1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8,
	8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}

// cambiWindow returns the window size for a w x h encode
// (adjust_window_size): ws (65 by default) scaled by (w+h)/(3840+2160),
// rounded down, halved (rounding up) with the high-resolution speed-up,
// made odd.
func cambiWindow(ws, w, h int, speedup bool) int {
	ws = (ws * (w + h) / 375) >> 4
	if speedup {
		ws = (ws + 1) >> 1
	}
	return ws | 1
}

// checkCAMBISize refuses the frames libvmaf's cambi refuses at init under
// the default options (see cambiOptions.check): both sides below 216, or a
// window too large for its reciprocal table (width plus height above about
// 6000).
func checkCAMBISize(w, h int) error {
	return defaultCAMBIOptions().check(w, h, 8)
}

// BT.1886 with libvmaf's constants (luminance_tools.c): gamma 2.4, white
// 300 cd/m², black 0.01 cd/m².
func cambiBT1886(v float64) float64 {
	const gamma, lw, lb = 2.4, 300.0, 0.01
	a := math.Pow(math.Pow(lw, 1.0/gamma)-math.Pow(lb, 1.0/gamma), gamma)
	b := math.Pow(lb, 1.0/gamma) / (math.Pow(lw, 1.0/gamma) - math.Pow(lb, 1.0/gamma))
	return a * math.Pow(max(v+b, 0), gamma)
}

// cambiPQ is SMPTE ST 2084 (luminance_tools.c, vmaf_luminance_pq_eotf), up
// to 10000 cd/m².
func cambiPQ(v float64) float64 {
	const m1, m2, c1, c2, c3 = 0.1593017578125, 78.84375, 0.8359375, 18.8515625, 18.6875
	num := math.Pow(v, 1.0/m2) - c1
	den := c2 - c3*math.Pow(v, 1.0/m2)
	return 10000 * math.Pow(max(num, 0)/den, 1.0/m1)
}

// cambiEOTFs are the EOTFs the eotf options name (vmaf_luminance_init_eotf).
var cambiEOTFs = map[string]func(float64) float64{"bt1886": cambiBT1886, "pq": cambiPQ}

// 10-bit limited range, where CAMBI computes its thresholds
// (vmaf_luminance_init_luma_range(10, LIMITED)).
const cambiFoot, cambiHead = 64, 940

// cambiLuminance is vmaf_luminance_get_luminance of a 10-bit sample.
func cambiLuminance(sample int, eotf func(float64) float64) float64 {
	c := min(max(sample, cambiFoot), cambiHead)
	return eotf(float64(c-cambiFoot) / float64(cambiHead-cambiFoot))
}

// cambiTVICondition reports whether a step of diff codes above sample is
// visible: its luminance change exceeds the TVI threshold (tvi_condition).
func cambiTVICondition(sample, diff int, tvi float64, eotf func(float64) float64) bool {
	mean := cambiLuminance(sample, eotf)
	return cambiLuminance(sample+diff, eotf)-mean > tvi*mean
}

// cambiTVIForDiff returns the largest 10-bit sample at which a step of diff
// codes is still visible (get_tvi_for_diff): the bisection of libvmaf,
// whose condition holds below the answer and fails above it.
func cambiTVIForDiff(diff int, tvi float64, eotf func(float64) float64) int {
	const tooSmall, correct, tooBig = 0, 1, 2
	hard := func(sample int) int {
		if !cambiTVICondition(sample, diff, tvi, eotf) {
			return tooBig
		}
		if cambiTVICondition(sample+1, diff, tvi, eotf) {
			return tooSmall
		}
		return correct
	}
	foot, head := cambiFoot, cambiHead-diff-1
	switch hard(foot) {
	case tooBig:
		return 0
	case correct:
		return foot
	}
	switch hard(head) {
	case tooSmall:
		return 1<<10 - 1
	case correct:
		return head
	}
	for {
		mid := foot + (head-foot)/2
		switch hard(mid) {
		case tooBig:
			head = mid
		case tooSmall:
			foot = mid
		default:
			return mid
		}
	}
}

// cambiVLTLuma is the smallest 10-bit sample whose luminance reaches the
// visibility threshold (get_vlt_luma), or 0 when the foot already does (the
// default threshold of 0 cd/m² among others). setup refuses thresholds above
// the EOTF's peak, where libvmaf's search would not end.
func cambiVLTLuma(threshold float64, eotf func(float64) float64) int {
	sample := cambiFoot
	for sample < cambiHead && cambiLuminance(sample, eotf) < threshold {
		sample++
	}
	if sample == cambiFoot {
		return 0
	}
	return sample
}

// cambiReciprocal is 1/n in float, libvmaf's reciprocal_lut.
var cambiReciprocal = func() []float32 {
	t := make([]float32, cambiReciprocalLUTSize)
	for i := 1; i < len(t); i++ {
		t[i] = 1 / float32(i)
	}
	return t
}()

// cambiState is one worker's scratch for CAMBI at one frame size.
type cambiState struct {
	k             *kernels
	inW, inH, bpc int // the input plane
	// w x h is where CAMBI works: the encode's size, at most the input's.
	w, h       int
	antiDither bool // the encode's depth is below 10 bits
	speedup    bool // halve the picture after the spatial mask
	window     int
	maskIndex  int
	// wait, when not nil, is called before the conversion reads an input
	// row, with the row (rowWalk).
	wait   func(r int)
	topk   float64
	maxVal float64
	// numDiffs steps of 1..numDiffs codes are looked for; tvi[d] is the
	// TVI limit of step d+1 (get_tvi_for_diff), offset by numDiffs as
	// libvmaf stores them; vlt is the visibility threshold's luma.
	numDiffs int
	tvi      [cambiMaxDiffs]int
	vlt      int
	// Histogram rows exist only for the values some c-value can read
	// (libvmaf's v_band): [bandBase, bandBase+bandSize).
	bandBase, bandSize int
	img                []uint16  // the 10-bit picture, compacted to each scale's width
	mask               []bool    // the spatial mask, likewise
	cvals              []float32 // per-pixel scores of one scale
	// band holds, per pixel of one scale, its histogram row
	// (numDiffs+value-bandBase) when it is masked and its value within the
	// band, else -1.
	band []int16
	// hist holds numDiffs zero rows, the bandSize rows of the band and
	// numDiffs zero rows again, w columns each, then cambiSlack words: the
	// zero rows stand for the values outside the band, which count 0.
	hist []uint16
	// diffs[r] has bit d set when a pixel of histogram row r looks for a
	// step of d+1 codes (its value within TVI limit d and the step
	// reaching the visibility threshold).
	diffs   []uint32
	none    []int16  // a row of -1: no pixel counts
	zd      []uint8  // zero-derivative rows, a ring of 8
	zero    []uint8  // a row of zeros
	colSum  []uint16 // mask: column sums over 7 rows, 3 zero columns each side
	modeBuf []uint16 // filter_mode's 3 rows
	// off, when set, computes the c-values (cambi_offload.go) into offOut;
	// offErr keeps its first failure, which fails the frame.
	off    CAMBIOffloader
	offOut [cambiNumScales][]float32
	offErr error
}

// newCAMBIState prepares CAMBI under o for w x h inputs of depth bpc, which
// o.check must have accepted (cambi.c, init).
func newCAMBIState(w, h, bpc int, o cambiOptions) *cambiState {
	c, _ := o.setup(w, h, bpc)
	s := &cambiState{k: cambiDefaultKernels(), inW: w, inH: h, bpc: bpc, w: c.encW, h: c.encH, antiDither: c.encBPC < 10,
		speedup: c.speedup, window: c.window, topk: c.topk, maxVal: o.maxVal}
	w, h = s.w, s.h
	s.numDiffs = 1 << o.maxLogContrast
	for d := range s.numDiffs {
		s.tvi[d] = cambiTVIForDiff(d+1, o.tviThreshold, c.eotf) + s.numDiffs
	}
	s.vlt = cambiVLTLuma(o.visLumThreshold, c.eotf)
	s.maskIndex = cambiMaskIndex(w, h)
	s.bandBase = max(s.vlt-3*s.numDiffs+1, 0)
	s.bandSize = s.tvi[s.numDiffs-1] + 1 - s.bandBase
	s.img = make([]uint16, w*h)
	s.mask = make([]bool, w*h)
	s.cvals = make([]float32, w*h)
	s.band = make([]int16, w*h)
	nd := s.numDiffs
	s.hist = make([]uint16, (s.bandSize+2*nd)*w+cambiSlack)
	s.diffs = make([]uint32, s.bandSize+2*nd)
	for r := nd; r < nd+s.bandSize; r++ {
		// value is the pixel's value offset by numDiffs, as libvmaf keeps
		// it and the TVI limits.
		value := r - nd + s.bandBase + nd
		for d := range nd {
			if value <= s.tvi[d] && value+d+1 > s.vlt {
				s.diffs[r] |= 1 << d
			}
		}
	}
	s.none = make([]int16, w)
	for j := range s.none {
		s.none[j] = -1
	}
	s.zd = make([]uint8, 8*w)
	s.zero = make([]uint8, w)
	s.colSum = make([]uint16, w+6)
	s.modeBuf = make([]uint16, 3*w)
	return s
}

// cambiDefaultKernels is the kernel set of the path Score runs when
// Options.CPU is left at CPUAuto (VMAFX_CPU's, else the best one): the
// pipeline's workers build their cambiState without naming a path; with
// sets one.
func cambiDefaultKernels() *kernels {
	c, err := resolveCPU(CPUAuto)
	if err != nil {
		c = CPUGeneric
	}
	return kernelsFor(c)
}

// with makes s run on kernel set k.
func (s *cambiState) with(k *kernels) *cambiState {
	s.k = k
	return s
}

// cambiMaskIndex is the threshold of the spatial mask (get_mask_index): a
// pixel is in a flat area when more than this many of the 7x7 pixels
// around it equal their right and lower neighbours. It grows slowly with
// the frame's area.
func cambiMaskIndex(w, h int) int {
	shifted := uint32(w>>6) * uint32(h>>6)
	ceilLog2 := 0
	for t := shifted - 1; shifted > 0 && t > 0; t >>= 1 {
		ceilLog2++
	}
	n := cambiMaskFilterSize
	return (n*n + 3*(ceilLog2-11) - 1) >> 1
}

// compute returns the cambi score of a distorted luma plane of depth bpc.
func (s *cambiState) compute(y []uint16) float64 {
	if s.off != nil {
		if score, ok := s.computeOffload(y); ok {
			return score
		}
	}
	return s.computeCPU(y)
}

// computeCPU is compute on the CPU alone.
func (s *cambiState) computeCPU(y []uint16) float64 {
	var scores [cambiNumScales]float64
	s.scales(y, func(scale int, c []float32) { scores[scale] = cambiPoolScan(c, s.topk, s.k.cambiScan) })
	return s.combineScales(scores)
}

// scales computes every scale's c-values of the plane y, passing each to
// done.
func (s *cambiState) scales(y []uint16, done func(scale int, c []float32)) {
	s.preprocess(y)
	s.spatialMask()
	w, h := s.w, s.h
	for scale := range cambiNumScales {
		// The speed-up halves the picture and mask once more, before the
		// first scale (cambi_score).
		if scale > 0 || s.speedup {
			nw, nh := (w+1)>>1, (h+1)>>1
			s.decimate(w, nw, nh)
			w, h = nw, nh
		}
		s.filterMode(w, h)
		s.cValues(w, h)
		done(scale, s.cvals[:w*h])
	}
}

// combineScales weights the scales' pooled scores into CAMBI's.
func (s *cambiState) combineScales(scores [cambiNumScales]float64) float64 {
	var score float64
	for i, v := range scores {
		score += v * cambiScaleWeights[i]
	}
	pad := s.window >> 1
	score /= float64((2*pad + 1) * (2*pad + 1))
	return min(score, s.maxVal)
}

// preprocess converts the plane to 10 bits and the encode's size
// (cambi_preprocessing): 8- and 9-bit samples are shifted up, 12-bit and
// deeper ones rounded down to 10; a smaller encode takes the nearest input
// sample (decimate_generic_*_and_convert_to_10b, in float as libvmaf steps
// through it). Encodes below 10 bits are then smoothed by the
// anti-dithering 2x2 mean.
func (s *cambiState) preprocess(y []uint16) {
	w, h, inW := s.w, s.h, s.inW
	d := s.img
	var shift uint
	var round uint16
	up := s.bpc < 10
	if up {
		shift = uint(10 - s.bpc)
	} else if s.bpc > 10 {
		shift = uint(s.bpc - 10)
		round = uint16(1) << (shift - 1)
	}
	conv := func(v uint16) uint16 {
		if up {
			return v << shift
		}
		return (v + round) >> shift
	}
	switch {
	case w == inW && h == s.inH && s.wait != nil:
		for i := range h {
			s.wait(i)
			s.k.cambiConv(y[i*w:(i+1)*w], d[i*w:(i+1)*w], s.bpc)
		}
	case w == inW && h == s.inH:
		s.k.cambiConv(y[:w*h], d[:w*h], s.bpc)
	default:
		ratioX, ratioY := float32(inW)/float32(w), float32(s.inH)/float32(h)
		startX := float32(float64(ratioX/2) - 0.5)
		fy := float32(float64(ratioY/2) - 0.5)
		for i := 0; i < h; i++ {
			r := min(int(float64(fy)+0.5), s.inH-1)
			if s.wait != nil {
				s.wait(r)
			}
			row := y[r*inW:]
			out := d[i*w : (i+1)*w]
			fx := startX
			for j := range out {
				out[j] = conv(row[min(int(float64(fx)+0.5), inW-1)])
				fx += ratioX
			}
			fy += ratioY
		}
	}
	if !s.antiDither {
		return
	}
	// anti_dithering_filter, in place: each sample becomes the mean of its
	// 2x2 block to the right and below, read before being overwritten.
	for i := 0; i < h-1; i++ {
		s.k.cambiAntiDither(d[i*w:(i+1)*w], d[(i+1)*w:(i+2)*w])
	}
	r := d[(h-1)*w : h*w]
	for j := 0; j < w-1; j++ {
		r[j] = uint16((uint32(r[j]) + uint32(r[j+1])) >> 1)
	}
}

// spatialMask marks the pixels in flat areas (get_spatial_mask): a pixel
// has zero derivative when it equals its right and lower neighbours (the
// last column and row count as equal), and is masked when more than
// maskIndex pixels of the 7x7 square around it have zero derivative
// (outside the frame counts as not). libvmaf sums with a rolling 2D prefix
// sum; column sums over a ring of rows give the same integers.
func (s *cambiState) spatialMask() {
	w, h, k := s.w, s.h, s.k
	const pad = cambiMaskFilterSize / 2
	const ring = 8 // rows i-pad-1 .. i+pad
	img := s.img
	cs := s.colSum // cs[c+pad] sums column c; pad zero columns each side
	clear(cs)
	zdRow := func(r int) []uint8 {
		z := s.zd[(r%ring)*w : (r%ring+1)*w]
		cur, next := img[r*w:(r+1)*w], img[r*w:(r+1)*w]
		if r < h-1 {
			next = img[(r+1)*w : (r+2)*w] // the last row compares with itself
		}
		k.cambiZeroDeriv(cur, next, z)
		return z
	}
	for r := 0; r < pad && r < h; r++ {
		k.cambiColSum(cs[pad:pad+w], zdRow(r), s.zero)
	}
	// The mask's threshold, within int16 (the sums reach 49 at most).
	threshold := min(max(s.maskIndex, -1), 1<<15-1)
	for i := 0; i < h; i++ {
		zin, zout := s.zero, s.zero
		if r := i + pad; r < h {
			zin = zdRow(r)
		}
		if r := i - pad - 1; r >= 0 {
			zout = s.zd[(r%ring)*w : (r%ring+1)*w]
		}
		k.cambiColSum(cs[pad:pad+w], zin, zout)
		k.cambiMaskRow(cs, s.mask[i*w:(i+1)*w], threshold)
	}
}

// decimateInPlace keeps every other sample of every other row of a plane
// with rows of w samples, packing the nw x nh result at the front (the
// decimate of cambi.c, whose output keeps the input's stride). Reads run
// ahead of writes, so in place is safe.
func decimateInPlace[T any](p []T, w, nw, nh int) {
	for i := 0; i < nh; i++ {
		decimateRow(p[2*i*w:2*i*w+w], p[i*nw:(i+1)*nw])
	}
}

// decimateRow sets dst[j] = src[2j], front to back, so that dst may start
// where src does or before it (as decimateInPlace's rows do).
func decimateRow[T any](src, dst []T) {
	for j := range dst {
		dst[j] = src[2*j]
	}
}

// decimate is decimateInPlace of the picture and the mask with the path's
// row kernels.
func (s *cambiState) decimate(w, nw, nh int) {
	for i := 0; i < nh; i++ {
		src, dst := 2*i*w, i*nw
		s.k.cambiDecimate16(s.img[src:src+w], s.img[dst:dst+nw])
		s.k.cambiDecimate8(s.mask[src:src+w], s.mask[dst:dst+nw])
	}
}

// filterMode applies libvmaf's 3x3 mode filter in place (filter_mode): a
// horizontal mode3 of each row (edge columns kept), then a vertical mode3
// of three such rows; the first and last rows stay as they are.
func (s *cambiState) filterMode(w, h int) {
	d, buf, k := s.img, s.modeBuf, s.k
	line := 0
	for i := 0; i < h; i++ {
		row := d[i*w : (i+1)*w]
		b := buf[line*w : (line+1)*w]
		b[0] = row[0]
		if w > 2 {
			k.cambiMode3(row[:w-2], row[1:w-1], row[2:], b[1:w-1])
		}
		b[w-1] = row[w-1]
		if i > 1 {
			k.cambiMode3(buf[:w], buf[w:2*w], buf[2*w:3*w], d[(i-1)*w:i*w])
		}
		line++
		if line == 3 {
			line = 0
		}
	}
}

// cValues computes every masked pixel's c-value at one scale
// (calculate_c_values). hist[v][j] counts the masked pixels of value
// bandBase+v in the window around column j of the current row (window
// rows and columns clipped to the frame); it slides down one row at a
// time. A pixel's c-value is, over the diffs d whose step is visible at its
// value, the largest weight(d) * p0 * p / (p0 + p), where p0 counts its own
// value in the window and p the more frequent of value+d and value-d.
func (s *cambiState) cValues(w, h int) {
	pad := s.window >> 1
	k := s.k
	band := s.band[:w*h]
	k.cambiBand(s.img[:w*h], s.mask[:w*h], band, s.bandBase, s.bandSize, s.numDiffs)
	hist := s.hist[:(s.bandSize+2*s.numDiffs)*w+cambiSlack]
	clear(hist)
	none := s.none[:w]
	for r := 0; r < pad && r < h; r++ {
		k.cambiHistRow(hist, w, pad, none, band[r*w:(r+1)*w])
	}
	for i := 0; i < h; i++ {
		out, in := none, none
		if r := i + pad; r < h {
			in = band[r*w : (r+1)*w]
		}
		if r := i - pad - 1; r >= 0 {
			out = band[r*w : (r+1)*w]
		}
		k.cambiHistRow(hist, w, pad, out, in)
		k.cambiCValuesRow(hist, w, band[i*w:(i+1)*w], s.diffs, s.cvals[i*w:(i+1)*w])
	}
}

// cambiPool averages the topk share of largest c-values (spatial_pooling):
// libvmaf's quick_select moves them to the front, and their sum in double
// in that order is divided by their count. The same selection and order
// keep the result libvmaf's to the last bit.
//
// Where at least the rest are zeros (flat pictures, most of a frame
// without banding), the largest values are every positive one and some
// zeros; when their sum cannot round in any order (cambiScan), it is the
// sum of the whole plane, and the selection is skipped.
func cambiPool(c []float32, topk float64) float64 {
	return cambiPoolScan(c, topk, cambiScan)
}

// cambiPoolScan is cambiPool with a path's cambiScan.
func cambiPoolScan(c []float32, topk float64, scan func([]float32) (float64, int, bool)) float64 {
	n := len(c)
	k := min(max(int(topk*float64(n)), 1), n)
	if sum, nonzero, exact := scan(c); exact && nonzero <= k {
		return sum / float64(k)
	}
	quickSelectDesc(c, k)
	return cambiSum(c[:k]) / float64(k)
}

// cambiSum is the sum in double of c in order, as spatial_pooling adds the
// selected c-values: cambiScan's where it is exact, else the adds in order.
func cambiSum(c []float32) float64 {
	if sum, _, exact := cambiScan(c); exact {
		return sum
	}
	var sum float64
	for _, v := range c {
		sum += float64(v)
	}
	return sum
}

// cambiScan sums c in double with four sums side by side and counts the
// values that are not zero; exact says that the sum is what the adds give
// in any order (cambiExact).
func cambiScan(c []float32) (sum float64, nonzero int, exact bool) {
	var s0, s1, s2, s3 float64
	// The smallest bits of a positive value (bits-1 wraps 0 to the top),
	// the largest bits (a sign bit makes them large) and the count of
	// values whose bits are not 0 ((b | -b) >> 31).
	minNZ, maxB, nz := ^uint32(0), uint32(0), uint32(0)
	i := 0
	for ; i+4 <= len(c); i += 4 {
		v := c[i : i+4 : i+4]
		b0, b1, b2, b3 := math.Float32bits(v[0]), math.Float32bits(v[1]), math.Float32bits(v[2]), math.Float32bits(v[3])
		minNZ = min(minNZ, b0-1, b1-1, b2-1, b3-1)
		maxB = max(maxB, b0, b1, b2, b3)
		nz += (b0|-b0)>>31 + (b1|-b1)>>31 + (b2|-b2)>>31 + (b3|-b3)>>31
		s0 += float64(v[0])
		s1 += float64(v[1])
		s2 += float64(v[2])
		s3 += float64(v[3])
	}
	for ; i < len(c); i++ {
		b := math.Float32bits(c[i])
		minNZ = min(minNZ, b-1)
		maxB = max(maxB, b)
		nz += (b | -b) >> 31
		s0 += float64(c[i])
	}
	sum = (s0 + s1) + (s2 + s3)
	return sum, int(nz), cambiExact(sum, minNZ+1, maxB)
}

// cambiExact says whether a sum of float32 values, sum as added in any
// order, is what the adds give in every order, from the smallest bits of a
// positive value (minPos) and the largest bits (maxB) among them. Adds in
// order wait on one another; side by side they do not, and where no
// partial sum can round the double is the same: when no value is negative
// (or -0, infinite or NaN), each is a multiple of the smallest positive
// one's unit in the last place u (larger floats have coarser units), so
// every partial sum is a multiple of u no larger than the total, exact in
// a double while the total stays below 2^53 u (checked against 2^52 u,
// far more than any order's own rounding).
func cambiExact(sum float64, minPos, maxB uint32) bool {
	if maxB == 0 {
		return sum == 0
	}
	if maxB >= 0x7f800000 {
		return false
	}
	// The unit in the last place of the smallest positive value: 2^(e-150)
	// for a normal float32 of biased exponent e, 2^-149 for a subnormal.
	e := int(minPos >> 23)
	ulp := math.Ldexp(1, max(e, 1)-150)
	return sum <= math.Ldexp(ulp, 52)
}

// quickSelectDesc is cambi.c's quick_select: Hoare partitioning around
// arr[k] until the k largest values come first.
//
// The scans index without bounds checks: each stops at the latest at an
// element that is not beyond the pivot on its side (the pivot itself
// first, then the element the last swap moved there), so i and j stay
// within [left, right] for any values, NaN included, as in cambi.c.
func quickSelectDesc(arr []float32, k int) {
	n := len(arr)
	if n == k {
		return
	}
	_ = arr[k]
	base := unsafe.Pointer(unsafe.SliceData(arr))
	at := func(i int) *float32 { return (*float32)(unsafe.Add(base, uintptr(i)*4)) }
	left, right := 0, n-1
	for left < right {
		pivot := *at(k)
		i, j := left, right
		for {
			for *at(i) > pivot {
				i++
			}
			for *at(j) < pivot {
				j--
			}
			if i <= j {
				pi, pj := at(i), at(j)
				*pi, *pj = *pj, *pi
				i++
				j--
			}
			if i > j {
				break
			}
		}
		if j < k {
			left = i
		}
		if k < i {
			right = j
		}
	}
}
