// Command asmgen writes the vector kernels of package vmaf with avo
// (`make generate-kernels`, part of `make generate`):
//
//	go run . -out ../zz_generated_kernels_amd64.s -stubs ../zz_generated_kernels_amd64.go -pkg vmaf
//
// and, with -kernels align, the offset search's (align.go here, for
// worker/internal/align).
//
// Each kernel covers a multiple of 4 pixels (8 for the scale-0 kernels of
// ADM in 32-bit lanes: the DWT, the CSF and the decoupling, and the contrast
// measure at every scale); its Go caller in kernels_amd64.go runs the scalar code on the
// rest of the row, and the tests compare every kernel with that scalar code.
//
// Bit-exactness rests on the bounds the scalar code documents: a packed
// word (reference | distorted<<32) never carries from its low half, so
// 32-bit lane arithmetic (VPMULLD, VPADDD) gives the same bits as the scalar
// 64-bit arithmetic; and every unpacked operand of a 64-bit product is below
// 2^32, so VPMULUDQ (32x32->64) gives the full product.
package main

import (
	"flag"
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// kernelSet picks the package whose kernels a run writes: vmaf's, or
// worker/internal/align's (align.go in this directory).
var kernelSet = flag.String("kernels", "vmaf", "the kernels to write: vmaf or align")

func main() {
	flag.Parse()
	ConstraintExpr("amd64")
	if *kernelSet == "align" {
		alignKernels()
		Generate()
		return
	}
	tapInit("vifTapInit32AVX2", true)
	tapInit("vifTapInit64AVX2", false)
	tapPair("vifTapPair32AVX2", true)
	tapPair("vifTapPair64AVX2", false)
	vifSigma()
	vifStat()
	subTapInit()
	subTapPair()
	motion16Kernels()
	dwt0V()
	for _, wide := range []bool{false, true} {
		lanes512 = wide
		dwt0VMadd()
		dwt0H()
	}
	lanes512 = false
	admCM(false)
	admCM(true)
	admCSFS()
	vifRound("vifRoundPackedAVX2", true)
	vifRound("vifRoundWideAVX2", false)
	admCSF0()
	admAngle()
	admDecouple()
	admDecouple0(false)
	admDecouple0(true)
	dwtSV()
	dwtSH()
	vifSubRound()
	vifSubH()
	vifFill()
	vif8Kernels()
	admDen(false)
	admDen(true)
	speedAxpy()
	speedConv()
	cambiKernels()
	avx512Kernels()
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
func rowLoop(body func(i Register)) { rowLoopStep(4, body, func() {}) }

// rowLoopThen is rowLoop with an epilogue before the return.
func rowLoopThen(body func(i Register), after func()) { rowLoopStep(4, body, after) }

// rowLoopStep is rowLoopThen with i advancing by step.
func rowLoopStep(step int, body func(i Register), after func()) {
	n := Load(Param("n"), GP64())
	i := GP64()
	XORQ(i, i)
	Label("loop")
	CMPQ(i, n)
	JAE(LabelRef("done"))
	body(i)
	ADDQ(Imm(uint64(step)), i)
	JMP(LabelRef("loop"))
	Label("done")
	after()
	VZEROUPPER()
	RET()
}

// tapInit: dst[i] = f * src[i] for i < n.
func tapInit(name string, lanes32 bool) {
	TEXT(name, NOSPLIT, "func(f uint64, src, dst *uint64, n int)")
	Pragma("noescape")
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
	Pragma("noescape")
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
	Pragma("noescape")
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

	foldedTaps(half, func(k, e Register) {
		f := broadcastTap(Mem{Base: filt, Index: k, Scale: 8})
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
	})

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

	nextPixels(n, []Register{mu, xx, yy, xy, s1, s2, s12}, []uint64{32, 32, 32, 32, 16, 16, 16})
}

// foldedTaps runs body for the folded tap pairs (k, 2*half-k), k < half,
// of a symmetric filter of 2*half+1 taps.
func foldedTaps(half Register, body func(k, e Register)) {
	k, e := GP64(), GP64()
	XORQ(k, k)
	MOVQ(half, e)
	SHLQ(Imm(1), e)
	Label("taps")
	CMPQ(k, half)
	JAE(LabelRef("tapsdone"))
	body(k, e)
	INCQ(k)
	DECQ(e)
	JMP(LabelRef("taps"))
	Label("tapsdone")
}

// nextPixels ends a kernel whose loop starts at label "pixels" and leaves
// for "done" when n is zero: it advances each pointer by its step in bytes,
// counts 4 pixels off n and loops, then returns.
func nextPixels(n Register, ptrs []Register, steps []uint64) {
	for k, p := range ptrs {
		ADDQ(Imm(steps[k]), p)
	}
	SUBQ(Imm(4), n)
	JMP(LabelRef("pixels"))

	Label("done")
	VZEROUPPER()
	RET()
}

// vifStat is VIF's per-pixel statistic (vifPixelSigma in vif.go) over n
// pixels' variances, 8 a step: out receives the sums of the log numerator
// terms, of log2of32(sigma_nsq+sigma1²) (without the -2048*17, which the
// caller subtracts per log pixel), of the non-log sigma2², and the count of
// log pixels. The double arithmetic is the scalar code's, operation for
// operation (IEEE division, multiplication and truncation are exact in
// every lane), and VCVTTPD2DQ is the CVTTSD2SL Go compiles int32(float64)
// to, so out-of-range values convert alike too.
//
// The table lookups take 8 lanes a gather: the denominator's and numer1's
// arguments are 32-bit (numer1 = sv² + sigma_nsq < 2^32, where log2of64 is
// log2of32), their floor(log2) read from the exponent of a float32 of the
// value's top 24 bits; numer1_tmp, up to about 2^45, takes its floor(log2)
// from an exact double, and its two halves' indices share one gather.
func vifStat() {
	TEXT("vifStatAVX2", NOSPLIT, "func(s1, s2, s12 *int32, tab *uint16, egl float64, out *[4]int64, n int)")
	Pragma("noescape")
	Doc("vifStatAVX2 sums the VIF statistic of n pixels (a multiple of 8) into out: numLog, denLog + 2048*17 per log pixel, numNonLog, log pixel count. tab is the log2 table with 2 words of padding.")
	s1p := Load(Param("s1"), GP64())
	s2p := Load(Param("s2"), GP64())
	s12p := Load(Param("s12"), GP64())
	tab := Load(Param("tab"), GP64())
	out := Load(Param("out"), GP64())

	d := func(name string, v uint32) Mem { return ConstData(name, U32(v)) }
	q := func(name string, v uint64) Mem { return ConstData(name, U64(v)) }
	c131071 := d("vifc131071", 131071)
	c131072 := d("vifc131072", 131072)
	cLow16 := d("vifclow16", 0xffff)
	c134 := d("vifc134", 127-8+15)               // float32 bias, less the 8 bits shifted out, plus 15: k = exponent - 134
	cMagic := q("vifcmagic", 0x4330000000000000) // 2^52 as a double
	cEps := q("vifceps", 0x3edb7cdfd9d7bdbb)     // 65536 * 1.0e-10
	c2p17 := q("vifc2p17", 1<<17)
	c1038 := q("vifc1038", 1023+15) // exponent bias + 15: k = exponent - 1038

	accNum, accDen, accNon, accCnt := YMM(), YMM(), YMM(), YMM()
	for _, a := range []VecVirtual{accNum, accDen, accNon, accCnt} {
		VPXOR(a, a, a)
	}
	bcastD := func(m Mem) VecVirtual {
		r := YMM()
		VPBROADCASTD(m, r)
		return r
	}
	bcastQ := func(m Mem) VecVirtual {
		r := YMM()
		VPBROADCASTQ(m, r)
		return r
	}
	// pack32 moves the low halves of four 64-bit lanes into an XMM.
	pack32 := func(y VecVirtual) VecVirtual {
		VPSHUFD(Imm(0x08), y, y)
		VPERMQ(Imm(0x08), y, y)
		return y
	}
	// lookup is t[idx] + 2048*k in 8 dword lanes.
	lookup := func(idx, k VecVirtual) VecVirtual {
		mask, v := YMM(), YMM()
		VPCMPEQD(mask, mask, mask)
		VPXOR(v, v, v)
		VPGATHERDD(mask, Mem{Base: tab, Index: idx, Scale: 2}, v)
		VPAND(bcastD(cLow16), v, v)
		VPSLLD(Imm(11), k, k)
		VPADDD(k, v, v)
		return v
	}
	// log2of32 is log2of32 of 8 uint32 lanes of at least 256 (smaller
	// ones give an index in the table, in lanes the caller drops): x>>8 is
	// exact in a float32, whose exponent is floor(log2 x) - 8.
	log2of32 := func(x VecVirtual) VecVirtual {
		k, idx := YMM(), YMM()
		VPSRLD(Imm(8), x, k)
		VCVTDQ2PS(k, k)
		VPSRLD(Imm(23), k, k)
		VPSUBD(bcastD(c134), k, k)
		VPSRLVD(k, x, idx)
		return lookup(idx, k)
	}
	// log2of64Half returns the dword index x>>k and k of 4 uint64 lanes
	// below 2^52 and at least 2^17, in XMMs.
	log2of64Half := func(x VecVirtual) (VecVirtual, VecVirtual) {
		xf, k, idx := YMM(), YMM(), YMM()
		magic := bcastQ(cMagic)
		VPOR(magic, x, xf)
		VSUBPD(magic, xf, xf)
		VPSRLQ(Imm(52), xf, k)
		VPSUBQ(bcastQ(c1038), k, k)
		VPSRLVQ(k, x, idx)
		return pack32(idx), pack32(k)
	}

	rowLoopStep(8, func(i Register) {
		s1, s2, s12 := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: s1p, Index: i, Scale: 4}, s1)
		VMOVDQU(Mem{Base: s2p, Index: i, Scale: 4}, s2)
		VMOVDQU(Mem{Base: s12p, Index: i, Scale: 4}, s12)
		// Log pixels: sigma1² >= sigma_nsq.
		mlog := YMM()
		VPCMPGTD(bcastD(c131071), s1, mlog)
		// Numerator pixels: log pixels with sigma12 > 0 and sigma2² > 0.
		m, zero, t := YMM(), YMM(), YMM()
		VPXOR(zero, zero, zero)
		VPCMPGTD(zero, s12, m)
		VPCMPGTD(zero, s2, t)
		VPAND(t, m, m)
		VPAND(mlog, m, m)
		// addMasked adds the dwords v where mask (sign- or zero-extended)
		// to the qword sums acc.
		addMasked := func(v, mask, acc VecVirtual, andNot, signed bool) {
			u := YMM()
			if andNot {
				VPANDN(v, mask, u)
			} else {
				VPAND(mask, v, u)
			}
			for h := range 2 {
				var part Register = u.AsX()
				w := YMM()
				if h == 1 {
					p := XMM()
					VEXTRACTI128(Imm(1), u, p)
					part = p
				}
				if signed {
					VPMOVSXDQ(part, w)
				} else {
					VPMOVZXDQ(part, w)
				}
				VPADDQ(w, acc, acc)
			}
		}
		// Count and non-log sums.
		addMasked(mlog, mlog, accCnt, false, true) // adds -1 per log pixel: the caller negates
		addMasked(s2, mlog, accNon, true, false)
		// Eight pixels of a flat area have no log pixel, and often log pixels
		// but no numerator: their gathers, divisions and logarithms add
		// nothing, and are skipped (libvmaf's per-pixel branches skip them too).
		VPTEST(mlog, mlog)
		JZ(LabelRef("statnext"))
		// Denominator: log2of32(sigma_nsq + sigma1²).
		x := YMM()
		VPADDD(bcastD(c131072), s1, x)
		addMasked(log2of32(x), mlog, accDen, false, true)
		VPTEST(m, m)
		JZ(LabelRef("statnext"))

		// The double part, 4 pixels at a time: sv² (dwords) and numer1_tmp's
		// table indices and k.
		var sv, idx, kk [2]VecVirtual
		n1all := YMM()
		for h := range 2 {
			part := func(v VecVirtual) Register {
				if h == 0 {
					return v.AsX()
				}
				p := XMM()
				VEXTRACTI128(Imm(1), v, p)
				return p
			}
			s1d, s2d, s12d := YMM(), YMM(), YMM()
			VCVTDQ2PD(part(s1), s1d)
			VCVTDQ2PD(part(s2), s2d)
			VCVTDQ2PD(part(s12), s12d)
			// g = sigma12 / (sigma1² + eps); sv² = int32(sigma2² - g*sigma12).
			g, u := YMM(), YMM()
			VADDPD(bcastQ(cEps), s1d, g)
			VDIVPD(g, s12d, g)
			VMULPD(s12d, g, u)
			VSUBPD(u, s2d, u)
			sv[h] = XMM()
			VCVTTPD2DQY(u, sv[h])
			VPMAXSD(zero.AsX(), sv[h], sv[h])
			// numer1 = sv² + sigma_nsq.
			VPADDD(bcastD(c131072).AsX(), sv[h], sv[h])
			n1 := YMM()
			VPMOVZXDQ(sv[h], n1)
			// numer1_tmp = int64(g*g*sigma1²) + numer1, exact below 2^52,
			// with g limited to egl; 2^17 in pixels without a numerator.
			VMINPD(bcastQ(paramAddr("egl")), g, g)
			VMULPD(g, g, g)
			VMULPD(s1d, g, g)
			VROUNDPD(Imm(3), g, g)
			magic := bcastQ(cMagic)
			VADDPD(magic, g, g)
			VPSUBQ(magic, g, g)
			VPADDQ(n1, g, g)
			m64 := YMM()
			VPMOVSXDQ(part(m), m64)
			safe := bcastQ(c2p17)
			VPANDN(safe, m64, safe)
			VPAND(m64, g, g)
			VPOR(safe, g, g)
			idx[h], kk[h] = log2of64Half(g)
		}
		// numer1 of all 8 pixels, and numer1_tmp's 8 indices.
		VINSERTI128(Imm(1), sv[1], sv[0].AsY(), n1all)
		ia, ka := YMM(), YMM()
		VINSERTI128(Imm(1), idx[1].AsX(), idx[0], ia)
		VINSERTI128(Imm(1), kk[1].AsX(), kk[0], ka)
		a := lookup(ia, ka)
		b := log2of32(n1all)
		VPSUBD(b, a, a)
		addMasked(a, m, accNum, false, true)
		Label("statnext")
	}, func() { storeSums([]VecVirtual{accNum, accDen, accNon, accCnt}, out) })
}

