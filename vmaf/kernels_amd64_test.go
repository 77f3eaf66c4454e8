package vmaf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The fuzz tests feed each AVX2 kernel random rows within the bounds its
// callers guarantee and want the scalar kernel's words exactly. Rows are
// 1..8 words longer than a vector multiple, so the scalar tail runs too.

// rowLen turns a fuzzed byte into a row length with a tail of 1..8 words
// past a multiple of 4 (the tail of 4..8 covers a whole extra vector).
func rowLen(n uint8) int { return int(n%16)*4 + 1 + int(n/16)%8 }

// vifRingRows makes random ring rows of products of samples of bpc bits,
// as vifRing.fill does.
func vifRingRows(rng *rand.Rand, w, bpc int, packSq bool) (p, q, y, x []uint64) {
	p, q, y, x = make([]uint64, w), make([]uint64, w), make([]uint64, w), make([]uint64, w)
	ref, dis := make([]uint16, w), make([]uint16, w)
	for j := range ref {
		ref[j], dis[j] = uint16(rng.IntN(1<<bpc)), uint16(rng.IntN(1<<bpc))
	}
	r := vifRing{p: [][]uint64{p}, q: [][]uint64{q}, y: [][]uint64{y}, x: [][]uint64{x}}
	r.fill(0, ref, dis, packSq)
	return p, q, y, x
}

func FuzzVIFTaps(f *testing.F) {
	for _, s := range []struct {
		seed   uint64
		n, bpc uint8
		tap    uint8
	}{{1, 0, 8, 0}, {2, 37, 10, 8}, {3, 255, 12, 3}, {4, 130, 16, 16}} {
		f.Add(s.seed, s.n, s.bpc, s.tap)
	}
	f.Fuzz(func(t *testing.T, seed uint64, n, bpcIn, tap uint8) {
		needAVX2(t)
		rng := rand.New(rand.NewPCG(seed, 1))
		w := rowLen(n)
		bpc := 8 + int(bpcIn)%9 // 8..16 bits
		packSq := bpc == 8
		// Any tap of the 17-tap filter: with the centre, the sums stay
		// within the filter's total of 2^16, as in the real pass.
		fv := vifFilters[0][int(tap)%17]
		pa, qa, ya, xa := vifRingRows(rng, w, bpc, packSq)
		pb, qb, yb, xb := vifRingRows(rng, w, bpc, packSq)
		accs := func() [4][]uint64 {
			return [4][]uint64{make([]uint64, w), make([]uint64, w), make([]uint64, w), make([]uint64, w)}
		}
		want, got := accs(), accs()
		vifTapInit(fv, pa, qa, ya, xa, want[0], want[1], want[2], want[3], packSq)
		vifTapInitAVX2(fv, pa, qa, ya, xa, got[0], got[1], got[2], got[3], packSq)
		if !equalRows(want, got) {
			t.Fatalf("vifTapInitAVX2(w=%d, bpc=%d): %v, want %v", w, bpc, got, want)
		}
		vifTapPair(fv, pa, pb, qa, qb, ya, yb, xa, xb, want[0], want[1], want[2], want[3], packSq)
		vifTapPairAVX2(fv, pa, pb, qa, qb, ya, yb, xa, xb, got[0], got[1], got[2], got[3], packSq)
		if !equalRows(want, got) {
			t.Fatalf("vifTapPairAVX2(w=%d, bpc=%d): %v, want %v", w, bpc, got, want)
		}
	})
}

