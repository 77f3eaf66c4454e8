package main

// CAMBI's kernels (cambi_kernels.go holds the scalar ones they match).
// Samples, column sums and histogram counts are words; CAMBI's 10-bit
// values, sums of at most 49 and counts of at most 127² stay far from
// 2^15, so signed word compares see them as the scalar code does.

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func cambiKernels() {
	cambiMode3()
	cambiZeroDeriv()
	cambiColSum()
	cambiMaskRow()
	cambiBand()
	cambiHist()
	cambiConv()
	cambiAntiDither()
	cambiDecimate16()
	cambiDecimate8()
	cambiScan()
	cambiCValues()
}

// cambiCValues: the c-values of 8 pixels a step (cambiCValuesRowGo), as
// libvmaf's calculate_c_values_row_avx2 computes them: the histogram
// counts and the reciprocals by gathers, the diffs a pixel looks for as a
// mask of lanes per diff. Every count is at most the window's 65² pixels,
// so weight*p0*p fits a dword and converts to float as the scalar code's
// int does; the product with the reciprocal and the maximum are float's.
// Lanes whose band is -1 read histogram row 0 (a zero row) and are
// cleared at the end. The gathers read a dword for a word: the last
// count's high half is within the histogram's slack.
func cambiCValues() {
	TEXT("cambiCValuesAVX2", NOSPLIT, "func(hist *uint16, w int, band *int16, diffs *uint32, weights *int32, rcp *float32, out *float32, n int)")
	Pragma("noescape")
	Doc("cambiCValuesAVX2 fills the c-values of pixels j < n (a multiple of 8) of one row, as cambiCValuesRowGo; weights are the contrast weights of diffs 1 to 32.")
	p := loadPointers("hist", "band", "diffs", "weights", "rcp", "out")
	hist, band, diffs, weights, rcp, out := p[0], p[1], p[2], p[3], p[4], p[5]
	wv := YMM()
	{
		x := XMM()
		MOVQ(Load(Param("w"), GP64()), x)
		VPBROADCASTD(x, wv)
	}
	lo16 := bcastConstD("cambicvlo16", 0xffff)
	one := bcastConstD("cambicvone", 1)
	iota := YMM()
	VMOVDQU(constMem("cambicviota", cambiIota()), iota)
	zero := YMM()
	VPXOR(zero, zero, zero)
	// gather gathers the dwords at base + scale*idx of the lanes of mask
	// (every lane when nil), the others 0; masked-off lanes read nothing,
	// so their indices may point anywhere.
	gather := func(base Register, idx VecVirtual, scale uint8, mask VecVirtual) VecVirtual {
		m, v := YMM(), YMM()
		if mask == nil {
			VPCMPEQD(m, m, m)
		} else {
			VMOVDQA(mask, m) // the gather clears its mask
		}
		VPXOR(v, v, v)
		VPGATHERDD(m, Mem{Base: base, Index: idx, Scale: scale}, v)
		return v
	}
	rowLoopStep(8, func(j Register) {
		r, act := YMM(), YMM()
		VPMOVSXWD(Mem{Base: band, Index: j, Scale: 2}, r)
		VPCMPEQD(act, act, act)
		VPCMPGTD(act, r, act) // band > -1
		best := YMM()
		VPXOR(best, best, best)
		VPTEST(act, act)
		JZ(LabelRef("store"))
		VPMAXSD(zero, r, r)
		col := YMM()
		x := XMM()
		MOVQ(j, x)
		VPBROADCASTD(x, col)
		VPADDD(iota, col, col)
		idx0 := YMM()
		VPMULLD(wv, r, idx0)
		VPADDD(col, idx0, idx0)
		p0 := gather(hist, idx0, 2, nil)
		VPAND(lo16, p0, p0)
		bits := gather(diffs, r, 4, nil)
		step := YMM()
		VMOVDQA(wv, step) // (d+1)*w
		d := GP64()
		XORQ(d, d)
		Label("diff")
		VPTEST(bits, bits) // no lane looks for more diffs
		JZ(LabelRef("store"))
		pred := YMM()
		VPAND(one, bits, pred)
		VPCMPEQD(one, pred, pred)
		VPSRLD(Imm(1), bits, bits)
		VPTEST(pred, pred)
		JZ(LabelRef("next"))
		i1, i2 := YMM(), YMM()
		VPADDD(step, idx0, i1)
		VPSUBD(step, idx0, i2)
		// Only the lanes of pred: r±(d+1) is a histogram row for them.
		p1, p2 := gather(hist, i1, 2, pred), gather(hist, i2, 2, pred)
		VPAND(lo16, p1, p1)
		VPAND(lo16, p2, p2)
		VPMAXUD(p2, p1, p1)
		num, wd := YMM(), YMM()
		VPMULLD(p0, p1, num)
		VPBROADCASTD(Mem{Base: weights, Index: d, Scale: 4}, wd)
		VPMULLD(wd, num, num)
		VCVTDQ2PS(num, num)
		VPADDD(p0, p1, p1) // p0 + p, the reciprocal's index
		rv := gather(rcp, p1, 4, pred)
		VMULPS(rv, num, num)
		VPAND(pred, num, num)
		VMAXPS(best, num, best)
		Label("next")
		VPADDD(wv, step, step)
		INCQ(d)
		JMP(LabelRef("diff"))
		Label("store")
		VPAND(act, best, best)
		VMOVUPS(best, Mem{Base: out, Index: j, Scale: 4})
	}, func() {})
}

