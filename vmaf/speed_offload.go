package vmaf

import (
	"fmt"
	"math"
)

// SpEED chroma on an Offload. The per-pixel stages run on the device:
// picture_copy, the speed_prescale rescale, the anti-alias filter and its
// decimation by 16, the local-mean subtraction, the 25 block-position
// means and the 325 double sums of the covariance matrix. What stays here
// is small and data-dependent: the eigenvalues and the QR solve of the
// 25x25 matrix (iterations whose count depends on the values), the
// entropies (log2 in double, which GLSL lacks) and the score; at 1080p
// that is a 60x33 image per picture.

// SpeedMethod is how an Offload reads a SpEED picture's samples from the
// chroma plane: directly, or through one of speed_prescale_method's
// rescales.
type SpeedMethod int32

// The methods; the values are the shaders'.
const (
	SpeedCopy     SpeedMethod = iota // no rescale: the plane's own samples
	SpeedNearest                     // one tap
	SpeedBilinear                    // 2x2 taps, summed from the first term
	SpeedBicubic                     // 4x4 taps, summed from 0
	SpeedLanczos4                    // 9x9 taps, summed from 0, divided by the weights' sum
)

// SpeedConfig is what an Offload needs to compute SpEED chroma's
// per-pixel stages for one run (Model.SpeedConfig). Samples are converted
// as picture_copy does (v / 2^(BitDepth-8) - 128, in float32).
//
// A rescaled sample (x, y) of the ScaledWidth x ScaledHeight picture is
// made from the converted plane's samples at (Cols[x*Taps+i],
// Rows[y*Taps+j]) with weight float32(RowWeights[y*Taps+j] *
// ColWeights[x*Taps+i]), j outer and i inner, each term weight*sample
// rounded to float32 before it is added (SpeedBilinear's weights are
// (1-dx, dx) and (1-dy, dy)); under SpeedNearest it is the one sample.
// These tables are what vif_scale_frame_s computes per sample, in its
// float and double roundings, computed once here.
type SpeedConfig struct {
	// Stride and Lines are the frames' chroma planes' size
	// (Frame.ChromaWidth, ChromaHeight); SpEED reads the top-left
	// Width x Height.
	Stride, Lines int
	// Width and Height are the chroma plane size SpEED reads.
	Width, Height int
	// ScaledWidth and ScaledHeight are the plane's size after
	// speed_prescale (Width, Height under SpeedCopy).
	ScaledWidth, ScaledHeight int
	Method                    SpeedMethod
	Taps                      int
	Cols, Rows                []int32
	ColWeights, RowWeights    []float32
	// AntiAlias is the anti-alias filter, applied vertically then
	// horizontally (mirrored at the edges) to the rows and columns that
	// are multiples of 16 of the scaled picture; LocalMean is the local
	// mean filter on the decimated image, vertically then horizontally,
	// subtracted from it. Sums start at +0 and add each tap's product in
	// order, in float32.
	AntiAlias, LocalMean []float32
	// DecWidth and DecHeight are the decimated image's size.
	DecWidth, DecHeight int
	// CovWidth and CovHeight are the size of the submatrices (from the
	// 25 positions of a 5x5 block) the means and covariances run over.
	CovWidth, CovHeight int
}

// SpeedPictures are an Offload's SpEED results for one frame pair, per
// picture in the order U reference, U distorted, V reference, V
// distorted.
type SpeedPictures struct {
	// Img is each picture's decimated, mean-subtracted image, DecWidth x
	// DecHeight.
	Img [4][]float32
	// Cov is each picture's 325 covariance sums (compute_cov_kernel's
	// double sums, not yet divided by the count): element (x, y), y <= x,
	// at x*(x+1)/2 + y, the positions numbered row-major in the block.
	Cov [4][]float64
}

// SpeedCovLen is the number of covariance sums per picture.
const SpeedCovLen = speedN * (speedN + 1) / 2

// SpeedOffloader is an OffloadWorker that computes SpEED chroma's
// per-pixel stages. ok is false when it leaves SpEED to the CPU (no
// OffloadConfig.Speed, or frames whose chroma planes differ from it).
type SpeedOffloader interface {
	Speed(ref, dis *Frame) (p *SpeedPictures, ok bool, err error)
}

// SpeedConfig returns the configuration an Offload needs to compute SpEED
// chroma for w x h frames in pf under m, or nil when m has no SpEED
// feature or SpEED refuses the size.
func (m *Model) SpeedConfig(w, h int, pf PixelFormat) *SpeedConfig {
	if m.speed == nil {
		return nil
	}
	s, err := newSpeedState(w, h, pf, *m.speed, CPUGeneric)
	if err != nil {
		return nil
	}
	return s.offloadConfig(pf)
}

// offloadConfig describes the state's stages for an Offload.
func (s *speedState) offloadConfig(pf PixelFormat) *SpeedConfig {
	stride, lines := pf.chromaSize(s.w, s.h)
	subW, subH := s.covSize()
	c := &SpeedConfig{
		Stride: stride, Lines: lines, Width: s.cw, Height: s.ch, ScaledWidth: s.sw, ScaledHeight: s.sh,
		AntiAlias: s.aa, LocalMean: s.lp, DecWidth: s.dw, DecHeight: s.dh, CovWidth: subW, CovHeight: subH,
	}
	if !s.scale {
		return c
	}
	rx, ry := float32(s.cw)/float32(s.sw), float32(s.ch)/float32(s.sh)
	switch s.o.prescaleMethod {
	case "nearest":
		c.Method, c.Taps = SpeedNearest, 1
		for x := range s.sw {
			c.Cols = append(c.Cols, int32(float32(x)*rx))
		}
		for y := range s.sh {
			c.Rows = append(c.Rows, int32(float32(y)*ry))
		}
		c.ColWeights, c.RowWeights = make([]float32, s.sw), make([]float32, s.sh)
		return c
	case "bilinear":
		c.Method, c.Taps = SpeedBilinear, 2
	case "bicubic":
		c.Method, c.Taps = SpeedBicubic, 4
	default:
		c.Method, c.Taps = SpeedLanczos4, 9
	}
	c.Cols, c.ColWeights = speedScaleTaps(c.Method, s.sw, rx, s.cw)
	c.Rows, c.RowWeights = speedScaleTaps(c.Method, s.sh, ry, s.ch)
	return c
}