func equalRows(a, b [4][]uint64) bool {
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func FuzzVIFRow(f *testing.F) {
	for _, s := range []struct {
		seed     uint64
		n, scale uint8
	}{{1, 0, 0}, {2, 77, 1}, {3, 255, 2}, {4, 200, 3}} {
		f.Add(s.seed, s.n, s.scale)
	}
	f.Fuzz(func(t *testing.T, seed uint64, n, scale uint8) {
		needAVX2(t)
		rng := rand.New(rand.NewPCG(seed, 2))
		w := rowLen(n)
		filt := vifFilters[int(scale)%4]
		// The padded rows the vertical pass writes: means of at most 16
		// bits packed in two lanes, squares and products below 2^32 (the
		// bound the vertical pass's rounding keeps). Small
		// values (flat areas) are as likely as large ones.
		row := func(pack bool) []uint64 {
			r := make([]uint64, w+2*vifMaxPad)
			bitsN := 1 + rng.IntN(32)
			for i := range r {
				if pack {
					r[i] = rng.Uint64N(1<<16) | rng.Uint64N(1<<16)<<32
				} else {
					r[i] = rng.Uint64N(1 << bitsN)
				}
			}
			return r
		}
		mu, xx, yy, xy := row(true), row(false), row(false), row(false)
		// Shape some pixels like real statistics: variances from a
		// mean, so that every branch of the statistic runs.
		for i := range mu {
			if rng.IntN(2) == 0 {
				m1, m2 := mu[i]&0xffff, mu[i]>>32&0xffff
				xx[i] = min(m1*m1+rng.Uint64N(1<<20), 1<<32-1)
				yy[i] = min(m2*m2+rng.Uint64N(1<<20), 1<<32-1)
				xy[i] = min(m1*m2+rng.Uint64N(1<<19), 1<<32-1)
			}
		}
		sig := func() *vifSigmas {
			return &vifSigmas{s1: make([]int32, w), s2: make([]int32, w), s12: make([]int32, w)}
		}
		tab := vifLog2Table()
		egl := []float64{defaultEnhnGainLimit, 1}[rng.IntN(2)]
		var want, got vifAcc
		vifRowGeneric(filt, mu, xx, yy, xy, w, tab, egl, &want, nil)
		gs := sig()
		vifRowAVX2(filt, mu, xx, yy, xy, w, tab, egl, &got, gs)
		if got != want {
			t.Fatalf("vifRowAVX2(w=%d, taps=%d): %+v, want %+v", w, len(filt), got, want)
		}
		ws := sig()
		vifSigmaRow(filt, mu, xx, yy, xy, 0, w, ws)
		if !slices.Equal(gs.s1, ws.s1) || !slices.Equal(gs.s2, ws.s2) || !slices.Equal(gs.s12, ws.s12) {
			t.Fatalf("vifSigmaAVX2(w=%d, taps=%d): %+v, want %+v", w, len(filt), gs, ws)
		}
	})
}

// FuzzVIFStat feeds the statistic kernel any variances (sigma2² is never
// negative, as vifSigma clamps it), extreme ones included.
func FuzzVIFStat(f *testing.F) {
	f.Add(uint64(1), uint8(0), false)
	f.Add(uint64(2), uint8(200), true)
	// Rows of 1 to 7 pixels past a multiple of the kernel's 8.
	for k := range 8 {
		f.Add(uint64(10+k), uint8(17+k), k%2 == 0)
	}
	f.Fuzz(func(t *testing.T, seed uint64, n uint8, egl1 bool) {
		needAVX2(t)
		vifStatCase(t, seed, n, egl1)
	})
}

// TestVIFStatAVX2 runs the statistic kernels (AVX2 and, where the processor
// has it, AVX-512) on many rows of any variances
// (FuzzVIFStat's cases), so that rare lanes (the noise threshold, the
// extremes, out-of-range conversions) meet every position of a step.
func TestVIFStatAVX2(t *testing.T) {
	needAVX2(t)
	for seed := range uint64(300) {
		vifStatCase(t, 1000+seed, uint8(seed*37), seed%3 == 0)
	}
}

// vifStatCase compares the vector statistic of one random row with the
// scalar one.
func vifStatCase(t *testing.T, seed uint64, n uint8, egl1 bool) {
	t.Helper()
	{
		rng := rand.New(rand.NewPCG(seed, 3))
		w := rowLen(n)
		sig := &vifSigmas{s1: make([]int32, w), s2: make([]int32, w), s12: make([]int32, w)}
		pick := func() int32 {
			switch rng.IntN(4) {
			case 0: // anything
				return int32(rng.Uint32())
			case 1: // near the noise threshold
				return int32(vifSigmaNsq - 64 + rng.IntN(128))
			case 2: // extremes
				return []int32{0, 1, -1, 1<<31 - 1, -1 << 31, 1<<31 - vifSigmaNsq}[rng.IntN(6)]
			}
			return int32(rng.IntN(1 << (1 + rng.IntN(30))))
		}
		for j := range w {
			sig.s1[j], sig.s2[j], sig.s12[j] = pick(), max(pick(), 0), pick()
		}
		// Runs of flat pixels (no log pixel) and of log pixels without a
		// numerator, as in real pictures: whole vectors of them skip the
		// kernels' gathers.
		for j := 0; j < w; {
			run := 8 + rng.IntN(40)
			kind := rng.IntN(3)
			for ; run > 0 && j < w; run, j = run-1, j+1 {
				switch kind {
				case 0:
					sig.s1[j] = int32(rng.IntN(vifSigmaNsq))
				case 1:
					sig.s1[j] = vifSigmaNsq + int32(rng.IntN(1<<20))
					sig.s12[j] = -int32(rng.IntN(1 << 20))
				}
			}
		}
		egl := defaultEnhnGainLimit
		if egl1 {
			egl = 1
		}
		tab := vifLog2Table()
		var want, got vifAcc
		vifStatRow(sig, 0, w, tab, egl, &want)
		vifStatRowAVX2(sig, w, tab, egl, &got)
		if got != want {
			t.Fatalf("vifStatAVX2(w=%d): %+v, want %+v", w, got, want)
		}
		if CPUAVX512.Supported() {
			got = vifAcc{}
			vifStatRowAVX512(sig, w, tab, egl, &got)
			if got != want {
				t.Fatalf("vifStatAVX512(w=%d): %+v, want %+v", w, got, want)
			}
		}
	}
}

// TestVIFSubTapsWidths runs the subsampling pass's vertical kernels of
// every path on rows of every length up to 40 (every tail past a step of
// 4 and of 8), with 16-bit samples at their extremes mixed in.
func TestVIFSubTapsWidths(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(41, 42))
	for w := 1; w <= 40; w++ {
		filt := vifFilters[1+w%3]
		fc, fv := filt[len(filt)/2], filt[w%(len(filt)/2)]
		row := func() []uint16 {
			r := make([]uint16, w)
			for j := range r {
				r[j] = []uint16{0, 65535, uint16(rng.Uint32())}[rng.IntN(3)]
			}
			return r
		}
		ra, rb, da, db := row(), row(), row(), row()
		paths := map[string][2]func(uint64, []uint16, []uint16, []uint16, []uint16, []uint64){
			"AVX2": {func(f uint64, ra, _, da, _ []uint16, acc []uint64) { vifSubInitAVX2(f, ra, da, acc) }, vifSubPairAVX2},
		}
		if CPUAVX512.Supported() {
			paths["AVX512"] = [2]func(uint64, []uint16, []uint16, []uint16, []uint16, []uint64){
				func(f uint64, ra, _, da, _ []uint16, acc []uint64) { vifSubInitAVX512(f, ra, da, acc) }, vifSubPairAVX512,
			}
		}
		want := make([]uint64, w)
		vifSubInit(fc, ra, da, want)
		vifSubPair(fv, ra, rb, da, db, want)
		for name, k := range paths {
			got := make([]uint64, w)
			k[0](fc, ra, nil, da, nil, got)
			k[1](fv, ra, rb, da, db, got)
			if !slices.Equal(got, want) {
				t.Fatalf("%s subsampling taps (w=%d): %v, want %v", name, w, got, want)
			}
		}
	}
}

// FuzzVIFSubTaps checks the subsampling pass's vertical kernels on samples
// of up to 16 bits and any tap of the filters of scales 1 to 3.
func FuzzVIFSubTaps(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(8), uint8(0))
	f.Add(uint64(2), uint8(99), uint8(16), uint8(7))
	f.Fuzz(func(t *testing.T, seed uint64, n, bpcIn, tap uint8) {
		needAVX2(t)
		rng := rand.New(rand.NewPCG(seed, 4))
		w := rowLen(n)
		bpc := 8 + int(bpcIn)%9
		// The centre tap starts the sums and one other pair adds to them:
		// within the filter's total of 2^16, as in the real pass.
		filt := vifFilters[1+int(tap)%3]
		fc, fv := filt[len(filt)/2], filt[int(tap/3)%(len(filt)/2)]
		row := func() []uint16 {
			r := make([]uint16, w)
			for j := range r {
				r[j] = uint16(rng.IntN(1 << bpc))
			}
			return r
		}
		ra, rb, da, db := row(), row(), row(), row()
		want, got := make([]uint64, w), make([]uint64, w)
		vifSubInit(fc, ra, da, want)
		vifSubInitAVX2(fc, ra, da, got)
		if !slices.Equal(got, want) {
			t.Fatalf("vifSubTapInitAVX2(w=%d): %v, want %v", w, got, want)
		}
		vifSubPair(fv, ra, rb, da, db, want)
		vifSubPairAVX2(fv, ra, rb, da, db, got)
		if !slices.Equal(got, want) {
			t.Fatalf("vifSubTapPairAVX2(w=%d): %v, want %v", w, got, want)
		}
		if CPUAVX512.Supported() {
			vifSubInit(fc, ra, da, want)
			vifSubInitAVX512(fc, ra, da, got)
			if !slices.Equal(got, want) {
				t.Fatalf("vifSubTapInitAVX512(w=%d): %v, want %v", w, got, want)
			}
			vifSubPair(fv, ra, rb, da, db, want)
			vifSubPairAVX512(fv, ra, rb, da, db, got)
			if !slices.Equal(got, want) {
				t.Fatalf("vifSubTapPairAVX512(w=%d): %v, want %v", w, got, want)
			}
		}
	})
}