// loadPacked loads 4 reference and 4 distorted 16-bit samples (each the sum
// of two rows when b is set) as the packed words ref | dis<<32.
func loadPacked(ra, rb, da, db Register, i Register) VecVirtual {
	r, d := YMM(), YMM()
	VPMOVZXWD(Mem{Base: ra, Index: i, Scale: 2}, r.AsX())
	VPMOVZXWD(Mem{Base: da, Index: i, Scale: 2}, d.AsX())
	if rb != nil {
		t := YMM()
		VPMOVZXWD(Mem{Base: rb, Index: i, Scale: 2}, t.AsX())
		VPADDD(t.AsX(), r.AsX(), r.AsX())
		VPMOVZXWD(Mem{Base: db, Index: i, Scale: 2}, t.AsX())
		VPADDD(t.AsX(), d.AsX(), d.AsX())
	}
	// Interleave to r0 d0 r1 d1 | r2 d2 r3 d3.
	lo, hi := YMM(), YMM()
	VPUNPCKLDQ(d.AsX(), r.AsX(), lo.AsX())
	VPUNPCKHDQ(d.AsX(), r.AsX(), hi.AsX())
	VINSERTI128(Imm(1), hi.AsX(), lo, lo)
	return lo
}

// subTapInit is the centre tap of VIF's subsampling filter (vifState.subsample):
// acc[i] = f * (ref[i] | dis[i]<<32).
func subTapInit() {
	TEXT("vifSubTapInitAVX2", NOSPLIT, "func(f uint64, ref, dis *uint16, acc *uint64, n int)")
	Pragma("noescape")
	Doc("vifSubTapInitAVX2 sets acc[i] = f*(ref[i] | dis[i]<<32) for i < n (a multiple of 4).")
	f := broadcastTap(paramAddr("f"))
	ref := Load(Param("ref"), GP64())
	dis := Load(Param("dis"), GP64())
	acc := Load(Param("acc"), GP64())
	rowLoop(func(i Register) {
		x := loadPacked(ref, nil, dis, nil, i)
		VPMULLD(f, x, x)
		VMOVDQU(x, Mem{Base: acc, Index: i, Scale: 8})
	})
}

// subTapPair adds a symmetric pair of rows to the subsampling sums:
// acc[i] += f * ((ra[i]+rb[i]) | (da[i]+db[i])<<32).
func subTapPair() {
	TEXT("vifSubTapPairAVX2", NOSPLIT, "func(f uint64, ra, rb, da, db *uint16, acc *uint64, n int)")
	Pragma("noescape")
	Doc("vifSubTapPairAVX2 adds f*((ra[i]+rb[i]) | (da[i]+db[i])<<32) to acc[i] for i < n (a multiple of 4).")
	f := broadcastTap(paramAddr("f"))
	ra := Load(Param("ra"), GP64())
	rb := Load(Param("rb"), GP64())
	da := Load(Param("da"), GP64())
	db := Load(Param("db"), GP64())
	acc := Load(Param("acc"), GP64())
	rowLoop(func(i Register) {
		x := loadPacked(ra, rb, da, db, i)
		VPMULLD(f, x, x)
		VPADDD(Mem{Base: acc, Index: i, Scale: 8}, x, x)
		VMOVDQU(x, Mem{Base: acc, Index: i, Scale: 8})
	})
}

// motionTaps are libvmaf's 5-tap motion filter's distinct taps.
var motionTaps = [3]uint32{3571, 16004, 26386}

// dwtLo and dwtHi are ADM's Daubechies filter taps in Q15 (adm.go).
var (
	dwtLo = [4]int32{15826, 27411, 7345, -4240}
	dwtHi = [4]int32{-4240, -7345, 27411, -15826}
)

// dwordTable puts int32s in read-only data.
func dwordTable(name string, v []int32) Mem {
	if m, ok := constData[name]; ok {
		return m // a kernel generated for both widths reads one table
	}
	m := GLOBL(name, RODATA|NOPTR)
	for k, x := range v {
		DATA(4*k, U32(uint32(x)))
	}
	constData[name] = m
	return m
}

// narrow16 is int32(int16(x)) in every dword.
func narrow16(x Op) {
	VPSLLD(Imm(16), x, x)
	VPSRAD(Imm(16), x, x)
}

