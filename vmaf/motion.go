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
	shiftY := uint(bpc)
	roundY := int64(1) << uint(bpc-1)
	f0, f1, f2 := motionFilter[0], motionFilter[1], motionFilter[2]
	row = row[:w]
	var sad uint64
	for i := 0; i < h; i++ {
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
// reports, clipped at motionMaxVal.
func motionScore(sad uint64, w, h int) float64 {
	return min(float64(sad)/256.0/float64(w*h), motionMaxVal)
}

// motionTemporal derives motion2 and motion3 from the per-frame SAD scores
// (integer_motion.c, flush): motion2[i] = min(sad[i], sad[i+1]) with frame 0
// at 0 and the last frame keeping its own score; motion3 equals motion2
// with libvmaf's default blend (factor 1) and frame 0 takes sad[1].
func motionTemporal(sad []float64) (m2, m3 []float64) {
	n := len(sad)
	m2 = make([]float64, n)
	m3 = make([]float64, n)
	for i := 1; i < n; i++ {
		if i+1 < n {
			m2[i] = min(sad[i], sad[i+1])
		} else {
			m2[i] = sad[i]
		}
		m3[i] = min(m2[i], motionMaxVal)
	}
	if n > 1 {
		m3[0] = min(sad[1], motionMaxVal)
	}
	return m2, m3
}
