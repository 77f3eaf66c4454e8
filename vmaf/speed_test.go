package vmaf

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// speedV1Models are the reference set's models that use SpEED chroma.
var speedV1Models = []string{
	"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160", "vmaf_v1.0.16_3d0h_2160",
	"vmaf_v1.0.16_hfr_3d0h",
}

// speedModelOptions reads a built-in model's feature_opts_dicts entry for
// SpEED chroma and parses it.
func speedModelOptions(t testing.TB, model string) speedOptions {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("models", model+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var mj modelJSON
	if err := json.Unmarshal(data, &mj); err != nil {
		t.Fatal(err)
	}
	i := slices.Index(mj.ModelDict.FeatureNames, "Speed_chroma_feature_speed_chroma_uv_score")
	if i < 0 {
		t.Fatalf("%s has no SpEED chroma feature", model)
	}
	o, err := parseSpeedOptions(mj.ModelDict.FeatureOptsDicts[i])
	if err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	return o
}

// speedPaths are the CPU paths SpEED's tests run: the scalar one and, where
// this processor has AVX2, the vector one.
func speedPaths() []CPU {
	if hasAVX2 {
		return []CPU{CPUGeneric, CPUAVX2}
	}
	return []CPU{CPUGeneric}
}

// TestSpeedV1Reference compares every frame's speed_chroma_u, _v and _uv
// with libvmaf 3.2.0's on every pair of the v1 reference set under every
// v1 model that reads them.
func TestSpeedV1Reference(t *testing.T) {
	const tol = 1e-6 // libvmaf prints six decimals
	for _, p := range loadV1Pairs(t) {
		ref, dis := v1Frames(t, p, "ref", true), v1Frames(t, p, "dist", true)
		for _, m := range speedV1Models {
			for _, cpu := range speedPaths() {
				o := speedModelOptions(t, m)
				names := o.metricNames()
				l := readV1Log(t, p, m)
				s, err := newSpeedState(p.w, p.h, p.pf, o, cpu)
				if err != nil {
					t.Fatalf("%s %s: %v", p.name, m, err)
				}
				var worst [3]float64
				for i := range ref {
					got, err := s.compute(ref[i], dis[i])
					if err != nil {
						t.Fatal(err)
					}
					for k, g := range []float64{got.U, got.V, got.UV} {
						want, ok := l.Frames[i].Metrics[names[k]]
						if !ok {
							t.Fatalf("%s %s: frame %d has no %s", p.name, m, i, names[k])
						}
						d := math.Abs(g - want)
						worst[k] = max(worst[k], d)
						if !(d <= tol) {
							t.Errorf("%s %s %v frame %d %s: %.9f, libvmaf %.6f", p.name, m, cpu, i, names[k], g, want)
						}
					}
				}
				t.Logf("%s %-24s %-7v worst |delta| u %.2g v %.2g uv %.2g", p.name, m, cpu, worst[0], worst[1], worst[2])
			}
		}
	}
}

// TestSpeedOptions: the option parser and libvmaf's metric-name suffix.
func TestSpeedOptions(t *testing.T) {
	v1 := map[string]any{"speed_kernelscale": 1.0, "speed_nn_floor": 0.1, "speed_sigma_nn": 0.19,
		"speed_weight_var_mode": 5.0, "speed_max_val": 45.0}
	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	for _, c := range []struct {
		opts   map[string]any
		suffix string // "" with err set: an error naming err
		err    string
	}{
		{opts: nil, suffix: ""},
		{opts: v1, suffix: "_mxv_45_nnf_0.1_snn_0.19_wvm_5"},
		{opts: with(v1, "speed_prescale", 0.5, "speed_prescale_method", "bilinear"),
			suffix: "_mxv_45_nnf_0.1_ps_0.5_psm_bilinear_snn_0.19_wvm_5"},
		{opts: with(v1, "speed_prescale", 0.6, "speed_prescale_method", "bilinear"),
			suffix: "_mxv_45_nnf_0.1_ps_0.6_psm_bilinear_snn_0.19_wvm_5"},
		{opts: map[string]any{"speed_kernelscale": 1.5, "speed_sigma_nn": 0.29}, suffix: "_ks_1.5"},
		{opts: map[string]any{"speed_kernelscale": 360.0 / 97}, suffix: "_ks_3.71134"},
		{opts: map[string]any{"speed_max_val": 1000.0, "speed_weight_var_mode": 0.0}, suffix: ""},
		{opts: map[string]any{"speed_prescale_method": "lanczos4"}, suffix: "_psm_lanczos4"},
		// Doubles keep six significant digits, as libvmaf's dictionary keeps them.
		{opts: map[string]any{"speed_sigma_nn": 0.123456789}, suffix: "_snn_0.123457"},
		{opts: map[string]any{"speed_weight_var_mode": 6}, suffix: "_wvm_6"},
		{opts: map[string]any{"speed_kernel_scale": 1.0}, err: `unknown option "speed_kernel_scale"`},
		{opts: map[string]any{"motion_max_val": 1.0}, err: `unknown option "motion_max_val"`},
		{opts: map[string]any{"speed_weight_var_mode": 7.0}, err: "speed_weight_var_mode"},
		{opts: map[string]any{"speed_weight_var_mode": 2.5}, err: "speed_weight_var_mode"},
		{opts: map[string]any{"speed_sigma_nn": 0.05}, err: "speed_sigma_nn"},
		{opts: map[string]any{"speed_sigma_nn": "0.2"}, err: "speed_sigma_nn"},
		{opts: map[string]any{"speed_nn_floor": true}, err: "speed_nn_floor"},
		{opts: map[string]any{"speed_max_val": 1001.0}, err: "speed_max_val"},
		{opts: map[string]any{"speed_max_val": math.NaN()}, err: "speed_max_val"},
		{opts: map[string]any{"speed_prescale": 5.0}, err: "speed_prescale"},
		{opts: map[string]any{"speed_prescale": 1.0005}, err: "speed_prescale"},
		{opts: map[string]any{"speed_prescale_method": "area"}, err: "speed_prescale_method"},
		{opts: map[string]any{"speed_prescale_method": 1.0}, err: "speed_prescale_method"},
		{opts: map[string]any{"speed_kernelscale": 1.2}, err: "speed_kernelscale"},
	} {
		o, err := parseSpeedOptions(c.opts)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err = %v, want one naming %s", c.opts, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.opts, err)
			continue
		}
		if got := o.suffix(); got != c.suffix {
			t.Errorf("%v: suffix %q, want %q", c.opts, got, c.suffix)
		}
	}
	if got := speedModelOptions(t, "vmaf_v1.0.16_3d0h").metricNames(); got != [3]string{
		"speed_chroma_u_mxv_45_nnf_0.1_snn_0.19_wvm_5", "speed_chroma_v_mxv_45_nnf_0.1_snn_0.19_wvm_5",
		"speed_chroma_uv_mxv_45_nnf_0.1_snn_0.19_wvm_5"} {
		t.Errorf("vmaf_v1.0.16_3d0h metric names %q", got)
	}
	// The table is in the order feature_name.c sorts the names in.
	if !slices.IsSortedFunc(speedOptionTable, func(a, b fexOption) int { return strings.Compare(a.name, b.name) }) {
		t.Error("speedOptionTable is not sorted by name")
	}
}

