package vmaf

import (
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	values := []float64{40, 10, 30, 20, 50} // sorted: 10 20 30 40 50
	for _, tc := range []struct {
		p, want float64
	}{
		{0, 10}, {100, 50}, {50, 30}, {25, 20}, {5, 12}, {1, 10.4}, {90, 46},
	} {
		if got := Percentile(values, tc.p); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Percentile(%v, %g) = %g, want %g", values, tc.p, got, tc.want)
		}
	}
	if values[0] != 40 {
		t.Errorf("Percentile sorted its input: %v", values)
	}
	for _, p := range []float64{-1, 101, math.NaN()} {
		if got := Percentile(values, p); !math.IsNaN(got) {
			t.Errorf("Percentile(p=%g) = %g, want NaN", p, got)
		}
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("Percentile(nil) = %g, want NaN", got)
	}
	if got := Percentile([]float64{7}, 1); got != 7 {
		t.Errorf("Percentile of one value = %g, want 7", got)
	}
}

func TestPoolValuesMatchesResultPooling(t *testing.T) {
	values := []float64{0, 50, 100}
	p := PoolValues(values)
	if p.Min != 0 || p.Max != 100 || p.Mean != 50 {
		t.Errorf("PoolValues = %+v", p)
	}
	// libvmaf's shifted harmonic mean: 3 / (1/1 + 1/51 + 1/101) - 1.
	want := 3/(1.0+1.0/51+1.0/101) - 1
	if math.Abs(p.HarmonicMean-want) > 1e-12 {
		t.Errorf("HarmonicMean = %g, want %g", p.HarmonicMean, want)
	}
}
