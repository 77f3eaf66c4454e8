package main

// The motion feature's blurred frame difference in 16-bit lanes
// (motionSADAVX2 in package vmaf holds the Go side, motion.go the scalar
// reference).
//
// For samples of at most 12 bits the difference of two samples, and the sum
// of two differences, fit an int16, so the vertical pass takes two taps a
// VPMADDWD: (d0+d4, d1+d3) times (f0, f1), and (d2, 1) times (f2, round),
// sixteen pixels a step where 32-bit lanes take eight. Its outputs, below
// 2^16 in magnitude, are stored as int32 for the horizontal pass, whose
// products each fit an int32 but whose sum may not: it adds their high and
// low halves apart.

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func motion16Kernels() {
	motionDiff16()
	motionV16()
	motionH8()
}

// motionDiff16: out[i] = prev[i] - cur[i] as int16 (exact for samples below
// 2^15), and the OR of every sample, by which the caller tells whether they
// were all within the bit depth.
func motionDiff16() {
	TEXT("motionDiff16AVX2", NOSPLIT, "func(prev, cur *uint16, out *int16, n int) uint64")
	Pragma("noescape")
	Doc("motionDiff16AVX2 sets out[i] = prev[i]-cur[i] for i < n (a multiple of 16) and returns the OR of the samples' bits (in its low 16 bits).")
	prev := Load(Param("prev"), GP64())
	cur := Load(Param("cur"), GP64())
	out := Load(Param("out"), GP64())
	seen := YMM()
	VPXOR(seen, seen, seen)
	rowLoopStep(16, func(i Register) {
		p, c := YMM(), YMM()
		VMOVDQU(Mem{Base: prev, Index: i, Scale: 2}, p)
		VMOVDQU(Mem{Base: cur, Index: i, Scale: 2}, c)
		VPOR(p, seen, seen)
		VPOR(c, seen, seen)
		VPSUBW(c, p, p)
		VMOVDQU(p, Mem{Base: out, Index: i, Scale: 2})
	}, func() { returnOr16(seen) })
}

// returnOr16 returns the OR of the 16 words of x, in the low 16 bits.
func returnOr16(x VecVirtual) {
	hi, t := XMM(), XMM()
	VEXTRACTI128(Imm(1), x, hi)
	VPOR(hi, x.AsX(), hi)
	VPSHUFD(Imm(0x4e), hi, t)
	VPOR(t, hi, hi)
	VPSHUFD(Imm(0xb1), hi, t)
	VPOR(t, hi, hi)
	r, s := GP32(), GP32()
	MOVD(hi, r)
	MOVL(r, s)
	SHRL(Imm(16), s)
	ORL(s, r)
	ANDL(U32(0xffff), r)
	Store(r.As64(), ReturnIndex(0))
}

// motionV16 is the vertical pass over five int16 difference rows:
// out = (f0*(d0+d4) + f1*(d1+d3) + f2*d2 + round) >> shift as int32, where
// f2r holds f2 | round<<16. It returns the OR of the outputs, zero when the
// row is flat and the horizontal pass can be skipped.
func motionV16() {
	TEXT("motionV16AVX2", NOSPLIT, "func(d0, d1, d2, d3, d4 *int16, out *int32, f2r uint64, shift uint64, n int) uint64")
	Pragma("noescape")
	Doc("motionV16AVX2 filters five int16 difference rows vertically into out for i < n (a multiple of 16) and returns the OR of the outputs.")
	var d [5]Register
	for k := range d {
		d[k] = Load(Param("d"+string(rune('0'+k))), GP64())
	}
	out := Load(Param("out"), GP64())
	f01, f2r, ones, shift := YMM(), YMM(), YMM(), XMM()
	VPBROADCASTD(constMem("motion16f01", U32(3571|16004<<16)), f01)
	VPBROADCASTD(paramAddr("f2r"), f2r)
	VPCMPEQW(ones, ones, ones)
	VPSRLW(Imm(15), ones, ones)
	MOVQ(paramAddr("shift"), shift)
	seen := YMM()
	VPXOR(seen, seen, seen)
	rowLoopStep(16, func(i Register) {
		load := func(k int) VecVirtual {
			v := YMM()
			VMOVDQU(Mem{Base: d[k], Index: i, Scale: 2}, v)
			return v
		}
		a, b := load(0), load(1)
		VPADDW(Mem{Base: d[4], Index: i, Scale: 2}, a, a)
		VPADDW(Mem{Base: d[3], Index: i, Scale: 2}, b, b)
		c := load(2)
		// Words 0-3 and 8-11 (lo), 4-7 and 12-15 (hi), by 128-bit lane.
		lo, hi, t := YMM(), YMM(), YMM()
		VPUNPCKLWD(b, a, lo)
		VPMADDWD(f01, lo, lo)
		VPUNPCKLWD(ones, c, t)
		VPMADDWD(f2r, t, t)
		VPADDD(t, lo, lo)
		VPUNPCKHWD(b, a, hi)
		VPMADDWD(f01, hi, hi)
		VPUNPCKHWD(ones, c, t)
		VPMADDWD(f2r, t, t)
		VPADDD(t, hi, hi)
		VPSRAD(shift, lo, lo)
		VPSRAD(shift, hi, hi)
		VPOR(lo, seen, seen)
		VPOR(hi, seen, seen)
		o0, o1 := YMM(), YMM()
		VPERM2I128(Imm(0x20), hi, lo, o0)
		VPERM2I128(Imm(0x31), hi, lo, o1)
		VMOVDQU(o0, Mem{Base: out, Index: i, Scale: 4})
		VMOVDQU(o1, Mem{Base: out, Index: i, Scale: 4, Disp: 32})
	}, func() {
		r := GP64()
		VPTEST(seen, seen)
		SETNE(r.As8())
		MOVBQZX(r.As8(), r)
		Store(r, ReturnIndex(0))
	})
}