// dwt0V is the vertical pass of ADM's first DWT level (admState.dwt0):
// lo = (sum dwtLo[k]*r_k + loAdd) >> shift and hi likewise, in int32 lanes
// with Go's wrapping, narrowed to int16, 8 samples at a time: the wide way,
// for rows with samples of 2^15 or more (dwt0VMadd takes the others).
func dwt0V() {
	TEXT("admDWT0VAVX2", NOSPLIT, "func(r0, r1, r2, r3 *uint16, lo, hi *int16, loAdd, hiAdd uint64, shift uint64, n int)")
	Pragma("noescape")
	Doc("admDWT0VAVX2 runs the vertical DWT of n samples (a multiple of 8) of four rows into lo and hi.")
	r, lo, hi, loAdd, hiAdd, shift := dwt0VParams()
	loTab := dwordTable("dwt0lo", dwtLo[:])
	hiTab := dwordTable("dwt0hi", dwtHi[:])
	rowLoopStep(8, func(i Register) {
		accLo, accHi := YMM(), YMM()
		VMOVDQA(loAdd, accLo)
		VMOVDQA(hiAdd, accHi)
		for k := range r {
			u, c := YMM(), YMM()
			VPMOVZXWD(Mem{Base: r[k], Index: i, Scale: 2}, u)
			VPBROADCASTD(loTab.Offset(4*k), c)
			VPMULLD(u, c, c)
			VPADDD(c, accLo, accLo)
			VPBROADCASTD(hiTab.Offset(4*k), c)
			VPMULLD(u, c, c)
			VPADDD(c, accHi, accHi)
		}
		for _, p := range []struct {
			acc VecVirtual
			out Register
		}{{accLo, lo}, {accHi, hi}} {
			VPSRAD(shift, p.acc, p.acc)
			// int16 values, packed without saturation, in order.
			narrow16(p.acc)
			VPACKSSDW(p.acc, p.acc, p.acc)
			VPERMQ(Imm(0x08), p.acc, p.acc)
			VMOVDQU(p.acc.AsX(), Mem{Base: p.out, Index: i, Scale: 2})
		}
	}, func() {})
}

// dwt0VParams loads the vertical DWT kernels' parameters: the four rows,
// the outputs, the roundings in every lane and the shift.
func dwt0VParams() (r [4]Register, lo, hi Register, loAdd, hiAdd VecVirtual, shift Register) {
	for k := range r {
		r[k] = Load(Param(fmt.Sprintf("r%d", k)), GP64())
	}
	lo = Load(Param("lo"), GP64())
	hi = Load(Param("hi"), GP64())
	loAdd, hiAdd, shift = YMM(), YMM(), XMM()
	VPBROADCASTD(paramAddr("loAdd"), loAdd)
	VPBROADCASTD(paramAddr("hiAdd"), hiAdd)
	MOVQ(paramAddr("shift"), shift)
	return r, lo, hi, loAdd, hiAdd, shift
}

// dwt0VMadd is dwt0V for samples below 2^15, 16 at a time: two rows'
// samples interleaved as words, so that one VPMADDWD takes two taps
// (|tap| < 2^15; each product below 2^30, their sum below 2^31). The int32
// results, in the unpacked order (samples 0-3 and 8-11 of a step in one
// register, 4-7 and 12-15 in the other), are cut to their low 16 bits (the
// scalar code's int16 conversion) and packed back in order. The samples'
// bits are ORed as it goes: it returns 1 when one of them had bit 15 set
// (its output is then wrong, and the caller runs dwt0V), else 0.
func dwt0VMadd() {
	name := "admDWT0VMadd" + vsuffix()
	TEXT(name, NOSPLIT, "func(r0, r1, r2, r3 *uint16, lo, hi *int16, loAdd, hiAdd uint64, shift uint64, n int) uint64")
	Pragma("noescape")
	Doc(name + " is admDWT0VAVX2 for samples below 2^15, n a multiple of the register's words; it returns 1 where a sample is not (its output is then wrong), else 0.")
	var r [4]Register
	for k := range r {
		r[k] = Load(Param(fmt.Sprintf("r%d", k)), GP64())
	}
	lo := Load(Param("lo"), GP64())
	hi := Load(Param("hi"), GP64())
	loAdd, hiAdd, shift := vreg(), vreg(), XMM()
	VPBROADCASTD(paramAddr("loAdd"), loAdd)
	VPBROADCASTD(paramAddr("hiAdd"), hiAdd)
	MOVQ(paramAddr("shift"), shift)
	pair := func(c [4]int32, k int) uint32 { return uint32(uint16(c[k])) | uint32(uint16(c[k+1]))<<16 }
	taps := dwordTable("dwt0pairs", []int32{
		int32(pair(dwtLo, 0)), int32(pair(dwtLo, 2)), int32(pair(dwtHi, 0)), int32(pair(dwtHi, 2)),
	})
	var tp [4]VecVirtual
	for k := range tp {
		tp[k] = vreg()
		VPBROADCASTD(taps.Offset(4*k), tp[k])
	}
	low := vbcastD("dwt0low16", 0xffff)
	seen := vreg()
	vxor(seen, seen, seen)
	rowLoopStep(vpixels(), func(i Register) {
		var u [4]VecVirtual
		for k := range u {
			u[k] = vreg()
			vload(Mem{Base: r[k], Index: i, Scale: 2}, u[k])
			vor(u[k], seen, seen)
		}
		// Pairs (r0, r1) and (r2, r3) of samples 0-3, 8-11 (pl) and 4-7,
		// 12-15 (ph), by 128-bit lane.
		var pl, ph [2]VecVirtual
		for k := range pl {
			pl[k], ph[k] = vreg(), vreg()
			VPUNPCKLWD(u[2*k+1], u[2*k], pl[k])
			VPUNPCKHWD(u[2*k+1], u[2*k], ph[k])
		}
		for h, p := range []struct {
			add VecVirtual
			out Register
		}{{loAdd, lo}, {hiAdd, hi}} {
			var half [2]VecVirtual
			for q, pr := range [][2]VecVirtual{pl, ph} {
				acc, c := vreg(), vreg()
				VPMADDWD(tp[2*h], pr[0], acc)
				VPMADDWD(tp[2*h+1], pr[1], c)
				VPADDD(c, acc, acc)
				VPADDD(p.add, acc, acc)
				VPSRAD(shift, acc, acc)
				vand(low, acc, acc)
				half[q] = acc
			}
			// Per 128-bit lane, the low halves then the high: in order.
			VPACKUSDW(half[1], half[0], half[0])
			vstore(half[0], Mem{Base: p.out, Index: i, Scale: 2})
		}
	}, func() {
		// Bit 15 of any word: the high bytes' top bits.
		y := toYMM(seen, func(a Op, b, dst VecVirtual) { VPOR(a, b, dst) })
		m, big := GP32(), GP64()
		VPMOVMSKB(y, m)
		ANDL(U32(0xaaaaaaaa), m)
		XORQ(big, big)
		TESTL(m, m)
		SETNE(big.As8())
		Store(big, ReturnIndex(0))
	})
}

// dwt0H is the horizontal pass of ADM's first DWT level for interior
// outputs: out j takes t[2j-1..2j+2]; t points at t[2j-1] of the first.
// lo = (sum dwtLo[k]*s_k + 2^15) >> 16 narrowed to int16, hi likewise.
// t holds the vertical pass's int16 values, so sixteen words from t[2j-1]
// are the pairs (taps 0 and 1) of eight outputs in order, and sixteen from
// t[2j+1] their pairs of taps 2 and 3: one VPMADDWD each, each product
// below 2^30.
func dwt0H() {
	name := "admDWT0H" + vsuffix()
	TEXT(name, NOSPLIT, "func(t *int16, lo, hi *int32, n int)")
	Pragma("noescape")
	Doc(name + " runs the horizontal DWT of n interior outputs (a multiple of the register's dwords) from t into lo and hi.")
	t := Load(Param("t"), GP64())
	lo := Load(Param("lo"), GP64())
	hi := Load(Param("hi"), GP64())
	round := vbcastD("dwt0round", 32768)
	pair := func(c [4]int32, k int) int32 { return int32(uint32(uint16(c[k])) | uint32(uint16(c[k+1]))<<16) }
	taps := dwordTable("dwt0hpairs", []int32{pair(dwtLo, 0), pair(dwtLo, 2), pair(dwtHi, 0), pair(dwtHi, 2)})
	var tp [4]VecVirtual
	for k := range tp {
		tp[k] = vreg()
		VPBROADCASTD(taps.Offset(4*k), tp[k])
	}
	rowLoopStep(vbytes()/4, func(i Register) {
		var pr [2]VecVirtual
		for k, disp := range []int{0, 4} {
			pr[k] = vreg()
			vload(Mem{Base: t, Disp: disp}, pr[k])
		}
		for h, out := range []Register{lo, hi} {
			acc, c := vreg(), vreg()
			VPMADDWD(tp[2*h], pr[0], acc)
			VPMADDWD(tp[2*h+1], pr[1], c)
			VPADDD(c, acc, acc)
			VPADDD(round, acc, acc)
			VPSRAD(Imm(16), acc, acc)
			narrow16(acc)
			vstore(acc, Mem{Base: out, Index: i, Scale: 4})
		}
		ADDQ(Imm(uint64(vbytes())), t)
	}, func() {})
}

