//go:build !amd64

package vmaf

// vectorKernels: no vector kernels outside amd64.
func vectorKernels(CPU) *kernels { return nil }
