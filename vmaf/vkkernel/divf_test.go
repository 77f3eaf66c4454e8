package vkkernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// divfModel is speed_common.glsl's divf in Go, given the device's double quotient q0
// (which Vulkan lets be off by a few ulps), for checking its correction.
func divfModel(a, b float32, q0 float64) float32 {
	q := float32(q0) // f32rne: Go's conversion rounds to nearest, ties to even
	if q == 0 || math.IsInf(float64(q), 0) || math.IsNaN(float64(q)) || math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) {
		return q
	}
	r := float64(a) - float64(q)*float64(b)
	if r == 0 {
		return q
	}
	above := (r > 0) == (b > 0)
	qb := math.Float32bits(q)
	nb := qb - 1
	if above == (q > 0) {
		nb = qb + 1
	}
	q2 := math.Float32frombits(nb)
	r2 := float64(a) - float64(q2)*float64(b)
	if math.Abs(r2) < math.Abs(r) {
		return q2
	}
	return q
}

// TestDivfCorrects: divf's correction gives the correctly rounded float quotient when
// the double quotient it starts from is off by up to 4 double ulps or a float ulp, on
// random operands, the means' (a sum over a count) and exact quotients. (A quotient of
// two floats is never halfway between two floats, so the tie rule never decides.)
func TestDivfCorrects(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	check := func(a, b float32) {
		want := a / b
		exact := float64(a) / float64(b)
		for _, q0 := range []float64{
			exact, math.Nextafter(exact, math.Inf(1)), math.Nextafter(exact, math.Inf(-1)),
			exact * (1 + 4*0x1p-53), exact * (1 - 4*0x1p-53),
			float64(math.Nextafter32(want, float32(math.Inf(1)))), float64(math.Nextafter32(want, float32(math.Inf(-1)))),
		} {
			if got := divfModel(a, b, q0); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%v / %v from %v: %v, want %v", a, b, q0, got, want)
			}
		}
	}
	for range 100000 {
		a := float32(r.NormFloat64() * math.Exp(4*r.NormFloat64()))
		b := float32(r.NormFloat64() * math.Exp(4*r.NormFloat64()))
		check(a, b)
		check(float32(r.IntN(1<<20))/4-128*float32(r.IntN(100)), float32(1+r.IntN(1<<16)))
		// An exact quotient, whose remainder is 0.
		q := math.Float32frombits(0x3f800000 | uint32(r.IntN(1<<23)))
		b2 := float32(1 + r.IntN(255))
		if a2 := float32(float64(q) * float64(b2)); float64(a2) == float64(q)*float64(b2) {
			check(a2, b2)
		}
	}
}
