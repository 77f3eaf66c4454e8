package vmaf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The CAMBI references (p03, p07, s1..s3) check the whole feature against
// libvmaf. These tests check its sliding-window parts against direct
// definitions on random content, at sizes and windows the clips do not
// reach (windows wider than the picture included).

// blockyPlane returns a w x h plane of 10-bit values near v0 in random
// blocks, so that flat areas and small steps both occur.
func blockyPlane(rng *xorshift, w, h, v0 int) []uint16 {
	p := make([]uint16, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if x%3 == 0 || y%4 == 0 || rng.next(5) == 0 {
				p[y*w+x] = uint16(v0 + rng.next(6))
			} else {
				p[y*w+x] = p[y*w+x-1]
			}
		}
	}
	return p
}

func TestCAMBICValuesDirect(t *testing.T) {
	rng := xorshift(12345)
	for _, tc := range []struct{ w, h, window, v0 int }{
		{40, 30, 7, 100}, {23, 50, 9, 170}, {64, 64, 15, 2}, {5, 12, 9, 300}, {33, 7, 21, 176},
	} {
		t.Run(fmt.Sprintf("%dx%d/ws=%d/v=%d", tc.w, tc.h, tc.window, tc.v0), func(t *testing.T) {
			s := newCAMBIState(tc.w, tc.h, 10, defaultCAMBIOptions())
			s.window = tc.window
			copy(s.img, blockyPlane(&rng, tc.w, tc.h, tc.v0))
			for i := range s.mask {
				s.mask[i] = rng.next(4) != 0
			}
			s.cValues(tc.w, tc.h)
			pad := tc.window / 2
			count := func(i, j, v int) int {
				if v < s.bandBase || v >= s.bandBase+s.bandSize {
					return 0
				}
				n := 0
				for y := max(i-pad, 0); y <= min(i+pad, tc.h-1); y++ {
					for x := max(j-pad, 0); x <= min(j+pad, tc.w-1); x++ {
						if s.mask[y*tc.w+x] && int(s.img[y*tc.w+x]) == v {
							n++
						}
					}
				}
				return n
			}
			nonzero := 0
			for i := 0; i < tc.h; i++ {
				for j := 0; j < tc.w; j++ {
					var want float32
					if v := int(s.img[i*tc.w+j]); s.mask[i*tc.w+j] && v < s.bandBase+s.bandSize {
						p0 := count(i, j, v)
						for d := range s.numDiffs {
							if v+s.numDiffs > s.tvi[d] {
								continue
							}
							p := max(count(i, j, v+d+1), count(i, j, v-d-1))
							want = max(want, float32(cambiContrastWeights[d]*p0*p)*(1/float32(p+p0)))
						}
					}
					if got := s.cvals[i*tc.w+j]; got != want {
						t.Fatalf("c-value (%d,%d) = %v, want %v", i, j, got, want)
					}
					if want != 0 {
						nonzero++
					}
				}
			}
			if nonzero == 0 && tc.v0 < 170 {
				t.Fatal("no pixel scored: the test checks nothing")
			}
		})
	}
}

func TestCAMBIMaskAndModeDirect(t *testing.T) {
	rng := xorshift(777)
	for _, sz := range [][2]int{{40, 30}, {7, 9}, {3, 3}, {65, 17}} {
		w, h := sz[0], sz[1]
		s := newCAMBIState(w, h, 10, defaultCAMBIOptions())
		img := blockyPlane(&rng, w, h, 200)
		copy(s.img, img)
		s.spatialMask()
		at := func(y, x int) int { return int(img[y*w+x]) }
		for i := 0; i < h; i++ {
			for j := 0; j < w; j++ {
				n := 0
				for y := max(i-3, 0); y <= min(i+3, h-1); y++ {
					for x := max(j-3, 0); x <= min(j+3, w-1); x++ {
						if (x == w-1 || at(y, x) == at(y, x+1)) && (y == h-1 || at(y, x) == at(y+1, x)) {
							n++
						}
					}
				}
				if want := n > s.maskIndex; s.mask[i*w+j] != want {
					t.Fatalf("%dx%d: mask (%d,%d) = %v, want %v (%d zero derivatives)", w, h, i, j, s.mask[i*w+j], want, n)
				}
			}
		}
		// filterMode: inner rows become the vertical mode of the rows'
		// horizontal modes; the first and last rows are kept.
		s.filterMode(w, h)
		hmode := func(y, x int) uint16 {
			if x == 0 || x == w-1 {
				return img[y*w+x]
			}
			return mode3(img[y*w+x-1], img[y*w+x], img[y*w+x+1])
		}
		for i := 0; i < h; i++ {
			for j := 0; j < w; j++ {
				want := img[i*w+j]
				if i > 0 && i < h-1 {
					want = mode3(hmode(i-1, j), hmode(i, j), hmode(i+1, j))
				}
				if got := s.img[i*w+j]; got != want {
					t.Fatalf("%dx%d: mode (%d,%d) = %d, want %d", w, h, i, j, got, want)
				}
			}
		}
	}
}

func TestCAMBIPool(t *testing.T) {
	// The mean of the 60% largest, whatever the order.
	c := []float32{0, 5, 1, 0, 3, 9, 0, 2, 7, 4}
	if got, want := cambiPool(c, 0.6), float64(9+7+5+4+3+2)/6; got != want {
		t.Fatalf("cambiPool = %v, want %v", got, want)
	}
	if got := cambiPool([]float32{2}, 0.6); got != 2 {
		t.Fatalf("one value: %v", got)
	}
}

