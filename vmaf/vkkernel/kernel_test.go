package vkkernel

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// openOrSkip opens the default device's kernel. Without a usable device
// the test skips, unless VMAFX_REQUIRE_VULKAN=1 (make test sets it).
func openOrSkip(t testing.TB) *Kernel {
	t.Helper()
	k, err := Open(vulkan.Config{})
	if err != nil {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") != "1" && errors.Is(err, vulkan.ErrUnavailable) {
			t.Skipf("no usable Vulkan device (VMAFX_REQUIRE_VULKAN=1 fails instead): %v", err)
		}
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(k.Close)
	// Every pipeline built: tests look at a v1 model's ones too.
	if err := k.Ready(); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	return k
}

// The open's and the close's steps are timed (the worker logs them: on a GPU they are a
// fixed cost of every run), the close's once it has run.
func TestSteps(t *testing.T) {
	k := openOrSkip(t)
	s := k.Steps()
	if s.Instance <= 0 || s.Select <= 0 || s.Device <= 0 || s.Pipelines <= 0 {
		t.Errorf("open's steps %+v: want instance, select, device and pipelines timed", s)
	}
	if s.Release != 0 || s.DestroyDevice != 0 {
		t.Errorf("close's steps timed before the close: %+v", s)
	}
	k.Close()
	if s = k.Steps(); s.Release <= 0 || s.Idle <= 0 || s.DestroyDevice <= 0 || s.DestroyInstance <= 0 {
		t.Errorf("close's steps %+v: want each timed", s)
	}
}

// pair is a line of vmaf/testdata/pairs.tsv.
type pair struct {
	name, ref, dist string
	w, h            int
	pf              vmaf.PixelFormat
}

func loadPairs(t testing.TB) []pair {
	t.Helper()
	f, err := os.Open("../testdata/pairs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pairs []pair
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if strings.HasPrefix(c[0], "#") || len(c) < 8 {
			continue
		}
		w, _ := strconv.Atoi(c[3])
		h, _ := strconv.Atoi(c[4])
		pf, err := vmaf.ParsePixelFormat(c[5])
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, pair{name: c[0], ref: c[1], dist: c[2], w: w, h: h, pf: pf})
	}
	if len(pairs) == 0 {
		t.Fatal("no pairs in pairs.tsv")
	}
	return pairs
}

