package main

// VIF's 8-bit statistic in 16-bit lanes (vif8.go in package vmaf holds the
// scalar reference and the bounds).
//
// Every filter pass is a sum of taps f*x with f < 2^15 and x a 16-bit value,
// so VPMADDWD computes a folded pair of taps, f*(x[a]+x[b]), as one signed
// dword per pixel. Values of 16 bits unsigned (the squares of 8-bit samples,
// the rounded means) are stored biased, x-32768 as an int16: the pass's sum
// is then the true sum less 32768 times the filter's total, 2^16, that is
// the true sum minus 2^31, which one XOR with 2^31 undoes modulo 2^32; every
// true sum is below 2^32. The centre tap is paired with itself at half its
// weight (every centre tap is even) so that it is a folded pair too.

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// vif8Filters are libvmaf's VIF filters (vifFilters in vif.go).
var vif8Filters = [4][]uint32{
	{489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640, 935, 489},
	{1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244},
	{3571, 16004, 26386, 16004, 3571},
	{10904, 43728, 10904},
}

// vif8Kernels registers the 8-bit VIF kernels. Only scale 0 sees 8-bit
// samples: the subsampled images of scales 1 to 3 hold 16-bit means.
//
// Scales 1 to 3 run the same pipeline on their 16-bit samples: vif16Vert
// is their vertical pass, vif8Horiz(s) their horizontal pass, whose input,
// the vertical pass's rows in halves of 16 bits, is the same at every scale.
//
// Each is generated twice: for AVX2 (ymm, 16 pixels a step) and for AVX-512
// (zmm, 32 pixels a step, lanes512 set), from the same code.
func vif8Kernels() {
	for _, wide := range []bool{false, true} {
		lanes512 = wide
		vif8Vert(0)
		for s := 1; s < 4; s++ {
			vif16Vert(s)
		}
		for s := range 4 {
			vif8Horiz(s)
		}
		for s := 1; s < 4; s++ {
			vifSubVert(s)
		}
	}
	lanes512 = false
	widen8()
	narrow8()
}

// lanes512 is set while the 16-bit lane VIF kernels are generated for
// AVX-512 (zmm registers, 32 pixels a step) rather than AVX2 (ymm, 16).
var lanes512 bool

// vsuffix names the kernel's instruction set.
func vsuffix() string {
	if lanes512 {
		return "AVX512"
	}
	return "AVX2"
}

// vpixels is the 16-bit pixels of a step; vbytes a register's bytes.
func vpixels() int { return vbytes() / 2 }

func vbytes() int {
	if lanes512 {
		return 64
	}
	return 32
}

func vreg() VecVirtual {
	if lanes512 {
		return ZMM()
	}
	return YMM()
}

func vload(m Mem, r VecVirtual) {
	if lanes512 {
		VMOVDQU64(m, r)
	} else {
		VMOVDQU(m, r)
	}
}

func vstore(r VecVirtual, m Mem) {
	if lanes512 {
		VMOVDQU64(r, m)
	} else {
		VMOVDQU(r, m)
	}
}

func vxor(a Op, b, dst VecVirtual) {
	if lanes512 {
		VPXORD(a, b, dst)
	} else {
		VPXOR(a, b, dst)
	}
}

func vand(a Op, b, dst VecVirtual) {
	if lanes512 {
		VPANDD(a, b, dst)
	} else {
		VPAND(a, b, dst)
	}
}

// vconst is an operand of equal dwords v: AVX2 reads a 32-byte constant, an
// AVX-512 kernel a register broadcast from its first dword (call it before
// the loop).
func vconst(name string, v uint32) Op {
	m := const32(name, v)
	if !lanes512 {
		return m
	}
	r := ZMM()
	VPBROADCASTD(m, r)
	return r
}

// vconstQ is vconst of equal qwords.
func vconstQ(name string, v uint64) Op {
	m := const32q(name, v)
	if !lanes512 {
		return m
	}
	r := ZMM()
	VPBROADCASTQ(m, r)
	return r
}

