package vmaf

// widen8 widens the largest multiple of 32 bytes of src into dst (at
// least as long) with AVX2 where the processor has it, and returns how
// many it did; toSamples does the rest.
func widen8(src []byte, dst []uint16) int {
	n := len(src) &^ 31
	if !hasAVX2 || n == 0 {
		return 0
	}
	_ = dst[n-1]
	widen8AVX2(&src[0], &dst[0], n)
	return n
}

// narrow8 narrows the largest multiple of 32 samples of src into dst (at
// least as long) with AVX2 where the processor has it, and returns how many
// it did; Narrow8 does the rest.
func narrow8(dst []byte, src []uint16) int {
	n := len(src) &^ 31
	if !hasAVX2 || n == 0 {
		return 0
	}
	_ = dst[n-1]
	narrow8AVX2(&src[0], &dst[0], n)
	return n
}