func openClip(t testing.TB, name string, p pair) *vmaf.RawReader {
	t.Helper()
	f, err := os.Open(filepath.Join("../testdata/clips", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := vmaf.OpenRaw(bufio.NewReader(f), p.w, p.h, p.pf)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestScoreMatchesCPU scores every testdata pair with the device computing
// what it offloads and compares every per-frame feature and score, and the
// pooled scores, with the CPU kernel's: they must be identical, not close.
// One pair is scored with a "neg" model too (enhancement gain limit 1).
func TestScoreMatchesCPU(t *testing.T) {
	k := openOrSkip(t)
	if device, _ := k.Features(); k.Info().Float64 && !slices.Equal(device, []string{"motion", "vif", "adm", "speed_chroma", "cambi"}) {
		t.Errorf("device features %v on a device with shaderFloat64, want motion, vif, adm, speed_chroma and cambi", device)
	}
	pairs := loadPairs(t)
	for i, p := range append(pairs, pairs[0]) {
		model := "vmaf_v0.6.1"
		if i == len(pairs) {
			model, p.name = "vmaf_v0.6.1neg", p.name+"_neg"
		}
		t.Run(p.name, func(t *testing.T) {
			score := func(off vmaf.Offload) *vmaf.Result {
				res, err := vmaf.Score(context.Background(), openClip(t, p.ref, p), openClip(t, p.dist, p),
					vmaf.Options{Threads: 2, Offload: off, Model: model})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			cpu, gpu := score(nil), score(k)
			if diff := cmp.Diff(cpu.Frames, gpu.Frames); diff != "" {
				t.Errorf("per-frame features (-cpu +vulkan):\n%s", diff)
			}
			if diff := cmp.Diff(cpu.Pooled, gpu.Pooled); diff != "" {
				t.Errorf("pooled (-cpu +vulkan):\n%s", diff)
			}
		})
	}
}

// TestMotionSAD compares the motion integer directly with the CPU's on
// planes that stress the arithmetic: every bit depth, odd sizes, full-scale
// steps between frames (the largest blurred values) and noise.
func TestMotionSAD(t *testing.T) {
	k := openOrSkip(t)
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := [][2]int{{33, 33}, {177, 145}, {640, 360}, {1921, 37}}
	for _, bpc := range []int{8, 10, 12, 16} {
		for _, sz := range sizes {
			w, h := sz[0], sz[1]
			wk, err := k.NewWorker(vmaf.OffloadConfig{Width: w, Height: h, BitDepth: bpc, VIFEnhnGainLimit: 100})
			if err != nil {
				t.Fatal(err)
			}
			for name, p := range stressPlanes(rng, w, h, bpc) {
				got, err := wk.MotionSAD(p[0], p[1])
				if err != nil {
					t.Fatal(err)
				}
				if want := vmaf.MotionSAD(p[0], p[1], w, h, bpc); got != want {
					t.Errorf("%dx%d %d-bit %s: SAD %d, CPU %d", w, h, bpc, name, got, want)
				}
			}
			wk.Close()
		}
	}
}

// stressPlanes returns pairs of planes that stress the arithmetic: noise,
// full-scale steps (the largest filtered values and variances), a flat pair
// and a pair that differs by a small gain, for the given bit depth.
func stressPlanes(rng *rand.Rand, w, h, bpc int) map[string][2][]uint16 {
	maxv := 1<<bpc - 1
	out := map[string][2][]uint16{}
	for _, pattern := range []string{"noise", "steps", "flat", "gain"} {
		a, b := make([]uint16, w*h), make([]uint16, w*h)
		for i := range a {
			switch pattern {
			case "noise":
				a[i], b[i] = uint16(rng.IntN(maxv+1)), uint16(rng.IntN(maxv+1))
			case "steps":
				if (i/w+i%w/3)%2 == 0 {
					a[i] = uint16(maxv)
				} else {
					b[i] = uint16(maxv)
				}
			case "flat":
				a[i], b[i] = 7, 7
			case "gain":
				a[i] = uint16(rng.IntN(maxv + 1))
				b[i] = uint16(min(int(a[i])*9/8+rng.IntN(3), maxv))
			}
		}
		out[pattern] = [2][]uint16{a, b}
	}
	return out
}

// TestVIFStatistic compares the device's scale-0 VIF sums with the CPU
// kernel's on stress planes, for every bit depth and both gain limits.
func TestVIFStatistic(t *testing.T) {
	k := openOrSkip(t)
	if k.vif == nil {
		t.Skipf("%s lacks shaderFloat64: VIF runs on the CPU", k.Info().Name)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, bpc := range []int{8, 10, 12} {
		for _, sz := range [][2]int{{33, 33}, {177, 145}, {320, 240}} {
			w, h := sz[0], sz[1]
			for _, egl := range []float64{100, 1} {
				wk, err := k.NewWorker(vmaf.OffloadConfig{Width: w, Height: h, BitDepth: bpc, VIFEnhnGainLimit: egl})
				if err != nil {
					t.Fatal(err)
				}
				for name, p := range stressPlanes(rng, w, h, bpc) {
					got, ok, err := wk.VIF(p[0], p[1])
					if err != nil || !ok {
						t.Fatalf("VIF: %v, ok %v", err, ok)
					}
					if want := vmaf.VIFStatistic(p[0], p[1], w, h, 0, bpc, egl); got[0] != want {
						t.Errorf("%dx%d %d-bit egl %v %s: scale 0 sums %+v, CPU %+v", w, h, bpc, egl, name, got[0], want)
					}
				}
				wk.Close()
			}
		}
	}
}

// TestScoreStressMatchesCPU scores the stress planes, one pattern a frame,
// at every bit depth and at sizes down to the smallest ADM takes, on both
// backends: every feature of every frame must be identical.
func TestScoreStressMatchesCPU(t *testing.T) {
	k := openOrSkip(t)
	rng := rand.New(rand.NewPCG(5, 6))
	formats := map[int]vmaf.PixelFormat{8: vmaf.YUV420P, 10: vmaf.YUV420P10LE, 12: vmaf.YUV420P12LE}
	for _, bpc := range []int{8, 10, 12} {
		for _, sz := range [][2]int{{33, 33}, {177, 145}, {321, 240}} {
			w, h := sz[0], sz[1]
			var refP, disP [][]uint16
			for _, name := range []string{"noise", "steps", "gain", "flat"} {
				p := stressPlanes(rng, w, h, bpc)[name]
				refP, disP = append(refP, p[0]), append(disP, p[1])
			}
			score := func(off vmaf.Offload) *vmaf.Result {
				ref := &planeSource{w: w, h: h, planes: refP, n: len(refP), format: formats[bpc]}
				dis := &planeSource{w: w, h: h, planes: disP, n: len(disP), format: formats[bpc]}
				res, err := vmaf.Score(context.Background(), ref, dis, vmaf.Options{Threads: 2, Offload: off})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			if diff := cmp.Diff(score(nil).Frames, score(k).Frames); diff != "" {
				t.Errorf("%dx%d %d-bit (-cpu +vulkan):\n%s", w, h, bpc, diff)
			}
		}
	}
}

// failing is an Offload whose workers fail, as a lost device does.
type failing struct{ err error }

func (f failing) NewWorker(vmaf.OffloadConfig) (vmaf.OffloadWorker, error) { return nil, f.err }

// TestScoreOffloadError checks that a failing device fails the score with
// its error rather than scoring anything on the CPU behind its back.
func TestScoreOffloadError(t *testing.T) {
	p := loadPairs(t)[0]
	want := errors.New("device lost")
	_, err := vmaf.Score(context.Background(), openClip(t, p.ref, p), openClip(t, p.dist, p),
		vmaf.Options{Threads: 2, Offload: failing{want}})
	if !errors.Is(err, want) {
		t.Errorf("Score = %v, want %v", err, want)
	}
}

// TestNewWorkerTooLarge asks for buffers beyond the device's limits: the
// worker fails cleanly and its slot is given back.
func TestNewWorkerTooLarge(t *testing.T) {
	k := openOrSkip(t)
	_, err := k.NewWorker(vmaf.OffloadConfig{Width: 1 << 20, Height: 1 << 20, BitDepth: 8, VIFEnhnGainLimit: 100})
	if err == nil {
		t.Fatal("NewWorker of 2^40 pixels succeeded")
	}
	if k.workers != 0 {
		t.Errorf("%d workers counted after the failure, want 0", k.workers)
	}
}

func TestWorkers(t *testing.T) {
	k := openOrSkip(t)
	mem := k.dev.Info.Memory
	defer func() { k.dev.Info.Memory = mem }()
	k.dev.Info.Memory = 8 << 30 // an 8 GiB GPU: 4 GiB for workers
	tests := []struct{ want, w, h, got int }{
		{want: 4, w: 1920, h: 1080, got: 4},
		{want: 32, w: 1920, h: 1080, got: 14}, // 4 GiB / (140 B x 2.07 Mpx)
		{want: 32, w: 3840, h: 2160, got: 3},  // 4 GiB / (140 B x 8.3 Mpx)
		{want: 100, w: 176, h: 144, got: 62},  // maxWorkers, less the self-test's beside
		{want: 2, w: 16384, h: 16384, got: 1}, // never none
	}
	for _, tc := range tests {
		if got := k.Workers(tc.want, tc.w, tc.h); got != tc.got {
			t.Errorf("Workers(%d, %d, %d) = %d, want %d", tc.want, tc.w, tc.h, got, tc.got)
		}
	}
}

// TestWorkersLeaveRoomBeside: a run on as many workers as Workers allows leaves room for
// the worker's self-test, which scores its two cases at once, a worker each, beside the
// run's first frames (worker/internal/backend): without it, the self-test could not
// make its workers, and its failure would mark a sound device Unhealthy.
func TestWorkersLeaveRoomBeside(t *testing.T) {
	k := openOrSkip(t)
	const w, h = 176, 144
	run := k.Workers(1000, w, h)
	cfg := vmaf.OffloadConfig{Width: w, Height: h, BitDepth: 8, VIFEnhnGainLimit: 100, ADMEnhnGainLimit: 100}
	for i := range run + 2 {
		wk, err := k.NewWorker(cfg)
		if err != nil {
			t.Fatalf("worker %d beside a run of %d: %v", i+1, run, err)
		}
		defer wk.Close()
	}
}

// countingOffload is a Kernel that counts the frame pairs whose ADM and
// SpEED its workers computed on the device.
type countingOffload struct {
	k                 *Kernel
	adm, speed, cambi atomic.Int64
}

func (c *countingOffload) NewWorker(cfg vmaf.OffloadConfig) (vmaf.OffloadWorker, error) {
	wk, err := c.k.NewWorker(cfg)
	if err != nil {
		return nil, err
	}
	return &countingWorker{OffloadWorker: wk, speed: wk.(vmaf.SpeedOffloader), c: c}, nil
}

type countingWorker struct {
	vmaf.OffloadWorker
	speed vmaf.SpeedOffloader
	c     *countingOffload
}

func (w *countingWorker) CAMBICValues(y []uint16, out *[5][]float32) (bool, error) {
	ok, err := w.OffloadWorker.(vmaf.CAMBIOffloader).CAMBICValues(y, out)
	if ok && err == nil {
		w.c.cambi.Add(1)
	}
	return ok, err
}

func (w *countingWorker) Speed(ref, dis *vmaf.Frame) (*vmaf.SpeedPictures, bool, error) {
	p, ok, err := w.speed.Speed(ref, dis)
	if ok && err == nil {
		w.c.speed.Add(1)
	}
	return p, ok, err
}

func (w *countingWorker) ADM(ref, dis []uint16) (*vmaf.ADMRows, bool, error) {
	rows, ok, err := w.OffloadWorker.ADM(ref, dis)
	if ok && err == nil {
		w.c.adm.Add(1)
	}
	return rows, ok, err
}

// TestScoreV1MatchesCPU: VMAF v1 models on the Vulkan backend give the CPU's scores:
// motion (with the HFR models' five-frame window, which hands the device the frame two
// back), ADM under v1's CSF options, SpEED chroma's per-pixel stages (with the 5d0h
// and 2160 models' bilinear prescale) and CAMBI up to its pooling run on the device,
// every frame's, as the model's OffloadSplit says.
func TestScoreV1MatchesCPU(t *testing.T) {
	k := openOrSkip(t)
	device, _ := k.Features()
	for _, p := range loadPairs(t) {
		if p.w < 216 || p.h < 216 {
			continue // below CAMBI's smallest size: v1 models refuse it
		}
		for _, model := range []string{"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160",
			"vmaf_v1.0.16_3d0h_2160", "vmaf_v1.0.16_hfr_3d0h"} {
			t.Run(p.name+"/"+model, func(t *testing.T) {
				open := func(name string) *vmaf.RawReader { return openClip(t, name, p) }
				if model == "vmaf_v1.0.16_5d0h" || model == "vmaf_v1.0.16_3d0h_2160" {
					// Their SpEED scales chroma down (by 0.6, 0.5): at least 266 and
					// 318 lines. The clips, tiled, make 336x336 frames.
					open = func(name string) *vmaf.RawReader { return tiledClip(t, name, p, 336, 336) }
				}
				m, err := vmaf.LoadModel(model)
				if err != nil {
					t.Fatal(err)
				}
				onDevice, host := m.OffloadSplit(device)
				if k.adm != nil && (!slices.Contains(onDevice, "adm") || slices.Contains(host, "adm")) {
					t.Errorf("OffloadSplit(%v) = device %v, host %v: want adm on the device", device, onDevice, host)
				}
				if k.speed != nil && (!slices.Contains(onDevice, "speed_chroma") || !slices.Contains(onDevice, "cambi") || len(host) != 0) {
					t.Errorf("OffloadSplit(%v) = device %v, host %v: want everything on the device", device, onDevice, host)
				}
				score := func(off vmaf.Offload) *vmaf.Result {
					res, err := vmaf.Score(context.Background(), open(p.ref), open(p.dist),
						vmaf.Options{Threads: 2, Offload: off, Model: model})
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				off := &countingOffload{k: k}
				cpu, gpu := score(nil), score(off)
				if k.adm != nil && off.adm.Load() != int64(len(gpu.Frames)) {
					t.Errorf("ADM of %d frame pairs on the device, want all %d", off.adm.Load(), len(gpu.Frames))
				}
				if k.speed != nil && off.speed.Load() != int64(len(gpu.Frames)) {
					t.Errorf("SpEED of %d frame pairs on the device, want all %d", off.speed.Load(), len(gpu.Frames))
				}
				if off.cambi.Load() != int64(len(gpu.Frames)) {
					t.Errorf("CAMBI of %d frames on the device, want all %d", off.cambi.Load(), len(gpu.Frames))
				}
				if diff := cmp.Diff(cpu.Frames, gpu.Frames); diff != "" {
					t.Errorf("per-frame features (-cpu +vulkan):\n%s", diff)
				}
				if diff := cmp.Diff(cpu.Pooled, gpu.Pooled); diff != "" {
					t.Errorf("pooled (-cpu +vulkan):\n%s", diff)
				}
			})
		}
	}
}

// tiledClip opens the 4:2:0 clip name of p with every frame's planes tiled
// to w x h (repeated from their top-left corner), for models whose
// features need larger frames than the testdata's.
func tiledClip(t testing.TB, name string, p pair, w, h int) *vmaf.RawReader {
	t.Helper()
	if p.pf != vmaf.YUV420P && p.pf != vmaf.YUV420P10LE {
		t.Fatalf("tiledClip of %v", p.pf)
	}
	data, err := os.ReadFile(filepath.Join("../testdata/clips", name))
	if err != nil {
		t.Fatal(err)
	}
	bps := 1
	if p.pf.BitDepth() > 8 {
		bps = 2
	}
	cw, ch, tcw, tch := (p.w+1)/2, (p.h+1)/2, (w+1)/2, (h+1)/2
	planes := [3][4]int{{p.w, p.h, w, h}, {cw, ch, tcw, tch}, {cw, ch, tcw, tch}}
	in := (p.w*p.h + 2*cw*ch) * bps
	var out []byte
	for f := 0; f+in <= len(data); f += in {
		src := data[f:]
		for _, pl := range planes {
			sw, sh, dw, dh := pl[0], pl[1], pl[2], pl[3]
			for y := range dh {
				for x := range dw {
					o := ((y%sh)*sw + x%sw) * bps
					out = append(out, src[o:o+bps]...)
				}
			}
			src = src[sw*sh*bps:]
		}
	}
	r, err := vmaf.OpenRaw(bytes.NewReader(out), w, h, p.pf)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestADMRowsV1 compares the device's ADM rows, every scale's, with the CPU
// kernel's (vmaf.ADMRowsCPU) on stress planes under each v1 viewing
// condition's CSF weights (and the defaults'), at 8, 10 and 12 bits and
// sizes down to the smallest ADM takes. The v1 rows differ from the
// defaults', so a device that ignored the config's weights would fail.
func TestADMRowsV1(t *testing.T) {
	k := openOrSkip(t)
	if k.adm == nil {
		t.Skipf("%s lacks shaderFloat64: ADM runs on the CPU", k.Info().Name)
	}
	def, err := vmaf.LoadModel("vmaf_v0.6.1")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, name := range []string{"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160",
		"vmaf_v1.0.16_3d0h_2160", "vmaf_v0.6.1"} {
		m, err := vmaf.LoadModel(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bpc := range []int{8, 10, 12} {
			for _, sz := range [][2]int{{33, 33}, {177, 145}, {321, 240}} {
				w, h := sz[0], sz[1]
				wk, err := k.NewWorker(m.OffloadConfig(w, h, bpc))
				if err != nil {
					t.Fatal(err)
				}
				for pattern, p := range stressPlanes(rng, w, h, bpc) {
					got, ok, err := wk.ADM(p[0], p[1])
					if err != nil || !ok {
						t.Fatalf("ADM: %v, ok %v", err, ok)
					}
					want := vmaf.ADMRowsCPU(p[0], p[1], w, h, bpc, m)
					where := fmt.Sprintf("%s %dx%d %d-bit %s", name, w, h, bpc, pattern)
					for sc := range 4 {
						checkRows(t, where, sc, "den", got.Den[sc], want.Den[sc])
						checkRows(t, where, sc, "num", got.Num[sc], want.Num[sc])
						checkRows(t, where, sc, "aim", got.AIM[sc], want.AIM[sc])
					}
					// The sums the device adds for Score: each scored row rounded
					// as vmaf rounds it, then added.
					fo := wk.(vmaf.FrameOffloader)
					if err := fo.Queue(&vmaf.OffloadFrame{Index: -1, Ref: p[0], Dis: p[1], PrevIndex: -1, ADM: true}); err != nil {
						t.Fatal(err)
					}
					sums, err := fo.Next()
					if err != nil || !sums.ADMOK {
						t.Fatalf("Next: %v, ADM ok %v", err, sums != nil && sums.ADMOK)
					}
					if wantSums := want.Sums(w, h); sums.ADM != *wantSums {
						t.Errorf("%s: ADM sums %+v, CPU %+v", where, sums.ADM, *wantSums)
					}
					if name != "vmaf_v0.6.1" && pattern == "noise" {
						d := vmaf.ADMRowsCPU(p[0], p[1], w, h, bpc, def)
						if slices.Equal(d.Num[0], want.Num[0]) || slices.Equal(d.Num[3], want.Num[3]) {
							t.Errorf("%s: the default options' rows, a test that cannot tell the weights apart", where)
						}
					}
				}
				wk.Close()
			}
		}
	}
}

// checkRows compares a scale's rows of one measure: the device holds scale
// 0's band height of rows at every scale, those past the scale's zero.
func checkRows[T uint64 | int64](t *testing.T, where string, scale int, measure string, got, want []T) {
	t.Helper()
	if len(got) < len(want) {
		t.Fatalf("%s scale %d %s: %d rows, want %d", where, scale, measure, len(got), len(want))
	}
	for i := range got {
		var w T
		if i < len(want) {
			w = want[i]
		}
		if got[i] != w {
			t.Errorf("%s scale %d %s: row %d band %d: %d, CPU %d", where, scale, measure, i/3, i%3, got[i], w)
			return
		}
	}
}

// TestScoreFramesInFlight checks the structure of a score on the device,
// which no timing can show on lavapipe: one goroutine queues the frames,
// a batch of them a submission, with one host wait a batch, and a few
// hundred bytes back a frame (the sums the device adds, not rows); and the
// scores are the CPU's, with subsampling (frames with motion only) too.
func TestScoreFramesInFlight(t *testing.T) {
	k := openOrSkip(t)
	const w, h = 176, 144
	refP, disP := benchPlanes(w, h, 4)
	for _, tc := range []struct{ frames, sub int }{{6, 1}, {20, 1}, {7, 3}} {
		t.Run(fmt.Sprintf("frames=%d/subsample=%d", tc.frames, tc.sub), func(t *testing.T) {
			score := func(off vmaf.Offload) *vmaf.Result {
				ref := &planeSource{w: w, h: h, planes: refP, n: tc.frames}
				dis := &planeSource{w: w, h: h, planes: disP, n: tc.frames}
				res, err := vmaf.Score(context.Background(), ref, dis, vmaf.Options{Threads: 1, Offload: off, Subsample: tc.sub})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			cpu := score(nil)
			before := k.dev.Stats()
			gpu := score(k)
			after := k.dev.Stats()
			batches := uint64((tc.frames + batchFrames(w, h) - 1) / batchFrames(w, h))
			if n := after.Submits - before.Submits; n != batches {
				t.Errorf("%d submissions for %d frames, want %d (batches of %d)", n, tc.frames, batches, batchFrames(w, h))
			}
			if n := after.Waits - before.Waits; n != batches {
				t.Errorf("%d host waits for %d frames, want %d", n, tc.frames, batches)
			}
			if n, most := after.ReadbackBytes-before.ReadbackBytes, uint64(tc.frames*resultWords*8); n > most {
				t.Errorf("%d bytes read back for %d frames, want at most %d", n, tc.frames, most)
			}
			if diff := cmp.Diff(cpu.Frames, gpu.Frames); diff != "" {
				t.Errorf("per-frame features (-cpu +vulkan):\n%s", diff)
			}
			// The next score of these frames takes the worker again: its
			// buffers and descriptor sets are made once.
			made := func() int { k.mu.Lock(); defer k.mu.Unlock(); return k.made }
			kept := made()
			if again := score(k); !cmp.Equal(again.Frames, gpu.Frames) {
				t.Error("a second score on the kept worker differs")
			}
			if n := made() - kept; n != 0 {
				t.Errorf("the second score made %d workers, want the kept one", n)
			}
		})
	}
}

// failingQueue is the Kernel with workers whose Queue fails after at
// frames, as a device lost mid-score would: the fault is injected around
// the real worker, which lavapipe cannot be made to lose.
type failingQueue struct {
	*Kernel
	at  int
	err error
}

func (f failingQueue) NewWorker(cfg vmaf.OffloadConfig) (vmaf.OffloadWorker, error) {
	wk, err := f.Kernel.NewWorker(cfg)
	if err != nil {
		return nil, err
	}
	return &failAt{FrameOffloader: wk.(vmaf.FrameOffloader), at: f.at, err: f.err}, nil
}

type failAt struct {
	vmaf.FrameOffloader
	n, at int
	err   error
}

func (w *failAt) Queue(f *vmaf.OffloadFrame) error {
	if w.n++; w.n > w.at {
		return w.err
	}
	return w.FrameOffloader.Queue(f)
}

// TestScoreQueueError: a worker that fails with frames in flight fails the
// score with its error, on one goroutine and on several, and the workers
// the kernel keeps afterwards score the next run exactly.
func TestScoreQueueError(t *testing.T) {
	k := openOrSkip(t)
	const w, h = 176, 144
	refP, disP := benchPlanes(w, h, 4)
	score := func(off vmaf.Offload, threads int) (*vmaf.Result, error) {
		ref := &planeSource{w: w, h: h, planes: refP, n: 12}
		dis := &planeSource{w: w, h: h, planes: disP, n: 12}
		return vmaf.Score(context.Background(), ref, dis, vmaf.Options{Threads: threads, Offload: off})
	}
	want := errors.New("device lost")
	for _, threads := range []int{1, 2} {
		if _, err := score(failingQueue{k, 3, want}, threads); !errors.Is(err, want) {
			t.Errorf("%d threads: Score = %v, want %v", threads, err, want)
		}
	}
	cpu, err := score(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := score(k, 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cpu.Frames, gpu.Frames); diff != "" {
		t.Errorf("after the failures, per-frame features (-cpu +vulkan):\n%s", diff)
	}
}

// TestScoreV1FramesInFlight: a v1 model's frames in flight (the kernel
// itself as the Offload, not the counting wrapper TestScoreV1MatchesCPU
// scores through, which takes a frame at a time) give the CPU's scores: the
// HFR model's five-frame window compares each frame with the one two back,
// which the worker keeps on the device, with SpEED and CAMBI in the frames'
// batches (12 frames, 2 a batch: the ring wraps); on one goroutine and on
// two.
func TestScoreV1FramesInFlight(t *testing.T) {
	k := openOrSkip(t)
	var p pair
	for _, q := range loadPairs(t) {
		if q.name == "p03" {
			p = q
		}
	}
	if p.name == "" {
		t.Fatal("no pair p03 in pairs.tsv")
	}
	for _, model := range []string{"vmaf_v1.0.16_hfr_3d0h", "vmaf_v1.0.16_3d0h"} {
		score := func(off vmaf.Offload, threads int) *vmaf.Result {
			res, err := vmaf.Score(context.Background(), openClip(t, p.ref, p), openClip(t, p.dist, p),
				vmaf.Options{Threads: threads, Offload: off, Model: model})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		cpu := score(nil, 1)
		for _, threads := range []int{1, 2} {
			if diff := cmp.Diff(cpu.Frames, score(k, threads).Frames); diff != "" {
				t.Errorf("%s, %d threads: per-frame features (-cpu +vulkan):\n%s", model, threads, diff)
			}
		}
	}
}

// TestHostBytesPerWorker: what HostBytesPerWorker counts is what a worker of
// frames above 8 bits maps for its frames in flight, and at 1080p it is the 133 MB
// a worker's memory limit must hold; a worker of 8-bit frames stages a byte a
// sample and maps about half, which HostBytesPerWorkerFor says.
func TestHostBytesPerWorker(t *testing.T) {
	k := openOrSkip(t)
	for _, sz := range [][2]int{{176, 144}, {641, 359}, {1920, 1080}} {
		w, h := sz[0], sz[1]
		for _, bpc := range []int{8, 10} {
			cfg := vmaf.OffloadConfig{Width: w, Height: h, BitDepth: bpc, VIFEnhnGainLimit: 100, ADMEnhnGainLimit: 100}
			off, err := k.NewWorker(cfg)
			if err != nil {
				t.Fatal(err)
			}
			wk := off.(*worker)
			mapped := ringBytes(wk)
			wk.Close()
			if got := k.HostBytesPerWorkerFor(cfg); got != mapped {
				t.Errorf("%dx%d %d-bit: HostBytesPerWorkerFor = %d, the worker maps %d for its frames in flight", w, h, bpc, got, mapped)
			}
			if got := HostBytesPerWorkerBound(cfg); got != mapped {
				t.Errorf("%dx%d %d-bit: HostBytesPerWorkerBound = %d, the worker maps %d for its frames in flight", w, h, bpc, got, mapped)
			}
			if got, want := FramesInFlight(w, h), off.(*worker).FramesInFlight(); got != want {
				t.Errorf("%dx%d %d-bit: FramesInFlight = %d before the open, the worker keeps %d", w, h, bpc, got, want)
			}
			bound := HostBytesPerWorker(w, h)
			if bpc > 8 && mapped != bound {
				t.Errorf("%dx%d %d-bit: HostBytesPerWorker = %d, the worker maps %d for its frames in flight", w, h, bpc, bound, mapped)
			}
			if bpc == 8 && (mapped > bound/2+bound/50 || mapped < bound/2) {
				t.Errorf("%dx%d 8-bit: the worker maps %d, want about half HostBytesPerWorker's %d", w, h, mapped, bound)
			}
		}
	}
	if got := HostBytesPerWorker(1920, 1080); got < 132_000_000 || got > 134_000_000 {
		t.Errorf("HostBytesPerWorker(1920, 1080) = %d, want about 133 MB", got)
	}
	if k.speed == nil {
		return
	}
	// A v1 model's worker maps SpEED's staging and readback and CAMBI's readback
	// besides, within the same bound, with fewer frames a batch: 5 at 1080p 4:2:0
	// 8-bit (whose chroma is staged as bytes), 4 above.
	for _, c := range []struct {
		w, h  int
		pf    vmaf.PixelFormat
		batch int
	}{{336, 352, vmaf.YUV444P12LE, 1}, {352, 320, vmaf.YUV422P10LE, 2}, {640, 360, vmaf.YUV420P, 3}, {1920, 1080, vmaf.YUV420P, 5}, {3840, 2160, vmaf.YUV420P, 1}} {
		off, err := k.NewWorker(v1Config(t, "vmaf_v1.0.16_3d0h", c.w, c.h, c.pf, vmaf.Encode{}))
		if err != nil {
			t.Fatal(err)
		}
		wk := off.(*worker)
		mapped := ringBytes(wk)
		for i := range wk.ring {
			mapped += wk.speed.stage[i].Size() + wk.speed.back[i].Size() + wk.cambi.back[i].Size()
		}
		batch := wk.batch
		wk.Close()
		if got := k.HostBytesPerWorkerFor(v1Config(t, "vmaf_v1.0.16_3d0h", c.w, c.h, c.pf, vmaf.Encode{})); got != mapped {
			t.Errorf("%dx%d %v v1: HostBytesPerWorkerFor = %d, the worker maps %d", c.w, c.h, c.pf, got, mapped)
		}
		// Before the open the bound counts SpEED on the device, as this one computes it.
		if got := HostBytesPerWorkerBound(v1Config(t, "vmaf_v1.0.16_3d0h", c.w, c.h, c.pf, vmaf.Encode{})); got < mapped {
			t.Errorf("%dx%d %v v1: HostBytesPerWorkerBound = %d, less than the worker maps, %d", c.w, c.h, c.pf, got, mapped)
		}
		// One frame a batch may pass the bound (4K): HostBytesPerWorkerFor counts it.
		if bound := HostBytesPerWorker(c.w, c.h); mapped > bound && batch > 1 {
			t.Errorf("%dx%d %v v1: the worker maps %d, more than HostBytesPerWorker's %d", c.w, c.h, c.pf, mapped, bound)
		}
		if batch != c.batch {
			t.Errorf("%dx%d %v v1: %d frames a batch, want %d", c.w, c.h, c.pf, batch, c.batch)
		}
	}
}

// TestUploadBytes: an 8-bit frame's planes cross the bus as bytes (vmaf.Narrow8
// into the staging, unpack8 on the device), half what frames above 8 bits send;
// the scores are the CPU's (TestMotionSAD, TestVIFStatistic and the pairs'
// tests at 8 bits, odd sizes among them, go through the same path).
func TestUploadBytes(t *testing.T) {
	k := openOrSkip(t)
	rng := rand.New(rand.NewPCG(5, 6))
	const w, h = 175, 143 // an odd number of samples, not whole words
	for _, bpc := range []int{8, 10} {
		wk, err := k.NewWorker(vmaf.OffloadConfig{Width: w, Height: h, BitDepth: bpc, VIFEnhnGainLimit: 100, ADMEnhnGainLimit: 100})
		if err != nil {
			t.Fatal(err)
		}
		p := stressPlanes(rng, w, h, bpc)["noise"]
		before := k.dev.Stats()
		got, ok, err := wk.VIF(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		sent := k.dev.Stats().UploadBytes - before.UploadBytes
		want := uint64(2 * w * h * 2)
		if bpc == 8 {
			want = 2 * (w*h + 3) &^ 3
		}
		if sent != want {
			t.Errorf("%d-bit: %d bytes uploaded for a frame pair, want %d", bpc, sent, want)
		}
		if want := vmaf.VIFStatistic(p[0], p[1], w, h, 0, bpc, 100); ok && got[0] != want {
			t.Errorf("%d-bit: scale 0 sums %+v, CPU %+v", bpc, got[0], want)
		}
		wk.Close()
	}
}

// TestBatchSharedByWorkers: a Score's workers share one worker's frames in
// flight (vmaf.OffloadConfig.Workers), each with batches of 1/Workers of the
// frames (at least one) and the staging for them, which HostBytesPerWorkerFor
// says; a worker of 16 at 1080p 8-bit maps about 12 MB where one alone maps 67
// (25 and 133 above 8 bits).
// A Score on several threads still scores every frame as the CPU does
// (TestScoreMatchesCPU and the rest score on 2 threads, whose workers now
// have half the batch).
func TestBatchSharedByWorkers(t *testing.T) {
	k := openOrSkip(t)
	m, err := vmaf.LoadModel(vmaf.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ workers, batch int }{{0, 8}, {1, 8}, {2, 4}, {3, 3}, {4, 2}, {5, 2}, {8, 1}, {16, 1}} {
		cfg := m.OffloadConfig(1920, 1080, 8)
		cfg.Workers = c.workers
		off, err := k.NewWorker(cfg)
		if err != nil {
			t.Fatal(err)
		}
		wk := off.(*worker)
		mapped := ringBytes(wk)
		batch, inFlight := wk.batch, wk.FramesInFlight()
		wk.Close()
		if batch != c.batch || inFlight != ringSlots*c.batch {
			t.Errorf("1080p, %d workers: %d frames a batch, %d in flight; want %d and %d", c.workers, batch, inFlight, c.batch, ringSlots*c.batch)
		}
		if got := k.HostBytesPerWorkerFor(cfg); got != mapped {
			t.Errorf("1080p, %d workers: HostBytesPerWorkerFor = %d, the worker maps %d", c.workers, got, mapped)
		}
		if c.workers == 16 && (mapped < 12_000_000 || mapped > 13_000_000) {
			t.Errorf("1080p 8-bit, 16 workers: a worker maps %d, want about 12 MB", mapped)
		}
	}
	if k.speed == nil {
		return
	}
	// A v1 model's batches (5 frames at 1080p 4:2:0 8-bit for one worker) are shared too.
	cfg := v1Config(t, "vmaf_v1.0.16_3d0h", 1920, 1080, vmaf.YUV420P, vmaf.Encode{})
	cfg.Workers = 3
	off, err := k.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b := off.(*worker).batch; b != 2 {
		t.Errorf("1080p v1, 3 workers: %d frames a batch, want 2", b)
	}
	off.Close()
}

// ringBytes is the host-visible memory wk's ring slots map: each slot's
// staging and readback.
func ringBytes(wk *worker) int64 {
	var n int64
	for i := range wk.ring {
		n += wk.ring[i].staging.Size() + wk.ring[i].back.Size()
	}
	return n
}

// TestFeaturesSideBySide: a frame's features are recorded side by side
// (phases), so the frame's barriers are its longest feature's, not the sum of
// every feature's: for vmaf_v0.6.1 at 8 bits the batch's first barrier, the
// upload's and unpack8's, ADM's 10 (the first scale's DWT, then each scale's
// decoupling with its CSF and its masking, the next scale's DWT beside them;
// 20 with the CSF a phase of its own and one scale after another) and the
// phase of its reduction, and the submission's (the features one after
// another took 42); and the scores are the CPU's. VIF's chain (8 and its
// reductions') is shorter than ADM's.
func TestFeaturesSideBySide(t *testing.T) {
	k := openOrSkip(t)
	if k.vif == nil || k.adm == nil {
		t.Skipf("%s lacks shaderFloat64: VIF and ADM run on the CPU", k.Info().Name)
	}
	const w, h = 176, 144
	rng := rand.New(rand.NewPCG(7, 8))
	p := stressPlanes(rng, w, h, 8)["noise"]
	prev := stressPlanes(rng, w, h, 8)["gain"][0]
	off, err := k.NewWorker(vmaf.OffloadConfig{Width: w, Height: h, BitDepth: 8, VIFEnhnGainLimit: 100, ADMEnhnGainLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	fo := off.(vmaf.FrameOffloader)
	before := k.dev.Stats()
	if err := fo.Queue(&vmaf.OffloadFrame{Index: 1, Ref: p[0], Dis: p[1], Prev: prev, PrevIndex: 0, VIF: true, ADM: true}); err != nil {
		t.Fatal(err)
	}
	got, err := fo.Next()
	if err != nil {
		t.Fatal(err)
	}
	if n := k.dev.Stats().Barriers - before.Barriers; n != 1+2+11+1 {
		t.Errorf("a frame of motion, VIF and ADM took %d barriers, want %d", n, 1+2+11+1)
	}
	if want := vmaf.MotionSAD(prev, p[0], w, h, 8); got.SAD != want {
		t.Errorf("SAD %d, CPU %d", got.SAD, want)
	}
	if want := vmaf.VIFStatistic(p[0], p[1], w, h, 0, 8, 100); got.VIF[0] != want {
		t.Errorf("VIF scale 0 %+v, CPU %+v", got.VIF[0], want)
	}
}

// TestClosedWithFramesPending: a worker closed while frames of its batch are
// queued and not yet submitted (the last one's commands pending, the next
// frame's uploads to go into them) drops them: the same worker, taken again
// for the next score, records no more than that score's frames (as many
// dispatches as a score after a clean close) and scores every frame as the
// CPU does, the uploads of each frame beside the frame before; at 8 and 10 bits.
func TestClosedWithFramesPending(t *testing.T) {
	k := openOrSkip(t)
	for _, bpc := range []int{8, 10} {
		t.Run(fmt.Sprintf("%d-bit", bpc), func(t *testing.T) { closedWithFramesPending(t, k, bpc) })
	}
}

func closedWithFramesPending(t *testing.T, k *Kernel, bpc int) {
	const w, h = 176, 144
	rng := rand.New(rand.NewPCG(9, 10))
	var frames [][2][]uint16
	for range 5 {
		frames = append(frames, stressPlanes(rng, w, h, bpc)["noise"])
	}
	cfg := vmaf.OffloadConfig{Width: w, Height: h, BitDepth: bpc, VIFEnhnGainLimit: 100, ADMEnhnGainLimit: 100}
	off, err := k.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fo := off.(vmaf.FrameOffloader)
	for i := range 3 {
		if err := fo.Queue(&vmaf.OffloadFrame{Index: i, Ref: frames[i][0], Dis: frames[i][1], PrevIndex: -1, VIF: true, ADM: true}); err != nil {
			t.Fatal(err)
		}
	}
	off.Close()
	made := k.made
	// score scores the frames on the worker taken again and returns the
	// dispatches it recorded.
	score := func() uint64 {
		off, err := k.NewWorker(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer off.Close()
		if k.made != made {
			t.Fatalf("a new worker was made: the closed one was not kept")
		}
		fo := off.(vmaf.FrameOffloader)
		before := k.dev.Stats().Dispatches
		for i, p := range frames {
			f := &vmaf.OffloadFrame{Index: i, Ref: p[0], Dis: p[1], PrevIndex: -1, VIF: true, ADM: true}
			if i > 0 {
				f.Prev, f.PrevIndex = frames[i-1][0], i-1
			}
			if err := fo.Queue(f); err != nil {
				t.Fatal(err)
			}
		}
		for i, p := range frames {
			got, err := fo.Next()
			if err != nil {
				t.Fatal(err)
			}
			if want := vmaf.VIFStatistic(p[0], p[1], w, h, 0, bpc, 100); got.VIF[0] != want {
				t.Errorf("frame %d: VIF scale 0 %+v, CPU %+v", i, got.VIF[0], want)
			}
			if i > 0 {
				if want := vmaf.MotionSAD(frames[i-1][0], p[0], w, h, bpc); got.SAD != want {
					t.Errorf("frame %d: SAD %d, CPU %d", i, got.SAD, want)
				}
			}
		}
		return k.dev.Stats().Dispatches - before
	}
	if dirty, clean := score(), score(); dirty != clean {
		t.Errorf("after a close with frames pending the score recorded %d dispatches, after a clean close %d", dirty, clean)
	}
}

// TestPhaseProfile: a worker's profile (BenchmarkPhases) times every stage of
// its frames, labelled with what ran, and a profiled worker's numbers are the
// CPU's; closed, the worker keeps no profile for its next user.
func TestPhaseProfile(t *testing.T) {
	k := openOrSkip(t)
	const w, h = 176, 144
	rng := rand.New(rand.NewPCG(11, 12))
	var ref, dis [][]uint16
	for range 3 {
		p := stressPlanes(rng, w, h, 8)["noise"]
		ref, dis = append(ref, p[0]), append(dis, p[1])
	}
	cfg := vmaf.OffloadConfig{Width: w, Height: h, BitDepth: 8, VIFEnhnGainLimit: 100, ADMEnhnGainLimit: 100}
	off, err := k.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wk := off.(*worker)
	prof, err := wk.profile()
	if errors.Is(err, vulkan.ErrNoTimestamps) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	const frames = 12 // more than a batch: the ring's slots both stamp
	if err := passesRun(wk, ref, dis, frames, true, true, true); err != nil {
		t.Fatal(err)
	}
	lines, perFrame := prof.report(frames)
	for _, l := range lines {
		t.Log(l)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"unpack8", "phase 00: ", "motion_blur", "vif_stat_v", "adm_dwt_v", "adm_reduce", "readback"} {
		if !strings.Contains(all, want) {
			t.Errorf("the profile has no %q:\n%s", want, all)
		}
	}
	if perFrame <= 0 {
		t.Errorf("%v µs of device time a frame, want more than 0", perFrame)
	}
	if prof.count["unpack8"] != frames {
		t.Errorf("unpack8 stamped %d times for %d frames", prof.count["unpack8"], frames)
	}
	wk.Close()
	if wk.prof != nil {
		t.Error("a closed worker kept its profile")
	}
}

// TestPlanesWhereRead: a Score's frame planes go to the device from where the
// readers put them (vmaf.OffloadConfig.Planes), with no copy on the host, at 8
// bits and above, on each of the Score's threads from one import; with the import
// off they go
// through the staging, which workers made for imported planes map only then. The
// scores are the CPU's either way: a plane the device
// read before its frame was read, or after the next frame took its slot, would
// change them.
func TestPlanesWhereRead(t *testing.T) {
	k := openOrSkip(t)
	if !k.dev.CanImportHost() {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") == "1" && k.Info().Type == "cpu" {
			t.Fatalf("%s imports no host memory; lavapipe does", k.Info().Name)
		}
		t.Skipf("%s imports no host memory", k.Info().Name)
	}
	defer func() { importPlanes = true }()
	for _, p := range loadPairs(t) {
		if p.name != "p03" && p.name != "p07" { // 8 bits, and 10
			continue
		}
		for _, imported := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/imported=%v", p.name, imported), func(t *testing.T) {
				importPlanes = imported
				score := func(off vmaf.Offload) *vmaf.Result {
					res, err := vmaf.Score(context.Background(), openClip(t, p.ref, p), openClip(t, p.dist, p),
						vmaf.Options{Threads: 2, Offload: off})
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				staged0, imports0, _ := k.HostCopies()
				gpu := score(k)
				staged, imports, refused := k.HostCopies()
				staged, imports = staged-staged0, imports-imports0
				switch {
				case imported && (staged != 0 || imports != 1 || refused != nil):
					t.Errorf("%d bytes staged, %d imports (refused: %v), want none staged and one import both threads' workers share",
						staged, imports, refused)
				case !imported && (staged == 0 || imports != 0):
					t.Errorf("import off: %d bytes staged, %d imports, want the planes staged", staged, imports)
				}
				// Workers made for imported planes map no staging until a plane
				// needs it (with the import off, the same idle workers map it then).
				k.mu.Lock()
				mapped := 0
				for _, wk := range k.idle {
					for i := range wk.ring {
						if wk.ring[i].staging != nil {
							mapped++
						}
					}
				}
				if idle := len(k.idle); idle == 0 || imported && mapped > 0 || !imported && mapped == 0 {
					t.Errorf("%d batches' staging mapped by %d idle workers, want none with the import and some without", mapped, idle)
				}
				k.mu.Unlock()
				cpu := score(nil)
				if diff := cmp.Diff(cpu.Frames, gpu.Frames); diff != "" {
					t.Errorf("per-frame features (-cpu +vulkan):\n%s", diff)
				}
			})
		}
	}
}

// TestLaterPipelines: Open returns before a v1 model's pipelines are built (here held
// until released): the other models' workers are made at once, a v1 model's wait for
// those pipelines, and Features already says where SpEED chroma runs. A pipeline the
// device cannot build there fails Ready and a v1 model's workers, naming the device,
// and leaves the other models' alone.
func TestLaterPipelines(t *testing.T) {
	release := make(chan error)
	holdLater = func() error { return <-release }
	t.Cleanup(func() { holdLater = nil })
	const w, h = 352, 320 // a 4:2:2 size SpEED chroma scores (the self-test's)
	plain := vmaf.OffloadConfig{Width: w, Height: h, BitDepth: 8, VIFEnhnGainLimit: 100, ADMEnhnGainLimit: 100}
	v1 := v1Config(t, "vmaf_v1.0.16_3d0h", w, h, vmaf.YUV422P, vmaf.Encode{})
	for _, fail := range []error{nil, errors.New("shader rejected")} {
		k, err := Open(vulkan.Config{})
		if err != nil {
			if os.Getenv("VMAFX_REQUIRE_VULKAN") != "1" && errors.Is(err, vulkan.ErrUnavailable) {
				t.Skipf("no usable Vulkan device (VMAFX_REQUIRE_VULKAN=1 fails instead): %v", err)
			}
			t.Fatal(err)
		}
		wk, err := k.NewWorker(plain)
		if err != nil {
			t.Fatalf("a vmaf_v0.6.1 worker while a v1 model's pipelines are held: %v", err)
		}
		wk.Close()
		if device, _ := k.Features(); k.Info().Float64 && !slices.Contains(device, "speed_chroma") {
			t.Errorf("Features() = %v while the pipelines are held; want speed_chroma on the device", device)
		}
		made := make(chan error, 1)
		go func() {
			wk, err := k.NewWorker(v1)
			if err == nil {
				wk.Close()
			}
			made <- err
		}()
		select {
		case err := <-made:
			t.Fatalf("a v1 worker was made (%v) before its pipelines were built", err)
		default:
		}
		release <- fail
		err = <-made
		if rerr := k.Ready(); fail == nil && (err != nil || rerr != nil) {
			t.Errorf("once built: v1 worker %v, Ready %v; want both nil", err, rerr)
		} else if fail != nil && (!errors.Is(err, fail) || !errors.Is(rerr, fail) || !strings.Contains(rerr.Error(), k.Info().Name)) {
			t.Errorf("a pipeline not built: v1 worker %v, Ready %v; want both its error, naming the device", err, rerr)
		}
		if wk, err := k.NewWorker(plain); err != nil {
			t.Errorf("a vmaf_v0.6.1 worker after the v1 pipelines (%v): %v", fail, err)
		} else {
			wk.Close()
		}
		k.Close()
	}
}
