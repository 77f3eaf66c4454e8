package vmaf

import (
	"fmt"
	"math"
)

// CAMBI (Contrast Aware Multiscale Banding Index) is libvmaf's no-reference
// banding detector (cambi.c, with the defaults libvmaf 3.2.0 uses when the
// feature is asked for by name). It looks at the distorted luma only,
// converted to 10 bits: pixels inside flat areas (the spatial mask) whose
// neighbourhood holds a band one to four 10-bit codes brighter or darker,
// a step the eye can see at that luminance (the TVI threshold), score by
// how much of the window the two levels fill. Scores are pooled over the
// worst 60% of pixels at five scales and weighted towards the fine ones.
//
// Everything up to the per-pixel scores is integer, ported exactly; the
// scores are float as libvmaf's, and pooled in the same order.

// libvmaf's CAMBI defaults (cambi.c).
const (
	cambiWindowSize     = 65    // DEFAULT_CAMBI_WINDOW_SIZE, ~1 degree at 4K
	cambiTopK           = 0.6   // DEFAULT_CAMBI_TOPK_POOLING
	cambiTVIThreshold   = 0.019 // DEFAULT_CAMBI_TVI, for BT.1886
	cambiMaxLogContrast = 2     // DEFAULT_CAMBI_MAX_LOG_CONTRAST
	cambiNumDiffs       = 1 << cambiMaxLogContrast
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

// cambiContrastWeights is the suprathreshold contrast response of diffs
// 1..4 (g_contrast_weights, the part max_log_contrast 2 uses).
var cambiContrastWeights = [cambiNumDiffs]int{1, 2, 3, 4}

// cambiWindow returns the window size for a w x h frame
// (adjust_window_size): 65 scaled by (w+h)/(3840+2160), rounded down, made
// odd.
func cambiWindow(w, h int) int {
	return ((cambiWindowSize*(w+h))/375)>>4 | 1
}

// checkCAMBISize refuses the frames libvmaf's cambi refuses at init: both
// sides below 216, or a window too large for its reciprocal table (width
// plus height above about 6000).
func checkCAMBISize(w, h int) error {
	if w < cambiMinWidthHeight && h < cambiMinWidthHeight {
		return fmt.Errorf("%w: %dx%d, CAMBI needs a side of at least %d", ErrTooSmall, w, h, cambiMinWidthHeight)
	}
	if ws := cambiWindow(w, h); ws*ws >= cambiReciprocalLUTSize {
		return fmt.Errorf("%w: %dx%d, CAMBI's window of %d exceeds libvmaf's 65", ErrTooLarge, w, h, ws)
	}
	return nil
}

// BT.1886 with libvmaf's constants (luminance_tools.c): gamma 2.4, white
// 300 cd/m², black 0.01 cd/m².
func cambiBT1886(v float64) float64 {
	const gamma, lw, lb = 2.4, 300.0, 0.01
	a := math.Pow(math.Pow(lw, 1.0/gamma)-math.Pow(lb, 1.0/gamma), gamma)
	b := math.Pow(lb, 1.0/gamma) / (math.Pow(lw, 1.0/gamma) - math.Pow(lb, 1.0/gamma))
	return a * math.Pow(max(v+b, 0), gamma)
}

// 10-bit limited range, where CAMBI computes its thresholds
// (vmaf_luminance_init_luma_range(10, LIMITED)).
const cambiFoot, cambiHead = 64, 940

// cambiLuminance is vmaf_luminance_get_luminance of a 10-bit sample.
func cambiLuminance(sample int) float64 {
	c := min(max(sample, cambiFoot), cambiHead)
	return cambiBT1886(float64(c-cambiFoot) / float64(cambiHead-cambiFoot))
}

// cambiTVICondition reports whether a step of diff codes above sample is
// visible: its luminance change exceeds the TVI threshold (tvi_condition).
func cambiTVICondition(sample, diff int) bool {
	mean := cambiLuminance(sample)
	return cambiLuminance(sample+diff)-mean > cambiTVIThreshold*mean
}

// cambiTVIForDiff returns the largest 10-bit sample at which a step of diff
// codes is still visible (get_tvi_for_diff): the bisection of libvmaf,
// whose condition holds below the answer and fails above it.
func cambiTVIForDiff(diff int) int {
	const tooSmall, correct, tooBig = 0, 1, 2
	hard := func(sample int) int {
		if !cambiTVICondition(sample, diff) {
			return tooBig
		}
		if cambiTVICondition(sample+1, diff) {
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

// cambiTVI holds tvi_for_diff: the TVI limits of diffs 1..4, offset by
// cambiNumDiffs as libvmaf stores them. cambiVLT is the visibility
// luminance threshold's luma, 0 with the default threshold of 0 cd/m²
// (get_vlt_luma returns 0 when the foot already passes).
var cambiTVI = func() (t [cambiNumDiffs]int) {
	for d := range t {
		t[d] = cambiTVIForDiff(d+1) + cambiNumDiffs
	}
	return t
}()

const cambiVLT = 0

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
	w, h, bpc int
	window    int
	maskIndex int
	// Histogram rows exist only for the values some c-value can read
	// (libvmaf's v_band): [bandBase, bandBase+bandSize).
	bandBase, bandSize int
	img                []uint16  // the 10-bit picture, compacted to each scale's width
	mask               []bool    // the spatial mask, likewise
	cvals              []float32 // per-pixel scores of one scale
	hist               []uint16  // bandSize rows of w columns
	zd                 []uint8   // zero-derivative rows, a ring of 8
	colSum             []int32   // mask: column sums over 7 rows
	modeBuf            []uint16  // filter_mode's 3 rows
}

func newCAMBIState(w, h, bpc int) *cambiState {
	s := &cambiState{w: w, h: h, bpc: bpc, window: cambiWindow(w, h)}
	s.maskIndex = cambiMaskIndex(w, h)
	s.bandBase = max(cambiVLT-3*cambiNumDiffs+1, 0)
	s.bandSize = cambiTVI[cambiNumDiffs-1] + 1 - s.bandBase
	s.img = make([]uint16, w*h)
	s.mask = make([]bool, w*h)
	s.cvals = make([]float32, w*h)
	s.hist = make([]uint16, s.bandSize*w)
	s.zd = make([]uint8, 8*w)
	s.colSum = make([]int32, w)
	s.modeBuf = make([]uint16, 3*w)
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
	s.preprocess(y)
	s.spatialMask()
	var scores [cambiNumScales]float64
	w, h := s.w, s.h
	for scale := range cambiNumScales {
		if scale > 0 {
			nw, nh := (w+1)>>1, (h+1)>>1
			decimateInPlace(s.img, w, nw, nh)
			decimateInPlace(s.mask, w, nw, nh)
			w, h = nw, nh
		}
		s.filterMode(w, h)
		s.cValues(w, h)
		scores[scale] = cambiPool(s.cvals[:w*h], cambiTopK)
	}
	var score float64
	for i, v := range scores {
		score += v * cambiScaleWeights[i]
	}
	pad := s.window >> 1
	score /= float64((2*pad + 1) * (2*pad + 1))
	return min(score, cambiMaxVal)
}

// preprocess converts the plane to 10 bits (cambi_preprocessing): 8-bit
// samples are shifted up and then smoothed by the anti-dithering 2x2 mean
// (encodes below 10 bits), 12-bit and deeper ones are rounded down to 10.
func (s *cambiState) preprocess(y []uint16) {
	w, h := s.w, s.h
	d := s.img
	switch {
	case s.bpc == 10:
		copy(d, y[:w*h])
	case s.bpc > 10:
		shift := uint(s.bpc - 10)
		round := uint16(1) << (shift - 1)
		for i, v := range y[:w*h] {
			d[i] = (v + round) >> shift
		}
	default:
		shift := uint(10 - s.bpc)
		for i, v := range y[:w*h] {
			d[i] = v << shift
		}
	}
	if s.bpc >= 10 {
		return
	}
	// anti_dithering_filter, in place: each sample becomes the mean of its
	// 2x2 block to the right and below, read before being overwritten.
	for i := 0; i < h-1; i++ {
		r, n := d[i*w:(i+1)*w], d[(i+1)*w:(i+2)*w]
		for j := 0; j < w-1; j++ {
			r[j] = uint16((uint32(r[j]) + uint32(r[j+1]) + uint32(n[j]) + uint32(n[j+1])) >> 2)
		}
		r[w-1] = uint16((uint32(r[w-1]) + uint32(n[w-1])) >> 1)
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
	w, h := s.w, s.h
	const pad = cambiMaskFilterSize / 2
	const ring = 8 // rows i-pad-1 .. i+pad
	img, cs := s.img, s.colSum
	clear(cs)
	zdRow := func(r int) []uint8 {
		z := s.zd[(r%ring)*w : (r%ring+1)*w]
		cur := img[r*w : (r+1)*w]
		var next []uint16
		if r < h-1 {
			next = img[(r+1)*w : (r+2)*w]
		}
		for c, v := range cur {
			ok := c == w-1 || v == cur[c+1]
			if next != nil {
				ok = ok && v == next[c]
			}
			z[c] = 0
			if ok {
				z[c] = 1
			}
		}
		return z
	}
	for r := 0; r < pad && r < h; r++ {
		for c, v := range zdRow(r) {
			cs[c] += int32(v)
		}
	}
	threshold := int32(s.maskIndex)
	for i := 0; i < h; i++ {
		if r := i + pad; r < h {
			for c, v := range zdRow(r) {
				cs[c] += int32(v)
			}
		}
		if r := i - pad - 1; r >= 0 {
			z := s.zd[(r%ring)*w : (r%ring+1)*w]
			for c, v := range z {
				cs[c] -= int32(v)
			}
		}
		var sum int32
		for c := 0; c < pad && c < w; c++ {
			sum += cs[c]
		}
		m := s.mask[i*w : (i+1)*w]
		for c := range m {
			if c+pad < w {
				sum += cs[c+pad]
			}
			if c-pad-1 >= 0 {
				sum -= cs[c-pad-1]
			}
			m[c] = sum > threshold
		}
	}
}

// decimateInPlace keeps every other sample of every other row of a plane
// with rows of w samples, packing the nw x nh result at the front (the
// decimate of cambi.c, whose output keeps the input's stride). Reads run
// ahead of writes, so in place is safe.
func decimateInPlace[T any](p []T, w, nw, nh int) {
	for i := 0; i < nh; i++ {
		src := p[2*i*w:]
		dst := p[i*nw : (i+1)*nw]
		for j := range dst {
			dst[j] = src[2*j]
		}
	}
}

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

// filterMode applies libvmaf's 3x3 mode filter in place (filter_mode): a
// horizontal mode3 of each row (edge columns kept), then a vertical mode3
// of three such rows; the first and last rows stay as they are.
func (s *cambiState) filterMode(w, h int) {
	d, buf := s.img, s.modeBuf
	line := 0
	for i := 0; i < h; i++ {
		row := d[i*w : (i+1)*w]
		b := buf[line*w : (line+1)*w]
		b[0] = row[0]
		for j := 1; j < w-1; j++ {
			b[j] = mode3(row[j-1], row[j], row[j+1])
		}
		b[w-1] = row[w-1]
		if i > 1 {
			out := d[(i-1)*w : i*w]
			b0, b1, b2 := buf[:w], buf[w:2*w], buf[2*w:3*w]
			for j := range out {
				out[j] = mode3(b0[j], b1[j], b2[j])
			}
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
	base, size := s.bandBase, s.bandSize
	img, mask := s.img, s.mask
	hist := s.hist[:size*w]
	clear(hist)
	cv := s.cvals[:w*h]
	clear(cv)
	// band returns the histogram row of pixel k, or -1 when it does not
	// count: outside the mask, or a value no c-value reads.
	band := func(k int) int {
		if !mask[k] {
			return -1
		}
		v := int(img[k]) - base
		if uint(v) >= uint(size) {
			return -1
		}
		return v
	}
	span := func(j int) (int, int) { return max(j-pad, 0), min(j+pad+1, w) }
	add := func(r int) {
		for j := 0; j < w; j++ {
			if v := band(r*w + j); v >= 0 {
				lo, hi := span(j)
				seg := hist[v*w+lo : v*w+hi]
				for k := range seg {
					seg[k]++
				}
			}
		}
	}
	for r := 0; r < pad && r < h; r++ {
		add(r)
	}
	for i := 0; i < h; i++ {
		in, out := i+pad, i-pad-1
		switch {
		case in < h && out >= 0:
			for j := 0; j < w; j++ {
				vo, vi := band(out*w+j), band(in*w+j)
				if vo == vi {
					continue // the decrement and increment cancel
				}
				lo, hi := span(j)
				if vo >= 0 {
					seg := hist[vo*w+lo : vo*w+hi]
					for k := range seg {
						seg[k]--
					}
				}
				if vi >= 0 {
					seg := hist[vi*w+lo : vi*w+hi]
					for k := range seg {
						seg[k]++
					}
				}
			}
		case in < h:
			add(in)
		case out >= 0:
			for j := 0; j < w; j++ {
				if v := band(out*w + j); v >= 0 {
					lo, hi := span(j)
					seg := hist[v*w+lo : v*w+hi]
					for k := range seg {
						seg[k]--
					}
				}
			}
		}
		s.cValuesRow(i, w, cv[i*w:(i+1)*w])
	}
}

// cValuesRow fills the c-values of row i's masked pixels (c_value_pixel).
func (s *cambiState) cValuesRow(i, w int, out []float32) {
	base, size := s.bandBase, s.bandSize
	hist := s.hist
	row, mask := s.img[i*w:(i+1)*w], s.mask[i*w:(i+1)*w]
	for j, v := range row {
		if !mask[j] {
			continue
		}
		// libvmaf offsets values by cambiNumDiffs so that value-d stays
		// non-negative; the TVI limits carry the same offset.
		value := int(v) + cambiNumDiffs
		cv := int(v) - base
		if uint(cv) >= uint(size) {
			continue
		}
		p0 := int(hist[cv*w+j])
		var best float32
		for d := range cambiNumDiffs {
			if value > cambiTVI[d] || value+d+1 <= cambiVLT {
				continue
			}
			p1 := int(hist[(cv+d+1)*w+j])
			p2 := 0
			if cv-d-1 >= 0 {
				p2 = int(hist[(cv-d-1)*w+j])
			}
			p := max(p1, p2)
			val := float32(cambiContrastWeights[d]*p0*p) * cambiReciprocal[p+p0]
			best = max(best, val)
		}
		out[j] = best
	}
}

// cambiPool averages the topk share of largest c-values (spatial_pooling):
// libvmaf's quick_select moves them to the front, and their sum in double
// in that order is divided by their count. The same selection and order
// keep the result libvmaf's to the last bit.
func cambiPool(c []float32, topk float64) float64 {
	n := len(c)
	k := min(max(int(topk*float64(n)), 1), n)
	quickSelectDesc(c, k)
	var sum float64
	for _, v := range c[:k] {
		sum += float64(v)
	}
	return sum / float64(k)
}

// quickSelectDesc is cambi.c's quick_select: Hoare partitioning around
// arr[k] until the k largest values come first.
func quickSelectDesc(arr []float32, k int) {
	n := len(arr)
	if n == k {
		return
	}
	left, right := 0, n-1
	for left < right {
		pivot := arr[k]
		i, j := left, right
		for {
			for arr[i] > pivot {
				i++
			}
			for arr[j] < pivot {
				j--
			}
			if i <= j {
				arr[i], arr[j] = arr[j], arr[i]
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