// TestSpeedSize: the smallest frames SpEED chroma takes, where libvmaf
// 3.2.0 still runs and one pixel less crashes it (a segmentation fault,
// checked with the harness of TestSpeedAgainstC).
func TestSpeedSize(t *testing.T) {
	def := defaultSpeedOptions()
	half := def
	half.prescale = 0.5
	for _, c := range []struct {
		w, h int
		pf   PixelFormat
		o    speedOptions
		ok   bool
	}{
		{176, 144, YUV420P, def, false}, // the crash
		{160, 160, YUV420P, def, true},
		{161, 161, YUV420P10LE, def, true},
		{159, 160, YUV420P, def, false},
		{160, 159, YUV420P, def, false},
		{160, 80, YUV422P, def, true},
		{160, 79, YUV422P, def, false},
		{80, 80, YUV444P, def, true},
		{79, 80, YUV444P12LE, def, false},
		{318, 318, YUV420P, half, true}, // 159 * 0.5 rounds to 80
		{317, 318, YUV420P, half, false},
		{640, 360, YUV420P, half, true},
		{1920, 1080, Gray, def, false},
	} {
		err := checkSpeedSize(c.w, c.h, c.pf, c.o)
		if (err == nil) != c.ok {
			t.Errorf("%dx%d %v ps %g: err = %v, want ok %v", c.w, c.h, c.pf, c.o.prescale, err, c.ok)
		}
		if err != nil && c.pf != Gray && !errors.Is(err, ErrTooSmall) {
			t.Errorf("%dx%d %v: %v is not ErrTooSmall", c.w, c.h, c.pf, err)
		}
		if err != nil && c.pf == Gray && !errors.Is(err, ErrNoChroma) {
			t.Errorf("%dx%d %v: %v is not ErrNoChroma", c.w, c.h, c.pf, err)
		}
		if _, err2 := newSpeedState(c.w, c.h, c.pf, c.o, CPUGeneric); (err2 == nil) != c.ok {
			t.Errorf("%dx%d %v: newSpeedState err = %v", c.w, c.h, c.pf, err2)
		}
	}
	if w, h := def.minSize(YUV420P); w != 160 || h != 160 {
		t.Errorf("min size 4:2:0 %dx%d, want 160x160", w, h)
	}
	if w, h := half.minSize(YUV420P); w != 318 || h != 318 {
		t.Errorf("min size 4:2:0 at prescale 0.5 %dx%d, want 318x318", w, h)
	}
	err := checkSpeedSize(176, 144, YUV420P, def)
	if err == nil || !strings.Contains(err.Error(), "160x160") {
		t.Errorf("176x144: %v, want the smallest size named", err)
	}
}

