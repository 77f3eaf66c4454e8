//go:build !amd64

package vmaf

// widen8: no vector kernel outside amd64; toSamples does every byte.
func widen8([]byte, []uint16) int { return 0 }

// narrow8: no vector kernel outside amd64; Narrow8 does every sample.
func narrow8([]byte, []uint16) int { return 0 }
