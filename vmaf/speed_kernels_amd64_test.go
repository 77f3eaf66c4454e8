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
