package vmaf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSpeedAgainstC checks the SpEED core bit for bit against libvmaf
// 3.2.0's own speed.c, compiled with its scalar paths, on synthetic planes
// under options the reference set does not use (every scaling method and
// weighting mode, other kernel scales, noise parameters and bit depths).
// It needs gcc and libvmaf's source: set VMAFX_LIBVMAF_SRC to the
// libvmaf directory of an unpacked vmaf-3.2.0 tarball
// (../shared/gpu/vmaf-3.2.0-src.tar.gz). TestSpeedGolden keeps what it
// found for runs without them.
func TestSpeedAgainstC(t *testing.T) {
	src := os.Getenv("VMAFX_LIBVMAF_SRC")
	if src == "" {
		t.Skip("VMAFX_LIBVMAF_SRC is not set")
	}
	bin := buildSpeedHarness(t, src)
	for _, c := range speedCCases() {
		want := runSpeedHarness(t, bin, c)
		for _, cpu := range speedPaths() {
			got := speedCaseScores(t, c, cpu)
			for i := range want {
				if math.Float32bits(got[i].score) != math.Float32bits(want[i].score) || got[i].err != want[i].err {
					t.Errorf("%s %v frame %d: Go %v (err %v), C %v (err %v)", c.name(), cpu, i, got[i].score, got[i].err, want[i].score, want[i].err)
				}
			}
		}
		if testing.Verbose() {
			var s []string
			for _, w := range want {
				s = append(s, fmt.Sprintf("0x%08x", math.Float32bits(w.score)))
			}
			t.Logf("%s: {%s}", c.name(), strings.Join(s, ", "))
		}
	}
}

// speedCCase is one synthetic plane pair sequence and option set.
type speedCCase struct {
	w, h, bpc, frames int
	seed              uint64
	o                 speedOptions
}

func (c speedCCase) name() string {
	return fmt.Sprintf("%dx%d@%d seed %d ks %g ps %g %s snn %g nnf %g wvm %d", c.w, c.h, c.bpc, c.seed,
		c.o.kernelscale, c.o.prescale, c.o.prescaleMethod, c.o.sigmaNN, c.o.nnFloor, c.o.weightVarMode)
}

func speedCCases() []speedCCase {
	opt := func(f func(o *speedOptions)) speedOptions {
		o := defaultSpeedOptions()
		f(&o)
		return o
	}
	v1 := func(o *speedOptions) { o.nnFloor, o.sigmaNN, o.weightVarMode = 0.1, 0.19, 5 }
	var cs []speedCCase
	for i, m := range []int{0, 1, 2, 3, 4, 5, 6} {
		cs = append(cs, speedCCase{w: 320, h: 240, bpc: 8, frames: 2, seed: uint64(i + 1),
			o: opt(func(o *speedOptions) { o.weightVarMode = m; o.nnFloor = 0.05 * float64(i) })})
	}
	for i, m := range speedScaleMethods {
		for j, ps := range []float64{0.5, 0.6, 1.5} {
			cs = append(cs, speedCCase{w: 347, h: 301, bpc: 10, frames: 1, seed: uint64(10 + 3*i + j),
				o: opt(func(o *speedOptions) { v1(o); o.prescale, o.prescaleMethod = ps, m })})
		}
	}
	for i, ks := range []float64{0.5, 1.5, 2, 360.0 / 97, 1.0 / 2.25} {
		cs = append(cs, speedCCase{w: 321, h: 199, bpc: 12, frames: 1, seed: uint64(30 + i),
			o: opt(func(o *speedOptions) { v1(o); o.kernelscale = ks; o.sigmaNN = 0.1 + 0.3*float64(i) })})
	}
	// Smallest planes, and a flat one (singular covariance).
	cs = append(cs,
		speedCCase{w: 80, h: 80, bpc: 8, frames: 1, seed: 40, o: opt(v1)},
		speedCCase{w: 110, h: 85, bpc: 8, frames: 1, seed: 41, o: opt(v1)},
		speedCCase{w: 330, h: 220, bpc: 8, frames: 1, seed: 0, o: opt(v1)},
	)
	return cs
}

