package vmaf

// speedAxpy is SpEED's hottest loop, the row update of its matrix products
// and of its anti-alias filter's vertical pass: d[j] += a*y[j] in float32
// for j < len(d). speedAxpyFor picks the scalar or the vector version for a
// CPU path; both give the same bits.
type speedAxpy func(d, y []float32, a float32)

// speedAxpyGo is the scalar speedAxpy.
func speedAxpyGo(d, y []float32, a float32) {
	y = y[:len(d)]
	for j := range d {
		d[j] += float32(a * y[j])
	}
}

// speedConv converts samples to SpEED's float plane: dst[j] =
// float32(src[j])/scaler + -128 for j < len(dst) (picture_copy).
// speedConvFor picks the scalar or the vector version; both give the same
// bits.
type speedConv func(src []uint16, dst []float32, scaler float32)

// speedConvGo is the scalar speedConv.
func speedConvGo(src []uint16, dst []float32, scaler float32) {
	src = src[:len(dst)]
	for j, v := range src {
		dst[j] = float32(v)/scaler + -128
	}
}
