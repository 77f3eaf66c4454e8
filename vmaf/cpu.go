package vmaf

import (
	"errors"
	"fmt"
	"os"
)

// CPU names a set of kernels: the scalar Go code or a vector instruction
// set. Every path gives identical integer feature values; only the speed
// differs.
type CPU int

// The kernel paths, slowest first.
const (
	// CPUAuto picks the fastest path the processor supports.
	CPUAuto CPU = iota
	// CPUGeneric is the scalar Go code: the reference and the fallback.
	CPUGeneric
	// CPUAVX2 uses AVX2 kernels (x86-64).
	CPUAVX2
	// CPUAVX512 uses AVX-512 kernels where the build has them and the AVX2
	// ones elsewhere; it needs AVX-512 F, BW, DQ, VL and CD.
	CPUAVX512
)

// EnvCPU is the environment variable that forces a kernel path: generic,
// avx2 or avx512; unset or empty picks the fastest.
const EnvCPU = "VMAFX_CPU"

// ErrUnsupportedCPU reports a forced kernel path that is unknown or that the
// processor (or this build's architecture) cannot run.
var ErrUnsupportedCPU = errors.New("vmaf: unsupported CPU path")

var cpuNames = map[CPU]string{CPUAuto: "auto", CPUGeneric: "generic", CPUAVX2: "avx2", CPUAVX512: "avx512"}

func (c CPU) String() string {
	if n, ok := cpuNames[c]; ok {
		return n
	}
	return fmt.Sprintf("CPU(%d)", int(c))
}

// ParseCPU reads a path name as VMAFX_CPU spells it; "" and "auto" are
// CPUAuto.
func ParseCPU(s string) (CPU, error) {
	if s == "" {
		return CPUAuto, nil
	}
	for c, n := range cpuNames {
		if n == s {
			return c, nil
		}
	}
	return 0, fmt.Errorf("%w: %s=%q, want generic, avx2 or avx512", ErrUnsupportedCPU, EnvCPU, s)
}

// Supported reports whether this processor and build can run the path.
func (c CPU) Supported() bool {
	switch c {
	case CPUAuto, CPUGeneric:
		return true
	case CPUAVX2:
		return hasAVX2
	case CPUAVX512:
		return hasAVX512
	}
	return false
}

// BestCPU is the fastest path this processor supports.
func BestCPU() CPU {
	switch {
	case hasAVX512:
		return CPUAVX512
	case hasAVX2:
		return CPUAVX2
	}
	return CPUGeneric
}

// EffectiveCPU is the path Score runs when Options.CPU is left at CPUAuto: VMAFX_CPU's,
// else the fastest this processor supports. The worker logs it.
func EffectiveCPU() (CPU, error) { return resolveCPU(CPUAuto) }

// resolveCPU turns the path asked for (Options.CPU, else VMAFX_CPU) into a
// concrete one, refusing what this processor cannot run.
func resolveCPU(c CPU) (CPU, error) {
	if c == CPUAuto {
		var err error
		if c, err = ParseCPU(os.Getenv(EnvCPU)); err != nil {
			return 0, err
		}
	}
	if c == CPUAuto {
		return BestCPU(), nil
	}
	if _, ok := cpuNames[c]; !ok {
		return 0, fmt.Errorf("%w: %v", ErrUnsupportedCPU, c)
	}
	if !c.Supported() {
		return 0, fmt.Errorf("%w: %v is not supported by this processor (best: %v)", ErrUnsupportedCPU, c, BestCPU())
	}
	return c, nil
}
