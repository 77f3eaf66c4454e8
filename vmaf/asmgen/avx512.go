package main

// AVX-512 kernels (the avx512 path, which needs AVX-512 F, BW, DQ and VL;
// these use CD's VPLZCNT too, which every AVX-512 processor that has the
// other four also has). Each gives its AVX2 twin's integers exactly.

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func avx512Kernels() {
	vifStat512()
	admCSF0512()
	admCSFS512()
	dwtSV512()
	dwtSH512()
	subTap512(false)
	subTap512(true)
}

// subTap512 is subTapInit (pair false) and subTapPair 8 pixels a step: a
// packed word ref | dis<<32 is built from two zero-extended words, the
// distorted one shifted into the high dword, rather than interleaved.
func subTap512(pair bool) {
	name, sig, doc := "vifSubTapInitAVX512", "func(f uint64, ref, dis *uint16, acc *uint64, n int)",
		"vifSubTapInitAVX512 sets acc[i] = f*(ref[i] | dis[i]<<32) for i < n (a multiple of 8)."
	if pair {
		name, sig, doc = "vifSubTapPairAVX512", "func(f uint64, ra, rb, da, db *uint16, acc *uint64, n int)",
			"vifSubTapPairAVX512 adds f*((ra[i]+rb[i]) | (da[i]+db[i])<<32) to acc[i] for i < n (a multiple of 8)."
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(doc)
	f := ZMM()
	VPBROADCASTD(paramAddr("f"), f)
	var ra, rb, da, db Register
	if pair {
		ra, rb = Load(Param("ra"), GP64()), Load(Param("rb"), GP64())
		da, db = Load(Param("da"), GP64()), Load(Param("db"), GP64())
	} else {
		ra, da = Load(Param("ref"), GP64()), Load(Param("dis"), GP64())
	}
	acc := Load(Param("acc"), GP64())
	rowLoopStep(8, func(i Register) {
		side := func(a, b Register) VecVirtual {
			x := ZMM()
			VPMOVZXWQ(Mem{Base: a, Index: i, Scale: 2}, x)
			if b != nil {
				t := ZMM()
				VPMOVZXWQ(Mem{Base: b, Index: i, Scale: 2}, t)
				VPADDQ(t, x, x)
			}
			return x
		}
		x, d := side(ra, rb), side(da, db)
		VPSLLQ(Imm(32), d, d)
		VPORQ(d, x, x)
		VPMULLD(f, x, x)
		if pair {
			VPADDD(Mem{Base: acc, Index: i, Scale: 8}, x, x)
		}
		VMOVDQU64(x, Mem{Base: acc, Index: i, Scale: 8})
	}, func() {})
}

// admCSF0512 is admCSF0 16 coefficients a step.
func admCSF0512() {
	TEXT("admCSF0AVX512", NOSPLIT, "func(src, dstA, dstF *int32, irf, add, shift uint64, n int)")
	Pragma("noescape")
	Doc("admCSF0AVX512 weighs n coefficients (a multiple of 16) of src into dstA and their masking inputs into dstF.")
	src := Load(Param("src"), GP64())
	dstA := Load(Param("dstA"), GP64())
	dstF := Load(Param("dstF"), GP64())
	irf, add, shift, c4369, c2048 := ZMM(), ZMM(), XMM(), ZMM(), ZMM()
	VPBROADCASTD(paramAddr("irf"), irf)
	VPBROADCASTD(paramAddr("add"), add)
	MOVQ(paramAddr("shift"), shift)
	VPBROADCASTD(constMem("csfc4369", U32(4369)), c4369)
	VPBROADCASTD(constMem("csfc2048", U32(2048)), c2048)
	rowLoopStep(16, func(i Register) {
		a, f := ZMM(), ZMM()
		VPMULLD(Mem{Base: src, Index: i, Scale: 4}, irf, a)
		VPADDD(add, a, a)
		VPSRAD(shift, a, a)
		narrow16(a)
		VMOVDQU32(a, Mem{Base: dstA, Index: i, Scale: 4})
		VPABSD(a, f)
		VPMULLD(c4369, f, f)
		VPADDD(c2048, f, f)
		VPSRAD(Imm(12), f, f)
		narrow16(f)
		VMOVDQU32(f, Mem{Base: dstF, Index: i, Scale: 4})
	}, func() {})
}

// admCSFS512 is admCSFS 8 coefficients a step: weighS and fltQ32 in 8
// qword lanes, whose low dwords VPMOVQD packs.
func admCSFS512() {
	TEXT("admCSFSAVX512", NOSPLIT, "func(src, dstA, dstF *int32, irf *uint64, n int)")
	Pragma("noescape")
	Doc("admCSFSAVX512 weighs n coefficients (a multiple of 8) of src by the Q32 weight *irf into dstA and their masking inputs into dstF.")
	p := loadPointers("src", "dstA", "dstF", "irf")
	w, wHi, r27 := ZMM(), ZMM(), ZMM()
	VPBROADCASTQ(Mem{Base: p[3]}, w)
	VPSLLQ(Imm(32), w, wHi)
	VPBROADCASTQ(constMem("csfs2p27", U64(1<<27)), r27)
	f, round := ZMM(), ZMM()
	VPBROADCASTQ(constMem("fltq32c143165577", U64(143165577)), f)
	VPBROADCASTQ(constMem("fltq32round", U64(0xffffffff80000000)), round)
	rowLoopStep(8, func(i Register) {
		// weighS: (src*irf + 2^27) >> 28 of the 64-bit product of a signed
		// src and the unsigned Q32 irf: the unsigned product less irf<<32
		// where src is negative.
		s64, pr, neg := ZMM(), ZMM(), ZMM()
		VPMOVSXDQ(Mem{Base: p[0], Index: i, Scale: 4}, s64)
		VPMULUDQ(w, s64, pr)
		VPSRAQ(Imm(63), s64, neg)
		VPANDQ(wHi, neg, neg)
		VPSUBQ(neg, pr, pr)
		VPADDQ(r27, pr, pr)
		VPSRLQ(Imm(28), pr, pr)
		a := YMM()
		VPMOVQD(pr, a)
		VMOVDQU(a, Mem{Base: p[1], Index: i, Scale: 4})
		// fltQ32(|a|, 143165577).
		VPABSD(a, a)
		x64 := ZMM()
		VPMOVZXDQ(a, x64)
		VPMULDQ(f, x64, x64)
		VPADDQ(round, x64, x64)
		VPSRLQ(Imm(32), x64, x64)
		VPMOVQD(x64, a)
		VMOVDQU(a, Mem{Base: p[2], Index: i, Scale: 4})
	}, func() {})
}

// dwtSum512 is dwtSum64 in 8 qword lanes.
func dwtSum512(taps Mem, s [4]VecVirtual, add VecVirtual, shift Op, out Mem) {
	acc, c := ZMM(), ZMM()
	VMOVDQA64(add, acc)
	for k := range s {
		VPBROADCASTD(taps.Offset(4*k), c)
		VPMULDQ(s[k], c, c)
		VPADDQ(c, acc, acc)
	}
	VPSRLQ(shift, acc, acc)
	y := YMM()
	VPMOVQD(acc, y)
	VMOVDQU(y, out)
}

// dwtSV512 is dwtSV 8 samples a step.
func dwtSV512() {
	TEXT("admDWTSVAVX512", NOSPLIT, "func(r0, r1, r2, r3, lo, hi *int32, add, shift uint64, n int)")
	Pragma("noescape")
	Doc("admDWTSVAVX512 runs the 64-bit vertical DWT of n samples (a multiple of 8) of four rows into lo and hi.")
	p := loadPointers("r0", "r1", "r2", "r3", "lo", "hi")
	add, shift := ZMM(), XMM()
	VPBROADCASTQ(paramAddr("add"), add)
	MOVQ(paramAddr("shift"), shift)
	loTab, hiTab := dwtTaps()
	rowLoopStep(8, func(i Register) {
		var u [4]VecVirtual
		for k := range u {
			u[k] = ZMM()
			VPMOVSXDQ(Mem{Base: p[k], Index: i, Scale: 4}, u[k])
		}
		dwtSum512(loTab, u, add, shift, Mem{Base: p[4], Index: i, Scale: 4})
		dwtSum512(hiTab, u, add, shift, Mem{Base: p[5], Index: i, Scale: 4})
	}, func() {})
}

// dwtSH512 is dwtSH 8 outputs a step: one VPERMD puts the even dwords of
// t[2j-1..2j+14] in the low half and the odd ones in the high half.
func dwtSH512() {
	TEXT("admDWTSHAVX512", NOSPLIT, "func(t, lo, hi *int32, add, shift uint64, n int)")
	Pragma("noescape")
	Doc("admDWTSHAVX512 runs the 64-bit horizontal DWT of n interior outputs (a multiple of 8) from t into lo and hi.")
	p := loadPointers("t", "lo", "hi")
	t := p[0]
	add, shift, perm := ZMM(), XMM(), ZMM()
	VPBROADCASTQ(paramAddr("add"), add)
	MOVQ(paramAddr("shift"), shift)
	VMOVDQU32(dwordTable("dwts512perm", []int32{0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15}), perm)
	loTab, hiTab := dwtTaps()
	rowLoopStep(8, func(i Register) {
		a, b := ZMM(), ZMM()
		VPERMD(Mem{Base: t}, perm, a)
		VPERMD(Mem{Base: t, Disp: 8}, perm, b)
		var sv [4]VecVirtual
		for k, half := range []struct {
			v  VecVirtual
			hi bool
		}{{a, false}, {a, true}, {b, false}, {b, true}} {
			sv[k] = ZMM()
			x := half.v.AsY()
			if half.hi {
				x = YMM()
				VEXTRACTI64X4(Imm(1), half.v, x)
			}
			VPMOVSXDQ(x, sv[k])
		}
		dwtSum512(loTab, sv, add, shift, Mem{Base: p[1], Index: i, Scale: 4})
		dwtSum512(hiTab, sv, add, shift, Mem{Base: p[2], Index: i, Scale: 4})
		ADDQ(Imm(64), t)
	}, func() {})
}

// vifStat512 is vifStat 16 pixels a step: the per-pixel statistic in
// 16 dword lanes and two groups of 8 double lanes. floor(log2) is
// VPLZCNT's, the gathers take 16 lanes and, masked, read only the lanes
// whose values count (so no lane needs a safe index), and the sums of a
// call stay in dword lanes, the non-log sigma2² in qwords: a log term is
// below 2^17, so a lane holds the sum of 2^14 pixels; the caller passes at
// most 2^16 pixels a call.
func vifStat512() {
	TEXT("vifStatAVX512", NOSPLIT, "func(s1, s2, s12 *int32, tab *uint16, egl float64, out *[4]int64, n int)")
	Pragma("noescape")
	Doc("vifStatAVX512 is vifStatAVX2 for n pixels a multiple of 16 (at most 2^16): out receives numLog, denLog + 2048*17 per log pixel, numNonLog and the log pixel count.")
	s1p := Load(Param("s1"), GP64())
	s2p := Load(Param("s2"), GP64())
	s12p := Load(Param("s12"), GP64())
	tab := Load(Param("tab"), GP64())
	out := Load(Param("out"), GP64())

	d := func(name string, v uint32) Mem { return ConstData(name, U32(v)) }
	q := func(name string, v uint64) Mem { return ConstData(name, U64(v)) }
	c131071 := d("vif512c131071", 131071)
	c131072 := d("vif512c131072", 131072)
	cLow16 := d("vif512clow16", 0xffff)
	c16 := d("vif512c16", 16)
	c48 := q("vif512c48", 48)
	cEps := q("vif512ceps", 0x3edb7cdfd9d7bdbb) // 65536 * 1.0e-10

	bcastD := func(m Mem) VecVirtual {
		r := ZMM()
		VPBROADCASTD(m, r)
		return r
	}
	bcastQ := func(m Mem) VecVirtual {
		r := ZMM()
		VPBROADCASTQ(m, r)
		return r
	}
	accNum, accDen, accNon := ZMM(), ZMM(), ZMM()
	for _, a := range []VecVirtual{accNum, accDen, accNon} {
		VPXORD(a, a, a)
	}
	cnt := GP64()
	XORQ(cnt, cnt)

	// lookup is t[idx] + 2048*k in the 16 dword lanes of mask (a mask the
	// gather consumes: the caller's is copied).
	lookup := func(idx, k VecVirtual, mask OpmaskVirtual) VecVirtual {
		m, v := K(), ZMM()
		KMOVW(mask, m)
		VPXORD(v, v, v)
		VPGATHERDD(Mem{Base: tab, Index: idx, Scale: 2}, m, v)
		VPANDD(bcastD(cLow16), v, v)
		VPSLLD(Imm(11), k, k)
		VPADDD(k, v, v)
		return v
	}
	// log2of32 is log2of32 of 16 uint32 lanes: k = 16 - lzcnt(x).
	log2of32 := func(x VecVirtual, mask OpmaskVirtual) VecVirtual {
		k, idx := ZMM(), ZMM()
		VPLZCNTD(x, k)
		VPSUBD(k, bcastD(c16), k)
		VPSRLVD(k, x, idx)
		return lookup(idx, k, mask)
	}

	rowLoopStep(16, func(i Register) {
		s1, s2, s12 := ZMM(), ZMM(), ZMM()
		VMOVDQU32(Mem{Base: s1p, Index: i, Scale: 4}, s1)
		VMOVDQU32(Mem{Base: s2p, Index: i, Scale: 4}, s2)
		VMOVDQU32(Mem{Base: s12p, Index: i, Scale: 4}, s12)
		zero := ZMM()
		VPXORD(zero, zero, zero)
		// Log pixels (sigma1² >= sigma_nsq), and numerator pixels among them
		// (sigma12 > 0 and sigma2² > 0).
		klog, km := K(), K()
		VPCMPGTD(bcastD(c131071), s1, klog)
		VPCMPGTD(zero, s12, klog, km)
		VPCMPGTD(zero, s2, km, km)
		// Count, and the non-log pixels' sigma2² in qwords.
		c := GP32()
		KMOVW(klog, c)
		POPCNTL(c, c)
		ADDQ(c.As64(), cnt)
		knon := K()
		KNOTW(klog, knon)
		for h := range 2 {
			half := s2.AsY()
			if h == 1 {
				half = YMM()
				VEXTRACTI64X4(Imm(1), s2, half)
				KSHIFTRW(Imm(8), knon, knon)
			}
			w := ZMM()
			VPMOVZXDQ(half, w)
			VPADDQ(w, accNon, knon, accNon)
		}
		// Denominator: log2of32(sigma_nsq + sigma1²).
		x := ZMM()
		VPADDD(bcastD(c131072), s1, x)
		den := log2of32(x, klog)
		VPADDD(den, accDen, klog, accDen)

		// The double part, 8 pixels at a time: numer1 (dwords) and
		// numer1_tmp's indices and k (dwords), each pair of halves joined.
		var n1h, idxh, kh [2]VecVirtual
		for h := range 2 {
			part := func(v VecVirtual) Register {
				if h == 0 {
					return v.AsY()
				}
				p := YMM()
				VEXTRACTI64X4(Imm(1), v, p)
				return p
			}
			s1d, s2d, s12d := ZMM(), ZMM(), ZMM()
			VCVTDQ2PD(part(s1), s1d)
			VCVTDQ2PD(part(s2), s2d)
			VCVTDQ2PD(part(s12), s12d)
			// g = sigma12 / (sigma1² + eps); sv² = int32(sigma2² - g*sigma12).
			g, u := ZMM(), ZMM()
			VADDPD(bcastQ(cEps), s1d, g)
			VDIVPD(g, s12d, g)
			VMULPD(s12d, g, u)
			VSUBPD(u, s2d, u)
			n1h[h] = YMM()
			VCVTTPD2DQ(u, n1h[h])
			VPMAXSD(zero.AsY(), n1h[h], n1h[h])
			// numer1 = sv² + sigma_nsq.
			VPADDD(bcastD(c131072).AsY(), n1h[h], n1h[h])
			n1 := ZMM()
			VPMOVZXDQ(n1h[h], n1)
			// numer1_tmp = int64(g*g*sigma1²) + numer1, g limited to egl.
			VMINPD(bcastQ(paramAddr("egl")), g, g)
			VMULPD(g, g, g)
			VMULPD(s1d, g, g)
			VCVTTPD2QQ(g, g)
			VPADDQ(n1, g, g)
			// k = 48 - lzcnt64; the index x >> k and k as dwords.
			k, idx := ZMM(), ZMM()
			VPLZCNTQ(g, k)
			VPSUBQ(k, bcastQ(c48), k)
			VPSRLVQ(k, g, idx)
			idxh[h], kh[h] = YMM(), YMM()
			VPMOVQD(idx, idxh[h])
			VPMOVQD(k, kh[h])
		}
		n1all, ia, ka := ZMM(), ZMM(), ZMM()
		VINSERTI64X4(Imm(1), n1h[1], n1h[0].AsZ(), n1all)
		VINSERTI64X4(Imm(1), idxh[1], idxh[0].AsZ(), ia)
		VINSERTI64X4(Imm(1), kh[1], kh[0].AsZ(), ka)
		a := lookup(ia, ka, km)
		b := log2of32(n1all, km)
		VPSUBD(b, a, a)
		VPADDD(a, accNum, km, accNum)
	}, func() {
		// Sign-extend the dword sums to qwords and add each up.
		for k, acc := range []VecVirtual{accNum, accDen} {
			lo, hi, t := ZMM(), ZMM(), YMM()
			VPMOVSXDQ(acc.AsY(), lo)
			VEXTRACTI64X4(Imm(1), acc, t)
			VPMOVSXDQ(t, hi)
			VPADDQ(hi, lo, lo)
			sum512(lo, Mem{Base: out, Disp: 8 * k})
		}
		sum512(accNon, Mem{Base: out, Disp: 16})
		MOVQ(cnt, Mem{Base: out, Disp: 24})
	})
}

// sum512 stores the sum of the 8 qwords of z at m.
func sum512(z VecVirtual, m Mem) {
	y, x := YMM(), XMM()
	VEXTRACTI64X4(Imm(1), z, y)
	VPADDQ(y, z.AsY(), y)
	VEXTRACTI128(Imm(1), y, x)
	VPADDQ(x, y.AsX(), x)
	t := XMM()
	VPSHUFD(Imm(0x4e), x, t)
	VPADDQ(t, x, x)
	MOVQ(x, m)
}