// cambiIota is the dwords 0 to 7.
func cambiIota() Constant {
	var b []byte
	for k := range 8 {
		b = append(b, byte(k), 0, 0, 0)
	}
	return String(string(b))
}

// wordsToBytes packs the 16 words of x (each 0 or -1) into the 16 bytes
// 0 or 1 of an xmm register.
func wordsToBytes(x VecVirtual) VecVirtual {
	hi := XMM()
	VEXTRACTI128(Imm(1), x, hi)
	out := XMM()
	VPACKSSWB(hi, x.AsX(), out)
	VPABSB(out, out)
	return out
}

// cambiMode3: dst[j] = mode3(a[j], b[j], c[j]): a when it equals b or c,
// else b when it equals c, else the smallest.
func cambiMode3() {
	TEXT("cambiMode3AVX2", NOSPLIT, "func(a, b, c, dst *uint16, n int)")
	Pragma("noescape")
	Doc("cambiMode3AVX2 sets dst[j] = mode3(a[j], b[j], c[j]) for j < n (a multiple of 16).")
	p := loadPointers("a", "b", "c", "dst")
	rowLoopStep(16, func(i Register) {
		a, b, c := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: p[0], Index: i, Scale: 2}, a)
		VMOVDQU(Mem{Base: p[1], Index: i, Scale: 2}, b)
		VMOVDQU(Mem{Base: p[2], Index: i, Scale: 2}, c)
		ab, ac, bc, m := YMM(), YMM(), YMM(), YMM()
		VPCMPEQW(a, b, ab)
		VPCMPEQW(a, c, ac)
		VPCMPEQW(b, c, bc)
		VPOR(ab, ac, ab)
		VPMINUW(a, b, m)
		VPMINUW(c, m, m)
		VPBLENDVB(bc, b, m, m) // bc ? b : min
		VPBLENDVB(ab, a, m, m) // a's pair ? a : that
		VMOVDQU(m, Mem{Base: p[3], Index: i, Scale: 2})
	}, func() {})
}