// FuzzMotionSAD compares the vector motion SAD with the scalar one on
// random planes of 8 to 12 bits, smooth or noisy, of odd and even sizes.
func FuzzMotionSAD(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(0), uint8(8))
	f.Add(uint64(2), uint8(77), uint8(9), uint8(12))
	f.Fuzz(func(t *testing.T, seed uint64, wIn, hIn, bpcIn uint8) {
		needAVX2(t)
		rng := rand.New(rand.NewPCG(seed, 5))
		w, h := 8+int(wIn)%120, 3+int(hIn)%20
		bpc := 8 + int(bpcIn)%5
		maxV := 1<<bpc - 1
		prev, cur := make([]uint16, w*h), make([]uint16, w*h)
		noisy := rng.IntN(2) == 0
		for i := range prev {
			prev[i] = uint16(rng.IntN(maxV + 1))
			cur[i] = prev[i]
			if noisy || rng.IntN(8) == 0 {
				cur[i] = uint16(rng.IntN(maxV + 1))
			}
		}
		checkMotionSAD(t, prev, cur, w, h, bpc, fmt.Sprintf("%dx%d, %d-bit", w, h, bpc))
	})
}

// TestMotionSADExtremes compares the vector motion SAD with the scalar one
// where the 16-bit lanes are tightest: differences of the full range in
// stripes and checkerboards (the vertical sums at their largest, the
// horizontal products' sum past 2^31), at every depth the kernel takes, and
// a frame with samples above its depth, which the kernel hands to the
// scalar code.
func TestMotionSADExtremes(t *testing.T) {
	needAVX2(t)
	const w, h = 83, 11
	patterns := map[string]func(i, j int) bool{
		"all":          func(i, j int) bool { return true },
		"rows":         func(i, j int) bool { return i%2 == 0 },
		"columns":      func(i, j int) bool { return j%2 == 0 },
		"checkerboard": func(i, j int) bool { return (i+j)%2 == 0 },
		"blocks":       func(i, j int) bool { return i/3%2 == j/5%2 },
	}
	for bpc := 8; bpc <= 12; bpc++ {
		maxV := uint16(1<<bpc - 1)
		for name, on := range patterns {
			for _, sign := range []bool{false, true} {
				prev, cur := make([]uint16, w*h), make([]uint16, w*h)
				for i := range h {
					for j := range w {
						if on(i, j) {
							prev[i*w+j] = maxV
						} else {
							cur[i*w+j] = maxV
						}
					}
				}
				if sign {
					prev, cur = cur, prev
				}
				checkMotionSAD(t, prev, cur, w, h, bpc, fmt.Sprintf("%d-bit %s (swapped %v)", bpc, name, sign))
			}
		}
		// Samples above the depth: the 16-bit differences would wrap.
		prev, cur := make([]uint16, w*h), make([]uint16, w*h)
		for i := range prev {
			prev[i] = uint16(i * 7919)
		}
		checkMotionSAD(t, prev, cur, w, h, bpc, fmt.Sprintf("%d-bit with samples above the depth", bpc))
	}
}

// checkMotionSAD compares the motion SAD of every vector path this
// processor has with the scalar one.
func checkMotionSAD(t *testing.T, prev, cur []uint16, w, h, bpc int, what string) {
	t.Helper()
	row := make([]int64, w)
	want := motionSAD(prev, cur, w, h, bpc, row)
	paths := map[string]func([]uint16, []uint16, int, int, int, []int64, *motionRows) uint64{"AVX2": motionSADAVX2}
	if CPUAVX512.Supported() {
		paths["AVX512"] = motionSADAVX512
	}
	for name, sad := range paths {
		var m motionRows
		if got := sad(prev, cur, w, h, bpc, row, &m); got != want {
			t.Errorf("%s: motionSAD%s = %d, want %d", what, name, got, want)
		}
	}
}

// FuzzADMDWT0 compares both passes of ADM's first DWT level with the
// scalar ones, on samples of 8 to 16 bits (in a third of the rows some
// beyond the depth) and rows of 1 to 8 samples past a vector multiple.
func FuzzADMDWT0(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(8))
	f.Add(uint64(2), uint8(140), uint8(16))
	f.Add(uint64(3), uint8(3), uint8(10))
	f.Fuzz(func(t *testing.T, seed uint64, n, bpcIn uint8) {
		needAVX2(t)
		rng := rand.New(rand.NewPCG(seed, 6))
		w := 33 + 8*int(n%16) + int(n/16)%8 // ADM needs 33
		bpc := 8 + int(bpcIn)%9
		checkADMDWT0H(t, checkADMDWT0V(t, rng, w, bpc, n%3 == 0))
	})
}

// checkADMDWT0H compares the horizontal pass of a vertically filtered row
// t (int16 values) with the scalar one.
func checkADMDWT0H(t *testing.T, row []int16) {
	t.Helper()
	w := len(row)
	ind := dwtIndexRows(w)
	wantH, gotH := int32Rows((w+1)/2), int32Rows((w+1)/2)
	admDWT0H(row, wantH[0], wantH[1], ind)
	dwt0HAVX2(row, gotH[0], gotH[1], ind)
	if !slices.Equal(gotH[0], wantH[0]) || !slices.Equal(gotH[1], wantH[1]) {
		t.Fatalf("admDWT0HAVX2(w=%d): %v, want %v", w, gotH, wantH)
	}
	if CPUAVX512.Supported() {
		gotH = int32Rows((w + 1) / 2)
		dwt0HAVX512(row, gotH[0], gotH[1], ind)
		if !slices.Equal(gotH[0], wantH[0]) || !slices.Equal(gotH[1], wantH[1]) {
			t.Fatalf("admDWT0HAVX512(w=%d): %v, want %v", w, gotH, wantH)
		}
	}
}

// TestADMDWT0AVX2 runs both passes of ADM's first DWT level on rows 1 to
// 8 samples past a vector multiple at every depth from 8 to 16 bits, with
// samples within the depth and, in one row of four, beyond it (a sample of
// 2^15 or more sends the row from the multiply-add kernel to the wide
// one), and the horizontal pass on rows of int16 extremes.
func TestADMDWT0AVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(21, 22))
	eachTail([]int{8, 9, 10, 11, 12, 13, 14, 15, 16}, func(w, bpc int) {
		checkADMDWT0H(t, checkADMDWT0V(t, rng, w, bpc, rng.IntN(4) == 0))
	})
	// The vertical pass takes 16 samples a step (32 in AVX-512): every tail.
	for w := 33; w <= 130; w++ {
		for _, bpc := range []int{8, 10, 16} {
			checkADMDWT0H(t, checkADMDWT0V(t, rng, w, bpc, w%4 == 0))
		}
	}
	eachTail([]int{0}, func(w, _ int) {
		row := make([]int16, w)
		for j := range row {
			row[j] = []int16{-32768, 32767, 0, -1, int16(rng.Uint32())}[rng.IntN(5)]
		}
		checkADMDWT0H(t, row)
	})
}

