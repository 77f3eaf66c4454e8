package vmaf

// motionFilter is the 5-tap Gaussian of the motion feature, summing to 2^16
// (libvmaf integer_motion.h, filter).
var motionFilter = [5]int64{3571, 16004, 26386, 16004, 3571}

// motionMaxVal is libvmaf's DEFAULT_MOTION_MAX_VAL clip.
const motionMaxVal = 10000.0

// motionSAD returns the sum of absolute values of the blurred difference of
// two luma planes (integer_motion.c, motion_score_pipeline_8/16): the
// difference prev−cur is filtered vertically (rounded to the bit depth) and
// horizontally (rounded to Q16) with mirrored edges, then summed. row is
// scratch of at least w int64.
func motionSAD(prev, cur []uint16, w, h, bpc int, row []int64) uint64 {
	return motionSADPaced(prev, cur, w, h, bpc, row, nil)
}

// motionSADPaced is motionSAD that calls wait, when not nil, before it reads
// a row further down the planes than those it has read (rowWalk).
func motionSADPaced(prev, cur []uint16, w, h, bpc int, row []int64, wait func(r int)) uint64 {
	shiftY := uint(bpc)
	roundY := int64(1) << uint(bpc-1)
	f0, f1, f2 := motionFilter[0], motionFilter[1], motionFilter[2]
	row = row[:w]
	var sad uint64
	for i := 0; i < h; i++ {
		if wait != nil {
			wait(min(i+2, h-1))
		}
		r0, r1, r2, r3, r4 := mirror(i-2, h)*w, mirror(i-1, h)*w, i*w, mirror(i+1, h)*w, mirror(i+2, h)*w
		p0, p1, p2, p3, p4 := prev[r0:r0+w], prev[r1:r1+w], prev[r2:r2+w], prev[r3:r3+w], prev[r4:r4+w]
		c0, c1, c2, c3, c4 := cur[r0:r0+w], cur[r1:r1+w], cur[r2:r2+w], cur[r3:r3+w], cur[r4:r4+w]
		var any int64
		for j := range row {
			d0 := int64(p0[j]) - int64(c0[j])
			d1 := int64(p1[j]) - int64(c1[j])
			d2 := int64(p2[j]) - int64(c2[j])
			d3 := int64(p3[j]) - int64(c3[j])
			d4 := int64(p4[j]) - int64(c4[j])
			v := (f0*(d0+d4) + f1*(d1+d3) + f2*d2 + roundY) >> shiftY
			row[j] = v
			any |= v
		}
		if any == 0 {
			continue
		}
		var rowSAD uint32
		for j := 0; j < w; j++ {
			var acc int64
			if j >= 2 && j < w-2 {
				acc = f0*(row[j-2]+row[j+2]) + f1*(row[j-1]+row[j+1]) + f2*row[j]
			} else {
				acc = f0*(row[mirror(j-2, w)]+row[mirror(j+2, w)]) + f1*(row[mirror(j-1, w)]+row[mirror(j+1, w)]) + f2*row[j]
			}
			v := (acc + 32768) >> 16
			if v < 0 {
				v = -v
			}
			rowSAD += uint32(v)
		}
		sad += uint64(rowSAD)
	}
	return sad
}

// motionScore normalises a SAD to the per-pixel motion score libvmaf
// reports, weighted and clipped (integer_motion.c, extract):
// sad / 256 / (w*h) * motion_fps_weight, at most motion_max_val.
func motionScore(sad uint64, w, h int, o motionOptions) float64 {
	if o.forceZero {
		return 0
	}
	return min(float64(sad)/256.0/float64(w*h)*o.fpsWeight, o.maxVal)
}

// motionBlend is libvmaf's motion_blend (motion_blend_tools.h): the score
// blended with min(offset, score); factor 1, the default, keeps the score.
func motionBlend(score float64, o motionOptions) float64 {
	return score*o.blendFactor + (1-o.blendFactor)*min(o.blendOffset, score)
}

// motionTemporal derives motion2 and motion3 from the per-frame SAD scores,
// frames below o.minIndex() having none (integer_motion.c, flush):
//   - motion2[i] is min(sad[i-m+1], sad[i+1]) with m = minIndex: the frame's
//     own and the next SAD by default; with the five-frame window the SADs
//     of frames i-1 and i+1 (i-3 to i-1 and i-1 to i+1), or sad[i+1] alone
//     while frame i-1 has none. The last frame keeps its own SAD; frames
//     below m are 0.
//   - motion3[i] is motion2[i] blended and clipped at motion_max_val,
//     averaged with the previous frame's under the moving average. Frames
//     below m take the "stamp", frame m's SAD blended and clipped, which is
//     also the previous value frame m averages with.
func motionTemporal(sad []float64, o motionOptions) (m2, m3 []float64) {
	n := len(sad)
	m2 = make([]float64, n)
	m3 = make([]float64, n)
	m := o.minIndex()
	var stamp float64
	if n > m {
		stamp = min(motionBlend(sad[m], o), o.maxVal)
	}
	prev := 0.0
	for i := range n {
		if i < m {
			m3[i], prev = stamp, stamp
			continue
		}
		lo, hi := i-m+1, i+1
		switch {
		case hi >= n:
			m2[i] = sad[i]
		case lo >= m:
			m2[i] = min(sad[lo], sad[hi])
		default:
			m2[i] = sad[hi]
		}
		cur := min(motionBlend(m2[i], o), o.maxVal)
		m3[i] = cur
		if o.movingAverage {
			m3[i] = (cur + prev) / 2.0
		}
		prev = cur
	}
	return m2, m3
}
