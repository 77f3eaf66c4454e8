package vmaf

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkVIFStatRow is each vector path's statistic alone on one 1280-pixel row of
// variances like a natural picture's (most pixels above the noise
// threshold, a covariance near the variances).
func BenchmarkVIFStatRow(b *testing.B) {
	needAVX2(b)
	const w = 1280
	rng := rand.New(rand.NewPCG(5, 5))
	sig := &vifSigmas{s1: make([]int32, w), s2: make([]int32, w), s12: make([]int32, w)}
	for j := range w {
		s1 := int32(rng.IntN(1 << 24))
		sig.s1[j], sig.s2[j], sig.s12[j] = s1, s1/2+int32(rng.IntN(1<<20)), s1/3
	}
	tab := vifLog2Table()
	for _, c := range []CPU{CPUAVX2, CPUAVX512} {
		b.Run(c.String(), func(b *testing.B) {
			if !c.Supported() {
				b.Skipf("no %v on this processor", c)
			}
			k := kernelsFor(c)
			var acc vifAcc
			for b.Loop() {
				k.vifStatRow(sig, w, tab, defaultEnhnGainLimit, &acc)
			}
		})
	}
}