// motionH8 is the horizontal pass and the sum of absolute values of pixels
// 2..n+1 of a vertically filtered row (row[0] is the window start of the
// first), eight a step: r = (f0*(v0+v4) + f1*(v1+v3) + f2*v2 + 2^15) >> 16.
// Each of the three products fits an int32 (|v| < 2^16: f1*(v1+v3) is at
// most 16004*2*65535 < 2^31), their sum may not; so r is the sum of their
// arithmetic high halves plus the carry of their low halves and the
// rounding, which is exact. The sums of |r| wrap at 32 bits, as the scalar
// row sum does.
func motionH8() {
	TEXT("motionH8AVX2", NOSPLIT, "func(row *int32, n int) uint64")
	Pragma("noescape")
	Doc("motionH8AVX2 returns the absolute blurred values' sum, modulo 2^32, of n pixels (a multiple of 8) whose 5-tap windows start at row.")
	row := Load(Param("row"), GP64())
	f := broadcastMotionTaps()
	low, round := YMM(), YMM()
	VPBROADCASTD(constMem("motion16low", U32(0xffff)), low)
	VPBROADCASTD(constMem("motion16round", U32(1<<15)), round)
	sum := YMM()
	VPXOR(sum, sum, sum)
	rowLoopStep(8, func(i Register) {
		at := func(k int) Mem { return Mem{Base: row, Index: i, Scale: 4, Disp: 4 * k} }
		a, b, c := YMM(), YMM(), YMM()
		VMOVDQU(at(0), a)
		VPADDD(at(4), a, a)
		VPMULLD(f[0], a, a)
		VMOVDQU(at(1), b)
		VPADDD(at(3), b, b)
		VPMULLD(f[1], b, b)
		VPMULLD(at(2), f[2], c)
		hs, ls, t := YMM(), YMM(), YMM()
		VPSRAD(Imm(16), a, hs)
		VPAND(low, a, ls)
		VPSRAD(Imm(16), b, t)
		VPADDD(t, hs, hs)
		VPAND(low, b, t)
		VPADDD(t, ls, ls)
		VPSRAD(Imm(16), c, t)
		VPADDD(t, hs, hs)
		VPAND(low, c, t)
		VPADDD(t, ls, ls)
		VPADDD(round, ls, ls)
		VPSRLD(Imm(16), ls, ls)
		VPADDD(ls, hs, hs)
		VPABSD(hs, hs)
		VPADDD(hs, sum, sum)
	}, func() {
		hi := XMM()
		VEXTRACTI128(Imm(1), sum, hi)
		VPADDD(hi, sum.AsX(), hi)
		t := XMM()
		VPSHUFD(Imm(0x4e), hi, t)
		VPADDD(t, hi, hi)
		VPSHUFD(Imm(0xb1), hi, t)
		VPADDD(t, hi, hi)
		r := GP32()
		MOVD(hi, r)
		Store(r.As64(), ReturnIndex(0))
	})
}
