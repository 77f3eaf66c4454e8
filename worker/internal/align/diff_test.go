package align

import (
	"math"
	"math/rand/v2"
	"testing"
)

// checkDiff compares diff with the scalar sums alone on n samples: the same
// doubles, bit for bit, whichever path diff takes.
func checkDiff(t *testing.T, rng *rand.Rand, n, kind int) {
	t.Helper()
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		switch kind % 3 {
		case 0: // thumbnails on the 8-bit scale
			a[i], b[i] = float32(rng.IntN(256))+rng.Float32(), float32(rng.IntN(256))+rng.Float32()
		case 1: // extremes
			a[i], b[i] = float32(rng.IntN(2))*1023.75, float32(rng.IntN(2))*1023.75
		default: // nearly equal, where rounding shows
			a[i] = rng.Float32() * 100
			b[i] = a[i] + rng.Float32()*1e-3
		}
	}
	var zero [4]float64
	s, abs := diffSums(a, b, 0, zero, zero)
	wantSE := (s[0] + s[1] + s[2] + s[3]) / float64(n)
	wantAE := (abs[0] + abs[1] + abs[2] + abs[3]) / float64(n)
	se, ae := diff(a, b)
	if math.Float64bits(se) != math.Float64bits(wantSE) || math.Float64bits(ae) != math.Float64bits(wantAE) {
		t.Fatalf("n %d kind %d: diff %v %v, want %v %v (vector %v)", n, kind, se, ae, wantSE, wantAE, vectorDiff())
	}
}

func TestDiffPaths(t *testing.T) {
	if !vectorDiff() {
		t.Log("the scalar path only: no vector kernel on this path")
	}
	rng := rand.New(rand.NewPCG(5, 4))
	for _, n := range []int{1, 3, 4, 5, 7, 8, 9, 63, 64, 65, 14400, 14403} {
		for kind := range 3 {
			checkDiff(t, rng, n, kind)
		}
	}
}

func FuzzDiff(f *testing.F) {
	f.Add(uint64(1), uint16(4), uint8(0))
	f.Add(uint64(2), uint16(14400), uint8(1))
	f.Add(uint64(3), uint16(37), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, kind uint8) {
		checkDiff(t, rand.New(rand.NewPCG(seed, 3)), 1+int(n)%20000, int(kind))
	})
}
