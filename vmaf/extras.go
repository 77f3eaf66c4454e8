package vmaf

import (
	"fmt"
	"slices"
)

// extraConfig is what Score decided about the extra features of one call.
type extraConfig struct {
	features []Feature
	psnr     bool
	ssim     bool
	msssim   bool
	cambi    bool
	// cambiOpts are CAMBI's options (the model's, or the defaults).
	cambiOpts cambiOptions
	// chroma: PSNR's chroma planes are read (the inputs have chroma).
	chroma bool
	// psnrCW x psnrCH is the part of each chroma plane PSNR compares (see
	// newExtraConfig) in planes of chromaStride x chromaRows.
	psnrCW, psnrCH, chromaStride, chromaRows int
}

// newExtraConfig validates the requested features against the inputs, CAMBI
// under the options co.
func newExtraConfig(features []Feature, ri, di VideoInfo, co cambiOptions) (*extraConfig, error) {
	fs, err := normalizeFeatures(features)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	c := &extraConfig{features: fs, psnr: slices.Contains(fs, FeaturePSNR), ssim: slices.Contains(fs, FeatureSSIM),
		msssim: slices.Contains(fs, FeatureMSSSIM), cambi: slices.Contains(fs, FeatureCAMBI), cambiOpts: co}
	if c.msssim {
		if err := checkMSSSIMSize(ri.Width, ri.Height); err != nil {
			return nil, err
		}
	}
	if c.cambi {
		if err := co.check(ri.Width, ri.Height, ri.Format.BitDepth()); err != nil {
			return nil, err
		}
	}
	if c.psnr {
		rw, rh := ri.Format.chromaSize(ri.Width, ri.Height)
		dw, dh := di.Format.chromaSize(di.Width, di.Height)
		if rw != dw || rh != dh {
			return nil, fmt.Errorf("%w: PSNR needs the same chroma planes, reference %v, distorted %v",
				ErrSizeMismatch, ri.Format, di.Format)
		}
		c.chroma = rw > 0
		// libvmaf sizes chroma planes w>>1 (and h>>1), rounding down
		// (picture.c, vmaf_picture_alloc), so for odd sizes its PSNR
		// leaves out the last chroma column (and row) that the file and
		// Frame carry. Compare the same samples.
		fi := ri.Format.info()
		c.psnrCW, c.psnrCH, c.chromaStride, c.chromaRows = ri.Width>>fi.xShift, ri.Height>>fi.yShift, rw, rh
	}
	return c, nil
}

// extraState is one worker's scratch for the extra features.
type extraState struct {
	cfg *extraConfig
	// refF and disF are the luma planes as floats, shared by SSIM and
	// MS-SSIM.
	refF, disF []float32
	ssim       *ssimState
	msssim     *msssimState
	cambi      *cambiState
}

// newState makes one worker's state; CAMBI runs on the kernel path k.
func (c *extraConfig) newState(w, h, bpc int, k *kernels) *extraState {
	if c == nil {
		return nil
	}
	e := &extraState{cfg: c}
	if c.ssim || c.msssim {
		e.refF, e.disF = make([]float32, w*h), make([]float32, w*h)
	}
	if c.ssim {
		e.ssim = newSSIMState(w, h)
	}
	if c.msssim {
		e.msssim = newMSSSIMState(w, h)
	}
	if c.cambi {
		e.cambi = newCAMBIState(w, h, bpc, c.cambiOpts).with(k)
	}
	return e
}

// compute fills the extra features of one frame pair into fs.
func (e *extraState) compute(ref, dist *Frame, fs *FrameScore) {
	if e.refF != nil {
		toFloatPlane(e.refF, ref.Y, ref.BitDepth)
		toFloatPlane(e.disF, dist.Y, dist.BitDepth)
	}
	if e.ssim != nil {
		fs.SSIM = e.ssim.compute(e.refF, e.disF)
	}
	if e.msssim != nil {
		fs.MSSSIM = e.msssim.compute(e.refF, e.disF)
	}
	if e.cambi != nil {
		// CAMBI is no-reference: libvmaf scores the distorted picture.
		fs.CAMBI = e.cambi.compute(dist.Y)
	}
	if e.cfg.psnr {
		c := e.cfg
		fs.PSNRY = psnrPlane(ref.Y, dist.Y, ref.Width, ref.Height, ref.Width, ref.BitDepth)
		if c.chroma {
			fs.PSNRCb = psnrPlane(ref.U, dist.U, c.psnrCW, c.psnrCH, c.chromaStride, ref.BitDepth)
			fs.PSNRCr = psnrPlane(ref.V, dist.V, c.psnrCW, c.psnrCH, c.chromaStride, ref.BitDepth)
		}
	}
}

// checkChroma reports a frame that was asked for chroma (Frame.Chroma) and
// does not hold the planes its format has: a source that ignored the
// request, or filled planes of another size.
func (c *extraConfig) checkChroma(f *Frame, input string) error {
	if !c.chroma || !f.Chroma {
		return nil
	}
	cw, ch := c.chromaStride, c.chromaRows
	if f.ChromaWidth != cw || f.ChromaHeight != ch || len(f.U) != cw*ch || len(f.V) != cw*ch {
		return fmt.Errorf("%s: %w (got %dx%d planes of %d and %d samples, want %dx%d)",
			input, ErrNoChroma, f.ChromaWidth, f.ChromaHeight, len(f.U), len(f.V), cw, ch)
	}
	return nil
}