// checkADMDWT0V compares the vertical pass of four random rows of w
// samples of depth bpc (with wild, any 16-bit samples) with the scalar
// one and returns its low-pass row.
func checkADMDWT0V(t *testing.T, rng *rand.Rand, w, bpc int, wild bool) []int16 {
	t.Helper()
	var r [4][]uint16
	for k := range r {
		r[k] = make([]uint16, w)
		for j := range r[k] {
			r[k][j] = uint16(rng.IntN(1 << bpc))
			if wild && rng.IntN(16) == 0 {
				r[k][j] = uint16(rng.Uint32())
			}
		}
	}
	addVP := int32(1) << uint(bpc-1)
	want, got := [2][]int16{make([]int16, w), make([]int16, w)}, [2][]int16{make([]int16, w), make([]int16, w)}
	admDWT0V(r[0], r[1], r[2], r[3], want[0], want[1], uint(bpc), addVP)
	dwt0VAVX2(r[0], r[1], r[2], r[3], got[0], got[1], uint(bpc), addVP)
	if !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Fatalf("admDWT0VAVX2(w=%d, %d-bit, wild %v): %v, want %v", w, bpc, wild, got, want)
	}
	if CPUAVX512.Supported() {
		got = [2][]int16{make([]int16, w), make([]int16, w)}
		dwt0VAVX512(r[0], r[1], r[2], r[3], got[0], got[1], uint(bpc), addVP)
		if !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
			t.Fatalf("admDWT0VAVX512(w=%d, %d-bit, wild %v): %v, want %v", w, bpc, wild, got, want)
		}
	}
	return want[0]
}

// int32Rows is a pair of zeroed rows of n values.
func int32Rows(n int) [2][]int32 { return [2][]int32{make([]int32, n), make([]int32, n)} }

// dwtIndexRows is the DWT's source columns for a row of w samples.
func dwtIndexRows(w int) *[4][]int {
	var ind [4][]int
	for k := range ind {
		ind[k] = make([]int, (w+1)/2)
	}
	dwtIndices(&ind, w)
	return &ind
}

// FuzzADMCM0 compares one row of the scale-0 contrast measure with the
// scalar row on random int16 bands (scale 0 stores int16), extremes
// included, with the row above and below in either order (reflected rows).
func FuzzADMCM0(f *testing.F) {
	f.Add(uint64(1), uint8(0), false)
	f.Add(uint64(2), uint8(200), true)
	f.Fuzz(func(t *testing.T, seed uint64, n uint8, flip bool) {
		needAVX2(t)
		checkADMCM(t, rand.New(rand.NewPCG(seed, 7)), 33+int(n%64), 0, flip)
	})
}

// FuzzADMCMS is FuzzADMCM0 for scales 1 to 3, on any int32 bands and
// weights.
func FuzzADMCMS(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(1), false)
	f.Add(uint64(2), uint8(200), uint8(3), true)
	f.Fuzz(func(t *testing.T, seed uint64, n, scale uint8, flip bool) {
		needAVX2(t)
		checkADMCM(t, rand.New(rand.NewPCG(seed, 16)), 33+int(n%64), 1+int(scale)%3, flip)
	})
}

// TestADMCMAVX2 runs the contrast measure's kernels on rows whose scored
// part is 1 to 8 columns past a vector multiple, at every scale.
func TestADMCMAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(17, 18))
	eachTail([]int{0, 1, 2, 3}, func(w, scale int) { checkADMCM(t, rng, w+2, scale, rng.IntN(2) == 0) })
}

// checkADMCM compares one row of a scale's contrast measure with the scalar
// row on random bands of three rows of w columns: int16 at scale 0, any
// int32 at scales 1 to 3 (with random Q32 weights), extremes included.
func checkADMCM(t *testing.T, rng *rand.Rand, w, scale int, flip bool) {
	t.Helper()
	band := func() []int32 {
		b := make([]int32, 3*w)
		for k := range b {
			switch {
			case rng.IntN(8) == 0 && scale == 0:
				b[k] = []int32{-32768, 32767, 0, -1}[rng.IntN(4)]
			case rng.IntN(8) == 0:
				b[k] = []int32{math.MinInt32, math.MaxInt32, -32768, 32767, 0, -1}[rng.IntN(6)]
			case scale == 0:
				b[k] = int32(int16(rng.Uint32() >> (16 + rng.IntN(16))))
			default:
				b[k] = int32(rng.Uint32()) >> rng.IntN(32)
			}
		}
		return b
	}
	var r admCMRow
	r.stride, r.w = w, w
	r.left, r.right = 1+rng.IntN(4), w-1-rng.IntN(4)
	for k := range 3 {
		r.src[k], r.ca[k], r.fl[k] = band(), band(), band()
	}
	p := admCMShifts(w, 3, scale)
	r.shiftHCub, r.shiftDCub, r.addHCub, r.addDCub = p.ShiftCub, p.ShiftDCub, p.AddCub, p.AddDCub
	// The weights of the default options, of a v1 model's, or random ones
	// (scale 0's below 2^16, as its uint16 i_rfactor).
	switch k := rng.IntN(3); {
	case k < 2 && scale == 0:
		o := []admOptions{defaultADMOptions(), admV1Options(3, 1080)}[k]
		irf := o.irf0()
		r.irf = [3]int64{int64(irf[0]), int64(irf[1]), int64(irf[2])}
	case k < 2:
		r.irf = admIRF([]admOptions{defaultADMOptions(), admV1Options(3, 1080)}[k].rfactors(scale))
	case scale == 0:
		r.irf = [3]int64{int64(rng.Uint32() >> 16), int64(rng.Uint32() >> 16), int64(rng.Uint32() >> 16)}
	default:
		r.irf = [3]int64{int64(rng.Uint32()), int64(rng.Uint32()), int64(rng.Uint32())}
	}
	up, down := 0, 2
	if flip {
		up, down = 2, 0
	}
	scalar := admCM0Row
	vectors := map[string]func(*admCMRow, int, int, int) (int64, int64, int64){"AVX2": admCM0RowAVX2}
	if CPUAVX512.Supported() {
		vectors["AVX512"] = admCM0RowAVX512
	}
	if scale > 0 {
		scalar = admCMSRow
		vectors["AVX2"] = admCMSRowAVX2
		if CPUAVX512.Supported() {
			vectors["AVX512"] = admCMSRowAVX512
		}
	}
	h0, v0, d0 := scalar(&r, up, 1, down, r.left, r.right)
	for name, vector := range vectors {
		h1, v1, d1 := vector(&r, up, 1, down)
		if h0 != h1 || v0 != v1 || d0 != d1 {
			t.Fatalf("%s contrast measure kernel (w=%d, scale %d): %d %d %d, want %d %d %d", name, w, scale, h1, v1, d1, h0, v0, d0)
		}
	}
}

