//go:build amd64

package align

import (
	"sync"

	"github.com/vmafx/vmafx/vmaf"
)

// vectorDiff reports whether diff runs diffAVX2: when the VMAF kernel's path
// (VMAFX_CPU, else the processor's best) has vectors, so that VMAFX_CPU=generic
// keeps the whole worker on scalar code.
var vectorDiff = sync.OnceValue(func() bool {
	c, err := vmaf.EffectiveCPU()
	return err == nil && (c == vmaf.CPUAVX2 || c == vmaf.CPUAVX512)
})