// const32 is a 32-byte read-only constant of eight equal dwords.
func const32(name string, v uint32) Mem {
	if m, ok := constData[name]; ok {
		return m
	}
	m := GLOBL(name, RODATA|NOPTR)
	for k := range 8 {
		DATA(4*k, U32(v))
	}
	constData[name] = m
	return m
}

// vif8Tap is the pair weight of folded tap k of scale s's filter: f|f<<16,
// the centre (k == half) at half its weight.
func vif8Tap(s, k int) Op {
	f := vif8Filters[s][k]
	if k == len(vif8Filters[s])/2 {
		f /= 2
	}
	return vconst(fmt.Sprintf("vif8tap%d_%d", s, k), f|f<<16)
}

// vif8Taps are the pair weights of scale s's filter, for the loop.
func vif8Taps(s int) []Op {
	taps := make([]Op, len(vif8Filters[s])/2+1)
	for k := range taps {
		taps[k] = vif8Tap(s, k)
	}
	return taps
}

// vif8Acc adds the folded pair (x, y) of 16 words times tap into the dword
// sums lo (words 0-3 and 8-11) and hi (4-7, 12-15); first sets them.
func vif8Acc(x, y VecVirtual, tap Op, lo, hi VecVirtual, first bool) {
	t := vreg()
	VPUNPCKLWD(y, x, t)
	if first {
		VPMADDWD(tap, t, lo)
	} else {
		VPMADDWD(tap, t, t)
		VPADDD(t, lo, lo)
	}
	VPUNPCKHWD(y, x, t)
	if first {
		VPMADDWD(tap, t, hi)
	} else {
		VPMADDWD(tap, t, t)
		VPADDD(t, hi, hi)
	}
}

// vif8Store packs the dword sums lo and hi back into 16 words in pixel
// order, XORs them with xor when set, and stores them at the pointer held
// in planes[p] plus 2*j bytes.
func vif8Store(lo, hi VecVirtual, xor *Op, planes Register, p int, j Register) {
	out := vreg()
	VPACKUSDW(hi, lo, out)
	if xor != nil {
		vxor(*xor, out, out)
	}
	ptr := GP64()
	MOVQ(Mem{Base: planes, Disp: 8 * p}, ptr)
	vstore(out, Mem{Base: ptr, Index: j, Scale: 2})
}

