package train

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vmafx/vmafx/vmaf"
)

// BenchmarkAdd measures the learner's throughput on samples of 240 frames (ten seconds
// at 24 fps) of vmaf_v0.6.1 features, one SGD-EMA step each: samples/s is what one
// trainer core learns from. Run: go test -run '^$' -bench Add -count 3 ./trainer/train
func BenchmarkAdd(b *testing.B) {
	base, err := vmaf.LoadModel("vmaf_v0.6.1")
	if err != nil {
		b.Fatal(err)
	}
	l, err := New(base, Config{LearningRate: 0.05, EMADecay: 0.9})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	frames := make([][]float64, 240)
	for i := range frames {
		// adm2, motion2, vif scales 0..3 in their usual ranges.
		frames[i] = []float64{0.8 + 0.2*rng.Float64(), 10 * rng.Float64(), 0.3 + 0.6*rng.Float64(),
			0.6 + 0.4*rng.Float64(), 0.7 + 0.3*rng.Float64(), 0.75 + 0.25*rng.Float64()}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := l.Add(Sample{ID: fmt.Sprint(i), Frames: frames, Label: 50 + 40*rng.Float64()}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}
