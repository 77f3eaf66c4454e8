//go:build !amd64

package vmaf

// widen8: no vector kernel outside amd64; toSamples does every byte.
func widen8([]byte, []uint16) int { return 0 }