// cambiZeroDeriv: z[c] = cur[c] == cur[c+1] && cur[c] == next[c].
func cambiZeroDeriv() {
	TEXT("cambiZeroDerivAVX2", NOSPLIT, "func(cur, next *uint16, z *uint8, n int)")
	Pragma("noescape")
	Doc("cambiZeroDerivAVX2 sets z[c] = 1 where cur[c] == cur[c+1] == next[c], else 0, for c < n (a multiple of 16; cur holds n+1 words).")
	p := loadPointers("cur", "next", "z")
	rowLoopStep(16, func(i Register) {
		c0, c1, nx := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: p[0], Index: i, Scale: 2}, c0)
		VMOVDQU(Mem{Base: p[0], Index: i, Scale: 2, Disp: 2}, c1)
		VMOVDQU(Mem{Base: p[1], Index: i, Scale: 2}, nx)
		VPCMPEQW(c0, c1, c1)
		VPCMPEQW(c0, nx, nx)
		VPAND(c1, nx, nx)
		VMOVDQU(wordsToBytes(nx), Mem{Base: p[2], Index: i, Scale: 1})
	}, func() {})
}

// cambiColSum: cs[c] += zin[c] - zout[c].
func cambiColSum() {
	TEXT("cambiColSumAVX2", NOSPLIT, "func(cs *uint16, zin, zout *uint8, n int)")
	Pragma("noescape")
	Doc("cambiColSumAVX2 adds zin[c]-zout[c] to cs[c] for c < n (a multiple of 16).")
	p := loadPointers("cs", "zin", "zout")
	rowLoopStep(16, func(i Register) {
		s, a, b := YMM(), YMM(), YMM()
		VPMOVZXBW(Mem{Base: p[1], Index: i, Scale: 1}, a)
		VPMOVZXBW(Mem{Base: p[2], Index: i, Scale: 1}, b)
		VMOVDQU(Mem{Base: p[0], Index: i, Scale: 2}, s)
		VPADDW(a, s, s)
		VPSUBW(b, s, s)
		VMOVDQU(s, Mem{Base: p[0], Index: i, Scale: 2})
	}, func() {})
}

// cambiMaskRow: out[c] = cs[c] + ... + cs[c+6] > threshold.
func cambiMaskRow() {
	TEXT("cambiMaskRowAVX2", NOSPLIT, "func(cs *uint16, out *bool, threshold uint16, n int)")
	Pragma("noescape")
	Doc("cambiMaskRowAVX2 sets out[c] = cs[c]+...+cs[c+6] > threshold (an int16) for c < n (a multiple of 16).")
	p := loadPointers("cs", "out")
	thr := YMM()
	VPBROADCASTW(paramAddr("threshold"), thr)
	rowLoopStep(16, func(i Register) {
		sum, x := YMM(), YMM()
		VMOVDQU(Mem{Base: p[0], Index: i, Scale: 2}, sum)
		for k := 1; k < 7; k++ {
			VMOVDQU(Mem{Base: p[0], Index: i, Scale: 2, Disp: 2 * k}, x)
			VPADDW(x, sum, sum)
		}
		VPCMPGTW(thr, sum, sum)
		VMOVDQU(wordsToBytes(sum), Mem{Base: p[1], Index: i, Scale: 1})
	}, func() {})
}

// cambiBand: out[k] = nd+img[k]-base where mask[k] and img[k]-base < size
// (unsigned), else -1.
func cambiBand() {
	TEXT("cambiBandAVX2", NOSPLIT, "func(img *uint16, mask *bool, out *int16, base, last, nd uint16, n int)")
	Pragma("noescape")
	Doc("cambiBandAVX2 sets out[k] = nd+img[k]-base where mask[k] and img[k]-base <= last (unsigned), else -1, for k < n (a multiple of 16).")
	p := loadPointers("img", "mask", "out")
	base, last, nd1 := YMM(), YMM(), YMM()
	VPBROADCASTW(paramAddr("base"), base)
	VPBROADCASTW(paramAddr("last"), last)
	VPBROADCASTW(paramAddr("nd"), nd1)
	ones := YMM()
	VPCMPEQW(ones, ones, ones)
	VPSUBW(ones, nd1, nd1) // nd+1
	zero := YMM()
	VPXOR(zero, zero, zero)
	rowLoopStep(16, func(i Register) {
		v, m, in := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: p[0], Index: i, Scale: 2}, v)
		VPSUBW(base, v, v)
		VPMINUW(last, v, in)
		VPCMPEQW(v, in, in) // v <= last
		VPMOVZXBW(Mem{Base: p[1], Index: i, Scale: 1}, m)
		VPCMPGTW(zero, m, m) // masked
		VPAND(m, in, in)
		VPADDW(nd1, v, v)
		VPAND(in, v, v)
		VPADDW(ones, v, v) // (nd+1+v)&in - 1
		VMOVDQU(v, Mem{Base: p[2], Index: i, Scale: 2})
	}, func() {})
}

