package vmaf

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// vif8Image makes a w x h plane of bpc-bit samples: noise (most pixels take
// the log branch), a smooth ramp with little noise (many take the other),
// or blocks at the extremes of the range.
func vif8Image(rng *rand.Rand, w, h, bpc, kind int) []uint16 {
	p := make([]uint16, w*h)
	top := 1<<bpc - 1
	for i := range h {
		for j := range w {
			var v int
			switch kind % 3 {
			case 0:
				v = rng.IntN(top + 1)
			case 1:
				v = (i*3+j*2)%(top+1) + rng.IntN(3) - 1
			default:
				v = 0
				if (i/5+j/3+rng.IntN(2))%2 == 0 {
					v = top
				}
			}
			p[i*w+j] = uint16(min(max(v, 0), top))
		}
	}
	return p
}

// vif8Pair is a reference and a distorted picture: the reference, noise
// added, or an unrelated picture.
func vif8Pair(rng *rand.Rand, w, h, bpc, kind int) (ref, dis []uint16) {
	ref = vif8Image(rng, w, h, bpc, kind)
	switch kind / 3 % 3 {
	case 0:
		dis = make([]uint16, len(ref))
		for i, v := range ref {
			dis[i] = uint16(min(max(int(v)+rng.IntN(9)-4, 0), 1<<bpc-1))
		}
	case 1:
		dis = vif8Image(rng, w, h, bpc, kind+1)
	default:
		dis = append([]uint16(nil), ref...)
	}
	return ref, dis
}

// vifLaneSums is each scale's sums with the 16-bit lane statistic's scalar
// form where it applies (scales 1 to 3, and scale 0 at 8 bits), the
// subsampling by the generic path.
func vifLaneSums(w, h int, ref, dis []uint16, bpc int) [4]vifAcc {
	return vifScaleSums(w, h, ref, dis, bpc, &genericKernels, func(s *vifState, r, d []uint16, ww, hh, scale int) {
		if scale > 0 || bpc == 8 {
			s.statistic8(r, d, ww, hh, scale, false, 0, bpc)
		} else {
			s.statistic(r, d, ww, hh, scale, bpc)
		}
	})
}

// vif8Sums is each scale's sums by the statistic of kernel set k.
func vif8Sums(w, h int, ref, dis []uint16, bpc int, k *kernels) [4]vifAcc {
	return vifScaleSums(w, h, ref, dis, bpc, k, func(s *vifState, r, d []uint16, ww, hh, scale int) {
		s.statistic(r, d, ww, hh, scale, bpc)
	})
}

// vifScaleSums runs stat on each scale's images, subsampled by kernel set
// k, and returns the sums it leaves.
func vifScaleSums(w, h int, ref, dis []uint16, bpc int, k *kernels, stat func(s *vifState, r, d []uint16, ww, hh, scale int)) [4]vifAcc {
	_, out := vifScales(w, h, ref, dis, bpc, k, stat)
	return out
}

// vifScales is vifScaleSums, with the state that holds the subsampled images.
func vifScales(w, h int, ref, dis []uint16, bpc int, k *kernels, stat func(s *vifState, r, d []uint16, ww, hh, scale int)) (*vifState, [4]vifAcc) {
	s := newVIFState(w, h, defaultEnhnGainLimit).with(k)
	var out [4]vifAcc
	ww, hh := w, h
	r, d := ref, dis
	for scale := range 4 {
		if scale > 0 {
			s.subsample(r, d, ww, hh, scale, bpc)
			ww, hh = ww/2, hh/2
			r, d = s.ref[scale], s.dis[scale]
		}
		stat(s, r, d, ww, hh, scale)
		out[scale] = s.lastAcc
	}
	return s, out
}

var vif8Sizes = [][2]int{{64, 48}, {53, 37}, {33, 40}, {97, 71}, {176, 144}, {130, 19}}

