package vmaf

import "golang.org/x/sys/cpu"

// The vector paths need the OS to save the wide registers, which x/sys/cpu
// checks before setting these.
var (
	hasAVX2   = cpu.X86.HasAVX2
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL &&
		cpu.X86.HasAVX512CD
)
