package vmaf

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// vectorPaths are the non-generic paths; a test skips the ones this
// processor cannot run and says so.
var vectorPaths = []CPU{CPUAVX2, CPUAVX512}

// TestKernelSetsComplete wants every kernel of every path's set: a path
// missing one would crash on its first frame.
func TestKernelSetsComplete(t *testing.T) {
	for _, c := range append([]CPU{CPUGeneric}, vectorPaths...) {
		v := reflect.ValueOf(*kernelsFor(c))
		for i := range v.NumField() {
			if f := v.Field(i); f.Kind() == reflect.Func && f.IsNil() {
				t.Errorf("path %v has no kernel %s", c, v.Type().Field(i).Name)
			}
		}
	}
}

func TestParseCPU(t *testing.T) {
	for _, c := range []struct {
		in   string
		want CPU
	}{{"", CPUAuto}, {"auto", CPUAuto}, {"generic", CPUGeneric}, {"avx2", CPUAVX2}, {"avx512", CPUAVX512}} {
		got, err := ParseCPU(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseCPU(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	// Each supported path gets its own kernels (the generic ones elsewhere).
	for _, c := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
		if k := kernelsFor(c); c.Supported() && k.cpu != c {
			t.Errorf("kernelsFor(%v) gives the %v kernels", c, k.cpu)
		}
	}
	for _, in := range []string{"AVX2", "sse4", "avx-512", " generic"} {
		_, err := ParseCPU(in)
		if !errors.Is(err, ErrUnsupportedCPU) || !strings.Contains(err.Error(), "want generic, avx2 or avx512") {
			t.Errorf("ParseCPU(%q) error = %v; want ErrUnsupportedCPU naming the choices", in, err)
		}
	}
}

// TestScoreCPUEnv checks that VMAFX_CPU reaches Score: an unknown value
// and a path the processor lacks fail before any frame is read.
func TestScoreCPUEnv(t *testing.T) {
	refP, distP := synthPair(64, 48, 1)
	info := VideoInfo{Width: 64, Height: 48, Format: YUV420P}
	score := func(opts Options) error {
		_, err := Score(context.Background(), &memSource{info: info, planes: refP, n: 2},
			&memSource{info: info, planes: distP, n: 2}, opts)
		return err
	}
	t.Setenv(EnvCPU, "neon")
	if err := score(Options{}); !errors.Is(err, ErrUnsupportedCPU) || !strings.Contains(err.Error(), `VMAFX_CPU="neon"`) {
		t.Fatalf("VMAFX_CPU=neon: error %v, want ErrUnsupportedCPU naming the value", err)
	}
	// Options.CPU wins over the environment.
	if err := score(Options{CPU: CPUGeneric}); err != nil {
		t.Fatalf("Options.CPU=generic with VMAFX_CPU=neon: %v", err)
	}
	for _, c := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
		t.Setenv(EnvCPU, c.String())
		err := score(Options{})
		switch {
		case c.Supported() && err != nil:
			t.Errorf("VMAFX_CPU=%v on a processor that has it: %v", c, err)
		case !c.Supported() && (!errors.Is(err, ErrUnsupportedCPU) || !strings.Contains(err.Error(), "not supported by this processor")):
			t.Errorf("VMAFX_CPU=%v on a processor without it: error %v, want ErrUnsupportedCPU", c, err)
		}
	}
	t.Setenv(EnvCPU, "")
	if got, err := resolveCPU(CPUAuto); err != nil || got != BestCPU() {
		t.Errorf("resolveCPU(auto) = %v, %v; want %v", got, err, BestCPU())
	}
}

// sameFrames fails unless two results hold identical features and scores
// for every frame.
func sameFrames(t *testing.T, name string, got, want *Result) {
	t.Helper()
	if len(got.Frames) != len(want.Frames) {
		t.Fatalf("%s: %d frames, want %d", name, len(got.Frames), len(want.Frames))
	}
	for i := range want.Frames {
		g, w := got.Frames[i], want.Frames[i]
		if g.VIF != w.VIF || g.ADMScale != w.ADMScale || g.ADM2 != w.ADM2 || g.AIM != w.AIM || g.ADM3 != w.ADM3 ||
			g.MotionSAD != w.MotionSAD || g.Motion2 != w.Motion2 || g.VMAF != w.VMAF {
			t.Fatalf("%s frame %d differs from the generic path:\n got %+v\nwant %+v", name, i, g, w)
		}
	}
}

// TestPathsBitExactClips scores every reference pair on each path and wants
// the generic path's values exactly.
func TestPathsBitExactClips(t *testing.T) {
	for _, c := range vectorPaths {
		t.Run(c.String(), func(t *testing.T) {
			if !c.Supported() {
				t.Skipf("this processor has no %v", c)
			}
			for _, p := range loadPairs(t) {
				for _, m := range []string{"vmaf_v0.6.1", "vmaf_v0.6.1neg"} {
					ref, dist := openPair(t, p)
					want, err := Score(context.Background(), ref, dist, Options{Model: m, CPU: CPUGeneric})
					if err != nil {
						t.Fatal(err)
					}
					ref, dist = openPair(t, p)
					got, err := Score(context.Background(), ref, dist, Options{Model: m, CPU: c})
					if err != nil {
						t.Fatal(err)
					}
					sameFrames(t, p.name+"/"+m, got, want)
				}
			}
		})
	}
}

// randomPlanes makes k frames of textured noise at a bit depth, and their
// distortions: a mix of flat areas, edges and noise so that every branch
// of the statistics runs.
func randomPlanes(rng *rand.Rand, w, h, bpc, k int) (ref, dist [][]uint16) {
	maxV := 1<<bpc - 1
	for range k {
		r := make([]uint16, w*h)
		d := make([]uint16, w*h)
		for y := range h {
			for x := range w {
				v := (x*7 + y*3) << (bpc - 8) % (maxV + 1)
				if (x/5+y/3)%3 == 0 {
					v = rng.IntN(maxV + 1)
				}
				r[y*w+x] = uint16(v)
				e := v + rng.IntN(1<<(bpc-5)+1) - 1<<(bpc-6)
				if rng.IntN(9) == 0 {
					e = rng.IntN(maxV + 1)
				}
				d[y*w+x] = uint16(min(max(e, 0), maxV))
			}
		}
		ref, dist = append(ref, r), append(dist, d)
	}
	return ref, dist
}

// TestPathsBitExactRandom scores random frames of odd and even sizes, 1 to
// 8 pixels wider and taller than a multiple of the vector width at every
// VIF and ADM scale, at 8, 10 and 12 bits, on each path.
func TestPathsBitExactRandom(t *testing.T) {
	formats := map[int]PixelFormat{8: YUV420P, 10: YUV420P10LE, 12: YUV420P12LE}
	for _, c := range vectorPaths {
		t.Run(c.String(), func(t *testing.T) {
			if !c.Supported() {
				t.Skipf("this processor has no %v", c)
			}
			rng := rand.New(rand.NewPCG(7, 9))
			for _, bpc := range []int{8, 10, 12} {
				for extra := 1; extra <= 8; extra++ {
					// 64 is a vector multiple at every scale (64, 32, 16, 8).
					w, h := 64+extra, 40+(extra*5)%9
					refP, distP := randomPlanes(rng, w, h, bpc, 3)
					info := VideoInfo{Width: w, Height: h, Format: formats[bpc]}
					score := func(cpu CPU) *Result {
						res, err := Score(context.Background(), &memSource{info: info, planes: refP, n: 3},
							&memSource{info: info, planes: distP, n: 3}, Options{CPU: cpu, Threads: 1})
						if err != nil {
							t.Fatal(err)
						}
						return res
					}
					sameFrames(t, fmt.Sprintf("%dx%d %d-bit", w, h, bpc), score(c), score(CPUGeneric))
				}
			}
		})
	}
}

// needAVX2 skips a vector kernel's test where the processor has no AVX2
// (every one outside amd64).
func needAVX2(t testing.TB) {
	if !hasAVX2 {
		t.Skip("this processor has no AVX2")
	}
}
