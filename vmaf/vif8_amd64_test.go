package vmaf

import (
	"math/rand/v2"
	"testing"
)

// vif8KernelCase checks the 16-bit lane kernels of a scale on one row of w
// pixels against their scalar forms: the vertical pass on random input rows
// of the filter's window (8-bit samples at scale 0, 16-bit at scales 1 to
// 3; kind 0 noise, 1 the extremes 0 and the largest, 2 a few values), the
// horizontal pass on random padded rows of any 16 bits (the kernel is exact
// for all: each filtered sum stays below 2^32).
func vif8KernelCase(t *testing.T, k *kernels, rng *rand.Rand, scale, w, kind int) {
	t.Helper()
	n := w &^ (vifLanesStep(k) - 1)
	top := 255
	if scale > 0 {
		top = 65535
	}
	sample := func() uint16 { return laneSample(rng, kind, top) }
	vert := func(refRows, disRows [][]uint16, rows *[8][]int16, j0 int) {
		if scale == 0 {
			vifVert8Cols(refRows, disRows, rows, j0, w)
		} else {
			vifVert16Cols(scale, refRows, disRows, rows, j0, w)
		}
	}
	var refRows, disRows [17][]uint16
	var rref, rdis [17]*uint16
	for k := range refRows {
		refRows[k], disRows[k] = make([]uint16, w), make([]uint16, w)
		for j := range w {
			refRows[k][j], disRows[k][j] = sample(), sample()
		}
		rref[k], rdis[k] = &refRows[k][0], &disRows[k][0]
	}
	got, want := newVIF8Rows(w), newVIF8Rows(w)
	if n > 0 {
		vifVert8(k, scale, &rref[0], &rdis[0], &got.ptr[0], n)
	}
	vert(refRows[:], disRows[:], &got.row, n)
	vert(refRows[:], disRows[:], &want.row, 0)
	for p := range want.row {
		for j := range w {
			if g, e := got.row[p][vifMaxPad+j], want.row[p][vifMaxPad+j]; g != e {
				t.Fatalf("scale %d w %d kind %d: vertical row %d pixel %d: %d, want %d", scale, w, kind, p, j, g, e)
			}
		}
	}
	// Horizontal pass on random rows, the padding mirrored.
	for p := range want.row {
		for j := range w {
			v := int16(rng.Uint32())
			if kind%3 == 1 {
				v = int16(uint16(0xffff*rng.IntN(2)) ^ 0x8000)
			}
			got.row[p][vifMaxPad+j], want.row[p][vifMaxPad+j] = v, v
		}
		pad16(got.row[p], w, len(vifFilters[scale])/2)
		pad16(want.row[p], w, len(vifFilters[scale])/2)
	}
	gs := vifSigmas{s1: make([]int32, w), s2: make([]int32, w), s12: make([]int32, w)}
	ws := vifSigmas{s1: make([]int32, w), s2: make([]int32, w), s12: make([]int32, w)}
	if n > 0 {
		vifHoriz8(k, scale, &got.ptr[0], &gs.s1[0], &gs.s2[0], &gs.s12[0], n)
	}
	vifHoriz8Cols(scale, &got.row, n, w, &gs)
	vifHoriz8Cols(scale, &want.row, 0, w, &ws)
	for j := range w {
		if gs.s1[j] != ws.s1[j] || gs.s2[j] != ws.s2[j] || gs.s12[j] != ws.s12[j] {
			t.Fatalf("scale %d w %d kind %d: pixel %d: sigmas %d %d %d, want %d %d %d", scale, w, kind, j,
				gs.s1[j], gs.s2[j], gs.s12[j], ws.s1[j], ws.s2[j], ws.s12[j])
		}
	}
}

// laneSample is a sample of up to top for the lane kernels' tests: kind 0
// noise, 1 the extremes 0 and top, 2 a few small values.
func laneSample(rng *rand.Rand, kind, top int) uint16 {
	switch kind % 3 {
	case 0:
		return uint16(rng.IntN(top + 1))
	case 1:
		return uint16(top * rng.IntN(2))
	}
	return uint16(rng.IntN(4))
}

func TestVIF8KernelsAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(16, 8))
	for _, c := range vectorPaths {
		if !c.Supported() {
			t.Logf("%v: not on this processor", c)
			continue
		}
		for scale := range 4 {
			for _, w := range []int{9, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 1280, 1283} {
				for kind := range 3 {
					vif8KernelCase(t, kernelsFor(c), rng, scale, w, kind)
				}
			}
		}
	}
}