// FuzzVIFRound compares the rounding of the vertical sums with the scalar
// rounding, at each scale's shifts for 8 to 15-bit samples, with sums up to
// the filter's total times the largest sample.
func FuzzVIFRound(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(8), uint8(0))
	f.Add(uint64(2), uint8(99), uint8(15), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, n, bpcIn, scale uint8) {
		needAVX2(t)
		rng := rand.New(rand.NewPCG(seed, 8))
		w := rowLen(n)
		bpc := 8 + int(bpcIn)%8
		r := vifRounding{roundMu: 32768, shiftMu: 16, roundSq: 32768, shiftSq: 16, bpc: bpc}
		if scale%4 == 0 {
			r.shiftMu, r.roundMu = uint(bpc), uint64(1)<<uint(bpc-1)
			r.shiftSq, r.roundSq = uint(2*(bpc-8)), 0
			if bpc > 8 {
				r.roundSq = uint64(1) << (r.shiftSq - 1)
			}
			r.packSq = bpc == 8
		}
		maxMean := uint64(1)<<16*(uint64(1)<<bpc-1) + 1
		maxSq := maxMean * (uint64(1)<<bpc - 1)
		acc := func(lim uint64, packed bool) []uint64 {
			a := make([]uint64, w)
			for j := range a {
				a[j] = rng.Uint64N(lim)
				if packed {
					a[j] |= rng.Uint64N(lim) << 32
				}
			}
			return a
		}
		accP, accX := acc(maxMean, true), acc(maxSq, false)
		accQ, accY := acc(maxSq, false), acc(maxSq, false)
		if r.packSq {
			accQ = acc(maxSq, true)
		}
		rows := func() [4][]uint64 {
			return [4][]uint64{make([]uint64, w), make([]uint64, w), make([]uint64, w), make([]uint64, w)}
		}
		want, got := rows(), rows()
		vifRoundRow(accP, accQ, accY, accX, want[0], want[1], want[2], want[3], r)
		vifRoundAVX2(accP, accQ, accY, accX, got[0], got[1], got[2], got[3], r)
		if !equalRows(want, got) {
			t.Fatalf("vifRoundAVX2(w=%d, %+v): %v, want %v", w, r, got, want)
		}
	})
}

// FuzzADMCSF0 compares scale 0's CSF with the scalar one on any int32
// coefficients (both wrap alike) with each band's rounding and weight:
// the default one or any below 2^16 (other CSFs and viewing conditions).
func FuzzADMCSF0(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(0))
	f.Add(uint64(2), uint8(77), uint8(2))
	f.Add(uint64(3), uint8(50), uint8(5))
	f.Fuzz(func(t *testing.T, seed uint64, n, band uint8) {
		needAVX2(t)
		rng := rand.New(rand.NewPCG(seed, 9))
		w := rowLen(n) + 4
		irf := [3]int32{36453, 36453, 49417}[band%3]
		if band >= 3 {
			// Another viewing condition's or CSF's weight.
			irf = int32(rng.Uint32() >> 16)
		}
		add := [3]int32{16384, 16384, 65535}[band%3]
		shift := [3]uint{15, 15, 17}[band%3]
		src := make([]int32, w)
		for j := range src {
			src[j] = int32(rng.Uint32()) >> rng.IntN(32)
		}
		want := [2][]int32{make([]int32, w), make([]int32, w)}
		got := [2][]int32{make([]int32, w), make([]int32, w)}
		admCSF0Row(src, want[0], want[1], irf, add, shift)
		admCSF0AVX2Row(src, got[0], got[1], irf, add, shift)
		if !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
			t.Fatalf("admCSF0AVX2(w=%d): %v, want %v", w, got, want)
		}
		if CPUAVX512.Supported() {
			got = [2][]int32{make([]int32, w), make([]int32, w)}
			admCSF0AVX512Row(src, got[0], got[1], irf, add, shift)
			if !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
				t.Fatalf("admCSF0AVX512(w=%d): %v, want %v", w, got, want)
			}
		}
	})
}

// admDecoupleCase makes a row segment of w coefficients per band: int16
// ones for narrow (scale 0), any int32 otherwise, with the distorted bands
// often a scaled copy of the reference (so that the angle test and the gain
// limit run) and extremes mixed in.
func admDecoupleCase(rng *rand.Rand, w int, narrow bool) *admDecoupleRows {
	extremes := []int32{0, 1, -1, 32767, -32768, 16384, -16385}
	if !narrow {
		extremes = append(extremes, math.MaxInt32, math.MinInt32, 1<<26+1, -(1<<27)-3, 32768, 65535, -65537)
	}
	coef := func() int32 {
		switch rng.IntN(6) {
		case 0:
			return extremes[rng.IntN(len(extremes))]
		case 1:
			return int32(rng.IntN(65)) - 32
		}
		v := int32(rng.Uint32()) >> rng.IntN(32)
		if narrow {
			v = int32(int16(v))
		}
		return v
	}
	d := &admDecoupleRows{angle: make([]int32, w)}
	for b := range 3 {
		d.o[b], d.t[b] = make([]int32, w), make([]int32, w)
		d.r[b], d.a[b] = make([]int32, w), make([]int32, w)
	}
	for j := range w {
		gain := []float64{1, 0.5, 1.5, -0.7, 3, 0.999}[rng.IntN(6)]
		scaled := rng.IntN(2) == 0
		for b := range 3 {
			o := coef()
			t := coef()
			if scaled {
				v := float64(o)*gain + float64(rng.IntN(5)-2)
				if narrow {
					v = min(max(v, math.MinInt16), math.MaxInt16)
				} else {
					v = min(max(v, math.MinInt32), math.MaxInt32)
				}
				t = int32(v)
			}
			d.o[b][j], d.t[b][j] = o, t
		}
	}
	return d
}

// checkADMDecouple compares the vector decoupling of a row segment with the
// scalar one, and the vector angle test with admAngle.
func checkADMDecouple(t *testing.T, rng *rand.Rand, w int, narrow bool, egl float64) {
	t.Helper()
	want := admDecoupleCase(rng, w, narrow)
	admDecoupleRow(want, 0, w, egl, narrow)
	checkADMDecoupleWith(t, want, w, narrow, egl, "AVX2", admDecoupleAVX2Row)
	if CPUAVX512.Supported() {
		checkADMDecoupleWith(t, want, w, narrow, egl, "AVX512", admDecoupleAVX512Row)
	}
}