// speedScaleTaps are one axis's source indices and weights for n output
// samples of a rescale by ratio from a side of size src, as
// speedBilinear, speedBicubic and speedLanczos4 compute them.
func speedScaleTaps(m SpeedMethod, n int, ratio float32, src int) (idx []int32, wt []float32) {
	right := float32(src - 1)
	for i := range n {
		p := speedCoord(i, ratio)
		switch m {
		case SpeedBilinear:
			i1 := int(speedMirrorF(float32(math.Floor(float64(p))), right))
			i2 := int(speedMirrorF(float32(math.Ceil(float64(p))), right))
			d := p - float32(i1)
			idx, wt = append(idx, int32(i1), int32(i2)), append(wt, 1-d, d)
		case SpeedBicubic:
			p0 := int(math.Floor(float64(p)))
			d := p - float32(p0)
			for k := -1; k <= 2; k++ {
				idx = append(idx, int32(speedMirrorF(float32(p0+k), right)))
				wt = append(wt, speedCubic(float32(k)-d))
			}
		default:
			const a = 4
			p0 := int(math.Floor(float64(p)))
			d := p - float32(p0)
			for k := -a; k <= a; k++ {
				idx = append(idx, int32(speedMirrorF(float32(p0+k), right)))
				wt = append(wt, speedLanczosKernel(float32(k)-d, a))
			}
		}
	}
	return idx, wt
}

// fromOffload derives the SpEED metrics from an Offload's pictures, as
// compute does from its own: est_params from the eigenvalues on, and the
// score.
func (s *speedState) fromOffload(p *SpeedPictures) (speedScores, error) {
	for i := range p.Img {
		if len(p.Img[i]) < s.dw*s.dh || len(p.Cov[i]) < SpeedCovLen {
			return speedScores{}, fmt.Errorf("SpEED offload: picture %d: %d samples and %d sums, want %d and %d",
				i, len(p.Img[i]), len(p.Cov[i]), s.dw*s.dh, SpeedCovLen)
		}
	}
	var sc [2]float32
	var bad [2]bool
	for c := range 2 {
		var ok [2]bool
		for side, res := range []*speedResult{&s.refRes, &s.disR} {
			pic := 2*c + side
			copy(s.img, p.Img[pic])
			for x := range speedN {
				for y := 0; y <= x; y++ {
					s.setCov(x, y, p.Cov[pic][x*(x+1)/2+y])
				}
			}
			ok[side] = s.estFromCov(res)
		}
		sc[c], bad[c] = s.channelScore(ok[0], ok[1])
	}
	return s.combine(sc[0], sc[1], bad[0], bad[1]), nil
}

// SpeedPicturesCPU returns what an Offload's Speed returns for a frame
// pair of w x h frames in pf under m's SpEED options, as the CPU computes
// it, for checking an Offload; nil when m has no SpEED feature.
func SpeedPicturesCPU(ref, dis *Frame, pf PixelFormat, m *Model) (*SpeedPictures, error) {
	if m.speed == nil {
		return nil, nil
	}
	s, err := newSpeedState(ref.Width, ref.Height, pf, *m.speed, CPUGeneric)
	if err != nil {
		return nil, err
	}
	if err := s.check(ref, dis); err != nil {
		return nil, err
	}
	out := new(SpeedPictures)
	for i, f := range []*Frame{ref, dis, ref, dis} {
		plane := f.U
		if i >= 2 {
			plane = f.V
		}
		s.prepare(plane, f.ChromaWidth, f.BitDepth)
		out.Img[i] = append([]float32(nil), s.img...)
		sums := make([]float64, SpeedCovLen)
		s.covSums(func(x, y int, sum float64) { sums[x*(x+1)/2+y] = sum })
		out.Cov[i] = sums
	}
	return out, nil
}

// computeSpeed computes s's SpEED chroma with the Offload's per-pixel
// stages when it offers them (a FrameOffloader's in s.sums), else on the
// CPU.
func (wk *worker) computeSpeed(s *slot) (speedScores, error) {
	ref, dis := &s.ref, &s.dist
	if s.sums != nil {
		// The frame went through Queue: its pictures came with its sums,
		// or the worker left them to the CPU.
		if !s.sums.SpeedOK {
			return wk.speed.compute(ref, dis)
		}
		if err := wk.speed.check(ref, dis); err != nil {
			return speedScores{}, err
		}
		return wk.speed.fromOffload(s.sums.Speed)
	}
	if so, isSO := wk.off.(SpeedOffloader); isSO {
		if err := wk.speed.check(ref, dis); err != nil {
			return speedScores{}, err
		}
		p, ok, err := so.Speed(ref, dis)
		if err != nil {
			return speedScores{}, err
		}
		if ok {
			return wk.speed.fromOffload(p)
		}
	}
	return wk.speed.compute(ref, dis)
}
