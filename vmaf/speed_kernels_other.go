//go:build !amd64

package vmaf

// speedAxpyFor: no vector kernels outside amd64.
func speedAxpyFor(CPU) speedAxpy { return speedAxpyGo }

// speedConvFor: no vector kernels outside amd64.
func speedConvFor(CPU) speedConv { return speedConvGo }