// admCM is one row of ADM's contrast measure over interior columns
// (admCM0Row, and admCMSRow with scaleS): the 3x3 masking threshold from
// the three bands' CSF filter inputs f (with the centre from the
// CSF-weighted bands c), then max(|x| - thr, 0) cubed with libvmaf's two
// rounding shifts, summed per band, where x is src weighted by the band's
// rfactor. The cube's arithmetic shift of a possibly negative 64-bit value
// is a logical shift of the value biased by 2^62 (the product of two values
// below 2^31 in magnitude), minus the shifted bias.
//
// Scale 0 (admCM0AVX2) weighs by its i_rfactor in cub[4..6] in int32 (Go's
// wrapping), takes the centre as
// int16((8738*|c| + 2048) >> 12) and shifts the threshold per band; scales
// 1 to 3 (admCMSAVX2) weigh as csfS does, (src*irf + 2^27) >> 28 with the
// unsigned Q32 irf in cub[4..6], take the centre as (286331153*|c| - 2^31)
// >> 32 in 64 bits, and round every band's square alike.
func admCM(scaleS bool) {
	name := "admCM0AVX2"
	if scaleS {
		name = "admCMSAVX2"
	}
	TEXT(name, NOSPLIT, "func(fh, fv, fd, ch, cv, cd, sh, sv, sd *int32, up, down int, cub *[7]uint64, out *[3]int64, n int)")
	Pragma("noescape")
	Doc(name + " sums the cubed masked contrast of n pixels (a multiple of 8) of one row into out; up and down are the byte offsets of the neighbouring rows; cub holds addH+2^62, addD+2^62, the H and D cube shifts and the bands' irf (scale 0: below 2^16).")
	p := loadPointers("fh", "fv", "fd", "ch", "cv", "cd", "sh", "sv", "sd")
	up := Load(Param("up"), GP64())
	down := Load(Param("down"), GP64())
	cub := Load(Param("cub"), GP64())
	n := Load(Param("n"), GP64())
	acc := [3]VecVirtual{YMM(), YMM(), YMM()}
	for _, a := range acc {
		VPXOR(a, a, a)
	}
	d := func(name string, v uint32) Mem { return constMem(name, U32(v)) }
	q := func(name string, v uint64) Mem { return constMem(name, U64(v)) }
	addSq := [3]Mem{q("cmsq28", 1<<28), q("cmsq28", 1<<28), q("cmsq29", 1<<29)}
	shSq := [3]uint64{29, 29, 30}
	thrShift := [3]uint64{10, 10, 12}
	if scaleS {
		addSq = [3]Mem{q("cmsq29", 1<<29), q("cmsq29", 1<<29), q("cmsq29", 1<<29)}
		shSq = [3]uint64{30, 30, 30}
	}
	// Cube shift counts: H and V share one.
	shH, shD := XMM(), XMM()
	MOVQ(Mem{Base: cub, Disp: 16}, shH)
	MOVQ(Mem{Base: cub, Disp: 24}, shD)
	// The biased shift's correction, 2^62 >> shift.
	unH, unD := YMM(), YMM()
	VPCMPEQQ(unH, unH, unH)
	VPSRLQ(Imm(63), unH, unH)
	VPSLLQ(Imm(62), unH, unH)
	VPSRLQ(shD, unH, unD)
	VPSRLQ(shH, unH, unH)

	Label("pixels")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	// The threshold of 8 pixels in 8 dword lanes; the cubes take them 4 a
	// time in 64-bit lanes.
	thr, t, zero := YMM(), YMM(), YMM()
	VPXOR(thr, thr, thr)
	VPXOR(zero, zero, zero)
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
			// centre = (286331153*|c| - 2^31) >> 32, 4 lanes a half.
			var cs [2]Register
			for half := range cs {
				th := XMM()
				VPABSD(Mem{Base: p[3+b], Disp: 16 * half}, th)
				cs[half] = fltQ32(th, 286331153)
			}
			VINSERTI128(Imm(1), cs[1], cs[0].(VecVirtual).AsY(), t)
			VPADDD(t, thr, thr)
			continue
		}
		VPABSD(Mem{Base: p[3+b]}, t)
		// centre = int16((8738*|c| + 2048) >> 12)
		c := YMM()
		VPBROADCASTD(d("cmc8738", 8738), c)
		VPMULLD(c, t, t)
		VPBROADCASTD(d("cmc2048", 2048), c)
		VPADDD(c, t, t)
		VPSRAD(Imm(12), t, t)
		narrow16(t)
		VPADDD(t, thr, thr)
	}
	for b := 0; b < 3; b++ {
		x, c, th := YMM(), YMM(), YMM()
		if scaleS {
			weighS(Mem{Base: p[6+b]}, Mem{Base: cub, Disp: 32 + 8*b}, x.AsX())
			hi := XMM()
			weighS(Mem{Base: p[6+b], Disp: 16}, Mem{Base: cub, Disp: 32 + 8*b}, hi)
			VINSERTI128(Imm(1), hi, x, x)
		} else {
			// The weight is the low dword of cub[4+b] (the options'
			// i_rfactor, below 2^16).
			VPBROADCASTD(Mem{Base: cub, Disp: 32 + 8*b}, c)
			VPMULLD(Mem{Base: p[6+b]}, c, x)
		}
		VPABSD(x, x)
		if scaleS {
			VPSUBD(thr, x, x)
		} else {
			VPSLLD(Imm(thrShift[b]), thr, th)
			VPSUBD(th, x, x)
		}
		VPMAXSD(zero, x, x)
		sh, un, add := shH, unH, Mem{Base: cub}
		if b == 2 {
			sh, un, add = shD, unD, Mem{Base: cub, Disp: 8}
		}
		xh := XMM()
		VEXTRACTI128(Imm(1), x, xh)
		for _, xs := range []Register{x.AsX(), xh} {
			x64, sq := YMM(), YMM()
			VPMOVZXDQ(xs, x64)
			VPMULUDQ(x64, x64, sq)
			VPBROADCASTQ(addSq[b], c)
			VPADDQ(c, sq, sq)
			VPSRLQ(Imm(shSq[b]), sq, sq)
			VPSHUFD(Imm(0x08), sq, sq)
			VPERMQ(Imm(0x08), sq, sq)
			VPMOVSXDQ(sq.AsX(), sq)
			VPMULDQ(x64, sq, sq)
			VPBROADCASTQ(add, c)
			VPADDQ(c, sq, sq)
			VPSRLQ(sh, sq, sq)
			VPSUBQ(un, sq, sq)
			VPADDQ(sq, acc[b], acc[b])
		}
	}
	for _, r := range p {
		ADDQ(Imm(32), r)
	}
	SUBQ(Imm(8), n)
	JMP(LabelRef("pixels"))

	Label("done")
	storeSums(acc[:], Load(Param("out"), GP64()))
	VZEROUPPER()
	RET()
}

// fltQ32 is int32((f*int64(x) + admFltRound) >> 32) of four int32 x (the
// 1/30 and 1/15 filters of scales 1 to 3 in Q32, admFltRound being -2^31):
// the high dwords of the 64-bit sums.
func fltQ32(x Register, f uint64) Register {
	x64, c := YMM(), YMM()
	VPMOVZXDQ(x, x64)
	VPBROADCASTQ(constMem(fmt.Sprintf("fltq32c%d", f), U64(f)), c)
	VPMULDQ(c, x64, x64)
	VPBROADCASTQ(constMem("fltq32round", U64(0xffffffff80000000)), c)
	VPADDQ(c, x64, x64)
	VPSRLQ(Imm(32), x64, x64)
	return pack32(x64)
}

// admCSFS is the CSF of scales 1 to 3 of one band's row segment
// (admCSFSRow): a = weighS(src) and the masking input f = fltQ32(|a|,
// 143165577), 4 coefficients a step.
func admCSFS() {
	TEXT("admCSFSAVX2", NOSPLIT, "func(src, dstA, dstF *int32, irf *uint64, n int)")
	Pragma("noescape")
	Doc("admCSFSAVX2 weighs n coefficients (a multiple of 4) of src by the Q32 weight *irf into dstA and their masking inputs into dstF.")
	p := loadPointers("src", "dstA", "dstF", "irf")
	rowLoop(func(i Register) {
		a := XMM()
		weighS(Mem{Base: p[0], Index: i, Scale: 4}, Mem{Base: p[3]}, a)
		VMOVDQU(a, Mem{Base: p[1], Index: i, Scale: 4})
		VPABSD(a, a)
		VMOVDQU(fltQ32(a, 143165577), Mem{Base: p[2], Index: i, Scale: 4})
	})
}

// weighS is csfS's weighting of four int32 coefficients at src by the
// unsigned Q32 weight at irf: int32((src*irf + 2^27) >> 28) into the XMM x.
// VPMULUDQ takes src as unsigned, which adds irf*2^32 for a negative src;
// that is taken off again. The sum stays within int64 (irf < 2^32), and the
// logical shift's low dword is the arithmetic one's.
func weighS(src, irf Mem, x Register) {
	s64, w, neg, p := YMM(), YMM(), YMM(), YMM()
	VPMOVSXDQ(src, s64)
	VPBROADCASTQ(irf, w)
	VPMULUDQ(w, s64, p)
	VPXOR(neg, neg, neg)
	VPCMPGTQ(s64, neg, neg) // src < 0
	VPSLLQ(Imm(32), w, w)
	VPAND(w, neg, neg)
	VPSUBQ(neg, p, p)
	VPBROADCASTQ(constMem("csfs2p27", U64(1<<27)), w)
	VPADDQ(w, p, p)
	VPSRLQ(Imm(28), p, p)
	VMOVDQA(pack32(p), x)
}

