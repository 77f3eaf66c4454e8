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
