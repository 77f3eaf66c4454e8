package vmaf

// The CAMBI code as it was before its kernels (commit 5211bd0), kept as the
// reference the restructured code and its kernels must match bit for bit.
// refCompute records each scale's c-values before pooling in refCvals.

// refCvals are the c-values of each scale of the last refCompute.
var refCvals [cambiNumScales][]float32

func (s *cambiState) refPool(scale, n int) float64 {
	refCvals[scale] = append(refCvals[scale][:0], s.cvals[:n]...)
	return cambiPool(s.cvals[:n], s.topk)
}

// compute returns the cambi score of a distorted luma plane of depth bpc.
func (s *cambiState) refCompute(y []uint16) float64 {
	s.preprocess(y)
	s.refSpatialMask()
	var scores [cambiNumScales]float64
	w, h := s.w, s.h
	for scale := range cambiNumScales {
		// The speed-up halves the picture and mask once more, before the
		// first scale (cambi_score).
		if scale > 0 || s.speedup {
			nw, nh := (w+1)>>1, (h+1)>>1
			decimateInPlace(s.img, w, nw, nh)
			decimateInPlace(s.mask, w, nw, nh)
			w, h = nw, nh
		}
		s.refFilterMode(w, h)
		s.refCValues(w, h)
		scores[scale] = s.refPool(scale, w*h)
	}
	var score float64
	for i, v := range scores {
		score += v * cambiScaleWeights[i]
	}
	pad := s.window >> 1
	score /= float64((2*pad + 1) * (2*pad + 1))
	return min(score, s.maxVal)
}

// spatialMask marks the pixels in flat areas (get_spatial_mask): a pixel
// has zero derivative when it equals its right and lower neighbours (the
// last column and row count as equal), and is masked when more than
// maskIndex pixels of the 7x7 square around it have zero derivative
// (outside the frame counts as not). libvmaf sums with a rolling 2D prefix
// sum; column sums over a ring of rows give the same integers.
func (s *cambiState) refSpatialMask() {
	w, h := s.w, s.h
	const pad = cambiMaskFilterSize / 2
	const ring = 8 // rows i-pad-1 .. i+pad
	img, cs := s.img, make([]int32, w)
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

// filterMode applies libvmaf's 3x3 mode filter in place (filter_mode): a
// horizontal mode3 of each row (edge columns kept), then a vertical mode3
// of three such rows; the first and last rows stay as they are.
func (s *cambiState) refFilterMode(w, h int) {
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
func (s *cambiState) refCValues(w, h int) {
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
		s.refCValuesRow(i, w, cv[i*w:(i+1)*w])
	}
}

// cValuesRow fills the c-values of row i's masked pixels (c_value_pixel).
func (s *cambiState) refCValuesRow(i, w int, out []float32) {
	base, size, nd, vlt := s.bandBase, s.bandSize, s.numDiffs, s.vlt
	hist := s.hist
	tvi := s.tvi[:nd]
	row, mask := s.img[i*w:(i+1)*w], s.mask[i*w:(i+1)*w]
	for j, v := range row {
		if !mask[j] {
			continue
		}
		// libvmaf offsets values by numDiffs so that value-d stays
		// non-negative; the TVI limits carry the same offset.
		value := int(v) + nd
		cv := int(v) - base
		if uint(cv) >= uint(size) {
			continue
		}
		p0 := int(hist[cv*w+j])
		var best float32
		for d, limit := range tvi {
			if value > limit || value+d+1 <= vlt {
				continue
			}
			// In the band: the limits grow with the step, so value+d+1
			// is at most the last limit (libvmaf's band argument).
			p1 := 0
			if k := cv + d + 1; k < size {
				p1 = int(hist[k*w+j])
			}
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