// storeSums writes the sum of each register's four 64-bit lanes to
// consecutive words at out.
func storeSums(accs []VecVirtual, out Register) {
	for k, a := range accs {
		hi, lo := XMM(), XMM()
		VEXTRACTI128(Imm(1), a, hi)
		VPADDQ(hi, a.AsX(), hi)
		VPSHUFD(Imm(0x4e), hi, lo)
		VPADDQ(lo, hi, hi)
		MOVQ(hi, Mem{Base: out, Disp: 8 * k})
	}
}

// vifRound rounds VIF's vertical sums into the padded rows the horizontal
// pass reads (vifRoundRow in vif.go): mu's two 32-bit lanes each
// (v + roundMu) >> shiftMu, exact while the sums stay below 2^32 - roundMu
// (samples of at most 15 bits); xy (and xx, yy when the squares are wide)
// (v + roundSq) >> shiftSq in 64 bits; packed squares split into xx and yy.
func vifRound(name string, packed bool) {
	TEXT(name, NOSPLIT, "func(accP, accQ, accY, accX, mu, xx, yy, xy *uint64, roundMu, shiftMu, roundSq, shiftSq uint64, n int)")
	Pragma("noescape")
	Doc(name + " rounds n vertical sums (a multiple of 4) into the rows mu, xx, yy and xy.")
	var p [8]Register
	for k, nm := range []string{"accP", "accQ", "accY", "accX", "mu", "xx", "yy", "xy"} {
		p[k] = Load(Param(nm), GP64())
	}
	rMu, sMu, rSq, sSq := YMM(), XMM(), YMM(), XMM()
	VPBROADCASTD(paramAddr("roundMu"), rMu)
	MOVQ(paramAddr("shiftMu"), sMu)
	VPBROADCASTQ(paramAddr("roundSq"), rSq)
	MOVQ(paramAddr("shiftSq"), sSq)
	rowLoop(func(i Register) {
		at := func(r Register) Mem { return Mem{Base: r, Index: i, Scale: 8} }
		m := YMM()
		VPADDD(at(p[0]), rMu, m)
		VPSRLD(sMu, m, m)
		VMOVDQU(m, at(p[4]))
		wide := func(src, dst Register) {
			v := YMM()
			VPADDQ(at(src), rSq, v)
			VPSRLQ(sSq, v, v)
			VMOVDQU(v, at(dst))
		}
		if packed {
			q, lo := YMM(), YMM()
			VMOVDQU(at(p[1]), q)
			VPXOR(lo, lo, lo)
			VPBLENDD(Imm(0xaa), lo, q, lo) // the low lanes, zero-extended
			VMOVDQU(lo, at(p[5]))
			VPSRLQ(Imm(32), q, q)
			VMOVDQU(q, at(p[6]))
		} else {
			wide(p[1], p[5])
			wide(p[2], p[6])
		}
		wide(p[3], p[7])
	})
}

// admCSF0 is scale 0's CSF of one band (admState.csf0): a =
// int16((irf*src + add) >> shift) and the masking input f = int16((4369*|a| +
// 2048) >> 12), in int32 lanes with Go's wrapping, 8 coefficients a step.
func admCSF0() {
	TEXT("admCSF0AVX2", NOSPLIT, "func(src, dstA, dstF *int32, irf, add, shift uint64, n int)")
	Pragma("noescape")
	Doc("admCSF0AVX2 weighs n coefficients (a multiple of 8) of src into dstA and their masking inputs into dstF.")
	src := Load(Param("src"), GP64())
	dstA := Load(Param("dstA"), GP64())
	dstF := Load(Param("dstF"), GP64())
	irf, add, shift, c4369, c2048 := YMM(), YMM(), XMM(), YMM(), YMM()
	VPBROADCASTD(paramAddr("irf"), irf)
	VPBROADCASTD(paramAddr("add"), add)
	MOVQ(paramAddr("shift"), shift)
	VPBROADCASTD(constMem("csfc4369", U32(4369)), c4369)
	VPBROADCASTD(constMem("csfc2048", U32(2048)), c2048)
	rowLoopStep(8, func(i Register) {
		a, f := YMM(), YMM()
		VPMULLD(Mem{Base: src, Index: i, Scale: 4}, irf, a)
		VPADDD(add, a, a)
		VPSRAD(shift, a, a)
		narrow16(a)
		VMOVDQU(a, Mem{Base: dstA, Index: i, Scale: 4})
		VPABSD(a, f)
		VPMULLD(c4369, f, f)
		VPADDD(c2048, f, f)
		VPSRAD(Imm(12), f, f)
		narrow16(f)
		VMOVDQU(f, Mem{Base: dstF, Index: i, Scale: 4})
	}, func() {})
}

// pack32 moves the low dwords of a YMM's four 64-bit lanes into its XMM.
func pack32(y VecVirtual) Register {
	VPSHUFD(Imm(0x08), y, y)
	VPERMQ(Imm(0x08), y, y)
	return y.AsX()
}

// int64ToFloat32 sets x's four int64 lanes to float64(float32(x)), the
// rounding Go's float32(int64) does (CVTSQ2SS, round to nearest even). A
// value of at most 51 bits converts to double exactly (the 1.5*2^52 magic
// number), so the one rounding is the double's to float32. Where the
// register wide is not zero, any int64 does: a magnitude of 2^53 or more
// first has its 11 low bits, which lie below float32's rounding bit,
// replaced by one sticky bit so that it too converts to double exactly, and
// the sign goes back after the rounding (round to nearest is symmetric).
func int64ToFloat32(x VecVirtual, wide Register) {
	q := bcastConstQ
	narrowL, joinL := "f32narrow", "f32join"
	CMPQ(wide, Imm(0))
	JE(LabelRef(narrowL))
	neg, zero := YMM(), YMM()
	VPXOR(zero, zero, zero)
	VPCMPGTQ(x, zero, neg) // x < 0
	VPXOR(neg, x, x)
	VPSUBQ(neg, x, x) // |x| as uint64 (2^63 for MinInt64)
	// Sticky: big lanes keep bits 63..11, bit 11 ORed with bits 10..0.
	small, low, t := YMM(), YMM(), YMM()
	VPSRLQ(Imm(53), x, small)
	VPCMPEQQ(zero, small, small) // |x| < 2^53
	c7ff := q("decc7ff", 0x7ff)
	VPAND(x, c7ff, low)
	VPCMPEQQ(zero, low, low) // no low bit set
	VPANDN(x, c7ff, t)       // x without its low bits
	VPANDN(q("decc800", 0x800), low, low)
	VPOR(low, t, t)
	VBLENDVPD(small, x, t, x)
	// uint64 to double: ((2^84 + hi*2^32) - (2^84 + 2^52)) + (2^52 + lo),
	// one rounding (none here).
	hi := YMM()
	VPSRLQ(Imm(32), x, hi)
	VPOR(q("decm84", 0x4530000000000000), hi, hi)
	VPBLENDD(Imm(0xaa), q("decm52", 0x4330000000000000), x, x)
	VSUBPD(q("decm8452", 0x4530000000100000), hi, hi)
	VADDPD(hi, x, x)
	VCVTPD2PSY(x, x.AsX())
	VCVTPS2PD(x.AsX(), x)
	VPSLLQ(Imm(63), neg, neg)
	VXORPD(neg, x, x)
	JMP(LabelRef(joinL))

	Label(narrowL)
	magic := q("decmagic", 0x4338000000000000)
	VPADDQ(magic, x, x)
	VSUBPD(magic, x, x)
	VCVTPD2PSY(x, x.AsX())
	VCVTPS2PD(x.AsX(), x)
	Label(joinL)
}

// loadPointers loads the named pointer arguments into registers.
func loadPointers(names ...string) []Register {
	r := make([]Register, len(names))
	for k, nm := range names {
		r[k] = Load(Param(nm), GP64())
	}
	return r
}

// constData caches read-only constants by name, so that kernels and their
// helpers may ask for one more than once.
var constData = map[string]Mem{}

func constMem(name string, v Constant) Mem {
	m, ok := constData[name]
	if !ok {
		m = ConstData(name, v)
		constData[name] = m
	}
	return m
}

// bcastConstQ is a register with the 64-bit constant v in every lane.
func bcastConstQ(name string, v uint64) VecVirtual {
	r := YMM()
	VPBROADCASTQ(constMem(name, U64(v)), r)
	return r
}

// bcastConstD is a register with the 32-bit constant v in every lane.
func bcastConstD(name string, v uint32) VecVirtual {
	r := YMM()
	VPBROADCASTD(constMem(name, U32(v)), r)
	return r
}

