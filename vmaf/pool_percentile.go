package vmaf

import (
	"math"
	"slices"
)

// Percentile returns the p-th percentile (0 to 100) of values by linear interpolation
// between the closest ranks: numpy's default ("linear"), which is what
// ffmpeg-quality-metrics and most VMAF reports use. The 0th is the minimum, the 100th the
// maximum, the 50th the median. It is NaN for no values or a p outside 0 to 100. values
// is not changed.
func Percentile(values []float64, p float64) float64 {
	return Percentiles(values, p)[0]
}

// Percentiles returns Percentile(values, p) for each p, sorting values once.
func Percentiles(values []float64, ps ...float64) []float64 {
	out := make([]float64, len(ps))
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	for i, p := range ps {
		out[i] = percentileSorted(sorted, p)
	}
	return out
}

func percentileSorted(sorted []float64, p float64) float64 {
	if len(sorted) == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(sorted)-1)
	frac := rank - float64(lo)
	return sorted[lo] + frac*(sorted[hi]-sorted[lo])
}

// PoolValues returns libvmaf's pooled statistics of values (min, max, mean and the
// shifted harmonic mean), as Result.Pooled holds them for a whole video: for pooling a
// part of one, such as a scene.
func PoolValues(values []float64) Pooled { return pool(values) }