// cambiHist: the histogram slide of cambiHistRowGo over columns whose
// window is whole, every step-th column in a pass, one pass from each of
// the first step columns (updates step columns apart touch words far
// apart, where those of neighbouring columns overlap and each load would
// wait for the store before it): for each column j < n where out[j] != in[j], the span
// words of row out[j] (when not -1) from column j lose one, those of row
// in[j] (likewise) gain one. hist points at the span's first column of
// column 0 in row 0; rows are w words apart. The span is full vectors of
// 16 and then a part under tail (16 words of -1 or 0), whose words past
// the span are written back unchanged.
func cambiHist() {
	TEXT("cambiHistAVX2", NOSPLIT, "func(hist *uint16, w int, out, in *int16, full int, tail *[16]uint16, n, step int)")
	Pragma("noescape")
	Doc("cambiHistAVX2 slides CAMBI's histograms by one row over the n columns (see cambiHistRowGo), in the order 0, step, 2*step, ..., then 1, step+1, ..., and so on.")
	hist := Load(Param("hist"), GP64())
	w := Load(Param("w"), GP64())
	SHLQ(Imm(1), w) // row stride in bytes
	out := Load(Param("out"), GP64())
	in := Load(Param("in"), GP64())
	full := Load(Param("full"), GP64())
	tp := Load(Param("tail"), GP64())
	n := Load(Param("n"), GP64())
	colStep := Load(Param("step"), GP64())
	tail, ones := YMM(), YMM()
	VMOVDQU(Mem{Base: tp}, tail)
	VPCMPEQW(ones, ones, ones)
	j, first := GP64(), GP64()
	XORQ(first, first)
	vo, vi, addr, k := GP64(), GP64(), GP64(), GP64()
	x := YMM()
	// update adds (sub false) or takes (sub true) one over the span that
	// starts at addr; the -1 words of ones and tail are what it takes.
	update := func(name string, sub bool) {
		op := VPSUBW // x - (-1) adds one
		if sub {
			op = VPADDW
		}
		XORQ(k, k)
		Label(name + "_full")
		CMPQ(k, full)
		JAE(LabelRef(name + "_tail"))
		VMOVDQU(Mem{Base: addr}, x)
		op(ones, x, x)
		VMOVDQU(x, Mem{Base: addr})
		ADDQ(Imm(32), addr)
		INCQ(k)
		JMP(LabelRef(name + "_full"))
		Label(name + "_tail")
		VMOVDQU(Mem{Base: addr}, x)
		op(tail, x, x)
		VMOVDQU(x, Mem{Base: addr})
	}
	Label("pass")
	CMPQ(first, colStep)
	JAE(LabelRef("done"))
	MOVQ(first, j)
	Label("col")
	CMPQ(j, n)
	JAE(LabelRef("passed"))
	MOVWQSX(Mem{Base: out, Index: j, Scale: 2}, vo)
	MOVWQSX(Mem{Base: in, Index: j, Scale: 2}, vi)
	CMPQ(vo, vi)
	JE(LabelRef("next"))
	TESTQ(vo, vo)
	JS(LabelRef("add"))
	MOVQ(vo, addr)
	IMULQ(w, addr)
	LEAQ(Mem{Base: addr, Index: j, Scale: 2}, addr)
	ADDQ(hist, addr)
	update("dec", true)
	Label("add")
	TESTQ(vi, vi)
	JS(LabelRef("next"))
	MOVQ(vi, addr)
	IMULQ(w, addr)
	LEAQ(Mem{Base: addr, Index: j, Scale: 2}, addr)
	ADDQ(hist, addr)
	update("inc", false)
	Label("next")
	ADDQ(colStep, j)
	JMP(LabelRef("col"))
	Label("passed")
	INCQ(first)
	JMP(LabelRef("pass"))
	Label("done")
	VZEROUPPER()
	RET()
}