// admAngle is the angle test of ADM's decoupling (admDecoupleRow in
// adm_kernels.go) for four pixels a step: with the int64 products ot =
// oh*th + ov*tv, oo = oh²+ov², tt = th²+tv² rounded to float32 as the scalar
// code rounds them, angle = dp >= 0 && dp*dp >= cos1*oo*tt in double, where
// dp, oo and tt are divided by 4096 as there (exact). narrow is for scale
// 0's int16 coefficients (wide 0), whose products stay within 2^31; wide 1
// takes any int32 (the sums wrap at 64 bits as Go's do).
func admAngle() {
	TEXT("admAngleAVX2", NOSPLIT, "func(oh, ov, th, tv *int32, angle *int32, cos1 float64, wide uint64, n int)")
	Pragma("noescape")
	Doc("admAngleAVX2 sets angle[i] to -1 where the decoupling's angle test holds, else 0, for i < n (a multiple of 4).")
	p := loadPointers("oh", "ov", "th", "tv", "angle")
	oh, ov, th, tv, angle := p[0], p[1], p[2], p[3], p[4]
	cos1 := YMM()
	VBROADCASTSD(paramAddr("cos1"), cos1)
	wide := Load(Param("wide"), GP64())
	// The three products go through one conversion loop on the stack.
	prods := AllocLocal(96)
	rowLoop(func(i Register) {
		ld := func(r Register) VecVirtual {
			v := YMM()
			VPMOVSXDQ(Mem{Base: r, Index: i, Scale: 4}, v)
			return v
		}
		vOH, vOV, vTH, vTV := ld(oh), ld(ov), ld(th), ld(tv)
		for k, f := range [3][4]VecVirtual{{vOH, vTH, vOV, vTV}, {vOH, vOH, vOV, vOV}, {vTH, vTH, vTV, vTV}} {
			x, y := YMM(), YMM()
			VPMULDQ(f[0], f[1], x)
			VPMULDQ(f[2], f[3], y)
			VPADDQ(y, x, x)
			VMOVDQU(x, prods.Offset(32*k))
		}
		off := GP64()
		XORQ(off, off)
		Label("convert")
		x := YMM()
		at := Mem{Base: prods.Base, Index: off, Scale: 1, Disp: prods.Disp}
		VMOVDQU(at, x)
		int64ToFloat32(x, wide)
		VMULPD(bcastConstQ("decinv4096", 0x3f30000000000000), x, x)
		VMOVDQU(x, at)
		ADDQ(Imm(32), off)
		CMPQ(off, Imm(96))
		JB(LabelRef("convert"))
		dp, oo, tt := YMM(), YMM(), YMM()
		VMOVUPD(prods, dp)
		VMOVUPD(prods.Offset(32), oo)
		VMOVUPD(prods.Offset(64), tt)
		lhs, zero := YMM(), YMM()
		VMULPD(dp, dp, lhs)
		VMULPD(oo, cos1, oo)
		VMULPD(tt, oo, oo)
		VCMPPD(Imm(0x0d), oo, lhs, lhs) // lhs >= rhs
		VXORPD(zero, zero, zero)
		VCMPPD(Imm(0x0d), zero, dp, dp) // dp >= 0
		VANDPD(dp, lhs, lhs)
		VMOVDQU(pack32(lhs), Mem{Base: angle, Index: i, Scale: 4})
	})
}

// admDecouple is ADM's decoupling of one band (admDecoupleOne in
// adm_kernels.go) for four coefficients a step: k = clamp(t/o, 0, 1) in Q15
// through the reciprocal table tab (at its entry 0, so indexed by the
// normalised |o|) with the int64 product's sign and rounding, r = k*o in
// Q15, where the angle test holds and k > 0 r becomes its product by the
// gain limit egl clamped to t, and a = t - r, for scales 1 to 3 (int32
// coefficients; admDecouple0 is scale 0).
//
// The normalisation's shift, 17 - LeadingZeros32(|o|) for |o| >= 2^15, is
// the exponent of |o| as a double less 14 (at least 0). k*o fits 47 bits
// and its shifted value int32, so the low dword of the logical shift is the
// arithmetic one's. A negative rounded product clamps to 0 before its
// shift.
func admDecouple() {
	o, t, angle, rp, ap, tab, egl := decoupleKernel("admDecoupleAVX2", "n coefficients (a multiple of 4)")
	rowLoop(func(i Register) {
		zero := YMM()
		VPXOR(zero, zero, zero)
		vo, vt, ao := XMM(), XMM(), XMM()
		VMOVDQU(Mem{Base: o, Index: i, Scale: 4}, vo)
		VMOVDQU(Mem{Base: t, Index: i, Scale: 4}, vt)
		VPABSD(vo, ao) // |o| as uint32
		// shift = max(exponent(|o|) - 1037, 0)
		sh := YMM()
		VCVTDQ2PD(vo, sh)
		VPSRLQ(Imm(52), sh, sh)
		sh32 := pack32(sh)
		VPAND(bcastConstD("decc7ffd", 0x7ff).AsX(), sh32, sh32)
		VPSUBD(bcastConstD("decc1037", 1037).AsX(), sh32, sh32)
		VPMAXSD(zero.AsX(), sh32, sh32)
		// msb = (|o| + ((1 << shift) >> 1)) >> shift
		rnd := XMM()
		VPSLLVD(sh32, bcastConstD("decc1d", 1).AsX(), rnd)
		VPSRLD(Imm(1), rnd, rnd)
		VPADDD(ao, rnd, rnd)
		VPSRLVD(sh32, rnd, rnd)
		lk, mask := XMM(), XMM()
		VPCMPEQD(mask, mask, mask)
		VPXOR(lk, lk, lk)
		VPGATHERDD(mask, Mem{Base: tab, Index: rnd, Scale: 4}, lk)
		// p = lookup * t * sign(o) + (2^14 << shift)
		p, t64, sgn, sh64 := YMM(), YMM(), YMM(), YMM()
		VPMOVZXDQ(lk, p)
		VPMOVSXDQ(vt, t64)
		VPMULDQ(t64, p, p)
		VPSRAD(Imm(31), vo, sgn.AsX())
		VPMOVSXDQ(sgn.AsX(), sgn)
		VPXOR(sgn, p, p)
		VPSUBQ(sgn, p, p)
		VPMOVZXDQ(sh32, sh64)
		c := YMM()
		VPSLLVQ(sh64, bcastConstQ("decc2p14", 1<<14), c)
		VPADDQ(c, p, p)
		// k = p < 0 ? 0 : min(p >> (15+shift), 32768)
		neg := YMM()
		VPCMPGTQ(p, zero, neg)
		VPADDQ(bcastConstQ("decc15", 15), sh64, sh64)
		VPSRLVQ(sh64, p, p)
		c32768 := bcastConstQ("decc32768", 32768)
		VPCMPGTQ(c32768, p, c)
		VBLENDVPD(c, c32768, p, p)
		VPANDN(p, neg, p)
		k := p
		// r = (k*o + 2^14) >> 15
		o64, rr := YMM(), YMM()
		VPMOVSXDQ(vo, o64)
		VPMULDQ(o64, k, rr)
		VPADDQ(bcastConstQ("decc2p14", 1<<14), rr, rr)
		VPSRLQ(Imm(15), rr, rr)
		r := pack32(rr)
		// The gain limit where angle && k > 0 (k > 0 implies o != 0).
		m := YMM()
		VPCMPGTQ(zero, k, m)
		k32 := pack32(m)
		VPAND(Mem{Base: angle, Index: i, Scale: 4}, k32, k32)
		lim32 := gainLimit(r, vt, o64, egl)
		VPBLENDVB(k32, lim32, r, r)
		VMOVDQU(r, Mem{Base: rp, Index: i, Scale: 4})
		VPSUBD(r, vt, vt)
		VMOVDQU(vt, Mem{Base: ap, Index: i, Scale: 4})
	})
}

// decoupleKernel starts a decoupling kernel: its signature, its pointers
// and the gain limit in every lane.
func decoupleKernel(name, what string) (o, t, angle, r, a, tab Register, egl VecVirtual) {
	TEXT(name, NOSPLIT, "func(o, t, angle, r, a *int32, tab *int32, egl float64, n int)")
	Pragma("noescape")
	Doc(name + " decouples " + what + " of one band into r and a; tab is the reciprocal table at its entry 0.")
	p := loadPointers("o", "t", "angle", "r", "a", "tab")
	egl = YMM()
	VBROADCASTSD(paramAddr("egl"), egl)
	return p[0], p[1], p[2], p[3], p[4], p[5], egl
}

// gainLimit is the decoupling's gain limit of four coefficients: v =
// double(r)*egl clamped to t (o > 0: v < t ? v : t; o < 0: v > t ? v : t,
// o64 being o sign-extended) and truncated to int32, into an XMM.
func gainLimit(r, vt Register, o64, egl VecVirtual) Register {
	v, td, lim, sel := YMM(), YMM(), YMM(), YMM()
	VCVTDQ2PD(r, v)
	VMULPD(egl, v, v)
	VCVTDQ2PD(vt, td)
	VCMPPD(Imm(0x01), td, v, sel) // v < t
	VBLENDVPD(sel, v, td, lim)
	VCMPPD(Imm(0x0e), td, v, sel) // v > t
	VBLENDVPD(sel, v, td, sel)
	VBLENDVPD(o64, sel, lim, lim) // o < 0 takes the second
	lim32 := XMM()
	VCVTTPD2DQY(lim, lim32)
	return lim32
}

