package main

// The kernels of package align (worker/internal/align), written by
// `go run . -kernels align`.

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

func alignKernels() {
	alignDiff()
}

// alignDiff is the offset search's difference of two thumbnails (diff in
// align.go), 4 samples a step: its four sums of squares and four sums of
// absolute values are the four lanes of two registers, each lane adding
// the samples i ≡ lane (mod 4) in order, as the scalar code's four sums
// do, so that every sum is the same double. The difference is taken in
// float, then widened (exact), squared and added as separate roundings.
func alignDiff() {
	TEXT("diffAVX2", NOSPLIT, "func(a, b *float32, n int, sums *[8]float64)")
	Pragma("noescape")
	Doc("diffAVX2 sets sums[k] to the sum of d*d and sums[4+k] to that of |d| over d = float64(a[i]-b[i]) for i < n (a multiple of 4), i ≡ k (mod 4), each in order.")
	a, b := Load(Param("a"), GP64()), Load(Param("b"), GP64())
	n := Load(Param("n"), GP64())
	out := Load(Param("sums"), GP64())
	se, ae, abs := YMM(), YMM(), YMM()
	VXORPD(se, se, se)
	VXORPD(ae, ae, ae)
	VPCMPEQQ(abs, abs, abs)
	VPSRLQ(Imm(1), abs, abs) // every bit but the sign
	i := GP64()
	XORQ(i, i)
	Label("loop")
	CMPQ(i, n)
	JAE(LabelRef("done"))
	x, d, t := XMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: a, Index: i, Scale: 4}, x)
	VSUBPS(Mem{Base: b, Index: i, Scale: 4}, x, x)
	VCVTPS2PD(x, d)
	VMULPD(d, d, t)
	VADDPD(t, se, se)
	VANDPD(abs, d, d)
	VADDPD(d, ae, ae)
	ADDQ(Imm(4), i)
	JMP(LabelRef("loop"))
	Label("done")
	VMOVUPD(se, Mem{Base: out})
	VMOVUPD(ae, Mem{Base: out, Disp: 32})
	VZEROUPPER()
	RET()
}
