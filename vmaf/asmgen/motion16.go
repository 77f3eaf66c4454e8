package main

// The motion feature's blurred frame difference in 16-bit lanes
// (motionSADAVX2 in package vmaf holds the Go side, motion.go the scalar
// reference).
//
// For samples of at most 12 bits the difference of two samples, and the sum
// of two differences, fit an int16, so the vertical pass takes two taps a
// VPMADDWD: (d0+d4, d1+d3) times (f0, f1), and (d2, 1) times (f2, round),
// a register's words a step. Its outputs, below 2^16 in magnitude, are
// stored as int32 for the horizontal pass, whose products each fit an int32
// but whose sum may not: it adds their high and low halves apart.
//
// Each is generated for AVX2 (ymm) and AVX-512 (zmm, lanes512 set) from the
// same code.

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func motion16Kernels() {
	for _, wide := range []bool{false, true} {
		lanes512 = wide
		motionDiff16()
		motionV16()
		motionH8()
	}
	lanes512 = false
}

// vor is VPOR, or VPORD on zmm.
func vor(a Op, b, dst VecVirtual) {
	if lanes512 {
		VPORD(a, b, dst)
	} else {
		VPOR(a, b, dst)
	}
}

// vbcastD is a register of equal dwords v, broadcast from read-only data.
func vbcastD(name string, v uint32) VecVirtual {
	r := vreg()
	VPBROADCASTD(constMem(name, U32(v)), r)
	return r
}

// toYMM folds a zmm's upper half onto its lower one with op (an add or an
// OR of dwords) and returns the ymm; an AVX2 register is returned as it is.
func toYMM(x VecVirtual, op func(a Op, b, dst VecVirtual)) VecVirtual {
	if !lanes512 {
		return x
	}
	hi := YMM()
	VEXTRACTI64X4(Imm(1), x, hi)
	op(x.AsY(), hi, hi)
	return hi
}

// motionDiff16: out[i] = prev[i] - cur[i] as int16 (exact for samples below
// 2^15), and the OR of every sample, by which the caller tells whether they
// were all within the bit depth.
func motionDiff16() {
	name := "motionDiff16" + vsuffix()
	TEXT(name, NOSPLIT, "func(prev, cur *uint16, out *int16, n int) uint64")
	Pragma("noescape")
	Doc(name + " sets out[i] = prev[i]-cur[i] for i < n (a multiple of the register's words) and returns the OR of the samples' bits (in its low 16 bits).")
	prev := Load(Param("prev"), GP64())
	cur := Load(Param("cur"), GP64())
	out := Load(Param("out"), GP64())
	seen := vreg()
	vxor(seen, seen, seen)
	rowLoopStep(vpixels(), func(i Register) {
		p, c := vreg(), vreg()
		vload(Mem{Base: prev, Index: i, Scale: 2}, p)
		vload(Mem{Base: cur, Index: i, Scale: 2}, c)
		vor(p, seen, seen)
		vor(c, seen, seen)
		VPSUBW(c, p, p)
		vstore(p, Mem{Base: out, Index: i, Scale: 2})
	}, func() {
		y := toYMM(seen, func(a Op, b, dst VecVirtual) { VPOR(a, b, dst) })
		hi, t := XMM(), XMM()
		VEXTRACTI128(Imm(1), y, hi)
		VPOR(hi, y.AsX(), hi)
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
	})
}

