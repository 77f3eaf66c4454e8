// Command asmgen writes the vector kernels of package vmaf with avo:
//
//	go run . -out ../zz_generated_kernels_amd64.s -stubs ../zz_generated_kernels_amd64.go -pkg vmaf
//
// Each kernel covers a multiple of 4 pixels (one YMM register of 64-bit
// lanes); its Go caller in kernels_amd64.go runs the scalar code on the
// rest of the row, and the tests compare every kernel with that scalar code.
//
// Bit-exactness rests on the bounds the scalar code documents: a packed
// word (reference | distorted<<32) never carries from its low half, so
// 32-bit lane arithmetic (VPMULLD, VPADDD) gives the same bits as the scalar
// 64-bit arithmetic; and every unpacked operand of a 64-bit product is below
// 2^32, so VPMULUDQ (32x32->64) gives the full product.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64")
	tapInit("vifTapInit32AVX2", true)
	tapInit("vifTapInit64AVX2", false)
	tapPair("vifTapPair32AVX2", true)
	tapPair("vifTapPair64AVX2", false)
	vifSigma()
	Generate()
}

// mul multiplies by the broadcast tap f: in 32-bit lanes for packed words,
// else 32x32->64.
func mul(lanes32 bool, f, x, dst VecVirtual) {
	if lanes32 {
		VPMULLD(f, x, dst)
	} else {
		VPMULUDQ(f, x, dst)
	}
}

// paramAddr is the stack address of a scalar argument.
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// broadcastTap loads a tap (at most 16 bits) into every 32-bit lane.
func broadcastTap(m Mem) VecVirtual {
	f := YMM()
	VPBROADCASTD(m, f)
	return f
}

// rowLoop runs body for i = 0, 4, 8, ... below the argument n, then
// returns from the function.
func rowLoop(body func(i Register)) {
	n := Load(Param("n"), GP64())
	i := GP64()
	XORQ(i, i)
	Label("loop")
	CMPQ(i, n)
	JAE(LabelRef("done"))
	body(i)
	ADDQ(Imm(4), i)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// tapInit: dst[i] = f * src[i] for i < n.
func tapInit(name string, lanes32 bool) {
	TEXT(name, NOSPLIT, "func(f uint64, src, dst *uint64, n int)")
	Doc(name + " sets dst[i] = f*src[i] for i < n (a multiple of 4).")
	f := broadcastTap(paramAddr("f"))
	src := Load(Param("src"), GP64())
	dst := Load(Param("dst"), GP64())
	rowLoop(func(i Register) {
		x := YMM()
		VMOVDQU(Mem{Base: src, Index: i, Scale: 8}, x)
		mul(lanes32, f, x, x)
		VMOVDQU(x, Mem{Base: dst, Index: i, Scale: 8})
	})
}

// tapPair: dst[i] += f * (a[i] + b[i]) for i < n. Unpacked words are
// multiplied one by one, as their sum may pass 2^32: the products' sum is
// the scalar product of the sum modulo 2^64.
func tapPair(name string, lanes32 bool) {
	TEXT(name, NOSPLIT, "func(f uint64, a, b, dst *uint64, n int)")
	Doc(name + " adds f*(a[i]+b[i]) to dst[i] for i < n (a multiple of 4).")
	f := broadcastTap(paramAddr("f"))
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	dst := Load(Param("dst"), GP64())
	rowLoop(func(i Register) {
		x, y, acc := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: a, Index: i, Scale: 8}, x)
		VMOVDQU(Mem{Base: b, Index: i, Scale: 8}, y)
		VMOVDQU(Mem{Base: dst, Index: i, Scale: 8}, acc)
		if lanes32 {
			VPADDD(x, y, x)
			VPMULLD(f, x, x)
			VPADDD(x, acc, acc)
		} else {
			VPMULUDQ(f, x, x)
			VPMULUDQ(f, y, y)
			VPADDQ(x, acc, acc)
			VPADDQ(y, acc, acc)
		}
		VMOVDQU(acc, Mem{Base: dst, Index: i, Scale: 8})
	})
}

