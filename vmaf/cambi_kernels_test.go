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

// cambiSamples makes n samples of depth bpc, most of them within a few
// codes of one value so that equal neighbours, the mode filter's cases
// and the band's edges all occur.
func cambiSamples(rng *rand.Rand, n, bpc int) []uint16 {
	maxV := 1<<bpc - 1
	base := rng.IntN(maxV + 1)
	s := make([]uint16, n)
	for i := range s {
		v := base + rng.IntN(4) - 1
		if rng.IntN(8) == 0 {
			v = rng.IntN(maxV + 1)
		}
		s[i] = uint16(min(max(v, 0), maxV))
	}
	return s
}

// checkCAMBIKernels runs each CAMBI kernel of path k on random rows of w
// samples of depth bpc and wants the scalar kernel's results.
func checkCAMBIKernels(t *testing.T, k *kernels, rng *rand.Rand, w, bpc int) {
	t.Helper()
	a, b, c := cambiSamples(rng, w, bpc), cambiSamples(rng, w, bpc), cambiSamples(rng, w, bpc)
	for i := range a {
		if rng.IntN(2) == 0 { // columns alike, as in flat areas
			b[i], c[i] = a[i], a[max(i-1, 0)]
		}
	}
	want, got := make([]uint16, w), make([]uint16, w)
	cambiConvRow(a, want, bpc)
	k.cambiConv(a, got, bpc)
	if !slices.Equal(got, want) {
		t.Errorf("w %d %d-bit: cambiConv differs", w, bpc)
	}
	// The anti-dithering's sums, on samples up to 16 bits too.
	for _, wide := range []bool{false, true} {
		r, next := slices.Clone(b), slices.Clone(c)
		if wide {
			for i := range r {
				r[i], next[i] = uint16(rng.Uint32()), uint16(rng.Uint32())
			}
		}
		rg := slices.Clone(r)
		cambiAntiDitherRow(r, next)
		k.cambiAntiDither(rg, next)
		if !slices.Equal(rg, r) {
			t.Errorf("w %d %d-bit wide %v: cambiAntiDither differs", w, bpc, wide)
		}
	}
	cambiMode3Row(a, b, c, want)
	k.cambiMode3(a, b, c, got)
	if !slices.Equal(got, want) {
		t.Errorf("w %d %d-bit: cambiMode3 differs", w, bpc)
	}

	zw, zg := make([]uint8, w), make([]uint8, w)
	for _, next := range [][]uint16{b, a} {
		cambiZeroDerivRow(a, next, zw)
		k.cambiZeroDeriv(a, next, zg)
		if !slices.Equal(zg, zw) {
			t.Errorf("w %d %d-bit: cambiZeroDeriv differs", w, bpc)
		}
	}

	zin, zout := make([]uint8, w), make([]uint8, w)
	csW, csG := make([]uint16, w+6), make([]uint16, w+6)
	for i := range zin {
		zin[i], zout[i] = uint8(rng.IntN(2)), uint8(rng.IntN(2))
		csW[i+3] = uint16(rng.IntN(8))
	}
	copy(csG, csW)
	cambiColSumRow(csW[3:3+w], zin, zout)
	k.cambiColSum(csG[3:3+w], zin, zout)
	if !slices.Equal(csG, csW) {
		t.Errorf("w %d: cambiColSum differs", w)
	}
	for i := range csW {
		csW[i] = uint16(rng.IntN(8))
	}
	mw, mg := make([]bool, w), make([]bool, w)
	for _, thr := range []int{-1, 0, rng.IntN(50), 48, 49} {
		cambiMaskRowGo(csW, mw, thr)
		k.cambiMaskRow(csW, mg, thr)
		if !slices.Equal(mg, mw) {
			t.Errorf("w %d threshold %d: cambiMaskRow differs", w, thr)
		}
	}

	mask := make([]bool, w)
	for i := range mask {
		mask[i] = rng.IntN(3) > 0
	}
	bw, bg := make([]int16, w), make([]int16, w)
	base, nd := max(int(a[0])-rng.IntN(4), 0), 1<<rng.IntN(6)
	for _, size := range []int{0, 1, rng.IntN(8), rng.IntN(1 << bpc), 1 << bpc} {
		cambiBandRow(a, mask, bw, base, size, nd)
		k.cambiBand(a, mask, bg, base, size, nd)
		if !slices.Equal(bg, bw) {
			t.Errorf("w %d %d-bit base %d size %d nd %d: cambiBand differs", w, bpc, base, size, nd)
		}
	}
}