// cambiConv: dst[i] = ((src[i]+add) << shl) >> shr in words, the
// conversion to 10 bits (add and shr round deeper samples down, shl moves
// shallower ones up).
func cambiConv() {
	TEXT("cambiConvAVX2", NOSPLIT, "func(src, dst *uint16, add uint16, shl, shr uint64, n int)")
	Pragma("noescape")
	Doc("cambiConvAVX2 sets dst[i] = ((src[i]+add)<<shl)>>shr in 16 bits for i < n (a multiple of 16).")
	p := loadPointers("src", "dst")
	add := YMM()
	VPBROADCASTW(paramAddr("add"), add)
	shl, shr := XMM(), XMM()
	VMOVQ(paramAddr("shl"), shl)
	VMOVQ(paramAddr("shr"), shr)
	rowLoopStep(16, func(i Register) {
		x := YMM()
		VMOVDQU(Mem{Base: p[0], Index: i, Scale: 2}, x)
		VPADDW(add, x, x)
		VPSLLW(shl, x, x)
		VPSRLW(shr, x, x)
		VMOVDQU(x, Mem{Base: p[1], Index: i, Scale: 2})
	}, func() {})
}

// cambiAntiDither: r[j] = (r[j]+r[j+1]+next[j]+next[j+1]) >> 2 in place,
// summed in dwords; each step reads r[j+8] before a later one writes it.
func cambiAntiDither() {
	TEXT("cambiAntiDitherAVX2", NOSPLIT, "func(r, next *uint16, n int)")
	Pragma("noescape")
	Doc("cambiAntiDitherAVX2 sets r[j] = (r[j]+r[j+1]+next[j]+next[j+1])>>2 for j < n (a multiple of 8; the rows hold n+1 words).")
	p := loadPointers("r", "next")
	rowLoopStep(8, func(i Register) {
		a, b, c, d := YMM(), YMM(), YMM(), YMM()
		VPMOVZXWD(Mem{Base: p[0], Index: i, Scale: 2}, a)
		VPMOVZXWD(Mem{Base: p[0], Index: i, Scale: 2, Disp: 2}, b)
		VPMOVZXWD(Mem{Base: p[1], Index: i, Scale: 2}, c)
		VPMOVZXWD(Mem{Base: p[1], Index: i, Scale: 2, Disp: 2}, d)
		VPADDD(b, a, a)
		VPADDD(d, c, c)
		VPADDD(c, a, a)
		VPSRLD(Imm(2), a, a)
		hi, out := XMM(), XMM()
		VEXTRACTI128(Imm(1), a, hi)
		VPACKUSDW(hi, a.AsX(), out)
		VMOVDQU(out, Mem{Base: p[0], Index: i, Scale: 2})
	}, func() {})
}

