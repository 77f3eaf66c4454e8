package vmaf

import "math"

// Pooled summarises one metric over the scored frames.
type Pooled struct {
	Min, Max, Mean float64
	// HarmonicMean is libvmaf's shifted harmonic mean,
	// n / sum(1/(x+1)) - 1, which stays defined for zero scores.
	HarmonicMean float64
}

// pool computes libvmaf's pooled statistics of values
// (libvmaf.c, vmaf_feature_score_pooled).
func pool(values []float64) Pooled {
	if len(values) == 0 {
		return Pooled{Min: math.NaN(), Max: math.NaN(), Mean: math.NaN(), HarmonicMean: math.NaN()}
	}
	p := Pooled{Min: values[0], Max: values[0]}
	var sum, inv float64
	for _, v := range values {
		p.Min = min(p.Min, v)
		p.Max = max(p.Max, v)
		sum += v
		inv += 1.0 / (v + 1.0)
	}
	n := float64(len(values))
	p.Mean = sum / n
	p.HarmonicMean = n/inv - 1.0
	return p
}