// checkCAMBIDecimate decimates a random picture and mask of w columns and
// a few rows in place with the path's row kernels and wants
// decimateInPlace's planes, the words past the result included.
func checkCAMBIDecimate(t *testing.T, k *kernels, rng *rand.Rand, w, bpc int) {
	t.Helper()
	h := 1 + rng.IntN(5)
	img := cambiSamples(rng, w*h, bpc)
	mask := make([]bool, w*h)
	for i := range mask {
		mask[i] = rng.IntN(2) == 0
	}
	wantImg, wantMask := slices.Clone(img), slices.Clone(mask)
	nw, nh := (w+1)>>1, (h+1)>>1
	decimateInPlace(wantImg, w, nw, nh)
	decimateInPlace(wantMask, w, nw, nh)
	s := &cambiState{img: img, mask: mask, k: k}
	s.decimate(w, nw, nh)
	if !slices.Equal(img, wantImg) || !slices.Equal(mask, wantMask) {
		t.Errorf("%dx%d %d-bit: decimate differs", w, h, bpc)
	}
}

// checkCAMBIHist slides random histograms of rows rows of w columns by
// one row under a window of pad columns each side.
func checkCAMBIHist(t *testing.T, k *kernels, rng *rand.Rand, w, pad, rows int) {
	t.Helper()
	hw := make([]uint16, rows*w+cambiSlack)
	for i := range rows * w {
		hw[i] = uint16(rng.IntN(4096) + 64)
	}
	hg := slices.Clone(hw)
	out, in := make([]int16, w), make([]int16, w)
	for j := range out {
		out[j], in[j] = int16(rng.IntN(rows+1)-1), int16(rng.IntN(rows+1)-1)
		if rng.IntN(3) == 0 {
			in[j] = out[j]
		}
	}
	cambiHistRowGo(hw, w, pad, out, in)
	k.cambiHistRow(hg, w, pad, out, in)
	if !slices.Equal(hg, hw) {
		t.Errorf("w %d pad %d rows %d: cambiHistRow differs", w, pad, rows)
	}
}

// checkCAMBICValues compares the c-values of one row of w pixels from
// random histograms of a band of size rows between nd zero rows each side
// (counts up to the largest window's 65² pixels), random bands (a share of
// -1) and random diffs masks of nd diffs.
func checkCAMBICValues(t *testing.T, k *kernels, rng *rand.Rand, w, rows, nd int) {
	t.Helper()
	total := rows + 2*nd
	hist := make([]uint16, total*w+cambiSlack)
	top := []int{4, 300, 4225}[rng.IntN(3)]
	for i := nd * w; i < (nd+rows)*w; i++ {
		hist[i] = uint16(rng.IntN(top + 1))
	}
	diffs := make([]uint32, total)
	for r := nd; r < nd+rows; r++ {
		if rng.IntN(4) != 0 {
			diffs[r] = rng.Uint32() & (1<<nd - 1)
		}
	}
	band := make([]int16, w)
	for j := range band {
		band[j] = -1
		if rng.IntN(3) != 0 {
			band[j] = int16(nd + rng.IntN(rows))
		}
	}
	// Keep p0 + p within the reciprocal table, as a window's counts are.
	for j, r := range band {
		if r >= 0 {
			for q := range total {
				if q != int(r) {
					hist[q*w+j] = min(hist[q*w+j], uint16(4225)-hist[int(r)*w+j])
				}
			}
		}
	}
	want, got := make([]float32, w), make([]float32, w)
	for j := range got {
		got[j] = -1
	}
	cambiCValuesRowGo(hist, w, band, diffs, want)
	k.cambiCValuesRow(hist, w, band, diffs, got)
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("w %d rows %d nd %d top %d: c-value %d = %v, want %v", w, rows, nd, top, j, got[j], want[j])
		}
	}
}