// vif8Vert is the vertical pass of one output row at scale 0 for 16 pixels
// a step (vifVert8Cols in vif8.go): ref and dis hold the fw input rows of
// the window, planes the 8 output rows (mu1, mu2, the low halves of xx, yy,
// xy, their high halves).
//
// One pass over the window: each folded pair of rows (a, b) is interleaved
// once per image into word pairs u = (a, b), which serve every quantity.
// VPMADDWD(u, tap) is f*(a+b), a mean's term; VPMADDWD(u, u) is a²+b² and
// VPMADDWD(u_ref, u_dis) is a_r*a_d + b_r*b_d, exact dwords (samples below
// 2^8), which VPMULLD scales by the tap. The sums are exact and below 2^32,
// so no bias is needed until the stores. The centre row pairs with itself
// at half its weight, as everywhere in these kernels.
func vif8Vert(s int) {
	name := fmt.Sprintf("vifVert8S%d"+vsuffix(), s)
	TEXT(name, NOSPLIT, "func(ref, dis **uint16, planes **int16, n int)")
	Pragma("noescape")
	Doc(name + " is the vertical pass of VIF's 8-bit statistic at scale " + fmt.Sprint(s) + " over n pixels (a multiple of " + fmt.Sprint(vpixels()) + ").")
	fw := len(vif8Filters[s])
	half := fw / 2
	refp, disp, planes := Load(Param("ref"), GP64()), Load(Param("dis"), GP64()), Load(Param("planes"), GP64())
	n := Load(Param("n"), GP64())
	bias16 := vconst("vif8bias16", 0x80008000)
	c128 := vconst("vif8c128", 128)
	low := vconst("vif8low16", 0xffff)
	taps := vif8Taps(s)
	// dtap is tap k as dwords, for VPMULLD (the centre at half): a
	// memory operand on AVX2, broadcast in the loop on AVX-512, whose
	// registers the word taps already fill.
	dtap := func(k int) Op {
		f := vif8Filters[s][k]
		if k == half {
			f /= 2
		}
		m := const32(fmt.Sprintf("vif8dtap%d_%d", s, k), f)
		if !lanes512 {
			return m
		}
		r := ZMM()
		VPBROADCASTD(m, r)
		return r
	}
	j := GP64()
	XORQ(j, j)
	Label("loop")
	CMPQ(j, n)
	JAE(LabelRef("done"))

	// pair interleaves input rows k and fw-1-k of an image at pixel j:
	// word pairs (a, b) of the low (h 0) or high (h 1) words of each
	// 128-bit lane.
	pair := func(base Register, k, h int) VecVirtual {
		pa := GP64()
		MOVQ(Mem{Base: base, Disp: 8 * k}, pa)
		a := vreg()
		vload(Mem{Base: pa, Index: j, Scale: 2}, a)
		b := a
		if k != half {
			pb := GP64()
			MOVQ(Mem{Base: base, Disp: 8 * (fw - 1 - k)}, pb)
			b = vreg()
			vload(Mem{Base: pb, Index: j, Scale: 2}, b)
		}
		u := vreg()
		if h == 0 {
			VPUNPCKLWD(b, a, u)
		} else {
			VPUNPCKHWD(b, a, u)
		}
		return u
	}
	// term returns where a pair's term of sum goes: sum itself on the
	// first pair, else a temporary that add then adds in.
	term := func(sum VecVirtual, first bool) VecVirtual {
		if first {
			return sum
		}
		return vreg()
	}
	add := func(t, sum VecVirtual) {
		if t != sum {
			VPADDD(t, sum, sum)
		}
	}
	// Each half of the words in its own pass, which keeps the five sums
	// and the pairs within AVX2's sixteen registers.
	var sums [5][2]VecVirtual // mu1, mu2, xx, yy, xy; by half
	for h := range 2 {
		for q := range sums {
			sums[q][h] = vreg()
		}
		for k := 0; k <= half; k++ {
			first := k == 0
			ur, ud := pair(refp, k, h), pair(disp, k, h)
			for q, x := range [2]VecVirtual{ur, ud} {
				t := term(sums[q][h], first)
				VPMADDWD(taps[k], x, t)
				add(t, sums[q][h])
			}
			f := dtap(k)
			for q, m := range [3][2]VecVirtual{{ur, ur}, {ud, ud}, {ur, ud}} {
				t := term(sums[2+q][h], first)
				VPMADDWD(m[1], m[0], t)
				VPMULLD(f, t, t)
				add(t, sums[2+q][h])
			}
		}
	}

	// Means: (sum + 128) >> 8, biased; squares and product in a low and a
	// high half, each biased.
	for q := range 2 {
		for _, m := range sums[q] {
			VPADDD(c128, m, m)
			VPSRLD(Imm(8), m, m)
		}
		vif8Store(sums[q][0], sums[q][1], &bias16, planes, q, j)
	}
	for p := range 3 {
		v := sums[2+p]
		hl, hh := vreg(), vreg()
		VPSRLD(Imm(16), v[0], hl)
		VPSRLD(Imm(16), v[1], hh)
		vif8Store(hl, hh, &bias16, planes, 5+p, j)
		vand(low, v[0], v[0])
		vand(low, v[1], v[1])
		vif8Store(v[0], v[1], &bias16, planes, 2+p, j)
	}
	ADDQ(Imm(uint64(vpixels())), j)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// vifSubVert is the vertical pass of VIF's subsampling to scale s (1 to 3)
// for a step of pixels (vifSubVertCols in vif8.go): every tap of the
// filter in one pass, in dword lanes, where the scalar kernels add one
// pair of rows at a time into a row of 64-bit sums. ref and dis hold the
// fw input rows of the window (samples of up to 16 bits, biased for
// VPMADDWD as in vif16Vert: each sum is below 2^32), dst receives each
// pixel's rounded sums packed as ref | dis<<32, in pixel order.
func vifSubVert(s int) {
	name := fmt.Sprintf("vifSubVertS%d"+vsuffix(), s)
	TEXT(name, NOSPLIT, "func(ref, dis **uint16, dst *uint64, round uint32, shift uint64, n int)")
	Pragma("noescape")
	Doc(name + " is the vertical pass of VIF's subsampling to scale " + fmt.Sprint(s) + " over n pixels (a multiple of " + fmt.Sprint(vpixels()) + "): dst[j] = (sum_ref + round) >> shift | (sum_dis + round) >> shift << 32.")
	fw := len(vif8Filters[s])
	refp, disp, dst := Load(Param("ref"), GP64()), Load(Param("dis"), GP64()), Load(Param("dst"), GP64())
	n := Load(Param("n"), GP64())
	bias16 := vconst("vif8bias16", 0x80008000)
	sign := vconst("vif8sign", 0x80000000)
	round := vreg()
	shift := XMM()
	if lanes512 {
		VPBROADCASTD(Load(Param("round"), GP32()), round)
	} else {
		rx := XMM()
		MOVD(Load(Param("round"), GP32()), rx)
		VPBROADCASTD(rx, round)
	}
	MOVQ(Load(Param("shift"), GP64()), shift)
	taps := vif8Taps(s)
	j := GP64()
	XORQ(j, j)
	Label("loop")
	CMPQ(j, n)
	JAE(LabelRef("done"))

	// sums filters an image's window into rounded dword sums in the
	// unpacked halves (lo, hi).
	sums := func(base Register) (VecVirtual, VecVirtual) {
		lo, hi := windowMeans(base, j, taps, fw, bias16)
		for _, v := range []VecVirtual{lo, hi} {
			vxor(sign, v, v) // the samples' bias, 2^31 in all
			VPADDD(round, v, v)
			VPSRLD(shift, v, v)
		}
		return lo, hi
	}
	rlo, rhi := sums(refp)
	dlo, dhi := sums(disp)
	// Pairs (ref, dis) as qwords: a holds pixels 0-1 and 8-9 of each
	// 16, b 2-3 and 10-11, c 4-5 and 12-13, d 6-7 and 14-15.
	a, b, c, d := vreg(), vreg(), vreg(), vreg()
	VPUNPCKLDQ(dlo, rlo, a)
	VPUNPCKHDQ(dlo, rlo, b)
	VPUNPCKLDQ(dhi, rhi, c)
	VPUNPCKHDQ(dhi, rhi, d)
	for q, o := range qwordOrder(a, b, c, d) {
		vstore(o, Mem{Base: dst, Index: j, Scale: 8, Disp: q * vbytes()})
	}
	ADDQ(Imm(uint64(vpixels())), j)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// windowMeans filters a step of the fw input rows of a window, whose row
// pointers base holds, at pixel j with the folded taps: each sample biased
// (x-32768 as an int16) for VPMADDWD, the dword sums in the unpacked halves
// (lo, hi) are the true sums less 2^31, modulo 2^32 (the taps sum to 2^16).
// bias16 is the kernel's vif8bias16 constant (a register on AVX-512, made
// before the loop).
func windowMeans(base, j Register, taps []Op, fw int, bias16 Op) (lo, hi VecVirtual) {
	half := fw / 2
	row := func(k int) VecVirtual {
		v := windowRow(base, k, j)
		vxor(bias16, v, v)
		return v
	}
	lo, hi = vreg(), vreg()
	for k := 0; k <= half; k++ {
		a := row(k)
		b := a
		if k != half {
			b = row(fw - 1 - k)
		}
		vif8Acc(a, b, taps[k], lo, hi, k == 0)
	}
	return lo, hi
}

// qwordOrder puts in pixel order the qwords of a step of 16-bit pixels
// (16 in ymm, 32 in zmm) that a word unpack and a dword unpack split by
// 128-bit lane: lane l of a holds pixels 8l and 8l+1, of b 8l+2 and 8l+3,
// of c 8l+4 and 8l+5, of d 8l+6 and 8l+7. It returns the step's registers
// of qwords in pixel order.
func qwordOrder(a, b, c, d VecVirtual) []VecVirtual {
	if !lanes512 {
		o0, o2 := unpackedOrder(a, b)
		o1, o3 := unpackedOrder(c, d)
		return []VecVirtual{o0, o1, o2, o3}
	}
	// Lanes 0-1 of a and b, then of c and d; lanes 2-3 likewise; then
	// each output takes lane l of a, b, c and d.
	p, q, r, t := vreg(), vreg(), vreg(), vreg()
	VSHUFI64X2(Imm(0x44), b, a, p)
	VSHUFI64X2(Imm(0x44), d, c, q)
	VSHUFI64X2(Imm(0xee), b, a, r)
	VSHUFI64X2(Imm(0xee), d, c, t)
	o := []VecVirtual{vreg(), vreg(), vreg(), vreg()}
	VSHUFI64X2(Imm(0x88), q, p, o[0])
	VSHUFI64X2(Imm(0xdd), q, p, o[1])
	VSHUFI64X2(Imm(0x88), t, r, o[2])
	VSHUFI64X2(Imm(0xdd), t, r, o[3])
	return o
}

// windowRow loads a step of input row k of a window, whose row pointers base
// holds, at pixel j.
func windowRow(base Register, k int, j Register) VecVirtual {
	p, v := GP64(), vreg()
	MOVQ(Mem{Base: base, Disp: 8 * k}, p)
	vload(Mem{Base: p, Index: j, Scale: 2}, v)
	return v
}

// vif16Vert is the vertical pass of one output row at scale s (1 to 3) for
// 16 pixels a step (vifVert16Cols in vif8.go), on samples of up to 16 bits.
// The means are filtered as at scale 0, each sample biased. Each product
// a*b (up to 32 bits) is split into its high and low words (VPMULHUW,
// VPMULLW), each filtered alike into SH and SL (both below 2^32): the
// rounded sum (f*a*b + 2^15) >> 16 that the horizontal pass reads is then
// SH + ((SL + 2^15) >> 16), exactly, and is stored in halves as at scale 0.
func vif16Vert(s int) {
	name := fmt.Sprintf("vifVert16S%d"+vsuffix(), s)
	TEXT(name, NOSPLIT, "func(ref, dis **uint16, planes **int16, n int)")
	Pragma("noescape")
	Doc(name + " is the vertical pass of VIF's statistic in 16-bit lanes at scale " + fmt.Sprint(s) + " over n pixels (a multiple of " + fmt.Sprint(vpixels()) + ").")
	fw := len(vif8Filters[s])
	half := fw / 2
	refp, disp, planes := Load(Param("ref"), GP64()), Load(Param("dis"), GP64()), Load(Param("planes"), GP64())
	n := Load(Param("n"), GP64())
	bias16 := vconst("vif8bias16", 0x80008000)
	sign := vconst("vif8sign", 0x80000000)
	round := vconst("vif16c32768", 32768)
	low := vconst("vif8low16", 0xffff)
	taps := vif8Taps(s)
	j := GP64()
	XORQ(j, j)
	Label("loop")
	CMPQ(j, n)
	JAE(LabelRef("done"))

	row := func(base Register, k int) VecVirtual { return windowRow(base, k, j) }
	// unbias undoes the samples' bias in filtered sums (the true sum less
	// 2^31, modulo 2^32) and rounds them: (S + 2^15) >> 16.
	unbiasRound := func(vs ...VecVirtual) {
		for _, v := range vs {
			vxor(sign, v, v)
			VPADDD(round, v, v)
			VPSRLD(Imm(16), v, v)
		}
	}
	// The means.
	m1lo, m1hi := windowMeans(refp, j, taps, fw, bias16)
	m2lo, m2hi := windowMeans(disp, j, taps, fw, bias16)
	unbiasRound(m1lo, m1hi, m2lo, m2hi)
	vif8Store(m1lo, m1hi, &bias16, planes, 0, j)
	vif8Store(m2lo, m2hi, &bias16, planes, 1, j)

	// The squares and the product, each in its own pass.
	for p, pair := range [3][2]Register{{refp, refp}, {disp, disp}, {refp, disp}} {
		// halves returns the biased high and low words of the products of
		// input row k's samples.
		halves := func(k int) (VecVirtual, VecVirtual) {
			a := row(pair[0], k)
			b := a
			if pair[1] != pair[0] {
				b = row(pair[1], k)
			}
			h, l := vreg(), vreg()
			VPMULHUW(b, a, h)
			VPMULLW(b, a, l)
			vxor(bias16, h, h)
			vxor(bias16, l, l)
			return h, l
		}
		hlo, hhi, llo, lhi := vreg(), vreg(), vreg(), vreg()
		for k := 0; k <= half; k++ {
			centre := k == half
			tap := taps[k]
			ha, la := halves(k)
			hb, lb := ha, la
			if !centre {
				hb, lb = halves(fw - 1 - k)
			}
			vif8Acc(ha, hb, tap, hlo, hhi, k == 0)
			vif8Acc(la, lb, tap, llo, lhi, k == 0)
		}
		vxor(sign, hlo, hlo)
		vxor(sign, hhi, hhi)
		unbiasRound(llo, lhi)
		VPADDD(llo, hlo, hlo)
		VPADDD(lhi, hhi, hhi)
		vand(low, hlo, llo)
		vand(low, hhi, lhi)
		vif8Store(llo, lhi, &bias16, planes, 2+p, j)
		VPSRLD(Imm(16), hlo, hlo)
		VPSRLD(Imm(16), hhi, hhi)
		vif8Store(hlo, hhi, &bias16, planes, 5+p, j)
	}
	ADDQ(Imm(uint64(vpixels())), j)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// vif8Horiz is the horizontal pass of one row at scale 0 and the variances
// (vifHoriz8Cols in vif8.go) for 16 pixels a step: planes hold the padded
// rows of vif8Vert (each pointer at pixel 0), s1, s2 and s12 receive the
// variances in pixel order.
func vif8Horiz(s int) {
	name := fmt.Sprintf("vifHoriz8S%d"+vsuffix(), s)
	TEXT(name, NOSPLIT, "func(planes **int16, s1, s2, s12 *int32, n int)")
	Pragma("noescape")
	Doc(name + " is the horizontal pass and variances of VIF's statistic in 16-bit lanes at scale " + fmt.Sprint(s) + " over n pixels (a multiple of " + fmt.Sprint(vpixels()) + ").")
	fw := len(vif8Filters[s])
	half := fw / 2
	planes := Load(Param("planes"), GP64())
	outs := []Register{Load(Param("s1"), GP64()), Load(Param("s2"), GP64()), Load(Param("s12"), GP64())}
	n := Load(Param("n"), GP64())
	sign := vconst("vif8sign", 0x80000000)
	round := vconst("vif8c2p31r", 0x80008000)
	c2p31 := vconstQ("vif8c2p31q", 1<<31)
	taps := vif8Taps(s)
	var odd OpmaskVirtual // the odd dwords, for AVX-512's blend
	if lanes512 {
		odd = K()
		m := GP32()
		MOVL(U32(0xaaaa), m)
		KMOVW(m, odd)
	}
	zero := vreg()
	vxor(zero, zero, zero)
	j := GP64()
	XORQ(j, j)
	Label("loop")
	CMPQ(j, n)
	JAE(LabelRef("done"))

	// Scales 0 to 2 filter pairs of adjacent taps: VPMADDWD of a row
	// loaded at pixel b with (f[2t], f[2t+1]) gives, in dword i,
	// f[2t]*x[b+2i] + f[2t+1]*x[b+2i+1], two taps of output b+2i's sum.
	// Loads at j-half+2t sum the even outputs (E), at j-half+1+2t the odd
	// ones (O), with no word unpacks: the dwords stay in that split until
	// the variances are stored. The last pair's second tap is 0 where the
	// filter is odd; its word lies past the padding (vif8Rows allocates
	// one more). Scale 3's centre tap, 43728, does not fit a signed word,
	// so it keeps the folded pairs of vif8Acc, the centre at half weight.
	eo := s < 3
	var ptaps []Op
	if eo {
		f := vif8Filters[s]
		for t := 0; t < len(f); t += 2 {
			var g uint32
			if t+1 < len(f) {
				g = f[t+1]
			}
			ptaps = append(ptaps, vconst(fmt.Sprintf("vif8ptap%d_%d", s, t/2), f[t]|g<<16))
		}
	}
	// filter returns plane p's filtered sums, still biased: E and O where
	// eo is set, else the unpacked halves (lo, hi).
	filter := func(p int) (VecVirtual, VecVirtual) {
		ptr := GP64()
		MOVQ(Mem{Base: planes, Disp: 8 * p}, ptr)
		if eo {
			// The row at offsets -half+d, d from 0 to 2*len(ptaps)-1,
			// in order: the offsets a whole number of 128-bit lanes (8
			// words) from -half are loaded, those between two loads
			// are VPALIGNR of them (per lane, as the loads are), which
			// spares the load ports, the pass's bottleneck. An offset
			// past the last load is loaded itself, so that no load
			// reads beyond the words the filter covers (and the one
			// word after them).
			last := 2*len(ptaps) - 1
			loads := map[int]VecVirtual{}
			load := func(d int) VecVirtual {
				if x, ok := loads[d]; ok {
					return x
				}
				x := vreg()
				vload(Mem{Base: ptr, Index: j, Scale: 2, Disp: 2 * (d - half)}, x)
				loads[d] = x
				return x
			}
			e, o := vreg(), vreg()
			for d := 0; d <= last; d++ {
				m := d &^ 7
				var x VecVirtual
				switch {
				case d == m:
					x = load(d)
				case m+8 <= last:
					x = vreg()
					VPALIGNR(Imm(uint64(2*(d-m))), load(m), load(m+8), x)
				default:
					x = load(d)
				}
				sum, t := e, d/2
				if d%2 == 1 {
					sum = o
				}
				if t == 0 {
					VPMADDWD(ptaps[t], x, sum)
				} else {
					p := vreg()
					VPMADDWD(ptaps[t], x, p)
					VPADDD(p, sum, sum)
				}
			}
			return e, o
		}
		lo, hi := vreg(), vreg()
		for k := 0; k <= half; k++ {
			x := vreg()
			vload(Mem{Base: ptr, Index: j, Scale: 2, Disp: 2 * (k - half)}, x)
			y := x
			if k != half {
				y = vreg()
				vload(Mem{Base: ptr, Index: j, Scale: 2, Disp: 2 * (half - k)}, y)
			}
			vif8Acc(x, y, taps[k], lo, hi, k == 0)
		}
		return lo, hi
	}
	// product is (a*b + 2^31) >> 32 in each dword of a and b, whose odd
	// dwords ao and bo hold in their low halves.
	product := func(a, b, ao, bo VecVirtual) VecVirtual {
		pe, po := vreg(), vreg()
		VPMULUDQ(b, a, pe)
		VPADDQ(c2p31, pe, pe)
		VPSRLQ(Imm(32), pe, pe)
		VPMULUDQ(bo, ao, po)
		VPADDQ(c2p31, po, po)
		if lanes512 {
			VPBLENDMD(po, pe, odd, po)
		} else {
			VPBLENDD(Imm(0xaa), po, pe, po)
		}
		return po
	}
	m1lo, m1hi := filter(0)
	m2lo, m2hi := filter(1)
	var sq [3][2]VecVirtual // mu1², mu2², mu1*mu2
	for h, m := range [][2]VecVirtual{{m1lo, m2lo}, {m1hi, m2hi}} {
		a, b := m[0], m[1]
		vxor(sign, a, a)
		vxor(sign, b, b)
		ao, bo := vreg(), vreg()
		VPSRLQ(Imm(32), a, ao)
		VPSRLQ(Imm(32), b, bo)
		sq[0][h] = product(a, a, ao, ao)
		sq[1][h] = product(b, b, bo, bo)
		sq[2][h] = product(a, b, ao, bo)
	}
	for q := range 3 {
		lo, hi := filter(2 + q)
		for _, v := range []VecVirtual{lo, hi} {
			VPADDD(round, v, v)
			VPSRLD(Imm(16), v, v)
		}
		{
			hl, hh := filter(5 + q)
			vxor(sign, hl, hl)
			vxor(sign, hh, hh)
			VPADDD(hl, lo, lo)
			VPADDD(hh, hi, hi)
		}
		VPSUBD(sq[q][0], lo, lo)
		VPSUBD(sq[q][1], hi, hi)
		if q == 1 {
			VPMAXSD(zero, lo, lo)
			VPMAXSD(zero, hi, hi)
		}
		if eo {
			// lo, hi hold the even and odd pixels: interleaved by dword
			// within each 128-bit lane they are the unpacked halves.
			e, o := lo, hi
			lo, hi = vreg(), vreg()
			VPUNPCKLDQ(o, e, lo)
			VPUNPCKHDQ(o, e, hi)
		}
		o0, o1 := unpackedOrder(lo, hi)
		vstore(o0, Mem{Base: outs[q], Index: j, Scale: 4})
		vstore(o1, Mem{Base: outs[q], Index: j, Scale: 4, Disp: vbytes()})
	}
	ADDQ(Imm(uint64(vpixels())), j)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// unpackedOrder puts back in order the dwords of one step that a word unpack
// split by 128-bit lane: lo holds pixels 0-3, 8-11 (and 16-19, 24-27 in
// zmm), hi the others. It returns the step's first and second registers of
// dwords in pixel order; in zmm it gathers the lanes of each, then orders them.
func unpackedOrder(lo, hi VecVirtual) (o0, o1 VecVirtual) {
	o0, o1 = vreg(), vreg()
	if lanes512 {
		VSHUFI64X2(Imm(0x44), hi, lo, o0)
		VSHUFI64X2(Imm(0xd8), o0, o0, o0)
		VSHUFI64X2(Imm(0xee), hi, lo, o1)
		VSHUFI64X2(Imm(0xd8), o1, o1, o1)
	} else {
		VPERM2I128(Imm(0x20), hi, lo, o0)
		VPERM2I128(Imm(0x31), hi, lo, o1)
	}
	return o0, o1
}

// const32q is a 32-byte read-only constant of four equal qwords.
func const32q(name string, v uint64) Mem {
	if m, ok := constData[name]; ok {
		return m
	}
	m := GLOBL(name, RODATA|NOPTR)
	for k := range 4 {
		DATA(8*k, U64(v))
	}
	constData[name] = m
	return m
}

// widen8 widens bytes to 16-bit samples, 32 a step (toSamples in frame.go).
func widen8() {
	TEXT("widen8AVX2", NOSPLIT, "func(src *byte, dst *uint16, n int)")
	Pragma("noescape")
	Doc("widen8AVX2 sets dst[i] = src[i] for i < n (a multiple of 32).")
	src, dst := Load(Param("src"), GP64()), Load(Param("dst"), GP64())
	rowLoopStep(32, func(i Register) {
		a, b := YMM(), YMM()
		VPMOVZXBW(Mem{Base: src, Index: i, Scale: 1}, a)
		VPMOVZXBW(Mem{Base: src, Index: i, Scale: 1, Disp: 16}, b)
		VMOVDQU(a, Mem{Base: dst, Index: i, Scale: 2})
		VMOVDQU(b, Mem{Base: dst, Index: i, Scale: 2, Disp: 32})
	}, func() {})
}

// narrow8 narrows 16-bit samples of 8 bits to bytes, 32 a step (Narrow8 in
// frame.go: a GPU stages 8-bit planes as bytes, half what crosses the bus).
// VPACKUSWB packs within each 128-bit lane; VPERMQ puts the four quarters
// back in order.
func narrow8() {
	TEXT("narrow8AVX2", NOSPLIT, "func(src *uint16, dst *byte, n int)")
	Pragma("noescape")
	Doc("narrow8AVX2 sets dst[i] = src[i] for i < n (a multiple of 32), each src[i] below 256.")
	src, dst := Load(Param("src"), GP64()), Load(Param("dst"), GP64())
	rowLoopStep(32, func(i Register) {
		a, b := YMM(), YMM()
		VMOVDQU(Mem{Base: src, Index: i, Scale: 2}, a)
		VMOVDQU(Mem{Base: src, Index: i, Scale: 2, Disp: 32}, b)
		VPACKUSWB(b, a, a)
		VPERMQ(Imm(0xD8), a, a)
		VMOVDQU(a, Mem{Base: dst, Index: i, Scale: 1})
	}, func() {})
}