// quickSelectChecked is cambi.c's quick_select as first written here, with
// Go's bounds checks: the reference for quickSelectDesc's unchecked scans.
func quickSelectChecked(arr []float32, k int) {
	n := len(arr)
	if n == k {
		return
	}
	left, right := 0, n-1
	for left < right {
		pivot := arr[k]
		i, j := left, right
		for {
			for arr[i] > pivot {
				i++
			}
			for arr[j] < pivot {
				j--
			}
			if i <= j {
				arr[i], arr[j] = arr[j], arr[i]
				i++
				j--
			}
			if i > j {
				break
			}
		}
		if j < k {
			left = i
		}
		if k < i {
			right = j
		}
	}
}

// randomCValues returns n values drawn as c-values fall (zeros, a share
// zeros of them, and repeats, products of small integers and reciprocals)
// or, by kind, over many binades, negative, NaN or infinite.
func randomCValues(rng *rand.Rand, n, kind int, zeros float64) []float32 {
	c := make([]float32, n)
	for i := range c {
		switch {
		case rng.Float64() < zeros:
			c[i] = 0
		case kind == 0:
			w, p0, p := 1+rng.IntN(9), 1+rng.IntN(400), 1+rng.IntN(400)
			c[i] = float32(w*p0*p) * (1 / float32(p0+p))
		case kind == 1:
			c[i] = float32(math.Ldexp(rng.Float64(), rng.IntN(120)-60))
		case kind == 2:
			c[i] = []float32{-1, float32(math.NaN()), float32(math.Inf(1)), 1e-45, 3}[rng.IntN(5)]
		default:
			c[i] = float32(rng.IntN(4))
		}
	}
	return c
}

// TestCAMBIPoolOrder checks that the selection leaves the values in the
// order of the bounds-checked quick_select, that the side-by-side sum
// gives the in-order double sum, and that the pooled value (which skips
// the selection where the zeros allow) is the selection's, on
// c-value-like values (where the side-by-side sum applies), over many
// binades and with negative, NaN and infinite values (where it must not),
// with shares of zeros around the 40% that the selection leaves out, at
// every length to 64 and longer.
func TestCAMBIPoolOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range append([]int{1000, 4099, 4104}, func() []int {
		var s []int
		for n := 1; n <= 70; n++ {
			s = append(s, n)
		}
		return s
	}()...) {
		for kind := range 4 {
			for _, zeros := range []float64{0, 0.2, 0.39, 0.4, 0.41, 0.6, 0.99, 1} {
				c := randomCValues(rng, n, kind, zeros)
				k := min(max(int(cambiTopK*float64(n)), 1), n)
				want := append([]float32(nil), c...)
				quickSelectChecked(want, k)
				var wantPool float64
				for _, v := range want[:k] {
					wantPool += float64(v)
				}
				wantPool /= float64(k)
				for _, p := range cambiPaths() {
					scan := kernelsFor(p).cambiScan
					if got := cambiPoolScan(slices.Clone(c), cambiTopK, scan); math.Float64bits(got) != math.Float64bits(wantPool) && !(math.IsNaN(got) && math.IsNaN(wantPool)) {
						t.Fatalf("%v: n=%d kind %d zeros %v: pooled %v, want %v", p, n, kind, zeros, got, wantPool)
					}
					// The scan's count, and its sum where it is exact.
					sum0, nz0, exact0 := cambiScan(c)
					sum1, nz1, exact1 := scan(c)
					if nz1 != nz0 || exact1 != exact0 || exact0 && sum1 != sum0 {
						t.Fatalf("%v: n=%d kind %d zeros %v: scan %v %d %v, want %v %d %v", p, n, kind, zeros, sum1, nz1, exact1, sum0, nz0, exact0)
					}
				}
				quickSelectDesc(c, k)
				for i := range c {
					if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
						t.Fatalf("n=%d kind %d: value %d after the selection is %v, want %v", n, kind, i, c[i], want[i])
					}
				}
				var sum float64
				for _, v := range c[:k] {
					sum += float64(v)
				}
				if got := cambiSum(c[:k]); math.Float64bits(got) != math.Float64bits(sum) && !(math.IsNaN(got) && math.IsNaN(sum)) {
					t.Fatalf("n=%d kind %d: sum %v, want %v", n, kind, got, sum)
				}
			}
		}
	}
}

// TestCAMBISumRounds puts the sum on values whose sum in another order
// rounds differently: the side-by-side sums must not be taken there.
func TestCAMBISumRounds(t *testing.T) {
	// In order every 1 after 2^60 rounds away; side by side, or
	// backwards, they add up first.
	c := []float32{float32(math.Ldexp(1, 60))}
	for range 512 {
		c = append(c, 1)
	}
	var want float64
	for _, v := range c {
		want += float64(v)
	}
	var swapped float64
	for i := len(c) - 1; i >= 0; i-- {
		swapped += float64(c[i])
	}
	if swapped == want {
		t.Fatal("the values do not tell the orders apart")
	}
	if got := cambiSum(c); got != want {
		t.Fatalf("sum %v, want the in-order %v", got, want)
	}
	// Pooled with zeros enough for every positive value to be selected:
	// the selection's order must still decide.
	c = append(c, make([]float32, 600)...)
	k := int(cambiTopK * float64(len(c)))
	sel := slices.Clone(c)
	quickSelectChecked(sel, k)
	var in, side [4]float64
	for i, v := range sel[:k] {
		in[0] += float64(v)
		side[i%4] += float64(v)
	}
	if (side[0]+side[1])+(side[2]+side[3]) == in[0] {
		t.Fatal("the selected values do not tell the orders apart")
	}
	if got, want := cambiPool(c, cambiTopK), in[0]/float64(k); got != want {
		t.Fatalf("pooled %v, want the selection's %v", got, want)
	}
}
