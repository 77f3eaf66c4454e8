package main

// AVX-512 kernels (the avx512 path, which needs AVX-512 F, BW, DQ and VL;
// these use CD's VPLZCNT too, which every AVX-512 processor that has the
// other four also has). Each gives its AVX2 twin's integers exactly.

import (
	"fmt"

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
	admCM512(false)
	admCM512(true)
	admDecouple0Int512()
	admAngle512()
	admDen512(false)
	admDen512(true)
	admDecouple512()
}

// admDecouple512 is admDecouple (scales 1 to 3) 8 coefficients a step: the
// 64-bit arithmetic in 8 qword lanes, the gather 8 dword lanes, the gain
// limit in 8 double lanes, and compares into masks where AVX2 blends by
// vector masks.
func admDecouple512() {
	TEXT("admDecoupleAVX512", NOSPLIT, "func(o, t, angle, r, a *int32, tab *int32, egl float64, n int)")
	Pragma("noescape")
	Doc("admDecoupleAVX512 decouples n coefficients (a multiple of 8) of one band into r and a; tab is the reciprocal table at its entry 0.")
	p := loadPointers("o", "t", "angle", "r", "a", "tab")
	o, t, angle, rp, ap, tab := p[0], p[1], p[2], p[3], p[4], p[5]
	egl := ZMM()
	VBROADCASTSD(paramAddr("egl"), egl)
	dq := func(name string, v uint32) VecVirtual {
		r := YMM()
		VPBROADCASTD(constMem(name, U32(v)), r)
		return r
	}
	qq := func(name string, v uint64) VecVirtual {
		r := ZMM()
		VPBROADCASTQ(constMem(name, U64(v)), r)
		return r
	}
	c7ff, c1037, one := dq("decc7ffd", 0x7ff), dq("decc1037", 1037), dq("decc1d", 1)
	c2p14, c15, c32768 := qq("decc2p14", 1<<14), qq("decc15", 15), qq("decc32768", 32768)
	zero := ZMM()
	VPXORQ(zero, zero, zero)
	rowLoopStep(8, func(i Register) {
		vo, vt, ao := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: o, Index: i, Scale: 4}, vo)
		VMOVDQU(Mem{Base: t, Index: i, Scale: 4}, vt)
		VPABSD(vo, ao) // |o| as uint32
		// shift = max(exponent(|o|) - 1037, 0)
		e, sh := ZMM(), YMM()
		VCVTDQ2PD(vo, e)
		VPSRLQ(Imm(52), e, e)
		VPMOVQD(e, sh)
		VPAND(c7ff, sh, sh)
		VPSUBD(c1037, sh, sh)
		VPMAXSD(zero.AsY(), sh, sh)
		// msb = (|o| + ((1 << shift) >> 1)) >> shift
		rnd := YMM()
		VPSLLVD(sh, one, rnd)
		VPSRLD(Imm(1), rnd, rnd)
		VPADDD(ao, rnd, rnd)
		VPSRLVD(sh, rnd, rnd)
		all, lk := K(), YMM()
		KXNORB(all, all, all)
		VPXOR(lk, lk, lk)
		VPGATHERDD(Mem{Base: tab, Index: rnd, Scale: 4}, all, lk)
		// p = lookup * t * sign(o) + (2^14 << shift)
		pp, t64, sgn, sh64, c := ZMM(), ZMM(), ZMM(), ZMM(), ZMM()
		VPMOVZXDQ(lk, pp)
		VPMOVSXDQ(vt, t64)
		VPMULDQ(t64, pp, pp)
		VPMOVSXDQ(vo, sgn)
		VPSRAQ(Imm(63), sgn, sgn)
		VPXORQ(sgn, pp, pp)
		VPSUBQ(sgn, pp, pp)
		VPMOVZXDQ(sh, sh64)
		VPSLLVQ(sh64, c2p14, c)
		VPADDQ(c, pp, pp)
		// k = p < 0 ? 0 : min(p >> (15+shift), 32768)
		neg := K()
		VPMOVQ2M(pp, neg)
		VPADDQ(c15, sh64, sh64)
		VPSRLVQ(sh64, pp, pp)
		VPMINSQ(c32768, pp, pp)
		VPXORQ(pp, pp, neg, pp)
		k := pp
		// r = (k*o + 2^14) >> 15
		o64, rr := ZMM(), ZMM()
		VPMOVSXDQ(vo, o64)
		VPMULDQ(o64, k, rr)
		VPADDQ(c2p14, rr, rr)
		VPSRLQ(Imm(15), rr, rr)
		r := YMM()
		VPMOVQD(rr, r)
		// The gain limit where angle && k > 0 (k > 0 implies o != 0).
		kpos, m := K(), K()
		VPCMPGTQ(zero, k, kpos)
		av := YMM()
		VMOVDQU(Mem{Base: angle, Index: i, Scale: 4}, av)
		VPTESTMD(av, av, kpos, m)
		// lim = o < 0 ? max(egl*r, t) : min(egl*r, t), as doubles, truncated.
		v, td, lim, mx := ZMM(), ZMM(), ZMM(), ZMM()
		VCVTDQ2PD(r, v)
		VMULPD(egl, v, v)
		VCVTDQ2PD(vt, td)
		lt, gt, on := K(), K(), K()
		VCMPPD(Imm(0x01), td, v, lt) // v < t
		VBLENDMPD(v, td, lt, lim)
		VCMPPD(Imm(0x0e), td, v, gt) // v > t
		VBLENDMPD(v, td, gt, mx)
		VPMOVQ2M(o64, on)
		VBLENDMPD(mx, lim, on, lim)
		lim32 := YMM()
		VCVTTPD2DQ(lim, lim32)
		VPBLENDMD(lim32, r, m, r)
		VMOVDQU(r, Mem{Base: rp, Index: i, Scale: 4})
		VPSUBD(r, vt, vt)
		VMOVDQU(vt, Mem{Base: ap, Index: i, Scale: 4})
	}, func() {})
}

