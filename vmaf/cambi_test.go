package vmaf

import (
	"fmt"
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
