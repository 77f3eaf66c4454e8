package vmaf

import (
	"math"
	"math/rand/v2"
	"testing"
)

// FuzzSpeedAxpy: the AVX2 row update gives the scalar one's bits on rows
// with a vector part and a tail, including zeros of both signs, subnormals,
// infinities and NaNs.
func FuzzSpeedAxpy(f *testing.F) {
	for _, s := range []struct {
		seed uint64
		n    uint8
	}{{1, 0}, {2, 7}, {3, 8}, {4, 25}, {5, 31}, {6, 200}} {
		f.Add(s.seed, s.n)
	}
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		needAVX2(t)
		r := rand.New(rand.NewPCG(seed, 5))
		special := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -1e-42, float32(math.Inf(1)), float32(math.NaN()), 3e38}
		val := func() float32 {
			if r.IntN(8) == 0 {
				return special[r.IntN(len(special))]
			}
			return float32(r.NormFloat64() * math.Exp(6*r.NormFloat64()))
		}
		d, y := make([]float32, n), make([]float32, n)
		for i := range d {
			d[i], y[i] = val(), val()
		}
		a := val()
		want := append([]float32(nil), d...)
		speedAxpyGo(want, y, a)
		speedAxpyAVX2Row(d, y, a)
		for i := range d {
			if math.Float32bits(d[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(d[i])) && math.IsNaN(float64(want[i]))) {
				t.Fatalf("n %d element %d: %v, scalar %v", n, i, d[i], want[i])
			}
		}
	})
}

// TestSpeedConvAVX2 converts rows of every length to 70 of samples at 8 to
// 16 bits (extremes included) with the AVX2 kernel and wants the scalar
// conversion's bits; FuzzSpeedConv does the same on fuzzed rows.
func TestSpeedConvAVX2(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 71 {
		for bpc := 8; bpc <= 16; bpc++ {
			checkSpeedConv(t, r, n, bpc)
		}
	}
}

func FuzzSpeedConv(f *testing.F) {
	f.Add(uint64(1), uint8(9), uint8(0))
	f.Add(uint64(2), uint8(200), uint8(2))
	f.Add(uint64(3), uint8(64), uint8(8))
	f.Fuzz(func(t *testing.T, seed uint64, n, depth uint8) {
		needAVX2(t)
		checkSpeedConv(t, rand.New(rand.NewPCG(seed, 6)), int(n), 8+int(depth)%9)
	})
}

func checkSpeedConv(t *testing.T, r *rand.Rand, n, bpc int) {
	t.Helper()
	src := make([]uint16, n)
	for i := range src {
		src[i] = uint16(r.IntN(1 << bpc))
		if r.IntN(8) == 0 {
			src[i] = []uint16{0, 1, uint16(1<<bpc - 1), 128 << (bpc - 8)}[r.IntN(4)]
		}
	}
	scaler := float32(int(1) << uint(bpc-8))
	want, got := make([]float32, n), make([]float32, n)
	speedConvGo(src, want, scaler)
	speedConvAVX2Row(src, got, scaler)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("n %d %d-bit sample %d (%d): %v, scalar %v", n, bpc, i, src[i], got[i], want[i])
		}
	}
}