func FuzzVIF8Kernels(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(0), uint8(0))
	f.Add(uint64(2), uint8(99), uint8(1), uint8(0))
	f.Add(uint64(3), uint8(250), uint8(2), uint8(0))
	f.Add(uint64(4), uint8(7), uint8(1), uint8(1))
	f.Add(uint64(5), uint8(40), uint8(0), uint8(2))
	f.Add(uint64(6), uint8(161), uint8(2), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, n, kind, scale uint8) {
		needAVX2(t)
		for _, c := range vectorPaths {
			if c.Supported() {
				vif8KernelCase(t, kernelsFor(c), rand.New(rand.NewPCG(seed, 16)), int(scale)%4, 9+int(n), int(kind))
			}
		}
	})
}

// BenchmarkVIFAVX2 is one 1280x720 8-bit VIF frame on the AVX2 path alone
// (for profiles; BenchmarkKernels/VIF/avx2 is the figure to report).
func BenchmarkVIFAVX2(b *testing.B) {
	needAVX2(b)
	const w, h = 1280, 720
	ref, dist := synthPair(w, h, 2)
	s := newVIFState(w, h, defaultEnhnGainLimit).with(kernelsFor(CPUAVX2))
	for b.Loop() {
		s.compute(ref[0], dist[0], 8)
	}
}

// vifSubVertCase checks the subsampling's vertical pass to scale, the
// kernel of k's path and vifSubVertCols after it, against the generic
// path's vifSubInit, vifSubPair and vifSubRoundRow on one row of w pixels
// of bpc-bit samples (kind 0 noise, 1 the extremes 0 and the largest, 2 a
// few values): the scale-1 subsampling reads the input's samples, the
// others the 16-bit means of the scale before.
func vifSubVertCase(t *testing.T, k *kernels, rng *rand.Rand, scale, w, bpc, kind int) {
	t.Helper()
	filt := vifFilters[scale]
	fw := len(filt)
	half := fw / 2
	top := 1<<bpc - 1
	shift, round := uint(16), uint64(32768)
	if scale == 1 {
		shift, round = uint(bpc), uint64(1)<<(bpc-1)
	} else {
		top = 65535
	}
	sample := func() uint16 { return laneSample(rng, kind, top) }
	refRows, disRows := make([][]uint16, fw), make([][]uint16, fw)
	var rref, rdis [17]*uint16
	for r := range fw {
		refRows[r], disRows[r] = make([]uint16, w), make([]uint16, w)
		for j := range w {
			refRows[r][j], disRows[r][j] = sample(), sample()
		}
		rref[r], rdis[r] = &refRows[r][0], &disRows[r][0]
	}
	acc, want := make([]uint64, w), make([]uint64, w)
	vifSubInit(filt[half], refRows[half], disRows[half], acc)
	for p := range half {
		vifSubPair(filt[p], refRows[p], refRows[fw-1-p], disRows[p], disRows[fw-1-p], acc)
	}
	vifSubRoundRow(acc, want, round, shift)
	got := make([]uint64, w)
	n := w &^ (vifLanesStep(k) - 1)
	if n > 0 {
		vifSubVert8(k, scale, &rref[0], &rdis[0], &got[0], uint32(round), uint64(shift), n)
	}
	vifSubVertCols(filt, refRows, disRows, got, n, round, shift)
	for j := range w {
		if got[j] != want[j] {
			t.Fatalf("%v scale %d w %d %d-bit kind %d: pixel %d: %#x, want %#x", k.cpu, scale, w, bpc, kind, j, got[j], want[j])
		}
	}
}

func TestVIFSubVertKernels(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(17, 9))
	for _, c := range vectorPaths {
		if !c.Supported() {
			t.Logf("%v: not on this processor", c)
			continue
		}
		for scale := 1; scale < 4; scale++ {
			for _, bpc := range []int{8, 10, 12, 16} {
				for _, w := range []int{1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 640, 643} {
					for kind := range 3 {
						vifSubVertCase(t, kernelsFor(c), rng, scale, w, bpc, kind)
					}
				}
			}
		}
	}
}

func FuzzVIFSubVert(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(0), uint8(0), uint8(0))
	f.Add(uint64(2), uint8(99), uint8(1), uint8(1), uint8(3))
	f.Add(uint64(3), uint8(250), uint8(2), uint8(2), uint8(1))
	f.Add(uint64(4), uint8(7), uint8(1), uint8(0), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, n, kind, scale, depth uint8) {
		needAVX2(t)
		bpc := []int{8, 10, 12, 16}[depth%4]
		for _, c := range vectorPaths {
			if c.Supported() {
				vifSubVertCase(t, kernelsFor(c), rand.New(rand.NewPCG(seed, 17)), 1+int(scale)%3, 1+int(n), bpc, int(kind))
			}
		}
	})
}