// vifSigma is VIF's horizontal pass: for each pixel j < n, the symmetric
// filter of 2*half+1 taps over mu (packed means), xx, yy and xy from
// element j, then the variances (vifSigma in vif.go) into s1, s2, s12.
func vifSigma() {
	TEXT("vifSigmaAVX2", NOSPLIT, "func(filt *uint64, half int, mu, xx, yy, xy *uint64, s1, s2, s12 *int32, n int)")
	Doc("vifSigmaAVX2 computes the variances of n pixels (a multiple of 4); the row buffers start at the filter window of pixel 0.")
	filt := Load(Param("filt"), GP64())
	half := Load(Param("half"), GP64())
	mu := Load(Param("mu"), GP64())
	xx := Load(Param("xx"), GP64())
	yy := Load(Param("yy"), GP64())
	xy := Load(Param("xy"), GP64())
	s1 := Load(Param("s1"), GP64())
	s2 := Load(Param("s2"), GP64())
	s12 := Load(Param("s12"), GP64())
	n := Load(Param("n"), GP64())

	// Constants: 2^31 and 2^15 in each 64-bit lane, and zero.
	bias31, bias15, zero := YMM(), YMM(), YMM()
	VPCMPEQQ(bias31, bias31, bias31)
	VPSLLQ(Imm(63), bias31, bias31)
	VPSRLQ(Imm(48), bias31, bias15)
	VPSRLQ(Imm(32), bias31, bias31)
	VPXOR(zero, zero, zero)

	Label("pixels")
	TESTQ(n, n)
	JZ(LabelRef("done"))

	// Centre tap.
	pm, pxx, pyy, pxy := YMM(), YMM(), YMM(), YMM()
	f := broadcastTap(Mem{Base: filt, Index: half, Scale: 8})
	VPMULLD(Mem{Base: mu, Index: half, Scale: 8}, f, pm)
	VPMULUDQ(Mem{Base: xx, Index: half, Scale: 8}, f, pxx)
	VPMULUDQ(Mem{Base: yy, Index: half, Scale: 8}, f, pyy)
	VPMULUDQ(Mem{Base: xy, Index: half, Scale: 8}, f, pxy)

	// Folded pairs: taps k and 2*half-k.
	k, e := GP64(), GP64()
	XORQ(k, k)
	MOVQ(half, e)
	SHLQ(Imm(1), e)
	Label("taps")
	CMPQ(k, half)
	JAE(LabelRef("stat"))
	f = broadcastTap(Mem{Base: filt, Index: k, Scale: 8})
	x, y := YMM(), YMM()
	VMOVDQU(Mem{Base: mu, Index: k, Scale: 8}, x)
	VPADDD(Mem{Base: mu, Index: e, Scale: 8}, x, x)
	VPMULLD(f, x, x)
	VPADDD(x, pm, pm)
	for _, p := range []struct {
		src Register
		acc VecVirtual
	}{{xx, pxx}, {yy, pyy}, {xy, pxy}} {
		VPMULUDQ(Mem{Base: p.src, Index: k, Scale: 8}, f, x)
		VPMULUDQ(Mem{Base: p.src, Index: e, Scale: 8}, f, y)
		VPADDQ(x, p.acc, p.acc)
		VPADDQ(y, p.acc, p.acc)
	}
	INCQ(k)
	DECQ(e)
	JMP(LabelRef("taps"))

	Label("stat")
	// mu1² , mu2², mu1*mu2, each (a*b + 2^31) >> 32.
	m2, m1sq, m2sq, m12 := YMM(), YMM(), YMM(), YMM()
	VPSRLQ(Imm(32), pm, m2)
	VPMULUDQ(pm, pm, m1sq)
	VPMULUDQ(m2, m2, m2sq)
	VPMULUDQ(m2, pm, m12)
	for _, v := range []VecVirtual{m1sq, m2sq, m12} {
		VPADDQ(bias31, v, v)
		VPSRLQ(Imm(32), v, v)
	}
	// sigma = uint32((sum + 2^15) >> 16) - square, then the low halves
	// of the four lanes packed into one XMM.
	for _, p := range []struct {
		sum, sq VecVirtual
		out     Register
		clamp   bool
	}{{pxx, m1sq, s1, false}, {pyy, m2sq, s2, true}, {pxy, m12, s12, false}} {
		VPADDQ(bias15, p.sum, p.sum)
		VPSRLQ(Imm(16), p.sum, p.sum)
		VPSUBQ(p.sq, p.sum, p.sum)
		VPSHUFD(Imm(0x08), p.sum, p.sum)
		VPERMQ(Imm(0x08), p.sum, p.sum)
		if p.clamp {
			VPMAXSD(zero.AsX(), p.sum.AsX(), p.sum.AsX())
		}
		VMOVDQU(p.sum.AsX(), Mem{Base: p.out})
	}

	ADDQ(Imm(32), mu)
	ADDQ(Imm(32), xx)
	ADDQ(Imm(32), yy)
	ADDQ(Imm(32), xy)
	ADDQ(Imm(16), s1)
	ADDQ(Imm(16), s2)
	ADDQ(Imm(16), s12)
	SUBQ(Imm(4), n)
	JMP(LabelRef("pixels"))

	Label("done")
	VZEROUPPER()
	RET()
}