// TestSpeedFrameErrors: frames without chroma planes or of another size
// are errors, not panics.
func TestSpeedFrameErrors(t *testing.T) {
	s, err := newSpeedState(192, 192, YUV420P, defaultSpeedOptions(), CPUGeneric)
	if err != nil {
		t.Fatal(err)
	}
	f := speedRandomFrame(rand.New(rand.NewPCG(1, 1)), 192, 192, YUV420P)
	noChroma := *f
	noChroma.U, noChroma.V, noChroma.ChromaWidth, noChroma.ChromaHeight = nil, nil, 0, 0
	if _, err := s.compute(f, &noChroma); !errors.Is(err, ErrNoChroma) {
		t.Errorf("no chroma: err = %v", err)
	}
	other := speedRandomFrame(rand.New(rand.NewPCG(1, 1)), 200, 192, YUV420P)
	if _, err := s.compute(other, f); !errors.Is(err, ErrSizeMismatch) {
		t.Errorf("other size: err = %v", err)
	}
}

// speedRandomFrame is a frame of noise over a smooth pattern, with chroma.
func speedRandomFrame(r *rand.Rand, w, h int, pf PixelFormat) *Frame {
	cw, ch := pf.chromaSize(w, h)
	bd := pf.BitDepth()
	f := &Frame{Width: w, Height: h, BitDepth: bd, Chroma: true, ChromaWidth: cw, ChromaHeight: ch,
		Y: make([]uint16, w*h), U: make([]uint16, cw*ch), V: make([]uint16, cw*ch)}
	maxV := int(1)<<bd - 1
	fx, fy := 0.02+0.2*r.Float64(), 0.02+0.2*r.Float64()
	for _, p := range [][]uint16{f.Y, f.U, f.V} {
		pw := w
		if len(p) != w*h {
			pw = cw
		}
		amp, noise := r.Float64(), r.Float64()*0.3
		for i := range p {
			x, y := float64(i%pw), float64(i/pw)
			v := 0.5 + 0.5*amp*math.Sin(fx*x)*math.Cos(fy*y) + noise*(r.Float64()-0.5)
			p[i] = uint16(min(max(v, 0), 1) * float64(maxV))
		}
	}
	return f
}