// checkADMDecoupleWith compares one path's decoupling with the scalar
// result want.
func checkADMDecoupleWith(t *testing.T, want *admDecoupleRows, w int, narrow bool, egl float64, path string, row func(*admDecoupleRows, float64, bool)) {
	t.Helper()
	got := &admDecoupleRows{o: want.o, t: want.t, angle: make([]int32, w)}
	for b := range 3 {
		got.r[b], got.a[b] = make([]int32, w), make([]int32, w)
	}
	row(got, egl, narrow)
	// The angle row holds the vector part: 8 coefficients a step at
	// scale 0, 4 at the others.
	for j := range w &^ 7 {
		wantAngle := admAngle(want.o[0][j], want.o[1][j], want.t[0][j], want.t[1][j], float64(admCos1DegSq))
		if (got.angle[j] != 0) != wantAngle || (got.angle[j] != 0 && got.angle[j] != -1) {
			t.Fatalf("admAngleAVX2(w=%d, narrow=%v) pixel %d (o %d %d, t %d %d) = %d, want %v",
				w, narrow, j, want.o[0][j], want.o[1][j], want.t[0][j], want.t[1][j], got.angle[j], wantAngle)
		}
	}
	for b := range 3 {
		for j := range w {
			if got.r[b][j] != want.r[b][j] || got.a[b][j] != want.a[b][j] {
				t.Fatalf("%s decoupling (w=%d, narrow=%v, egl=%v) band %d pixel %d (o %d, t %d): r %d a %d, want r %d a %d",
					path, w, narrow, egl, b, j, want.o[b][j], want.t[b][j], got.r[b][j], got.a[b][j], want.r[b][j], want.a[b][j])
			}
		}
	}
}

// TestADMDecoupleAVX2 runs the decoupling kernels on rows 1 to 8
// coefficients past a vector multiple, at scale 0 (int16) and scales 1 to 3
// (int32), with the default gain limit, none and a fractional one.
func TestADMDecoupleAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(10, 11))
	// Variants: scale 0 or not, times the default gain limit, none (both
	// whole: scale 0's integer kernel) or one with a fraction.
	eachTail([]int{0, 1, 2, 3, 4, 5}, func(w, v int) {
		checkADMDecouple(t, rng, w, v < 3, []float64{defaultEnhnGainLimit, 1, 1.2}[v%3])
	})
	// AVX-512 takes scale 0 under a whole gain 16 coefficients a step,
	// then 8, and the angle test 8 a step, then 4: every tail past 16.
	for w := 16; w <= 64; w++ {
		for _, egl := range []float64{defaultEnhnGainLimit, 1, 1.2} {
			checkADMDecouple(t, rng, w, true, egl)
			checkADMDecouple(t, rng, w, false, egl)
		}
	}
}

// FuzzADMDecouple is TestADMDecoupleAVX2 on fuzzed seeds and widths.
func FuzzADMDecouple(f *testing.F) {
	f.Add(uint64(1), uint8(0), false, uint8(0))
	f.Add(uint64(2), uint8(200), true, uint8(1))
	f.Add(uint64(3), uint8(77), true, uint8(2))
	f.Add(uint64(4), uint8(9), true, uint8(0))
	f.Fuzz(func(t *testing.T, seed uint64, n uint8, narrow bool, gain uint8) {
		needAVX2(t)
		egl := []float64{defaultEnhnGainLimit, 1, 1.2, 65535}[gain%4]
		checkADMDecouple(t, rand.New(rand.NewPCG(seed, 12)), rowLen(n), narrow, egl)
	})
}

// TestADMAngleRounding checks the angle kernels' rounding of the int64
// products to float32 where it is hard: ties, and values whose bits beyond
// a double's 53 decide the rounding (a conversion through double alone
// rounds twice and goes the wrong way). cos1 is set per case so that the
// test's boundary lies between the two float32 candidates of the dot
// product: a wrong rounding flips the result.
func TestADMAngleRounding(t *testing.T) {
	needAVX2(t)
	type vec struct{ oh, ov, th, tv int32 }
	wide := []vec{
		{1 << 30, 1, 1<<24 + 1, 1},  // 2^54 + 2^30 + 1: above the tie by a bit below double's
		{1 << 30, 0, 1<<24 + 1, 0},  // 2^54 + 2^30: a tie, to even (down)
		{1 << 30, 1, 1<<24 + 3, 1},  // above the tie, odd
		{1 << 30, 0, 1<<24 + 3, 0},  // a tie, to even (up)
		{1 << 30, 1, 1<<24 + 1, -1}, // below the tie
		{math.MaxInt32, 3, math.MaxInt32, 5},
		{1<<31 - 1<<7, 1, 1<<31 - 1<<6, 1},
	}
	narrow := []vec{
		{16384, 16, 16384, 1}, // 2^28 + 2^4: a tie, to even (down)
		{16384, 16, 16384, 3}, // 2^28 + 48: a tie, to even (up)
		{16384, 17, 16384, 1}, // above the tie
		{16384, 15, 16384, 1}, // below the tie
		{32767, -32768, 32767, -32768},
		{-32768, -32768, -32768, -32768}, // 2^31 in every product
	}
	check := func(cases []vec, isWide bool) {
		for _, c := range cases {
			x := int64(c.oh)*int64(c.th) + int64(c.ov)*int64(c.tv)
			y := int64(c.oh)*int64(c.oh) + int64(c.ov)*int64(c.ov)
			z := int64(c.th)*int64(c.th) + int64(c.tv)*int64(c.tv)
			f := float32(x)
			// The other candidate: the float32 neighbour on x's side.
			other := math.Nextafter32(f, float32(math.Inf(1)))
			if float64(f) > float64(x) {
				other = math.Nextafter32(f, float32(math.Inf(-1)))
			}
			mid := (float64(f) + float64(other)) / 2 / 4096
			yz := float64(float32(y)) / 4096 * (float64(float32(z)) / 4096)
			for _, cos1 := range []float64{mid * mid / yz, float64(admCos1DegSq)} {
				row := func(v int32) []int32 { return []int32{v, v, v, v} }
				angle := make([]int32, 4)
				wideArg := uint64(0)
				if isWide {
					wideArg = 1
				}
				admAngleAVX2(&row(c.oh)[0], &row(c.ov)[0], &row(c.th)[0], &row(c.tv)[0], &angle[0], cos1, wideArg, 4)
				want := admAngle(c.oh, c.ov, c.th, c.tv, cos1)
				for _, a := range angle {
					if (a != 0) != want {
						t.Errorf("angle kernel (wide=%v) on %+v, cos1 %v: %d, want %v", isWide, c, cos1, a, want)
					}
				}
			}
		}
	}
	check(wide, true)
	check(narrow, false)
	check(narrow, true)
}