// cambiDecimate16: dst[j] = src[2j], the even words, in place or not: each
// step reads its 32 source words before it writes 16, and a later step's
// source lies beyond what an earlier one wrote.
func cambiDecimate16() {
	TEXT("cambiDecimate16AVX2", NOSPLIT, "func(src, dst *uint16, n int)")
	Pragma("noescape")
	Doc("cambiDecimate16AVX2 sets dst[j] = src[2j] for j < n (a multiple of 16), front to back (dst may be src).")
	p := loadPointers("src", "dst")
	low := YMM()
	VPCMPEQD(low, low, low)
	VPSRLD(Imm(16), low, low) // 0x0000ffff
	rowLoopStep(16, func(i Register) {
		a, b := YMM(), YMM()
		VPAND(Mem{Base: p[0], Index: i, Scale: 4}, low, a)
		VPAND(Mem{Base: p[0], Index: i, Scale: 4, Disp: 32}, low, b)
		VPACKUSDW(b, a, a)
		VPERMQ(Imm(0xd8), a, a)
		VMOVDQU(a, Mem{Base: p[1], Index: i, Scale: 2})
	}, func() {})
}

// cambiDecimate8 is cambiDecimate16 for bytes (the spatial mask).
func cambiDecimate8() {
	TEXT("cambiDecimate8AVX2", NOSPLIT, "func(src, dst *bool, n int)")
	Pragma("noescape")
	Doc("cambiDecimate8AVX2 sets dst[j] = src[2j] for j < n (a multiple of 32), front to back (dst may be src).")
	p := loadPointers("src", "dst")
	low := YMM()
	VPCMPEQW(low, low, low)
	VPSRLW(Imm(8), low, low) // 0x00ff
	rowLoopStep(32, func(i Register) {
		a, b := YMM(), YMM()
		VPAND(Mem{Base: p[0], Index: i, Scale: 2}, low, a)
		VPAND(Mem{Base: p[0], Index: i, Scale: 2, Disp: 32}, low, b)
		VPACKUSWB(b, a, a)
		VPERMQ(Imm(0xd8), a, a)
		VMOVDQU(a, Mem{Base: p[1], Index: i, Scale: 1})
	}, func() {})
}

// cambiScan: per dword lane the smallest bits-1 (0 wraps to the top), the
// largest bits and the count of zero bits of the c-values, and their sums
// in double in 4 lanes (two sums side by side, added at the end).
func cambiScan() {
	TEXT("cambiScanAVX2", NOSPLIT, "func(c *float32, n int, out *[16]uint64)")
	Pragma("noescape")
	Doc("cambiScanAVX2 scans n float32 (a multiple of 8) for cambiScan into out: the 8 dword lanes of min(bits-1) in out[0:4], of max(bits) in out[4:8], of count(bits == 0) in out[8:12], 4 sums in double in out[12:16].")
	c := Load(Param("c"), GP64())
	out := Load(Param("out"), GP64())
	mn, mx, zs, ones, zero, s0, s1 := YMM(), YMM(), YMM(), YMM(), YMM(), YMM(), YMM()
	VPCMPEQD(ones, ones, ones)
	VMOVDQA(ones, mn)
	VPXOR(mx, mx, mx)
	VPXOR(zs, zs, zs)
	VPXOR(zero, zero, zero)
	VXORPD(s0, s0, s0)
	VXORPD(s1, s1, s1)
	rowLoopStep(8, func(i Register) {
		x, d, hi := YMM(), YMM(), XMM()
		VMOVDQU(Mem{Base: c, Index: i, Scale: 4}, x)
		VPADDD(ones, x, d)
		VPMINUD(d, mn, mn)
		VPMAXUD(x, mx, mx)
		VPCMPEQD(zero, x, d)
		VPSUBD(d, zs, zs)
		lo, h := YMM(), YMM()
		VCVTPS2PD(x.AsX(), lo)
		VADDPD(lo, s0, s0)
		VEXTRACTF128(Imm(1), x, hi)
		VCVTPS2PD(hi, h)
		VADDPD(h, s1, s1)
	}, func() {
		VADDPD(s1, s0, s0)
		VMOVDQU(mn, Mem{Base: out})
		VMOVDQU(mx, Mem{Base: out, Disp: 32})
		VMOVDQU(zs, Mem{Base: out, Disp: 64})
		VMOVUPD(s0, Mem{Base: out, Disp: 96})
	})
}