// speedCPlanes returns a case's planes: per frame the reference then the
// distorted one, w x h samples each. Seed 0 gives flat planes.
func speedCPlanes(c speedCCase) [][]uint16 {
	r := rand.New(rand.NewPCG(c.seed, 7))
	maxV := float64(int(1)<<c.bpc - 1)
	var planes [][]uint16
	for range c.frames {
		fx, fy, ph := 0.02+0.1*r.Float64(), 0.02+0.1*r.Float64(), 6*r.Float64()
		ref, dis := make([]uint16, c.w*c.h), make([]uint16, c.w*c.h)
		for i := range c.h {
			for j := range c.w {
				v := 0.5 + 0.3*math.Sin(fx*float64(j)+ph)*math.Cos(fy*float64(i)) + 0.08*r.NormFloat64()
				d := v + 0.04*r.NormFloat64() + 0.05*math.Sin(0.3*float64(i+j))
				if c.seed == 0 {
					v, d = 0.5, 0.5
				}
				ref[i*c.w+j] = uint16(math.Round(min(max(v, 0), 1) * maxV))
				dis[i*c.w+j] = uint16(math.Round(min(max(d, 0), 1) * maxV))
			}
		}
		planes = append(planes, ref, dis)
	}
	return planes
}

type speedCScore struct {
	score float32
	err   bool
}

// speedCaseScores runs the Go core (one plane of a 4:4:4 frame) on a case.
func speedCaseScores(t testing.TB, c speedCCase, cpu CPU) []speedCScore {
	t.Helper()
	s, err := newSpeedState(c.w, c.h, YUV444P, c.o, cpu)
	if err != nil {
		t.Fatal(err)
	}
	planes := speedCPlanes(c)
	var out []speedCScore
	for k := 0; k < len(planes); k += 2 {
		v, e := s.channel(planes[k], c.w, c.bpc, planes[k+1], c.w, c.bpc)
		out = append(out, speedCScore{v, e})
	}
	return out
}

func runSpeedHarness(t *testing.T, bin string, c speedCCase) []speedCScore {
	t.Helper()
	var buf bytes.Buffer
	for _, p := range speedCPlanes(c) {
		if err := binary.Write(&buf, binary.LittleEndian, p); err != nil {
			t.Fatal(err)
		}
	}
	in := filepath.Join(t.TempDir(), "planes")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	out, err := exec.Command(bin, in, strconv.Itoa(c.w), strconv.Itoa(c.h), strconv.Itoa(c.bpc),
		g(c.o.kernelscale), g(c.o.prescale), c.o.prescaleMethod, g(c.o.sigmaNN), g(c.o.nnFloor),
		strconv.Itoa(c.o.weightVarMode), strconv.Itoa(c.frames)).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", c.name(), err, out)
	}
	var res []speedCScore
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var e int
		var hex string
		if _, err := fmt.Sscan(line, &e, &hex); err != nil {
			t.Fatalf("%s: harness said %q", c.name(), line)
		}
		v, err := strconv.ParseFloat(hex, 32)
		if err != nil {
			t.Fatalf("%s: harness said %q", c.name(), line)
		}
		res = append(res, speedCScore{float32(v), e != 0})
	}
	return res
}

