package vmaf

// speedAxpyFor returns the AVX2 speedAxpy on the AVX2 and AVX-512 paths
// (the latter has no kernel of its own), the scalar one otherwise. CPUAuto
// means BestCPU.
func speedAxpyFor(c CPU) speedAxpy {
	if speedVector(c) {
		return speedAxpyAVX2Row
	}
	return speedAxpyGo
}

// speedVector says whether SpEED's AVX2 kernels serve path c.
func speedVector(c CPU) bool {
	if c == CPUAuto {
		c = BestCPU()
	}
	return (c == CPUAVX2 || c == CPUAVX512) && hasAVX2
}

// speedAxpyAVX2Row runs the AVX2 kernel on the largest multiple of 8
// elements and the scalar code on the rest.
func speedAxpyAVX2Row(d, y []float32, a float32) {
	y = y[:len(d)]
	n := len(d) &^ 7
	if n > 0 {
		speedAxpyAVX2(&d[0], &y[0], a, n)
	}
	for j := n; j < len(d); j++ {
		d[j] += float32(a * y[j])
	}
}

// speedConvFor is speedAxpyFor for speedConv.
func speedConvFor(c CPU) speedConv {
	if speedVector(c) {
		return speedConvAVX2Row
	}
	return speedConvGo
}

// speedConvAVX2Row runs the AVX2 kernel on the largest multiple of 8
// samples and the scalar code on the rest.
func speedConvAVX2Row(src []uint16, dst []float32, scaler float32) {
	src = src[:len(dst)]
	n := len(dst) &^ 7
	if n > 0 {
		speedConvAVX2(&src[0], &dst[0], scaler, n)
	}
	speedConvGo(src[n:], dst[n:], scaler)
}
