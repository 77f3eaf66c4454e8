package vmaf

import (
	"fmt"
	"slices"
)

// extraConfig is what Score decided about the extra features of one call.
type extraConfig struct {
	features []Feature
	psnr     bool
	// chroma: PSNR's chroma planes are read (the inputs have chroma).
	chroma bool
}

// newExtraConfig validates the requested features against the inputs.
func newExtraConfig(features []Feature, ri, di VideoInfo) (*extraConfig, error) {
	fs, err := normalizeFeatures(features)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	c := &extraConfig{features: fs, psnr: slices.Contains(fs, FeaturePSNR)}
	if c.psnr {
		rw, rh := ri.Format.chromaSize(ri.Width, ri.Height)
		dw, dh := di.Format.chromaSize(di.Width, di.Height)
		if rw != dw || rh != dh {
			return nil, fmt.Errorf("%w: PSNR needs the same chroma planes, reference %v, distorted %v",
				ErrSizeMismatch, ri.Format, di.Format)
		}
		c.chroma = rw > 0
	}
	return c, nil
}

// extraState is one worker's scratch for the extra features.
type extraState struct {
	cfg *extraConfig
}

func (c *extraConfig) newState(w, h int) *extraState {
	if c == nil {
		return nil
	}
	return &extraState{cfg: c}
}

// compute fills the extra features of one frame pair into fs.
func (e *extraState) compute(ref, dist *Frame, fs *FrameScore) {
	if e.cfg.psnr {
		fs.PSNRY = psnrPlane(ref.Y, dist.Y, ref.BitDepth)
		if e.cfg.chroma {
			fs.PSNRCb = psnrPlane(ref.U, dist.U, ref.BitDepth)
			fs.PSNRCr = psnrPlane(ref.V, dist.V, ref.BitDepth)
		}
	}
}

// checkChroma reports a source that ignored Frame.Chroma.
func checkChroma(f *Frame, input string) error {
	if !f.Chroma {
		return nil
	}
	if f.ChromaWidth == 0 || len(f.U) != f.ChromaWidth*f.ChromaHeight || len(f.V) != len(f.U) {
		return fmt.Errorf("%s: %w", input, ErrNoChroma)
	}
	return nil
}