// motionV16 is the vertical pass over five int16 difference rows:
// out = (f0*(d0+d4) + f1*(d1+d3) + f2*d2 + round) >> shift as int32, where
// f2r holds f2 | round<<16. It returns 1 when an output is not zero, 0 when
// the row is flat and the horizontal pass can be skipped.
func motionV16() {
	name := "motionV16" + vsuffix()
	TEXT(name, NOSPLIT, "func(d0, d1, d2, d3, d4 *int16, out *int32, f2r uint64, shift uint64, n int) uint64")
	Pragma("noescape")
	Doc(name + " filters five int16 difference rows vertically into out for i < n (a multiple of the register's words) and returns whether an output is not zero.")
	var d [5]Register
	for k := range d {
		d[k] = Load(Param("d"+string(rune('0'+k))), GP64())
	}
	out := Load(Param("out"), GP64())
	f01 := vbcastD("motion16f01", 3571|16004<<16)
	ones := vbcastD("motion16ones", 1|1<<16)
	f2r, shift := vreg(), XMM()
	VPBROADCASTD(paramAddr("f2r"), f2r)
	MOVQ(paramAddr("shift"), shift)
	seen := vreg()
	vxor(seen, seen, seen)
	rowLoopStep(vpixels(), func(i Register) {
		at := func(k int) Mem { return Mem{Base: d[k], Index: i, Scale: 2} }
		a, b, c := vreg(), vreg(), vreg()
		vload(at(0), a)
		VPADDW(at(4), a, a)
		vload(at(1), b)
		VPADDW(at(3), b, b)
		vload(at(2), c)
		// Words 0-3 and 8-11 (lo), 4-7 and 12-15 (hi), by 128-bit lane.
		lo, hi, t := vreg(), vreg(), vreg()
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
		vor(lo, seen, seen)
		vor(hi, seen, seen)
		o0, o1 := unpackedOrder(lo, hi)
		vstore(o0, Mem{Base: out, Index: i, Scale: 4})
		vstore(o1, Mem{Base: out, Index: i, Scale: 4, Disp: vbytes()})
	}, func() {
		y := toYMM(seen, func(a Op, b, dst VecVirtual) { VPOR(a, b, dst) })
		r := GP64()
		XORQ(r, r)
		VPTEST(y, y)
		SETNE(r.As8())
		Store(r, ReturnIndex(0))
	})
}

// motionH8 is the horizontal pass and the sum of absolute values of pixels
// 2..n+1 of a vertically filtered row (row[0] is the window start of the
// first), a register's dwords a step: r = (f0*(v0+v4) + f1*(v1+v3) + f2*v2
// + 2^15) >> 16. Each of the three products fits an int32 (|v| < 2^16:
// f1*(v1+v3) is at most 16004*2*65535 < 2^31), their sum may not; so r is
// the sum of their arithmetic high halves plus the carry of their low
// halves and the rounding, which is exact. The sums of |r| wrap at 32 bits,
// as the scalar row sum does.
func motionH8() {
	name := "motionH8" + vsuffix()
	TEXT(name, NOSPLIT, "func(row *int32, n int) uint64")
	Pragma("noescape")
	Doc(name + " returns the absolute blurred values' sum, modulo 2^32, of n pixels (a multiple of the register's dwords) whose 5-tap windows start at row.")
	row := Load(Param("row"), GP64())
	var f [3]VecVirtual
	for k, v := range motionTaps {
		f[k] = vbcastD("motionf"+string(rune('0'+k)), v)
	}
	low := vbcastD("motion16low", 0xffff)
	round := vbcastD("motion16round", 1<<15)
	sum := vreg()
	vxor(sum, sum, sum)
	rowLoopStep(vbytes()/4, func(i Register) {
		at := func(k int) Mem { return Mem{Base: row, Index: i, Scale: 4, Disp: 4 * k} }
		a, b, c := vreg(), vreg(), vreg()
		vload(at(0), a)
		VPADDD(at(4), a, a)
		VPMULLD(f[0], a, a)
		vload(at(1), b)
		VPADDD(at(3), b, b)
		VPMULLD(f[1], b, b)
		VPMULLD(at(2), f[2], c)
		hs, ls, t := vreg(), vreg(), vreg()
		VPSRAD(Imm(16), a, hs)
		vand(low, a, ls)
		VPSRAD(Imm(16), b, t)
		VPADDD(t, hs, hs)
		vand(low, b, t)
		VPADDD(t, ls, ls)
		VPSRAD(Imm(16), c, t)
		VPADDD(t, hs, hs)
		vand(low, c, t)
		VPADDD(t, ls, ls)
		VPADDD(round, ls, ls)
		VPSRLD(Imm(16), ls, ls)
		VPADDD(ls, hs, hs)
		VPABSD(hs, hs)
		VPADDD(hs, sum, sum)
	}, func() {
		y := toYMM(sum, func(a Op, b, dst VecVirtual) { VPADDD(a, b, dst) })
		hi, t := XMM(), XMM()
		VEXTRACTI128(Imm(1), y, hi)
		VPADDD(hi, y.AsX(), hi)
		VPSHUFD(Imm(0x4e), hi, t)
		VPADDD(t, hi, hi)
		VPSHUFD(Imm(0xb1), hi, t)
		VPADDD(t, hi, hi)
		r := GP32()
		MOVD(hi, r)
		Store(r.As64(), ReturnIndex(0))
	})
}