// TestVIF8Scalar: the 16-bit lane statistic's scalar form gives the
// generic path's sums of scale 0 at 8 bits, and of scales 1 to 3 at every
// depth (where the subsampled means span all 16 bits at 16).
func TestVIF8Scalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, bpc := range []int{8, 10, 12, 16} {
		for _, sz := range vif8Sizes {
			for kind := range 9 {
				w, h := sz[0], sz[1]
				ref, dis := vif8Pair(rng, w, h, bpc, kind)
				want := vif8Sums(w, h, ref, dis, bpc, &genericKernels)
				if got := vifLaneSums(w, h, ref, dis, bpc); got != want {
					t.Fatalf("%dx%d %d-bit kind %d: scalar 16-bit lane statistic %+v, want %+v", w, h, bpc, kind, got, want)
				}
			}
		}
	}
}

// FuzzVIF8 compares whole VIF frames on every path at 8, 10 and 12 bits
// with the generic path, and the 16-bit lane statistic's scalar form with
// it where that form applies.
func FuzzVIF8(f *testing.F) {
	f.Add(uint64(1), uint8(40), uint8(30), uint8(0), uint8(8))
	f.Add(uint64(2), uint8(77), uint8(21), uint8(4), uint8(8))
	f.Add(uint64(3), uint8(200), uint8(45), uint8(8), uint8(8))
	f.Add(uint64(4), uint8(33), uint8(18), uint8(2), uint8(10))
	f.Add(uint64(5), uint8(120), uint8(66), uint8(7), uint8(12))
	f.Fuzz(func(t *testing.T, seed uint64, wb, hb, kind, bpc uint8) {
		w, h := 18+int(wb)%220, 18+int(hb)%120
		b := []int{8, 10, 12}[int(bpc)%3]
		if bpc == 8 || bpc == 10 || bpc == 12 {
			b = int(bpc)
		}
		rng := rand.New(rand.NewPCG(seed, 88))
		ref, dis := vif8Pair(rng, w, h, b, int(kind))
		want := vif8Sums(w, h, ref, dis, b, &genericKernels)
		for _, c := range []CPU{CPUAVX2, CPUAVX512} {
			if !c.Supported() {
				continue
			}
			if got := vif8Sums(w, h, ref, dis, b, kernelsFor(c)); got != want {
				t.Fatalf("%dx%d %d-bit kind %d %v: %+v, want %+v", w, h, b, kind, c, got, want)
			}
		}
		if got := vifLaneSums(w, h, ref, dis, b); got != want {
			t.Fatalf("%dx%d %d-bit kind %d: scalar 16-bit lane statistic %+v, want %+v", w, h, b, kind, got, want)
		}
	})
}

// TestVIFSubsampleBeside: compute, which subsamples each scale beside its
// statistic, gives the sums and the subsampled images of the passes one
// after another (vifScaleSums), on every path, depth and size, odd heights
// (whose last row keeps no row of the next scale) among them.
func TestVIFSubsampleBeside(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, c := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
		if !c.Supported() {
			continue
		}
		for _, bpc := range []int{8, 10, 12, 16} {
			for _, sz := range append(vif8Sizes, [2]int{40, 33}, [2]int{35, 35}) {
				w, h := sz[0], sz[1]
				ref, dis := vif8Pair(rng, w, h, bpc, rng.IntN(9))
				apart, sums := vifScales(w, h, ref, dis, bpc, kernelsFor(c), func(s *vifState, r, d []uint16, ww, hh, scale int) {
					s.statistic(r, d, ww, hh, scale, bpc)
				})
				var want [4]vifScaleScore
				for scale, a := range sums {
					want[scale] = a.score()
				}
				beside := newVIFState(w, h, defaultEnhnGainLimit).with(kernelsFor(c))
				if got := beside.compute(ref, dis, bpc); got != want {
					t.Fatalf("%v %dx%d %d-bit: %+v, want %+v", c, w, h, bpc, got, want)
				}
				for scale := 1; scale < 4; scale++ {
					if !slices.Equal(beside.ref[scale], apart.ref[scale]) || !slices.Equal(beside.dis[scale], apart.dis[scale]) {
						t.Fatalf("%v %dx%d %d-bit: scale %d's images differ", c, w, h, bpc, scale)
					}
				}
			}
		}
	}
}
