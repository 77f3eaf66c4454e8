package vmaf

// SpEED's hot loops, replaceable by vector kernels of the same arithmetic:
// the row update of its matrix products and the covariance sum.
var (
	speedAxpyRow = speedAxpyRowGo
	speedCov     = speedCovGo
)