// FuzzSpeed: small random frames in any chroma format and option set never
// panic, and scores stay finite or capped.
func FuzzSpeed(f *testing.F) {
	f.Add(uint64(1), uint16(160), uint16(160), uint8(0), uint8(5), uint8(0), false)
	f.Add(uint64(2), uint16(200), uint16(170), uint8(4), uint8(0), uint8(1), true)
	f.Add(uint64(3), uint16(90), uint16(81), uint8(2), uint8(3), uint8(2), false)
	f.Add(uint64(4), uint16(330), uint16(170), uint8(1), uint8(6), uint8(3), true)
	f.Add(uint64(5), uint16(176), uint16(144), uint8(0), uint8(5), uint8(0), false)
	f.Fuzz(func(t *testing.T, seed uint64, w, h uint16, fmtIdx, wvm, method uint8, flat bool) {
		w, h = w%400+1, h%300+1
		pfs := []PixelFormat{YUV420P, YUV422P, YUV444P, YUV420P10LE, YUV444P12LE}
		pf := pfs[int(fmtIdx)%len(pfs)]
		o := defaultSpeedOptions()
		o.weightVarMode = int(wvm % 7)
		o.prescaleMethod = speedScaleMethods[int(method)%len(speedScaleMethods)]
		o.prescale = []float64{1, 0.5, 0.6, 1.5}[int(seed%4)]
		o.nnFloor, o.sigmaNN, o.maxVal = 0.1, 0.19, 45
		s, err := newSpeedState(int(w), int(h), pf, o, CPUGeneric)
		if err != nil {
			if checkSpeedSize(int(w), int(h), pf, o) == nil {
				t.Fatalf("newSpeedState refused what checkSpeedSize takes: %v", err)
			}
			return
		}
		r := rand.New(rand.NewPCG(seed, 2))
		ref, dis := speedRandomFrame(r, int(w), int(h), pf), speedRandomFrame(r, int(w), int(h), pf)
		if flat {
			for i := range dis.V {
				dis.V[i] = 0
			}
		}
		got, err := s.compute(ref, dis)
		if err != nil {
			t.Fatal(err)
		}
		// Every vector path gives the scalar path's bits.
		for _, cpu := range speedPaths()[1:] {
			v, _ := newSpeedState(int(w), int(h), pf, o, cpu)
			if vg, _ := v.compute(ref, dis); vg != got {
				t.Fatalf("%dx%d %v %+v: %v path %+v, scalar %+v", w, h, pf, o, cpu, vg, got)
			}
		}
		for _, v := range []float64{got.U, got.V, got.UV} {
			if !(v >= 0 && v <= o.maxVal) {
				t.Fatalf("%dx%d %v %+v: score %v", w, h, pf, o, v)
			}
		}
	})
}