// speedHarnessC drives speed.c's speed_init and speed_extract_score on
// planes converted as picture_copy does; the extractor's other
// dependencies are stubbed and every CPU flag is off (libvmaf's C path).
const speedHarnessC = `#include "speed.c"
#include <stdio.h>
#include <stdlib.h>
void vmaf_log(enum VmafLogLevel level, const char *fmt, ...) { (void)level; (void)fmt; }
unsigned vmaf_get_cpu_flags(void) { return 0; }
int vmaf_feature_collector_append_with_dict(VmafFeatureCollector *fc, VmafDictionary *d, const char *n, double s, unsigned i) { return 0; }
VmafDictionary *vmaf_feature_name_dict_from_provided_features(const char **p, const VmafOption *o, void *obj) { return 0; }
int vmaf_dictionary_free(VmafDictionary **d) { return 0; }
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    int w = atoi(argv[2]), h = atoi(argv[3]), bpc = atoi(argv[4]);
    SpeedOptions o = { .speed_kernelscale = atof(argv[5]), .speed_prescale = atof(argv[6]),
        .speed_prescale_method = argv[7], .speed_sigma_nn = atof(argv[8]), .speed_nn_floor = atof(argv[9]),
        .speed_weight_var_mode = atoi(argv[10]) };
    int nf = atoi(argv[11]);
    SpeedState s = {0};
    if (speed_init(&s, &o, w, h)) { printf("init error\n"); return 1; }
    size_t stride = s.float_stride / 4;
    float *ref = aligned_malloc(s.float_stride * s.dimensions.alloc_height, 32);
    float *dis = aligned_malloc(s.float_stride * s.dimensions.alloc_height, 32);
    uint16_t *buf = malloc(w * h * 2);
    float scaler = (float)(1 << (bpc - 8));
    for (int k = 0; k < nf; k++) {
        for (int p = 0; p < 2; p++) {
            float *dst = p ? dis : ref;
            if (fread(buf, 2, w * h, f) != (size_t)(w * h)) { printf("short\n"); return 1; }
            for (int i = 0; i < h; i++) for (int j = 0; j < w; j++)
                dst[i * stride + j] = bpc == 8 ? (float)buf[i * w + j] + -128 : (float)buf[i * w + j] / scaler + -128;
        }
        float score;
        int err = speed_extract_score(&s, &o, ref, dis, &score);
        printf("%d %a\n", err, score);
    }
    return 0;
}
`

func buildSpeedHarness(t *testing.T, libvmaf string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := "#define ARCH_X86 0\n#define ARCH_X86_64 0\n#define ARCH_AARCH64 0\n#define HAVE_AVX512 0\n"
	for name, text := range map[string]string{"config.h": cfg, "h.c": speedHarnessC} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := filepath.Join(libvmaf, "src")
	bin := filepath.Join(dir, "h")
	cmd := exec.Command("gcc", "-O2", "-o", bin, "h.c", filepath.Join(s, "feature/vif_tools.c"), filepath.Join(s, "mem.c"),
		filepath.Join(s, "feature/picture_copy.c"), "-I.", "-I"+s, "-I"+filepath.Join(s, "feature"),
		"-I"+filepath.Join(libvmaf, "include"), "-lm")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the harness: %v: %s", err, out)
	}
	return bin
}

// speedCGolden is what libvmaf's speed.c gave for speedCCases, in order
// (TestSpeedAgainstC -v prints it): each frame's score as float bits.
var speedCGolden = [][]uint32{
	{0x4213b5b4, 0x41d9fa83},
	{0x419925d0, 0x41934c18},
	{0x41af4dd8, 0x413d15f0},
	{0x41b691b3, 0x41b329f7},
	{0x41967a48, 0x42005d89},
	{0x4194f63b, 0x41d677d0},
	{0x41d683dc, 0x41f7c325},
	{0x00000000},
	{0x4146218c},
	{0x4181a23a},
	{0x00000000},
	{0x414d2020},
	{0x418631b0},
	{0x00000000},
	{0x41b345d8},
	{0x4181c4b7},
	{0x00000000},
	{0x4126ad24},
	{0x41804504},
	{0x415b41d4},
	{0x412786b3},
	{0x4135397a},
	{0x40c0a046},
	{0x41b223ea},
	{0x00000000},
	{0x00000000},
	{0x00000000},
}

// TestSpeedGolden checks the SpEED core against speedCGolden, bit for bit.
func TestSpeedGolden(t *testing.T) {
	cs := speedCCases()
	if len(cs) != len(speedCGolden) {
		t.Fatalf("%d cases, %d golden results", len(cs), len(speedCGolden))
	}
	for i, c := range cs {
		for _, cpu := range speedPaths() {
			got := speedCaseScores(t, c, cpu)
			for k, want := range speedCGolden[i] {
				if b := math.Float32bits(got[k].score); b != want {
					t.Errorf("%s %v frame %d: %v (0x%08x), libvmaf %v (0x%08x)", c.name(), cpu, k, got[k].score, b, math.Float32frombits(want), want)
				}
			}
		}
	}
}
