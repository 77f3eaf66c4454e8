package vmaf

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// cambiPaths are the paths the CAMBI tests run: the generic one and each
// vector path this processor supports.
func cambiPaths() []CPU {
	paths := []CPU{CPUGeneric}
	for _, c := range vectorPaths {
		if c.Supported() {
			paths = append(paths, c)
		}
	}
	return paths
}

// cambiPicture makes a w x h plane of depth bpc that CAMBI finds work in:
// smooth ramps quantised into bands a few codes apart, flat areas, and
// noisy ones, each in random places.
func cambiPicture(rng *rand.Rand, w, h, bpc int) []uint16 {
	p := make([]uint16, w*h)
	maxV := 1<<bpc - 1
	base := rng.IntN(maxV / 2)
	// codes per column and row of the ramp, in 1/256 codes
	slopeX, slopeY := rng.IntN(512*bpc), rng.IntN(256)
	noisy := rng.IntN(4)
	for i := range h {
		for j := range w {
			v := base + (j*slopeX+i*slopeY)>>8
			switch region := (i*4/h)*4 + j*4/w; {
			case region%4 == noisy:
				v += rng.IntN(1 << max(bpc-6, 1))
			case region == 5:
				v = base // flat
			case region == 10:
				v = base + (i/3+j/5)%3 // fine steps
			}
			p[i*w+j] = uint16(min(max(v, 0), maxV))
		}
	}
	return p
}

// cambiTestOptions are option sets that reach every branch: libvmaf's
// defaults, a v1 model's, the largest contrast with a visibility threshold,
// a smaller encode of lower depth (the nearest-sample scaling and the
// anti-dithering) and the PQ EOTF.
func cambiTestOptions(t testing.TB) []cambiOptions {
	d := defaultCAMBIOptions()
	v1 := d
	v1.visLumThreshold, v1.highResSpeedup, v1.maxVal = 0.06, 1080, 17
	wide := d
	wide.maxLogContrast, wide.visLumThreshold, wide.windowSize = 5, 1, 127
	enc := d
	enc.encWidth, enc.encHeight, enc.encBitDepth = 240, 216, 8
	pq := d
	pq.eotf, pq.cambiEOTF, pq.highResSpeedup = "pq", "pq", 1080
	return []cambiOptions{d, v1, wide, enc, pq}
}

// TestCAMBIMatchesReference runs CAMBI step by step on each path and wants
// the c-values of every scale and the score of the code before its
// kernels (cambi_ref_test.go), bit for bit, at depths 8, 10 and 12, on
// sizes odd and even.
func TestCAMBIMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 26))
	sizes := [][2]int{{216, 216}, {233, 217}, {320, 240}, {401, 223}, {640, 360}}
	if testing.Short() {
		sizes = sizes[:3]
	}
	for _, sz := range sizes {
		w, h := sz[0], sz[1]
		for _, bpc := range []int{8, 10, 12} {
			pic := cambiPicture(rng, w, h, bpc)
			for oi, o := range cambiTestOptions(t) {
				if o.check(w, h, bpc) != nil {
					continue
				}
				ref := newCAMBIState(w, h, bpc, o)
				want := ref.refCompute(pic)
				for _, c := range cambiPaths() {
					s := newCAMBIState(w, h, bpc, o).with(kernelsFor(c))
					got := s.compute(pic)
					if math.Float64bits(got) != math.Float64bits(want) {
						t.Errorf("%dx%d %d-bit options %d %v: score %v, want %v", w, h, bpc, oi, c, got, want)
					}
					checkCAMBIScales(t, s, pic, func(scale int, cv []float32) {
						if !slices.Equal(cv, refCvals[scale]) {
							t.Errorf("%dx%d %d-bit options %d %v: scale %d c-values differ", w, h, bpc, oi, c, scale)
						}
					})
				}
			}
		}
	}
}

// checkCAMBIScales runs compute's steps and hands each scale's c-values
// to check before pooling.
func checkCAMBIScales(t *testing.T, s *cambiState, pic []uint16, check func(scale int, cv []float32)) {
	t.Helper()
	s.preprocess(pic)
	s.spatialMask()
	w, h := s.w, s.h
	for scale := range cambiNumScales {
		if scale > 0 || s.speedup {
			nw, nh := (w+1)>>1, (h+1)>>1
			decimateInPlace(s.img, w, nw, nh)
			decimateInPlace(s.mask, w, nw, nh)
			w, h = nw, nh
		}
		s.filterMode(w, h)
		s.cValues(w, h)
		check(scale, s.cvals[:w*h])
	}
}
