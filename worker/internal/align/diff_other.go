//go:build !amd64

package align

// vectorDiff: no vector kernels outside amd64.
func vectorDiff() bool { return false }

func diffAVX2(*float32, *float32, int, *[8]float64) { panic("align: no vector kernel") }