// TestCAMBIKernelsAVX2 compares each vector CAMBI kernel with the scalar
// one at depths 8, 10 and 12, on widths around the vector's 16 words.
func TestCAMBIKernelsAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(3, 16))
	for _, c := range vectorPaths {
		if !c.Supported() {
			continue
		}
		k := kernelsFor(c)
		for _, w := range []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 18, 31, 32, 33, 47, 63, 64, 65, 66, 100, 257, 1280, 1281} {
			for _, bpc := range []int{8, 10, 12} {
				checkCAMBIKernels(t, k, rng, w, bpc)
				checkCAMBIDecimate(t, k, rng, w, bpc)
			}
			for _, pad := range []int{0, 1, 7, 8, 10, 15, 16, 32, 63} {
				checkCAMBIHist(t, k, rng, w, pad, 1+rng.IntN(12))
			}
			for _, nd := range []int{1, 2, 4, 8, 16, 32} {
				checkCAMBICValues(t, k, rng, w, 1+rng.IntN(40), nd)
			}
		}
	}
}

func FuzzCAMBIKernels(f *testing.F) {
	for _, s := range []struct {
		seed      uint64
		w, pad    uint16
		bpc, rows uint8
	}{{1, 17, 10, 8, 4}, {2, 33, 0, 10, 1}, {3, 1, 3, 12, 9}, {4, 250, 32, 10, 40}, {5, 64, 16, 8, 2}} {
		f.Add(s.seed, s.w, s.pad, s.bpc, s.rows)
	}
	f.Fuzz(func(t *testing.T, seed uint64, w, pad uint16, bpc, rows uint8) {
		needAVX2(t)
		rng := rand.New(rand.NewPCG(seed, 0))
		width := 1 + int(w)%600
		depth := []int{8, 10, 12}[int(bpc)%3]
		k := kernelsFor(CPUAVX2)
		checkCAMBIKernels(t, k, rng, width, depth)
		checkCAMBIDecimate(t, k, rng, width, depth)
		checkCAMBIHist(t, k, rng, width, int(pad)%64, 1+int(rows)%48)
		checkCAMBICValues(t, k, rng, width, 1+int(rows)%48, 1<<(int(pad)%6))
	})
}

// FuzzCAMBIScan compares the vector scan of c-values with cambiScan: the
// count of nonzero values, whether the sum is exact, and then the sum.
func FuzzCAMBIScan(f *testing.F) {
	f.Add(uint64(1), uint16(9), uint8(0), uint8(128))
	f.Add(uint64(2), uint16(4000), uint8(1), uint8(200))
	f.Add(uint64(3), uint16(64), uint8(2), uint8(20))
	f.Add(uint64(4), uint16(17), uint8(3), uint8(255))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, kind, zeros uint8) {
		needAVX2(t)
		rng := rand.New(rand.NewPCG(seed, 9))
		c := randomCValues(rng, int(n), int(kind)%4, float64(zeros)/255)
		sum0, nz0, exact0 := cambiScan(c)
		sum1, nz1, exact1 := kernelsFor(CPUAVX2).cambiScan(c)
		if nz1 != nz0 || exact1 != exact0 || exact0 && sum1 != sum0 {
			t.Fatalf("scan %v %d %v, want %v %d %v", sum1, nz1, exact1, sum0, nz0, exact0)
		}
	})
}