// BenchmarkSpeed640x360 is one 640x360 4:2:0 frame pair's SpEED chroma
// under vmaf_v1.0.16_3d0h's options.
func BenchmarkSpeed640x360(b *testing.B) {
	o := speedModelOptions(b, "vmaf_v1.0.16_3d0h")
	r := rand.New(rand.NewPCG(9, 9))
	ref, dis := speedRandomFrame(r, 640, 360, YUV420P), speedRandomFrame(r, 640, 360, YUV420P)
	for _, cpu := range speedPaths() {
		b.Run(cpu.String(), func(b *testing.B) {
			s, err := newSpeedState(640, 360, YUV420P, o, cpu)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.compute(ref, dis); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// speedQRNaive is matrix_qr_decomposition as libvmaf writes it, every
// product in full: the reference for speedLinalg.qr's shortcuts.
func speedQRNaive(l *speedLinalg, a []float32) {
	const n = speedN
	q, r, tq, tz := l.q[:], l.r[:], l.tq[:], l.tz[:]
	copy(tz, a)
	speedIdentity(q)
	vec := r[:n]
	for k := range n - 1 {
		for i := range n {
			for j := range n {
				if i < k || j < k {
					tz[i*n+j] = 0
					if i == j {
						tz[i*n+j] = 1
					}
				}
			}
		}
		for i := range n {
			vec[i] = tz[i*n+k]
		}
		norm := speedNorm(vec)
		vec[k] += speedSign(a[k*n+k]) * norm
		d := speedNorm(vec)
		for i := range n {
			vec[i] /= d
		}
		for i := range n {
			for j := range n {
				tq[i*n+j] = -2 * vec[i] * vec[j]
			}
		}
		for i := range n {
			tq[i*n+i] += 1
		}
		speedMatMul(l.axpy, r, tq, tz, n, n, n)
		copy(tz, r)
		speedMatMul(l.axpy, r, tq, q, n, n, n)
		copy(q, r)
	}
	speedMatMul(l.axpy, r, q, a, n, n, n)
	speedTranspose(q)
}

// TestSpeedQRExact: the QR's structured products give libvmaf's full
// products' bits, zero signs included, on covariance-like, sparse,
// singular and degenerate matrices.
func TestSpeedQRExact(t *testing.T) {
	for _, cpu := range speedPaths() {
		speedQRCheck(t, cpu)
	}
}

func speedQRCheck(t *testing.T, cpu CPU) {
	const n = speedN
	r := rand.New(rand.NewPCG(3, 4))
	fast, naive := speedLinalg{axpy: speedAxpyFor(cpu)}, speedLinalg{axpy: speedAxpyGo}
	for c := range 300 {
		a := make([]float32, n*n)
		switch c % 6 {
		case 0: // symmetric positive semi-definite, like a covariance
			b := make([]float32, n*n)
			for i := range b {
				b[i] = float32(r.NormFloat64())
			}
			for i := range n {
				for j := range n {
					var s float32
					for m := range n {
						s += b[i*n+m] * b[j*n+m]
					}
					a[i*n+j] = s
				}
			}
		case 1: // sparse, with signed zeros
			for i := range a {
				switch r.IntN(4) {
				case 0:
					a[i] = float32(r.NormFloat64())
				case 1:
					a[i] = float32(math.Copysign(0, -1))
				}
			}
		case 2: // rank one
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			for i := range n {
				for j := range n {
					a[i*n+j] = v[i] * v[j]
				}
			}
		case 3: // all zero: 0/0 reflectors
		case 4: // tiny values: reflectors near underflow
			for i := range a {
				a[i] = float32(r.NormFloat64() * 1e-38)
			}
		default: // dense
			for i := range a {
				a[i] = float32(r.NormFloat64() * math.Exp(4*r.NormFloat64()))
			}
		}
		fast.qr(a)
		speedQRNaive(&naive, a)
		for i := range n * n {
			if math.Float32bits(fast.q[i]) != math.Float32bits(naive.q[i]) || math.Float32bits(fast.r[i]) != math.Float32bits(naive.r[i]) {
				t.Fatalf("%v case %d (kind %d) element %d: q %v r %v, full products q %v r %v", cpu, c, c%6, i, fast.q[i], fast.r[i], naive.q[i], naive.r[i])
			}
		}
	}
}
