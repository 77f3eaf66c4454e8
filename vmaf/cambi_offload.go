package vmaf

// CAMBI on an Offload: the c-values, CAMBI's heavy per-pixel step, run on
// the device, one scale at a time; the rest stays here. The conversion to
// 10 bits, the spatial mask, the decimations and the mode filter are a few
// integer passes each, and the pooling must stay: it averages the largest
// c-values in the order libvmaf's quick_select leaves them, which depends on
// every value, so the c-values come back.
//
// A pixel's c-value needs, in the window around it (clipped to the
// picture), the counts of its own histogram row and of the rows up to
// NumDiffs above and below; the device counts them directly rather than
// sliding histograms, which gives the same integers, and the one float
// step is float32(weight * p0 * p) * Reciprocal[p0 + p], the conversion
// rounded to nearest.

// CAMBIConfig is what an Offload needs to compute CAMBI's c-values for one
// run (cambiState.offloadConfig).
type CAMBIConfig struct {
	// Width and Height are the largest scale's size; the scales after it
	// are smaller.
	Width, Height int
	// Pad is half the window: a pixel's window spans Pad rows and columns
	// each side.
	Pad int
	// NumDiffs is how many steps (1..NumDiffs codes) CAMBI looks for.
	NumDiffs int
	// Diffs has, per histogram row, bit d set when a pixel of that row
	// looks for a step of d+1 codes.
	Diffs []uint32
	// Weights are the steps' contrast weights; Reciprocal is 1/n in float32.
	Weights    []int32
	Reciprocal []float32
}

// CAMBIOffloader is an OffloadWorker that computes CAMBI's c-values. band
// holds a w x h scale's histogram rows (-1 for pixels that count nothing);
// out receives the c-values. ok is false when it leaves them to the CPU.
type CAMBIOffloader interface {
	CAMBICValues(band []int16, w, h int, out []float32) (ok bool, err error)
}

// offloadConfig describes the state's c-values for an Offload.
func (s *cambiState) offloadConfig() *CAMBIConfig {
	w, h := s.w, s.h
	if s.speedup {
		w, h = (w+1)>>1, (h+1)>>1
	}
	c := &CAMBIConfig{Width: w, Height: h, Pad: s.window >> 1, NumDiffs: s.numDiffs,
		Diffs: s.diffs, Reciprocal: cambiReciprocal}
	for _, v := range cambiContrastWeights {
		c.Weights = append(c.Weights, int32(v))
	}
	return c
}

// offloadCValues has the Offload compute a scale's c-values into s.cvals,
// reporting whether it did. A failure is kept in s.offErr (the frame fails)
// and counts as done: the score is discarded.
func (s *cambiState) offloadCValues(band []int16, w, h int) bool {
	if s.off == nil {
		return false
	}
	if s.offErr != nil {
		return true
	}
	ok, err := s.off.CAMBICValues(band, w, h, s.cvals[:w*h])
	if err != nil {
		s.offErr = err
		return true
	}
	return ok
}

// CAMBICValuesCPU returns what an Offload's CAMBICValues returns for the
// first scale of a w x h luma plane of depth bpc under m's CAMBI options,
// with the band it gets, as the CPU computes them, for checking an
// Offload; nil when m has no CAMBI feature.
func CAMBICValuesCPU(y []uint16, w, h, bpc int, m *Model) (band []int16, cvals []float32, cw, ch int) {
	if m.cambi == nil {
		return nil, nil, 0, 0
	}
	s := newCAMBIState(w, h, bpc, *m.cambi)
	s.preprocess(y)
	s.spatialMask()
	cw, ch = s.w, s.h
	if s.speedup {
		nw, nh := (cw+1)>>1, (ch+1)>>1
		decimateInPlace(s.img, cw, nw, nh)
		decimateInPlace(s.mask, cw, nw, nh)
		cw, ch = nw, nh
	}
	s.filterMode(cw, ch)
	s.cValues(cw, ch)
	return append([]int16(nil), s.band[:cw*ch]...), append([]float32(nil), s.cvals[:cw*ch]...), cw, ch
}

// CAMBIConfigCPU is the CAMBIConfig Score gives an Offload for w x h luma
// planes of depth bpc under m's CAMBI options; nil when m has none.
func CAMBIConfigCPU(w, h, bpc int, m *Model) *CAMBIConfig {
	if m.cambi == nil {
		return nil
	}
	return newCAMBIState(w, h, bpc, *m.cambi).offloadConfig()
}

// cValuesFromBand computes the c-values of a scale's band into out with
// the CPU's sliding histograms, as cValues does after making the band.
func (s *cambiState) cValuesFromBand(band []int16, w, h int, out []float32) {
	copy(s.band, band[:w*h])
	s.histCValues(w, h)
	copy(out, s.cvals[:w*h])
}
