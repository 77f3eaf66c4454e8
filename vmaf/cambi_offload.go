package vmaf

import "fmt"

// CAMBI on an Offload: everything up to the pooling runs on the device,
// from the distorted luma plane: the conversion to 10 bits at the
// encode's size, the anti-dithering, the spatial mask, and per scale the
// decimation, the mode filter and the c-values, all integer. The pooling
// stays here: it averages the largest c-values in the order libvmaf's
// quick_select leaves them, which depends on every value, so the c-values
// come back.
//
// A pixel's c-value needs, in the window around it (clipped to the
// picture), the counts of its own histogram row and of the rows up to
// NumDiffs above and below; the device counts them directly rather than
// sliding histograms, which gives the same integers, and the one float
// step is float32(weight * p0 * p) * Reciprocal[p0 + p], the conversion
// rounded to nearest.

// CAMBIConfig is what an Offload needs to compute CAMBI's c-values for one
// run (cambiState.offloadConfig): from the distorted luma plane, every
// scale's, as compute makes them.
type CAMBIConfig struct {
	// InWidth and InHeight are the input plane's size, BitDepth its depth.
	InWidth, InHeight, BitDepth int
	// Width and Height are the encode's size CAMBI works at; Rows and
	// Cols are, per output row and column, the input's (nearest sample;
	// the identity at the input's size).
	Width, Height int
	Rows, Cols    []int32
	// AntiDither smooths the 10-bit picture by its 2x2 means (encodes
	// below 10 bits); SpeedUp halves picture and mask before the first
	// scale.
	AntiDither, SpeedUp bool
	// MaskThreshold: a pixel is masked when more zero-derivative pixels
	// than this lie in the 7x7 square around it.
	MaskThreshold int
	// BandBase and BandSize are the values with histogram rows; a masked
	// pixel of value v in the band has row v - BandBase + NumDiffs.
	BandBase, BandSize int
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

// CAMBIScales is the size of each scale's c-values under c, in order.
func (c *CAMBIConfig) CAMBIScales() [cambiNumScales][2]int {
	var out [cambiNumScales][2]int
	w, h := c.Width, c.Height
	for scale := range out {
		if scale > 0 || c.SpeedUp {
			w, h = (w+1)>>1, (h+1)>>1
		}
		out[scale] = [2]int{w, h}
	}
	return out
}

// CAMBIOffloader is an OffloadWorker that computes CAMBI's c-values from a
// distorted luma plane, every scale's (CAMBIConfig.CAMBIScales), into
// out. ok is false when it leaves CAMBI to the CPU.
type CAMBIOffloader interface {
	CAMBICValues(y []uint16, out *[5][]float32) (ok bool, err error)
}

// offloadConfig describes the state's c-values for an Offload.
func (s *cambiState) offloadConfig() *CAMBIConfig {
	c := &CAMBIConfig{InWidth: s.inW, InHeight: s.inH, BitDepth: s.bpc, Width: s.w, Height: s.h,
		AntiDither: s.antiDither, SpeedUp: s.speedup, MaskThreshold: min(max(s.maskIndex, -1), 1<<15-1),
		BandBase: s.bandBase, BandSize: s.bandSize, Pad: s.window >> 1, NumDiffs: s.numDiffs,
		Diffs: s.diffs, Reciprocal: cambiReciprocal}
	for _, v := range cambiContrastWeights {
		c.Weights = append(c.Weights, int32(v))
	}
	// preprocess's nearest samples, stepped in float as it steps.
	if s.w == s.inW && s.h == s.inH {
		for i := range s.h {
			c.Rows = append(c.Rows, int32(i))
		}
		for j := range s.w {
			c.Cols = append(c.Cols, int32(j))
		}
		return c
	}
	ratioX, ratioY := float32(s.inW)/float32(s.w), float32(s.inH)/float32(s.h)
	fy := float32(float64(ratioY/2) - 0.5)
	for range s.h {
		c.Rows = append(c.Rows, int32(min(int(float64(fy)+0.5), s.inH-1)))
		fy += ratioY
	}
	fx := float32(float64(ratioX/2) - 0.5)
	for range s.w {
		c.Cols = append(c.Cols, int32(min(int(float64(fx)+0.5), s.inW-1)))
		fx += ratioX
	}
	return c
}

// computeOffload is compute with the c-values from the Offload: it
// reports false where the Offload leaves CAMBI to the CPU. A failure is
// kept in s.offErr (the frame fails).
func (s *cambiState) computeOffload(y []uint16) (float64, bool) {
	ok, err := s.off.CAMBICValues(y, &s.offOut)
	if err != nil {
		s.offErr = err
		return 0, true
	}
	if !ok {
		return 0, false
	}
	score, err := s.fromCValues(&s.offOut)
	if err != nil {
		s.offErr = err
	}
	return score, true
}

// fromCValues pools an Offload's c-values, every scale's, into the score;
// the pooling reorders them.
func (s *cambiState) fromCValues(cvals *[cambiNumScales][]float32) (float64, error) {
	var scores [cambiNumScales]float64
	w, h := s.w, s.h
	for scale, c := range cvals {
		if scale > 0 || s.speedup {
			w, h = (w+1)>>1, (h+1)>>1
		}
		if len(c) != w*h {
			return 0, fmt.Errorf("CAMBI offload: scale %d: %d c-values, want %d", scale, len(c), w*h)
		}
		scores[scale] = cambiPool(c, s.topk)
	}
	return s.combineScales(scores), nil
}

// computeCAMBI computes s's model CAMBI with the Offload's c-values when it
// offers them (a FrameOffloader's in s.sums), else on the CPU.
func (wk *worker) computeCAMBI(s *slot) (float64, error) {
	if s.sums == nil {
		score := wk.cambi.compute(wk.luma(&s.dist, lumaDist))
		return score, wk.cambi.offErr
	}
	// The frame went through Queue: its c-values came with its sums, or
	// the worker left them to the CPU.
	if s.sums.CAMBIOK {
		return wk.cambi.fromCValues(&s.sums.CAMBI)
	}
	return wk.cambi.computeCPU(wk.luma(&s.dist, lumaDist)), nil
}

// CAMBICValuesCPU returns what an Offload's CAMBICValues returns for a
// w x h luma plane of depth bpc under m's CAMBI options, as the CPU
// computes it, for checking an Offload; nil when m has no CAMBI feature.
func CAMBICValuesCPU(y []uint16, w, h, bpc int, m *Model) *[5][]float32 {
	if m.cambi == nil {
		return nil
	}
	s := newCAMBIState(w, h, bpc, *m.cambi)
	out := new([5][]float32)
	s.scales(y, func(scale int, c []float32) { out[scale] = append([]float32(nil), c...) })
	return out
}

// CAMBIConfigCPU is the CAMBIConfig Score gives an Offload for w x h luma
// planes of depth bpc under m's CAMBI options; nil when m has none.
func CAMBIConfigCPU(w, h, bpc int, m *Model) *CAMBIConfig {
	if m.cambi == nil {
		return nil
	}
	return newCAMBIState(w, h, bpc, *m.cambi).offloadConfig()
}

// WithEncode returns a copy of m whose CAMBI scores an encode of e's size
// and depth (Options.Encode), for checking an Offload.
func (m *Model) WithEncode(e Encode) *Model {
	c := *m
	if m.cambi != nil {
		o := m.cambi.withEncode(e)
		c.cambi = &o
	}
	return &c
}