// checkADMDWTS compares both passes of the DWT of scales 1 to 3 with the
// scalar ones on a row of w samples of any int32 (extremes included), with
// the vertical and horizontal roundings of the given scale.
func checkADMDWTS(t *testing.T, rng *rand.Rand, w, scale int) {
	t.Helper()
	sample := func() int32 {
		switch rng.IntN(6) {
		case 0:
			return []int32{math.MaxInt32, math.MinInt32, 0, -1, 1, 32767, -32768}[rng.IntN(7)]
		case 1:
			return int32(int16(rng.Uint32()))
		}
		return int32(rng.Uint32()) >> rng.IntN(32)
	}
	var r [4][]int32
	for k := range r {
		r[k] = make([]int32, w)
		for j := range r[k] {
			r[k][j] = sample()
		}
	}
	addV, shV := dwtSAddVP[scale-1], dwtSShiftVP[scale-1]
	addH, shH := dwtSAddHP[scale-1], dwtSShiftHP[scale-1]
	want, got := int32Rows(w), int32Rows(w)
	admDWTSV(r[0], r[1], r[2], r[3], want[0], want[1], addV, shV)
	dwtSVAVX2(r[0], r[1], r[2], r[3], got[0], got[1], addV, shV)
	if !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Fatalf("admDWTSVAVX2(w=%d, scale %d): %v, want %v", w, scale, got, want)
	}
	if CPUAVX512.Supported() {
		got = int32Rows(w)
		dwtSVAVX512(r[0], r[1], r[2], r[3], got[0], got[1], addV, shV)
		if !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
			t.Fatalf("admDWTSVAVX512(w=%d, scale %d): %v, want %v", w, scale, got, want)
		}
	}
	ind := dwtIndexRows(w)
	for _, src := range [][]int32{want[0], r[0]} {
		wantH, gotH := int32Rows((w+1)/2), int32Rows((w+1)/2)
		admDWTSH(src, wantH[0], wantH[1], ind, addH, shH)
		dwtSHAVX2(src, gotH[0], gotH[1], ind, addH, shH)
		if !slices.Equal(gotH[0], wantH[0]) || !slices.Equal(gotH[1], wantH[1]) {
			t.Fatalf("admDWTSHAVX2(w=%d, scale %d): %v, want %v", w, scale, gotH, wantH)
		}
		if CPUAVX512.Supported() {
			gotH = int32Rows((w + 1) / 2)
			dwtSHAVX512(src, gotH[0], gotH[1], ind, addH, shH)
			if !slices.Equal(gotH[0], wantH[0]) || !slices.Equal(gotH[1], wantH[1]) {
				t.Fatalf("admDWTSHAVX512(w=%d, scale %d): %v, want %v", w, scale, gotH, wantH)
			}
		}
	}
}

// TestADMDWTSAVX2 runs the DWT kernels of scales 1 to 3 on rows 1 to 8
// samples past a vector multiple, and on the short rows that leave the
// horizontal kernel nothing.
func TestADMDWTSAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(13, 14))
	eachTail([]int{1, 2, 3}, func(w, scale int) { checkADMDWTS(t, rng, w, scale) })
	for scale := 1; scale <= 3; scale++ {
		for w := 4; w <= 16; w++ {
			checkADMDWTS(t, rng, w, scale)
		}
	}
}

// FuzzADMDWTS is TestADMDWTSAVX2 on fuzzed seeds and widths.
func FuzzADMDWTS(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(1))
	f.Add(uint64(2), uint8(140), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, n, scale uint8) {
		needAVX2(t)
		checkADMDWTS(t, rand.New(rand.NewPCG(seed, 15)), 4+int(n), 1+int(scale)%3)
	})
}

// FuzzADMCSFS compares the CSF of scales 1 to 3 with the scalar one on any
// int32 coefficients and Q32 weights.
func FuzzADMCSFS(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(1))
	f.Add(uint64(2), uint8(77), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, n, scale uint8) {
		needAVX2(t)
		checkADMCSFS(t, rand.New(rand.NewPCG(seed, 19)), rowLen(n), 1+int(scale)%3)
	})
}

// TestADMCSFSAVX2 runs the CSF kernel of scales 1 to 3 on rows 1 to 8
// coefficients past a vector multiple.
func TestADMCSFSAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(20, 21))
	eachTail([]int{1, 2, 3}, func(w, scale int) { checkADMCSFS(t, rng, w, scale) })
}

// eachTail calls check 10 times for each variant and each row width 1 to
// 8 past a vector multiple.
func eachTail(variants []int, check func(w, variant int)) {
	for _, v := range variants {
		for extra := 1; extra <= 8; extra++ {
			for range 10 {
				check(64+extra, v)
			}
		}
	}
}

func checkADMCSFS(t *testing.T, rng *rand.Rand, w, scale int) {
	t.Helper()
	src := make([]int32, w)
	for j := range src {
		src[j] = int32(rng.Uint32()) >> rng.IntN(32)
		if rng.IntN(8) == 0 {
			src[j] = []int32{math.MinInt32, math.MaxInt32, 0, -1, 1}[rng.IntN(5)]
		}
	}
	irf := admIRF(defaultADMOptions().rfactors(scale))[rng.IntN(3)]
	if rng.IntN(2) == 0 {
		irf = int64([]uint32{rng.Uint32(), math.MaxUint32, 0, 1}[rng.IntN(4)])
	}
	want, got := int32Rows(w), int32Rows(w)
	admCSFSRow(src, want[0], want[1], irf)
	admCSFSAVX2Row(src, got[0], got[1], irf)
	if !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Fatalf("admCSFSAVX2(w=%d, irf %d): %v, want %v", w, irf, got, want)
	}
	if CPUAVX512.Supported() {
		got = int32Rows(w)
		admCSFSAVX512Row(src, got[0], got[1], irf)
		if !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
			t.Fatalf("admCSFSAVX512(w=%d, irf %d): %v, want %v", w, irf, got, want)
		}
	}
}

// checkVIFSubH compares the subsampling's rounding and horizontal pass with
// the scalar ones for a row of 2*ow (+1 when odd) samples of bpc bits at a
// scale, with the vertical sums up to the filter's total times the largest
// sample.
func checkVIFSubH(t *testing.T, rng *rand.Rand, ow, scale, bpc int, odd bool) {
	t.Helper()
	w := 2 * ow
	if odd {
		w++
	}
	filt := vifFilters[scale]
	shift, round := uint(16), uint64(32768)
	if scale == 1 {
		shift, round = uint(bpc), uint64(1)<<uint(bpc-1)
	}
	maxSum := uint64(1)<<16*(uint64(1)<<bpc-1) + 1
	acc := make([]uint64, w)
	for j := range acc {
		lo, hi := rng.Uint64N(maxSum), rng.Uint64N(maxSum)
		if rng.IntN(8) == 0 {
			lo, hi = maxSum-1, []uint64{0, maxSum - 1}[rng.IntN(2)]
		}
		acc[j] = lo | hi<<32
	}
	want, got := make([]uint64, w+2*vifMaxPad), make([]uint64, w+2*vifMaxPad)
	vifSubRoundRow(acc, want[vifMaxPad:vifMaxPad+w], round, shift)
	vifSubRoundAVX2Row(acc, got[vifMaxPad:vifMaxPad+w], round, shift)
	if !slices.Equal(got, want) {
		t.Fatalf("vifSubRoundAVX2(w=%d, %d-bit, scale %d): %v, want %v", w, bpc, scale, got, want)
	}
	padRow(want, w, len(filt)/2)
	rows := func() [2][]uint16 { return [2][]uint16{make([]uint16, ow), make([]uint16, ow)} }
	wantR, gotR := rows(), rows()
	vifSubRow(filt, want, wantR[0], wantR[1], 0)
	vifSubRowAVX2(filt, want, gotR[0], gotR[1])
	if !slices.Equal(gotR[0], wantR[0]) || !slices.Equal(gotR[1], wantR[1]) {
		t.Fatalf("vifSubHAVX2(w=%d, %d-bit, scale %d): %v, want %v", w, bpc, scale, gotR, wantR)
	}
}