// admDecouple0 is admDecouple for scale 0, whose coefficients are int16,
// eight a step: the normalisation's shift is 1 for |o| = 2^15 alone,
// t*sign(o) fits int32 (VPSIGND), the product with the reciprocal (below
// 2^46) is taken in even and odd 64-bit lanes with its arithmetic shift as a
// logical one of the value biased by 2^46, k*o fits int32, and r and a are
// narrowed to int16 where the scalar code narrows them.
//
// With intGain (admDecouple0IntAVX2) the gain limit egl is a whole number
// from 0 to 65535, so that r*egl (|r| <= 2^15) fits int32 and its double,
// the comparison with t and the truncation are exact: the limit is then
// min(r*egl, t) for o > 0 and max(r*egl, t) for o < 0 in dword lanes.
func admDecouple0(intGain bool) {
	name := "admDecouple0AVX2"
	if intGain {
		name = "admDecouple0IntAVX2"
	}
	o, t, angle, rp, ap, tab, egl := decoupleKernel(name, "n int16 coefficients (a multiple of 8) of scale 0")
	var gain VecVirtual
	if intGain {
		gain = YMM()
		VCVTTPD2DQY(egl, gain.AsX())
		VPBROADCASTD(gain.AsX(), gain)
	}
	rowLoopStep(8, func(i Register) {
		zero, vo, vt, ao, sh := YMM(), YMM(), YMM(), YMM(), YMM()
		VPXOR(zero, zero, zero)
		VMOVDQU(Mem{Base: o, Index: i, Scale: 4}, vo)
		VMOVDQU(Mem{Base: t, Index: i, Scale: 4}, vt)
		VPABSD(vo, ao)
		VPSRLD(Imm(15), ao, sh) // 1 for |o| = 2^15, else 0
		msb, lk, mask := YMM(), YMM(), YMM()
		VPADDD(sh, ao, msb)
		VPSRLVD(sh, msb, msb)
		VPCMPEQD(mask, mask, mask)
		VPXOR(lk, lk, lk)
		VPGATHERDD(mask, Mem{Base: tab, Index: msb, Scale: 4}, lk)
		ts := YMM()
		VPSIGND(vo, vt, ts) // t*sign(o)
		// k = (lk*ts + (2^14 << sh)) >> (15+sh) in the even and odd lanes.
		var k [2]VecVirtual
		for h := range k {
			a, b, s, c := YMM(), YMM(), YMM(), YMM()
			if h == 0 {
				VMOVDQA(lk, a)
				VMOVDQA(ts, b)
				VPAND(bcastConstQ("declow32", 0xffffffff), sh, s)
			} else {
				VPSRLQ(Imm(32), lk, a)
				VPSRLQ(Imm(32), ts, b)
				VPSRLQ(Imm(32), sh, s)
			}
			VPMULDQ(b, a, a)
			VPSLLVQ(s, bcastConstQ("decc2p14", 1<<14), c)
			VPADDQ(c, a, a)
			VPADDQ(bcastConstQ("decc2p46", 1<<46), a, a)
			VPADDQ(bcastConstQ("decc15", 15), s, s)
			VPSRLVQ(s, a, a)
			VPSRLVQ(s, bcastConstQ("decc2p46", 1<<46), c)
			VPSUBQ(c, a, a)
			k[h] = a
		}
		VPSLLQ(Imm(32), k[1], k[1])
		VPBLENDD(Imm(0xaa), k[1], k[0], k[0])
		kk := k[0]
		VPMAXSD(zero, kk, kk)
		VPMINSD(bcastConstD("decc32768d", 32768), kk, kk)
		// r = int16((k*o + 2^14) >> 15)
		r := YMM()
		VPMULLD(vo, kk, r)
		VPADDD(bcastConstD("decc2p14d", 1<<14), r, r)
		VPSRAD(Imm(15), r, r)
		narrow16(r)
		// The gain limit where angle && k > 0, four lanes at a time.
		m := YMM()
		VPCMPGTD(zero, kk, m)
		VPAND(Mem{Base: angle, Index: i, Scale: 4}, m, m)
		l := YMM()
		if intGain {
			lo, hi, pos := YMM(), YMM(), YMM()
			VPMULLD(gain, r, l)
			VPMINSD(vt, l, lo)
			VPMAXSD(vt, l, hi)
			VPCMPGTD(zero, vo, pos) // o > 0
			VPBLENDVB(pos, lo, hi, l)
		} else {
			var lim [2]Register
			for h := range lim {
				rh, th, oh := XMM(), XMM(), YMM()
				VEXTRACTI128(Imm(uint64(h)), r, rh)
				VEXTRACTI128(Imm(uint64(h)), vt, th)
				VEXTRACTI128(Imm(uint64(h)), vo, oh.AsX())
				VPMOVSXDQ(oh.AsX(), oh)
				lim[h] = gainLimit(rh, th, oh, egl)
			}
			VINSERTI128(Imm(1), lim[1], lim[0].(VecVirtual).AsY(), l)
		}
		narrow16(l)
		VPBLENDVB(m, l, r, r)
		VMOVDQU(r, Mem{Base: rp, Index: i, Scale: 4})
		VPSUBD(r, vt, vt)
		narrow16(vt)
		VMOVDQU(vt, Mem{Base: ap, Index: i, Scale: 4})
	}, func() {})
}

// dwtTapTables holds ADM's DWT taps once in read-only data for the kernels
// of scales 1 to 3.
var dwtTapTables [2]*Mem

func dwtTaps() (lo, hi Mem) {
	if dwtTapTables[0] == nil {
		l, h := dwordTable("dwtslo", dwtLo[:]), dwordTable("dwtshi", dwtHi[:])
		dwtTapTables = [2]*Mem{&l, &h}
	}
	return *dwtTapTables[0], *dwtTapTables[1]
}

// dwtSum64 is (sum taps[k]*s[k] + add) >> shift of four int64 lanes (each
// s[k] an int32 sign-extended), truncated to int32 into out's four dwords.
// The logical shift's low dword is the arithmetic one's: shift+32 <= 64.
func dwtSum64(taps Mem, s [4]VecVirtual, add VecVirtual, shift Op, out Mem) {
	acc, c := YMM(), YMM()
	VMOVDQA(add, acc)
	for k := range s {
		VPBROADCASTD(taps.Offset(4*k), c)
		VPMULDQ(s[k], c, c)
		VPADDQ(c, acc, acc)
	}
	VPSRLQ(shift, acc, acc)
	VMOVDQU(pack32(acc), out)
}

// dwtSV is the vertical pass of ADM's DWT of scales 1 to 3 (admDWTSV):
// lo = (sum dwtLo[k]*r_k + add) >> shift in 64 bits, truncated to int32,
// and hi likewise, 4 samples at a time.
func dwtSV() {
	TEXT("admDWTSVAVX2", NOSPLIT, "func(r0, r1, r2, r3, lo, hi *int32, add, shift uint64, n int)")
	Pragma("noescape")
	Doc("admDWTSVAVX2 runs the 64-bit vertical DWT of n samples (a multiple of 4) of four rows into lo and hi.")
	p := loadPointers("r0", "r1", "r2", "r3", "lo", "hi")
	add, shift := YMM(), XMM()
	VPBROADCASTQ(paramAddr("add"), add)
	MOVQ(paramAddr("shift"), shift)
	loTab, hiTab := dwtTaps()
	rowLoop(func(i Register) {
		var u [4]VecVirtual
		for k := range u {
			u[k] = YMM()
			VPMOVSXDQ(Mem{Base: p[k], Index: i, Scale: 4}, u[k])
		}
		dwtSum64(loTab, u, add, shift, Mem{Base: p[4], Index: i, Scale: 4})
		dwtSum64(hiTab, u, add, shift, Mem{Base: p[5], Index: i, Scale: 4})
	})
}

// dwtSH is the horizontal pass of ADM's DWT of scales 1 to 3 (admDWTSH)
// for interior outputs, as dwt0H with dwtSV's 64-bit sums.
func dwtSH() {
	TEXT("admDWTSHAVX2", NOSPLIT, "func(t, lo, hi *int32, add, shift uint64, n int)")
	Pragma("noescape")
	Doc("admDWTSHAVX2 runs the 64-bit horizontal DWT of n interior outputs (a multiple of 4) from t into lo and hi.")
	p := loadPointers("t", "lo", "hi")
	t := p[0]
	add, shift, perm := YMM(), XMM(), YMM()
	VPBROADCASTQ(paramAddr("add"), add)
	MOVQ(paramAddr("shift"), shift)
	VMOVDQU(dwordTable("dwtsperm", []int32{0, 2, 4, 6, 1, 3, 5, 7}), perm)
	loTab, hiTab := dwtTaps()
	rowLoop(func(i Register) {
		// The even and odd dwords from t[2j-1] and t[2j+1]: the four taps'
		// samples of four outputs.
		a, b := YMM(), YMM()
		VPERMD(Mem{Base: t}, perm, a)
		VPERMD(Mem{Base: t, Disp: 8}, perm, b)
		var sv [4]VecVirtual
		for k, half := range []struct {
			v  VecVirtual
			hi bool
		}{{a, false}, {a, true}, {b, false}, {b, true}} {
			sv[k] = YMM()
			x := half.v.AsX()
			if half.hi {
				VEXTRACTI128(Imm(1), half.v, sv[k].AsX())
				x = sv[k].AsX()
			}
			VPMOVSXDQ(x, sv[k])
		}
		dwtSum64(loTab, sv, add, shift, Mem{Base: p[1], Index: i, Scale: 4})
		dwtSum64(hiTab, sv, add, shift, Mem{Base: p[2], Index: i, Scale: 4})
		ADDQ(Imm(32), t)
	})
}

// vifSubRound rounds the subsampling's packed vertical sums (ref | dis<<32)
// lane by lane, (v + round) >> shift in 32-bit lanes: the filter sums to
// 2^16 and samples have at most 16 bits, so no lane reaches 2^32 - round.
func vifSubRound() {
	TEXT("vifSubRoundAVX2", NOSPLIT, "func(acc, dst *uint64, round, shift uint64, n int)")
	Pragma("noescape")
	Doc("vifSubRoundAVX2 rounds n packed vertical sums (a multiple of 4) of the subsampling into dst.")
	p := loadPointers("acc", "dst")
	round, shift := YMM(), XMM()
	VPBROADCASTD(paramAddr("round"), round)
	MOVQ(paramAddr("shift"), shift)
	rowLoop(func(i Register) {
		x := YMM()
		VPADDD(Mem{Base: p[0], Index: i, Scale: 8}, round, x)
		VPSRLD(shift, x, x)
		VMOVDQU(x, Mem{Base: p[1], Index: i, Scale: 8})
	})
}

