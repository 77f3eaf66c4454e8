package vmaf

// vif8Vector reports whether a kernel set runs statistic8's vector kernels.
func vif8Vector(k *kernels) bool { return k.cpu == CPUAVX2 || k.cpu == CPUAVX512 }

// vifLanesStep is the pixels a step of k's 16-bit lane kernels: 32 on
// the AVX-512 path (zmm), else 16.
func vifLanesStep(k *kernels) int { return 16 << vifLanesPath(k) }

// The 16-bit lane kernels by path (AVX2, AVX-512) and scale.
var (
	vifVertKernels = [2][4]func(ref, dis **uint16, planes **int16, n int){
		{vifVert8S0AVX2, vifVert16S1AVX2, vifVert16S2AVX2, vifVert16S3AVX2},
		{vifVert8S0AVX512, vifVert16S1AVX512, vifVert16S2AVX512, vifVert16S3AVX512},
	}
	vifHorizKernels = [2][4]func(planes **int16, s1, s2, s12 *int32, n int){
		{vifHoriz8S0AVX2, vifHoriz8S1AVX2, vifHoriz8S2AVX2, vifHoriz8S3AVX2},
		{vifHoriz8S0AVX512, vifHoriz8S1AVX512, vifHoriz8S2AVX512, vifHoriz8S3AVX512},
	}
)

// vifSubVertKernels are the subsampling's vertical kernels by path and
// scale (1 to 3; subsample never runs for scale 0).
var vifSubVertKernels = [2][4]func(ref, dis **uint16, dst *uint64, round uint32, shift uint64, n int){
	{nil, vifSubVertS1AVX2, vifSubVertS2AVX2, vifSubVertS3AVX2},
	{nil, vifSubVertS1AVX512, vifSubVertS2AVX512, vifSubVertS3AVX512},
}

// vifSubVert8 runs the subsampling's vertical kernel to scale of k's path
// over n pixels (a multiple of vifLanesStep).
func vifSubVert8(k *kernels, scale int, ref, dis **uint16, dst *uint64, round uint32, shift uint64, n int) {
	vifSubVertKernels[vifLanesPath(k)][scale](ref, dis, dst, round, shift, n)
}

// vifLanesPath indexes the kernel tables: 1 on the AVX-512 path, else 0.
func vifLanesPath(k *kernels) int {
	if k.cpu == CPUAVX512 {
		return 1
	}
	return 0
}

// vifVert8 runs scale's vertical kernel of k's path over n pixels (a
// multiple of vifLanesStep).
func vifVert8(k *kernels, scale int, ref, dis **uint16, planes **int16, n int) {
	vifVertKernels[vifLanesPath(k)][scale](ref, dis, planes, n)
}

// vifHoriz8 runs scale's horizontal kernel of k's path over n pixels (a
// multiple of vifLanesStep); the rows are padded by vifMaxPad, the widest
// filter's half.
func vifHoriz8(k *kernels, scale int, planes **int16, s1, s2, s12 *int32, n int) {
	vifHorizKernels[vifLanesPath(k)][scale](planes, s1, s2, s12, n)
}

// vifStat8Row accumulates a row's statistic from its variances, with k's
// kernel when vector is set.
func vifStat8Row(k *kernels, vector bool, sig *vifSigmas, w int, t []uint16, egl float64, acc *vifAcc) {
	if vector {
		k.vifStatRow(sig, w, t, egl, acc)
	} else {
		vifStatRow(sig, 0, w, t, egl, acc)
	}
}
