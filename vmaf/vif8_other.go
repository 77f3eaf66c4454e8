//go:build !amd64

package vmaf

// vif8Vector: no vector kernels outside amd64.
func vif8Vector(*kernels) bool { return false }

func vifLanesStep(*kernels) int { return 16 }

func vifVert8(*kernels, int, **uint16, **uint16, **int16, int) { panic("vmaf: no vector VIF kernel") }

func vifHoriz8(*kernels, int, **int16, *int32, *int32, *int32, int) {
	panic("vmaf: no vector VIF kernel")
}

func vifSubVert8(*kernels, int, **uint16, **uint16, *uint64, uint32, uint64, int) {
	panic("vmaf: no vector VIF kernel")
}

func vifStat8Row(_ *kernels, _ bool, sig *vifSigmas, w int, t []uint16, egl float64, acc *vifAcc) {
	vifStatRow(sig, 0, w, t, egl, acc)
}