// admDen512 is admDen 8 coefficients a step in qword lanes.
func admDen512(scaleS bool) {
	name, sig := "admDen0AVX512", "func(c *int32, n int) uint64"
	if scaleS {
		name, sig = "admDenSAVX512", "func(c *int32, p *[4]uint64, n int) uint64"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(name + " returns the denominator's inner sum of n coefficients (a multiple of 8) of a reference band's row.")
	c := Load(Param("c"), GP64())
	var addSq, shSq, addCub, shCub, low VecVirtual
	if scaleS {
		p := Load(Param("p"), GP64())
		addSq, shSq, addCub, shCub = ZMM(), XMM(), ZMM(), XMM()
		VPBROADCASTQ(Mem{Base: p}, addSq)
		MOVQ(Mem{Base: p, Disp: 8}, shSq)
		VPBROADCASTQ(Mem{Base: p, Disp: 16}, addCub)
		MOVQ(Mem{Base: p, Disp: 24}, shCub)
	} else {
		low = YMM()
		VPBROADCASTD(constMem("den512low16", U32(0xffff)), low)
	}
	sum := ZMM()
	VPXORQ(sum, sum, sum)
	rowLoopStep(8, func(i Register) {
		u, u64, sq := YMM(), ZMM(), ZMM()
		VPABSD(Mem{Base: c, Index: i, Scale: 4}, u)
		if !scaleS {
			VPAND(low, u, u)
		}
		VPMOVZXDQ(u, u64)
		VPMULUDQ(u64, u64, sq)
		if !scaleS {
			VPMULUDQ(u64, sq, sq)
			VPADDQ(sq, sum, sum)
			return
		}
		VPADDQ(addSq, sq, sq)
		VPSRLQ(shSq, sq, sq)
		hi := ZMM()
		VPSRLQ(Imm(32), sq, hi)
		VPMULUDQ(u64, hi, hi)
		VPSLLQ(Imm(32), hi, hi)
		VPMULUDQ(u64, sq, sq)
		VPADDQ(hi, sq, sq)
		VPADDQ(addCub, sq, sq)
		VPSRLQ(shCub, sq, sq)
		VPADDQ(sq, sum, sum)
	}, func() {
		y := YMM()
		VEXTRACTI64X4(Imm(1), sum, y)
		VPADDQ(sum.AsY(), y, y)
		returnSum(y)
	})
}

// admAngle512 is admAngle 8 coefficients a step in qword lanes, at every
// scale: AVX-512 DQ's VCVTQQ2PS converts an int64 to float32 with the one
// rounding of Go's float32(int64) (and C's (float) of libvmaf), where AVX2
// goes through a double; the compares give a mask, VPMOVM2D its dwords.
func admAngle512() {
	TEXT("admAngleAVX512", NOSPLIT, "func(oh, ov, th, tv *int32, angle *int32, cos1 float64, n int)")
	Pragma("noescape")
	Doc("admAngleAVX512 sets angle[i] to -1 where the decoupling's angle test holds, else 0, for i < n (a multiple of 8).")
	p := loadPointers("oh", "ov", "th", "tv", "angle")
	oh, ov, th, tv, angle := p[0], p[1], p[2], p[3], p[4]
	cos1, inv, zero := ZMM(), ZMM(), ZMM()
	VBROADCASTSD(paramAddr("cos1"), cos1)
	VBROADCASTSD(constMem("decinv4096", U64(0x3f30000000000000)), inv)
	VXORPD(zero, zero, zero)
	rowLoopStep(8, func(i Register) {
		ld := func(r Register) VecVirtual {
			v := ZMM()
			VPMOVSXDQ(Mem{Base: r, Index: i, Scale: 4}, v)
			return v
		}
		vOH, vOV, vTH, vTV := ld(oh), ld(ov), ld(th), ld(tv)
		var prod [3]VecVirtual
		for k, f := range [3][4]VecVirtual{{vOH, vTH, vOV, vTV}, {vOH, vOH, vOV, vOV}, {vTH, vTH, vTV, vTV}} {
			x, y := ZMM(), ZMM()
			VPMULDQ(f[0], f[1], x)
			VPMULDQ(f[2], f[3], y)
			VPADDQ(y, x, x)
			s := YMM()
			VCVTQQ2PS(x, s)
			VCVTPS2PD(s, x)
			VMULPD(inv, x, x)
			prod[k] = x
		}
		dp, oo, tt := prod[0], prod[1], prod[2]
		lhs := ZMM()
		VMULPD(dp, dp, lhs)
		VMULPD(oo, cos1, oo)
		VMULPD(tt, oo, oo)
		ge, pos := K(), K()
		VCMPPD(Imm(0x0d), oo, lhs, ge) // lhs >= rhs
		VCMPPD(Imm(0x0d), zero, dp, ge, pos)
		out := YMM()
		VPMOVM2D(pos, out)
		VMOVDQU(out, Mem{Base: angle, Index: i, Scale: 4})
	}, func() {})
}

// admDecouple0Int512 is admDecouple0 with an integer gain limit (intGain)
// 16 coefficients a step. AVX-512 has no VPSIGND: t*sign(o) is t, negated
// under the mask of negative o and cleared under that of zero o; compares
// give masks, which the blends take.
func admDecouple0Int512() {
	TEXT("admDecouple0IntAVX512", NOSPLIT, "func(o, t, angle, r, a *int32, tab *int32, egl float64, n int)")
	Pragma("noescape")
	Doc("admDecouple0IntAVX512 decouples n int16 coefficients (a multiple of 16) of scale 0 of one band into r and a, with a whole gain limit egl; tab is the reciprocal table at its entry 0.")
	p := loadPointers("o", "t", "angle", "r", "a", "tab")
	o, t, angle, rp, ap, tab := p[0], p[1], p[2], p[3], p[4], p[5]
	// The gain limit as int32 in every lane (the caller passes a whole one).
	gain, eglX, g := ZMM(), XMM(), GP32()
	MOVSD(paramAddr("egl"), eglX)
	CVTTSD2SL(eglX, g)
	MOVD(g, eglX)
	VPBROADCASTD(eglX, gain)
	q := func(name string, v uint64) VecVirtual {
		r := ZMM()
		VPBROADCASTQ(constMem(name, U64(v)), r)
		return r
	}
	d := func(name string, v uint32) VecVirtual {
		r := ZMM()
		VPBROADCASTD(constMem(name, U32(v)), r)
		return r
	}
	low32, c2p14q, c2p46, c15 := q("declow32", 0xffffffff), q("decc2p14", 1<<14), q("decc2p46", 1<<46), q("decc15", 15)
	c32768, c2p14d := d("decc32768d", 32768), d("decc2p14d", 1<<14)
	odd := K()
	{
		m := GP32()
		MOVL(U32(0xaaaa), m)
		KMOVW(m, odd)
	}
	zero := ZMM()
	VPXORD(zero, zero, zero)
	rowLoopStep(16, func(i Register) {
		vo, vt, ao, sh := ZMM(), ZMM(), ZMM(), ZMM()
		VMOVDQU32(Mem{Base: o, Index: i, Scale: 4}, vo)
		VMOVDQU32(Mem{Base: t, Index: i, Scale: 4}, vt)
		VPABSD(vo, ao)
		VPSRLD(Imm(15), ao, sh) // 1 for |o| = 2^15, else 0
		msb, lk := ZMM(), ZMM()
		VPADDD(sh, ao, msb)
		VPSRLVD(sh, msb, msb)
		all := K()
		KXNORW(all, all, all)
		VPXORD(lk, lk, lk)
		VPGATHERDD(Mem{Base: tab, Index: msb, Scale: 4}, all, lk)
		// ts = t*sign(o)
		ts, kneg, kzero := ZMM(), K(), K()
		VMOVDQA32(vt, ts)
		VPMOVD2M(vo, kneg)
		VPSUBD(vt, zero, kneg, ts)
		VPTESTNMD(vo, vo, kzero)
		VMOVDQA32(zero, kzero, ts)
		// k = (lk*ts + (2^14 << sh)) >> (15+sh) in the even and odd lanes.
		var k [2]VecVirtual
		for h := range k {
			a, b, s, c := ZMM(), ZMM(), ZMM(), ZMM()
			if h == 0 {
				VMOVDQA64(lk, a)
				VMOVDQA64(ts, b)
				VPANDQ(low32, sh, s)
			} else {
				VPSRLQ(Imm(32), lk, a)
				VPSRLQ(Imm(32), ts, b)
				VPSRLQ(Imm(32), sh, s)
			}
			VPMULDQ(b, a, a)
			VPSLLVQ(s, c2p14q, c)
			VPADDQ(c, a, a)
			VPADDQ(c2p46, a, a)
			VPADDQ(c15, s, s)
			VPSRLVQ(s, a, a)
			VPSRLVQ(s, c2p46, c)
			VPSUBQ(c, a, a)
			k[h] = a
		}
		VPSLLQ(Imm(32), k[1], k[1])
		kk := ZMM()
		VPBLENDMD(k[1], k[0], odd, kk)
		VPMAXSD(zero, kk, kk)
		VPMINSD(c32768, kk, kk)
		// r = int16((k*o + 2^14) >> 15)
		r := ZMM()
		VPMULLD(vo, kk, r)
		VPADDD(c2p14d, r, r)
		VPSRAD(Imm(15), r, r)
		narrow16(r)
		// The gain limit where angle && k > 0.
		kpos, m := K(), K()
		VPCMPGTD(zero, kk, kpos)
		av := ZMM()
		VMOVDQU32(Mem{Base: angle, Index: i, Scale: 4}, av)
		VPTESTMD(av, av, kpos, m)
		l, lo, hi, opos := ZMM(), ZMM(), ZMM(), K()
		VPMULLD(gain, r, l)
		VPMINSD(vt, l, lo)
		VPMAXSD(vt, l, hi)
		VPCMPGTD(zero, vo, opos) // o > 0
		VPBLENDMD(lo, hi, opos, l)
		narrow16(l)
		VPBLENDMD(l, r, m, r)
		VMOVDQU32(r, Mem{Base: rp, Index: i, Scale: 4})
		VPSUBD(r, vt, vt)
		narrow16(vt)
		VMOVDQU32(vt, Mem{Base: ap, Index: i, Scale: 4})
	}, func() {})
}

// admCM512 is admCM 16 pixels a step: the threshold in 16 dword lanes, the
// cubes in two halves of 8 qword lanes. The truncation of a square to
// int32 and its sign extension back is a shift up and an arithmetic shift
// down within each qword (AVX2 packs and unpacks across lanes).
func admCM512(scaleS bool) {
	name := "admCM0AVX512"
	if scaleS {
		name = "admCMSAVX512"
	}
	TEXT(name, NOSPLIT, "func(fh, fv, fd, ch, cv, cd, sh, sv, sd *int32, up, down int, cub *[7]uint64, out *[3]int64, n int)")
	Pragma("noescape")
	Doc(name + " is admCM's kernel 16 pixels a step (n a multiple of 16).")
	p := loadPointers("fh", "fv", "fd", "ch", "cv", "cd", "sh", "sv", "sd")
	up := Load(Param("up"), GP64())
	down := Load(Param("down"), GP64())
	cub := Load(Param("cub"), GP64())
	n := Load(Param("n"), GP64())
	acc := [3]VecVirtual{ZMM(), ZMM(), ZMM()}
	for _, a := range acc {
		VPXORQ(a, a, a)
	}
	q := func(name string, v uint64) Mem { return constMem(name, U64(v)) }
	addSq := [3]Mem{q("cmsq28", 1<<28), q("cmsq28", 1<<28), q("cmsq29", 1<<29)}
	shSq := [3]uint64{29, 29, 30}
	thrShift := [3]uint64{10, 10, 12}
	if scaleS {
		addSq = [3]Mem{q("cmsq29", 1<<29), q("cmsq29", 1<<29), q("cmsq29", 1<<29)}
		shSq = [3]uint64{30, 30, 30}
	}
	shH, shD := XMM(), XMM()
	MOVQ(Mem{Base: cub, Disp: 16}, shH)
	MOVQ(Mem{Base: cub, Disp: 24}, shD)
	// The biased shift's correction, 2^62 >> shift.
	unH, unD := ZMM(), ZMM()
	VPBROADCASTQ(q("cm512b62", 1<<62), unH)
	VPSRLQ(shD, unH, unD)
	VPSRLQ(shH, unH, unH)
	addH, addD := ZMM(), ZMM()
	VPBROADCASTQ(Mem{Base: cub}, addH)
	VPBROADCASTQ(Mem{Base: cub, Disp: 8}, addD)
	zero := ZMM()
	VPXORD(zero, zero, zero)
	// fltQ32 and weighS of 16 dwords, in two halves of 8 qwords.
	halves := func(f func(half int) VecVirtual) VecVirtual {
		lo, hi := f(0), f(1)
		out := ZMM()
		VINSERTI64X4(Imm(1), hi, lo.AsZ(), out)
		return out
	}
	fltQ32x8 := func(x VecVirtual, f uint64) VecVirtual { // x: 8 dwords (ymm)
		x64, c := ZMM(), ZMM()
		VPMOVZXDQ(x, x64)
		VPBROADCASTQ(constMem(fmt.Sprintf("fltq32c%d", f), U64(f)), c)
		VPMULDQ(c, x64, x64)
		VPBROADCASTQ(constMem("fltq32round", U64(0xffffffff80000000)), c)
		VPADDQ(c, x64, x64)
		VPSRLQ(Imm(32), x64, x64)
		y := YMM()
		VPMOVQD(x64, y)
		return y
	}
	weighSx8 := func(src Mem, irf Mem) VecVirtual {
		s64, w, neg, pr := ZMM(), ZMM(), ZMM(), ZMM()
		VPMOVSXDQ(src, s64)
		VPBROADCASTQ(irf, w)
		VPMULUDQ(w, s64, pr)
		VPSRAQ(Imm(63), s64, neg)
		VPSLLQ(Imm(32), w, w)
		VPANDQ(w, neg, neg)
		VPSUBQ(neg, pr, pr)
		VPBROADCASTQ(constMem("csfs2p27", U64(1<<27)), w)
		VPADDQ(w, pr, pr)
		VPSRLQ(Imm(28), pr, pr)
		y := YMM()
		VPMOVQD(pr, y)
		return y
	}

	Label("pixels")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	thr, t := ZMM(), ZMM()
	VPXORD(thr, thr, thr)
	for b := 0; b < 3; b++ {
		f := p[b]
		for _, off := range []Register{up, nil, down} {
			for _, dj := range []int{-4, 0, 4} {
				if off == nil && dj == 0 {
					continue // the centre comes from c
				}
				m := Mem{Base: f, Disp: dj}
				if off != nil {
					m = Mem{Base: f, Index: off, Scale: 1, Disp: dj}
				}
				VPADDD(m, thr, thr)
			}
		}
		if scaleS {
			c := halves(func(half int) VecVirtual {
				a := YMM()
				VPABSD(Mem{Base: p[3+b], Disp: 32 * half}, a)
				return fltQ32x8(a, 286331153)
			})
			VPADDD(c, thr, thr)
			continue
		}
		VPABSD(Mem{Base: p[3+b]}, t)
		// centre = int16((8738*|c| + 2048) >> 12)
		c := ZMM()
		VPBROADCASTD(constMem("cmc8738", U32(8738)), c)
		VPMULLD(c, t, t)
		VPBROADCASTD(constMem("cmc2048", U32(2048)), c)
		VPADDD(c, t, t)
		VPSRAD(Imm(12), t, t)
		narrow16(t)
		VPADDD(t, thr, thr)
	}
	for b := 0; b < 3; b++ {
		var x VecVirtual
		if scaleS {
			x = halves(func(half int) VecVirtual {
				return weighSx8(Mem{Base: p[6+b], Disp: 32 * half}, Mem{Base: cub, Disp: 32 + 8*b})
			})
		} else {
			// The weight is the low dword of cub[4+b] (below 2^16).
			x = ZMM()
			c := ZMM()
			VPBROADCASTD(Mem{Base: cub, Disp: 32 + 8*b}, c)
			VPMULLD(Mem{Base: p[6+b]}, c, x)
		}
		VPABSD(x, x)
		if scaleS {
			VPSUBD(thr, x, x)
		} else {
			th := ZMM()
			VPSLLD(Imm(thrShift[b]), thr, th)
			VPSUBD(th, x, x)
		}
		VPMAXSD(zero, x, x)
		sh, un, add := shH, unH, addH
		if b == 2 {
			sh, un, add = shD, unD, addD
		}
		sqAdd := ZMM()
		VPBROADCASTQ(addSq[b], sqAdd)
		for half := range 2 {
			xs := x.AsY()
			if half == 1 {
				xs = YMM()
				VEXTRACTI64X4(Imm(1), x, xs)
			}
			x64, sq := ZMM(), ZMM()
			VPMOVZXDQ(xs, x64)
			VPMULUDQ(x64, x64, sq)
			VPADDQ(sqAdd, sq, sq)
			VPSRLQ(Imm(shSq[b]), sq, sq)
			VPSLLQ(Imm(32), sq, sq) // int32(...) sign-extended
			VPSRAQ(Imm(32), sq, sq)
			VPMULDQ(x64, sq, sq)
			VPADDQ(add, sq, sq)
			VPSRLQ(sh, sq, sq)
			VPSUBQ(un, sq, sq)
			VPADDQ(sq, acc[b], acc[b])
		}
	}
	for _, r := range p {
		ADDQ(Imm(64), r)
	}
	SUBQ(Imm(16), n)
	JMP(LabelRef("pixels"))

	Label("done")
	var ys []VecVirtual
	for _, a := range acc {
		y := YMM()
		VEXTRACTI64X4(Imm(1), a, y)
		VPADDQ(a.AsY(), y, y)
		ys = append(ys, y)
	}
	storeSums(ys, Load(Param("out"), GP64()))
	VZEROUPPER()
	RET()
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
		// No log pixel (a flat area), or no numerator pixel: the gathers,
		// divisions and logarithms that follow add nothing, and are skipped.
		KORTESTW(klog, klog)
		JZ(LabelRef("statnext"))
		// Denominator: log2of32(sigma_nsq + sigma1²).
		x := ZMM()
		VPADDD(bcastD(c131072), s1, x)
		den := log2of32(x, klog)
		VPADDD(den, accDen, klog, accDen)
		KORTESTW(km, km)
		JZ(LabelRef("statnext"))

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
		Label("statnext")
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
