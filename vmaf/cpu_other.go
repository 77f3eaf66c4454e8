//go:build !amd64

package vmaf

// Only amd64 has vector kernels.
const (
	hasAVX2   = false
	hasAVX512 = false
)