// TestVIFSubHAVX2 runs the subsampling's horizontal kernels at every scale
// on outputs 1 to 8 past a vector multiple, at 8, 10, 12 and 16 bits.
func TestVIFSubHAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(22, 23))
	eachTail([]int{1, 2, 3}, func(w, scale int) {
		for _, bpc := range []int{8, 10, 12, 16} {
			checkVIFSubH(t, rng, w, scale, bpc, rng.IntN(2) == 0)
		}
	})
}

// FuzzVIFSubH is TestVIFSubHAVX2 on fuzzed seeds, widths and bit depths.
func FuzzVIFSubH(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(1), uint8(8), false)
	f.Add(uint64(2), uint8(99), uint8(3), uint8(16), true)
	f.Fuzz(func(t *testing.T, seed uint64, n, scale, bpcIn uint8, odd bool) {
		needAVX2(t)
		checkVIFSubH(t, rand.New(rand.NewPCG(seed, 24)), rowLen(n)+4, 1+int(scale)%3, 8+int(bpcIn)%9, odd)
	})
}

// checkVIFFill compares the ring fill with the scalar one on a row pair of
// w samples of bpc bits (extremes included), with packed squares or not.
func checkVIFFill(t *testing.T, rng *rand.Rand, w, bpc int, packSq bool) {
	t.Helper()
	ring := func() *vifRing {
		mk := func() [][]uint64 { return [][]uint64{make([]uint64, w)} }
		return &vifRing{p: mk(), q: mk(), y: mk(), x: mk()}
	}
	ref, dis := make([]uint16, w), make([]uint16, w)
	for j := range ref {
		ref[j], dis[j] = uint16(rng.IntN(1<<bpc)), uint16(rng.IntN(1<<bpc))
		if rng.IntN(8) == 0 {
			ref[j], dis[j] = uint16(1<<bpc-1), uint16([]int{0, 1<<bpc - 1}[rng.IntN(2)])
		}
	}
	want, got := ring(), ring()
	want.fill(0, ref, dis, packSq)
	vifFillAVX2Row(got, 0, ref, dis, packSq)
	for k, pair := range [][2][]uint64{{got.p[0], want.p[0]}, {got.q[0], want.q[0]}, {got.y[0], want.y[0]}, {got.x[0], want.x[0]}} {
		if !slices.Equal(pair[0], pair[1]) {
			t.Fatalf("vifFillAVX2(w=%d, %d-bit, packSq %v) row %d: %v, want %v", w, bpc, packSq, k, pair[0], pair[1])
		}
	}
}

// TestVIFFillAVX2 runs the ring fill kernel on rows 1 to 8 samples past a
// vector multiple at 8 bits (packed squares) and 10, 12 and 16 bits.
func TestVIFFillAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(25, 26))
	eachTail([]int{8, 10, 12, 16}, func(w, bpc int) { checkVIFFill(t, rng, w, bpc, bpc == 8) })
}

// FuzzVIFFill is TestVIFFillAVX2 on fuzzed seeds, widths and bit depths.
func FuzzVIFFill(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(8), true)
	f.Add(uint64(2), uint8(99), uint8(16), false)
	f.Fuzz(func(t *testing.T, seed uint64, n, bpcIn uint8, packSq bool) {
		needAVX2(t)
		checkVIFFill(t, rand.New(rand.NewPCG(seed, 27)), rowLen(n), 8+int(bpcIn)%9, packSq)
	})
}

// checkADMDen compares the denominators' row sums with the scalar ones on a
// row of w coefficients: int16 ones at scale 0 (with any int32 now and then:
// the sum takes the low 16 bits of |c|), any int32 at scales 1 to 3 (|MinInt32|
// makes scale 2's rounded square 2^32 + 1), with the roundings of a random
// frame size.
func checkADMDen(t *testing.T, rng *rand.Rand, w, scale int) {
	t.Helper()
	row := make([]int32, w)
	for j := range row {
		switch {
		case rng.IntN(8) == 0:
			row[j] = []int32{math.MinInt32, math.MaxInt32, -32768, 32767, 0, -1}[rng.IntN(6)]
		case scale == 0:
			row[j] = int32(int16(rng.Uint32() >> rng.IntN(16)))
		default:
			row[j] = int32(rng.Uint32()) >> rng.IntN(32)
		}
	}
	wide := CPUAVX512.Supported()
	if scale == 0 {
		if got, want := admDen0AVX2Row(row), admDen0Row(row); got != want {
			t.Fatalf("admDen0AVX2(w=%d) = %d, want %d", w, got, want)
		}
		if got, want := admDen0AVX512Row(row), admDen0Row(row); wide && got != want {
			t.Fatalf("admDen0AVX512(w=%d) = %d, want %d", w, got, want)
		}
		return
	}
	p := admDenSShifts(16+rng.IntN(2000), 16+rng.IntN(2000), scale)
	if got, want := admDenSAVX2Row(row, &p), admDenSRow(row, &p); got != want {
		t.Fatalf("admDenSAVX2(w=%d, scale %d, %+v) = %d, want %d", w, scale, p, got, want)
	}
	if !wide {
		return
	}
	if got, want := admDenSAVX512Row(row, &p), admDenSRow(row, &p); got != want {
		t.Fatalf("admDenSAVX512(w=%d, scale %d, %+v) = %d, want %d", w, scale, p, got, want)
	}
}

// TestADMDenAVX2 runs the denominators' kernels at every scale on rows 1 to
// 8 coefficients past a vector multiple.
func TestADMDenAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(30, 31))
	eachTail([]int{0, 1, 2, 3}, func(w, scale int) { checkADMDen(t, rng, w, scale) })
	for w := 1; w <= 40; w++ { // every tail past 8 and past 4
		for scale := range 4 {
			checkADMDen(t, rng, w, scale)
		}
	}
}

// FuzzADMDen is TestADMDenAVX2 on fuzzed seeds and widths.
func FuzzADMDen(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(0))
	f.Add(uint64(2), uint8(99), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, n, scale uint8) {
		needAVX2(t)
		checkADMDen(t, rand.New(rand.NewPCG(seed, 32)), rowLen(n), int(scale)%4)
	})
}