// vifSubH is the subsampling's horizontal pass (vifSubRow in vif.go) for
// four kept columns a step: output m takes the symmetric filter of 2*half+1
// taps over the padded packed row t from t[2m], in 32-bit lanes (the sums
// stay below 2^32 as in the vertical pass), then (v + 2^15) >> 16 of each
// lane into r and d. The taps' samples t[k], t[k+2], t[k+4], t[k+6] come
// from two loads as t[k], t[k+4], t[k+2], t[k+6] (VSHUFPD), an order every
// tap shares, put right once at the end.
func vifSubH() {
	TEXT("vifSubHAVX2", NOSPLIT, "func(filt *uint64, half int, t *uint64, r, d *uint16, n int)")
	Pragma("noescape")
	Doc("vifSubHAVX2 filters and keeps n columns (a multiple of 4) of the padded packed row t (from the first output's window) into r and d.")
	p := loadPointers("filt", "t", "r", "d")
	filt, t, r, d := p[0], p[1], p[2], p[3]
	half := Load(Param("half"), GP64())
	n := Load(Param("n"), GP64())
	round, shuf, perm := YMM(), YMM(), YMM()
	VPBROADCASTD(constMem("vifsubround", U32(32768)), round)
	lane := []int32{0x09080100, 0x0d0c0504, -0x7f7f7f80, -0x7f7f7f80}
	VMOVDQU(dwordTable("vifsubshuf", append(lane, lane...)), shuf)
	VMOVDQU(dwordTable("vifsubperm", []int32{0, 4, 1, 5, 2, 3, 6, 7}), perm)
	taps := func(k Register) VecVirtual {
		x := YMM()
		VMOVDQU(Mem{Base: t, Index: k, Scale: 8}, x)
		VSHUFPD(Imm(0), Mem{Base: t, Index: k, Scale: 8, Disp: 32}, x, x)
		return x
	}

	Label("pixels")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	acc := taps(half)
	VPMULLD(broadcastTap(Mem{Base: filt, Index: half, Scale: 8}), acc, acc)
	foldedTaps(half, func(k, e Register) {
		x := taps(k)
		VPADDD(taps(e), x, x)
		VPMULLD(broadcastTap(Mem{Base: filt, Index: k, Scale: 8}), x, x)
		VPADDD(x, acc, acc)
	})
	VPADDD(round, acc, acc)
	VPSRLD(Imm(16), acc, acc)
	VPERMQ(Imm(0xd8), acc, acc)
	VPSHUFB(shuf, acc, acc)
	VPERMD(acc, perm, acc)
	MOVQ(acc.AsX(), Mem{Base: r})
	VPEXTRQ(Imm(1), acc.AsX(), Mem{Base: d})
	nextPixels(n, []Register{t, r, d}, []uint64{64, 8, 8})
}

// vifFill is VIF's ring fill (vifRing.fill in vif.go): from 4 reference
// and distorted samples a step, the packed words p = ref | dis<<32, x =
// ref*dis, and the squares: packed in q (ref² | dis²<<32, each below 2^32
// for 16-bit samples) when packSq is set, else ref² in q and dis² in y.
func vifFill() {
	TEXT("vifFillAVX2", NOSPLIT, "func(ref, dis *uint16, p, q, y, x *uint64, packSq uint64, n int)")
	Pragma("noescape")
	Doc("vifFillAVX2 writes the products of n samples (a multiple of 4) of a row pair into the ring rows p, q, y and x.")
	ptr := loadPointers("ref", "dis", "p", "q", "y", "x")
	packSq := Load(Param("packSq"), GP64())
	rowLoop(func(i Register) {
		at := func(r Register) Mem { return Mem{Base: r, Index: i, Scale: 8} }
		pk, d, t := loadPacked(ptr[0], nil, ptr[1], nil, i), YMM(), YMM()
		VMOVDQU(pk, at(ptr[2]))
		VPSRLQ(Imm(32), pk, d)
		VPMULUDQ(d, pk, t)
		VMOVDQU(t, at(ptr[5]))
		TESTQ(packSq, packSq)
		JZ(LabelRef("wide"))
		VPMULLD(pk, pk, t)
		VMOVDQU(t, at(ptr[3]))
		JMP(LabelRef("next"))
		Label("wide")
		VPMULUDQ(pk, pk, t)
		VMOVDQU(t, at(ptr[3]))
		VPMULUDQ(d, d, t)
		VMOVDQU(t, at(ptr[4]))
		Label("next")
	})
}

// admDen is the inner sum of ADM's denominator over one row of a reference
// band, 4 coefficients a step in 64-bit lanes. Scale 0 (admDen0AVX2): u =
// uint16(|c|), sum u³ (u² < 2^32, so two VPMULUDQs are exact). Scales 1 to
// 3 (admDenSAVX2): u = uint32(|c|), sum (((u² + addSq) >> shiftSq) * u +
// addCub) >> shiftCub, with p = {addSq, shiftSq, addCub, shiftCub}; the
// rounded square may reach 2^32 (u = 2^31), so its bit 32 times u is added
// apart. Both wrap at 64 bits as the scalar sums do.
func admDen(scaleS bool) {
	name, sig := "admDen0AVX2", "func(c *int32, n int) uint64"
	if scaleS {
		name, sig = "admDenSAVX2", "func(c *int32, p *[4]uint64, n int) uint64"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(name + " returns the denominator's inner sum of n coefficients (a multiple of 4) of a reference band's row.")
	c := Load(Param("c"), GP64())
	var addSq, shSq, addCub, shCub VecVirtual
	if scaleS {
		p := Load(Param("p"), GP64())
		addSq, shSq, addCub, shCub = YMM(), XMM(), YMM(), XMM()
		VPBROADCASTQ(Mem{Base: p}, addSq)
		MOVQ(Mem{Base: p, Disp: 8}, shSq)
		VPBROADCASTQ(Mem{Base: p, Disp: 16}, addCub)
		MOVQ(Mem{Base: p, Disp: 24}, shCub)
	}
	sum := YMM()
	VPXOR(sum, sum, sum)
	rowLoopThen(func(i Register) {
		u, u64, sq := XMM(), YMM(), YMM()
		VPABSD(Mem{Base: c, Index: i, Scale: 4}, u)
		if !scaleS {
			VPAND(bcastConstD("denlow16", 0xffff).AsX(), u, u)
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
		hi := YMM()
		VPSRLQ(Imm(32), sq, hi)
		VPMULUDQ(u64, hi, hi)
		VPSLLQ(Imm(32), hi, hi)
		VPMULUDQ(u64, sq, sq)
		VPADDQ(hi, sq, sq)
		VPADDQ(addCub, sq, sq)
		VPSRLQ(shCub, sq, sq)
		VPADDQ(sq, sum, sum)
	}, func() { returnSum(sum) })
}

// returnSum returns the sum of the four 64-bit lanes of sum.
func returnSum(sum VecVirtual) {
	hi := XMM()
	VEXTRACTI128(Imm(1), sum, hi)
	VPADDQ(hi, sum.AsX(), hi)
	lo := XMM()
	VPSHUFD(Imm(0x4e), hi, lo)
	VPADDQ(lo, hi, hi)
	r := GP64()
	MOVQ(hi, r)
	Store(r, ReturnIndex(0))
}

// speedAxpy: d[i] += a * y[i] in float32 for i < n (a multiple of 8), the
// inner loop of SpEED's matrix products. VMULPS then VADDPS round the
// product and the sum separately, as the scalar code does (no FMA), and
// each lane is one element's sum, so the bits are the scalar code's.
// speedConv is SpEED's conversion of samples to float (speedConvGo): each
// step's division and addition are single IEEE operations, as the scalar
// code's are.
func speedConv() {
	TEXT("speedConvAVX2", NOSPLIT, "func(src *uint16, dst *float32, scaler float32, n int)")
	Pragma("noescape")
	Doc("speedConvAVX2 sets dst[i] = float32(src[i])/scaler + -128 for i < n (a multiple of 8).")
	sc, off := YMM(), YMM()
	VBROADCASTSS(paramAddr("scaler"), sc)
	VBROADCASTSS(constMem("speedm128", F32(-128)), off)
	src := Load(Param("src"), GP64())
	dst := Load(Param("dst"), GP64())
	rowLoopStep(8, func(i Register) {
		x := YMM()
		VPMOVZXWD(Mem{Base: src, Index: i, Scale: 2}, x)
		VCVTDQ2PS(x, x)
		VDIVPS(sc, x, x)
		VADDPS(off, x, x)
		VMOVUPS(x, Mem{Base: dst, Index: i, Scale: 4})
	}, func() {})
}

func speedAxpy() {
	TEXT("speedAxpyAVX2", NOSPLIT, "func(d, y *float32, a float32, n int)")
	Pragma("noescape")
	Doc("speedAxpyAVX2 sets d[i] += a*y[i] in float32 for i < n (a multiple of 8).")
	a := YMM()
	VBROADCASTSS(paramAddr("a"), a)
	d := Load(Param("d"), GP64())
	y := Load(Param("y"), GP64())
	rowLoopStep(8, func(i Register) {
		p := YMM()
		VMULPS(Mem{Base: y, Index: i, Scale: 4}, a, p)
		VADDPS(Mem{Base: d, Index: i, Scale: 4}, p, p)
		VMOVUPS(p, Mem{Base: d, Index: i, Scale: 4})
	}, func() {})
}
