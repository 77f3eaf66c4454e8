package vkkernel

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/vmaf"
)

// speedModel is vmaf_v1.0.16_5d0h with its SpEED prescale and method
// replaced (prescale 1 drops both: no rescale).
func speedModel(t testing.TB, prescale float64, method string) *vmaf.Model {
	t.Helper()
	data, err := os.ReadFile("../models/vmaf_v1.0.16_5d0h.json")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	old := `"speed_prescale": 0.6,
                "speed_prescale_method": "bilinear",`
	if !strings.Contains(s, old) {
		t.Fatal("vmaf_v1.0.16_5d0h.json: no speed_prescale to replace")
	}
	repl := fmt.Sprintf(`"speed_prescale": %v, "speed_prescale_method": %q,`, prescale, method)
	if prescale == 1 {
		repl = ""
	}
	m, err := vmaf.ParseModel([]byte(strings.Replace(s, old, repl, 1)), "speed_test")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// speedFrame is a w x h frame in pf with chroma of the named pattern:
// smooth waves under noise, noise alone, full-scale steps, or flat (whose
// covariance matrix is singular).
func speedFrame(r *rand.Rand, w, h int, pf vmaf.PixelFormat, pattern string) *vmaf.Frame {
	cw, ch := w, h
	switch name := pf.String(); {
	case strings.HasPrefix(name, "yuv420"):
		cw, ch = (w+1)/2, (h+1)/2
	case strings.HasPrefix(name, "yuv422"):
		cw = (w + 1) / 2
	}
	f := &vmaf.Frame{Width: w, Height: h, BitDepth: pf.BitDepth(), Chroma: true, ChromaWidth: cw, ChromaHeight: ch,
		Y: make([]uint16, w*h), U: make([]uint16, cw*ch), V: make([]uint16, cw*ch)}
	maxV := 1<<pf.BitDepth() - 1
	fx, fy := 0.02+0.3*r.Float64(), 0.02+0.3*r.Float64()
	for _, p := range [][]uint16{f.Y, f.U, f.V} {
		pw := w
		if len(p) != w*h {
			pw = f.ChromaWidth
		}
		for i := range p {
			x, y := float64(i%pw), float64(i/pw)
			var v float64
			switch pattern {
			case "waves":
				v = 0.5 + 0.4*math.Sin(fx*x)*math.Cos(fy*y) + 0.1*(r.Float64()-0.5)
			case "noise":
				v = r.Float64()
			case "steps":
				v = float64((i/pw/7 + i%pw/5) % 2)
			default: // flat
				v = 0.3
			}
			p[i] = uint16(min(max(v, 0), 1) * float64(maxV))
		}
	}
	return f
}

// checkSpeedPictures compares the device's pictures with the CPU's, bit for
// bit.
func checkSpeedPictures(t *testing.T, where string, got, want *vmaf.SpeedPictures) {
	t.Helper()
	for p := range want.Img {
		if len(got.Img[p]) != len(want.Img[p]) || len(got.Cov[p]) != len(want.Cov[p]) {
			t.Fatalf("%s picture %d: %d samples and %d sums, CPU %d and %d", where, p,
				len(got.Img[p]), len(got.Cov[p]), len(want.Img[p]), len(want.Cov[p]))
		}
		for i, v := range want.Img[p] {
			if math.Float32bits(got.Img[p][i]) != math.Float32bits(v) {
				t.Errorf("%s picture %d: sample %d: %v, CPU %v", where, p, i, got.Img[p][i], v)
				return
			}
		}
		for i, v := range want.Cov[p] {
			if math.Float64bits(got.Cov[p][i]) != math.Float64bits(v) {
				t.Errorf("%s picture %d: covariance sum %d: %v, CPU %v", where, p, i, got.Cov[p][i], v)
				return
			}
		}
	}
}

// speedDevice runs one frame pair's SpEED stages on a fresh worker.
func speedDevice(t testing.TB, k *Kernel, m *vmaf.Model, ref, dis *vmaf.Frame, pf vmaf.PixelFormat) *vmaf.SpeedPictures {
	t.Helper()
	cfg := m.OffloadConfig(ref.Width, ref.Height, pf.BitDepth())
	cfg.Speed = m.SpeedConfig(ref.Width, ref.Height, pf)
	if cfg.Speed == nil {
		t.Fatalf("%dx%d %v: no SpEED configuration", ref.Width, ref.Height, pf)
	}
	wk, err := k.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer wk.Close()
	got, ok, err := wk.(*worker).Speed(ref, dis)
	if err != nil || !ok {
		t.Fatalf("Speed: %v, ok %v", err, ok)
	}
	return got
}

// speedMethods are the rescales the tests cover, with a prescale each:
// none, and every speed_prescale_method, down and up.
var speedMethods = []struct {
	prescale float64
	method   string
}{{1, ""}, {0.6, "bilinear"}, {0.5, "bilinear"}, {1.5, "nearest"}, {0.7, "bicubic"}, {1.3, "lanczos4"}}

// TestSpeedPictures compares the device's SpEED pictures (decimated,
// mean-subtracted images and covariance sums) with the CPU's on synthetic
// frames: every chroma format and bit depth SpEED takes, every rescale
// method, sizes at and above the smallest, and patterns from smooth to
// flat.
func TestSpeedPictures(t *testing.T) {
	k := openOrSkip(t)
	if k.speed == nil {
		t.Skipf("%s lacks shaderFloat64: SpEED runs on the CPU", k.Info().Name)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	formats := []vmaf.PixelFormat{vmaf.YUV420P, vmaf.YUV422P10LE, vmaf.YUV444P12LE, vmaf.YUV420P12LE}
	for i, sm := range speedMethods {
		m := speedModel(t, sm.prescale, sm.method)
		for j, pf := range formats {
			if (i+j)%2 == 1 && sm.prescale != 1 {
				continue // each method under two formats keeps lavapipe's time down
			}
			mw, mh := 161, 161
			if sm.prescale < 1 {
				mw, mh = int(math.Ceil(161/sm.prescale)), int(math.Ceil(161/sm.prescale))
			}
			switch pf {
			case vmaf.YUV444P12LE:
				mw, mh = (mw+1)/2, (mh+1)/2
			case vmaf.YUV422P10LE:
				mh = (mh + 1) / 2
			}
			for _, pattern := range []string{"waves", "noise", "steps", "flat"} {
				w, h := mw+rng.IntN(9), mh+rng.IntN(9)
				ref, dis := speedFrame(rng, w, h, pf, pattern), speedFrame(rng, w, h, pf, "waves")
				want, err := vmaf.SpeedPicturesCPU(ref, dis, pf, m)
				if err != nil {
					t.Fatal(err)
				}
				where := fmt.Sprintf("%s %v %dx%d %v %s", sm.method, sm.prescale, w, h, pf, pattern)
				checkSpeedPictures(t, where, speedDevice(t, k, m, ref, dis, pf), want)
			}
		}
	}
}

// FuzzSpeedPictures: random sizes, formats, rescales and patterns give the
// CPU's SpEED pictures on the device, bit for bit.
func FuzzSpeedPictures(f *testing.F) {
	f.Add(uint64(1), uint16(0), uint16(0), uint8(0), uint8(0), uint8(0))
	f.Add(uint64(2), uint16(77), uint16(13), uint8(1), uint8(1), uint8(1))
	f.Add(uint64(3), uint16(5), uint16(91), uint8(2), uint8(2), uint8(2))
	f.Add(uint64(4), uint16(40), uint16(40), uint8(3), uint8(4), uint8(3))
	f.Add(uint64(5), uint16(120), uint16(3), uint8(0), uint8(5), uint8(0))
	k := openOrSkip(f)
	formats := []vmaf.PixelFormat{vmaf.YUV420P, vmaf.YUV422P10LE, vmaf.YUV444P, vmaf.YUV420P10LE}
	patterns := []string{"waves", "noise", "steps", "flat"}
	models := map[int]*vmaf.Model{}
	f.Fuzz(func(t *testing.T, seed uint64, dw, dh uint16, fi, mi, pi uint8) {
		if k.speed == nil {
			t.Skipf("%s lacks shaderFloat64: SpEED runs on the CPU", k.Info().Name)
		}
		sm := speedMethods[int(mi)%len(speedMethods)]
		m := models[int(mi)%len(speedMethods)]
		if m == nil {
			m = speedModel(t, sm.prescale, sm.method)
			models[int(mi)%len(speedMethods)] = m
		}
		pf := formats[int(fi)%len(formats)]
		// Sizes from the smallest SpEED takes under the prescale, up to 128 more.
		w, h := 160+int(dw%129), 160+int(dh%129)
		if sm.prescale < 1 {
			w, h = int(math.Ceil(160/sm.prescale))+int(dw%129), int(math.Ceil(160/sm.prescale))+int(dh%129)
		}
		if m.SpeedConfig(w, h, pf) == nil {
			t.Fatalf("%dx%d %v: no SpEED configuration", w, h, pf)
		}
		rng := rand.New(rand.NewPCG(seed, 23))
		ref := speedFrame(rng, w, h, pf, patterns[int(pi)%len(patterns)])
		dis := speedFrame(rng, w, h, pf, "waves")
		want, err := vmaf.SpeedPicturesCPU(ref, dis, pf, m)
		if err != nil {
			t.Fatal(err)
		}
		where := fmt.Sprintf("%s %v %dx%d %v", sm.method, sm.prescale, w, h, pf)
		checkSpeedPictures(t, where, speedDevice(t, k, m, ref, dis, pf), want)
	})
}

// TestSpeedOtherFrames: frames whose chroma planes are not the
// configuration's stay on the CPU (ok false), not misread.
func TestSpeedOtherFrames(t *testing.T) {
	k := openOrSkip(t)
	if k.speed == nil {
		t.Skipf("%s lacks shaderFloat64: SpEED runs on the CPU", k.Info().Name)
	}
	m := speedModel(t, 1, "")
	cfg := m.OffloadConfig(176, 176, 8)
	cfg.Speed = m.SpeedConfig(176, 176, vmaf.YUV420P)
	wk, err := k.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer wk.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	ref := speedFrame(rng, 176, 176, vmaf.YUV420P, "waves")
	for name, dis := range map[string]*vmaf.Frame{
		"4:4:4":  speedFrame(rng, 176, 176, vmaf.YUV444P, "waves"),
		"10-bit": speedFrame(rng, 176, 176, vmaf.YUV420P10LE, "waves"),
	} {
		if _, ok, err := wk.(*worker).Speed(ref, dis); ok || err != nil {
			t.Errorf("%s: ok %v, err %v: want the CPU to score it", name, ok, err)
		}
	}
}

// frameSource serves whole frames (luma and chroma) in a format.
type frameSource struct {
	frames []*vmaf.Frame
	pf     vmaf.PixelFormat
	pos    int
}

func (s *frameSource) Info() vmaf.VideoInfo {
	return vmaf.VideoInfo{Width: s.frames[0].Width, Height: s.frames[0].Height, Format: s.pf}
}

func (s *frameSource) ReadFrame(f *vmaf.Frame) error {
	if s.pos >= len(s.frames) {
		return io.EOF
	}
	src := s.frames[s.pos]
	s.pos++
	f.Width, f.Height, f.BitDepth = src.Width, src.Height, src.BitDepth
	f.Y = append(f.Y[:0], src.Y...)
	f.ChromaWidth, f.ChromaHeight = 0, 0
	f.U, f.V = f.U[:0], f.V[:0]
	if f.Chroma {
		f.ChromaWidth, f.ChromaHeight = src.ChromaWidth, src.ChromaHeight
		f.U, f.V = append(f.U, src.U...), append(f.V, src.V...)
	}
	return nil
}

// TestScoreV1FormatsMatchCPU scores VMAF v1 on synthetic 4:2:2 and 4:4:4 frames at 10
// and 12 bits (the clips are 4:2:0), one of them with flat distorted chroma (a singular
// covariance: SpEED scores 0 and the model's chroma correction takes over), with SpEED
// on the device: every frame's features and the pooled scores are the CPU's.
func TestScoreV1FormatsMatchCPU(t *testing.T) {
	k := openOrSkip(t)
	if k.speed == nil {
		t.Skipf("%s lacks shaderFloat64: SpEED runs on the CPU", k.Info().Name)
	}
	rng := rand.New(rand.NewPCG(31, 32))
	for _, c := range []struct {
		model string
		pf    vmaf.PixelFormat
		w, h  int
	}{
		// Sizes whose decimated chroma holds enough 5x5 blocks for a regular covariance.
		{"vmaf_v1.0.16_3d0h", vmaf.YUV422P10LE, 352, 320},
		{"vmaf_v1.0.16_5d0h", vmaf.YUV444P12LE, 336, 352},
		{"vmaf_v1.0.16_3d0h", vmaf.YUV420P12LE, 480, 352},
	} {
		var ref, dis []*vmaf.Frame
		for _, pattern := range []string{"waves", "noise", "flat"} {
			ref = append(ref, speedFrame(rng, c.w, c.h, c.pf, "waves"))
			dis = append(dis, speedFrame(rng, c.w, c.h, c.pf, pattern))
		}
		score := func(off vmaf.Offload) *vmaf.Result {
			res, err := vmaf.Score(context.Background(), &frameSource{frames: ref, pf: c.pf}, &frameSource{frames: dis, pf: c.pf},
				vmaf.Options{Threads: 2, Offload: off, Model: c.model})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		off := &countingOffload{k: k}
		cpu, gpu := score(nil), score(off)
		where := fmt.Sprintf("%s %v %dx%d", c.model, c.pf, c.w, c.h)
		if off.speed.Load() != int64(len(ref)) {
			t.Errorf("%s: SpEED of %d frame pairs on the device, want %d", where, off.speed.Load(), len(ref))
		}
		if diff := cmp.Diff(cpu.Frames, gpu.Frames); diff != "" {
			t.Errorf("%s: per-frame features (-cpu +vulkan):\n%s", where, diff)
		}
		if diff := cmp.Diff(cpu.Pooled, gpu.Pooled); diff != "" {
			t.Errorf("%s: pooled (-cpu +vulkan):\n%s", where, diff)
		}
		// The frames test what they claim: SpEED measures the first two, and the flat
		// one's singular covariance gives 0.
		if f := gpu.Frames; len(f) != 3 || f[0].SpeedUV <= 0 || f[1].SpeedUV <= 0 || f[2].SpeedUV != 0 {
			t.Errorf("%s: speed_chroma_uv per frame %v, want two positive and a 0", where, speedUVs(f))
		}
	}
}

func speedUVs(f []vmaf.FrameScore) []float64 {
	var out []float64
	for _, s := range f {
		out = append(out, s.SpeedUV)
	}
	return out
}

// BenchmarkScoreV1 scores vmaf_v1.0.16_3d0h on synthetic 4:2:0 frames on the CPU and on
// the device (motion, ADM, SpEED chroma and CAMBI there, in each frame's batch), 4
// frames a call on one thread, with the device's submits/frame, waits/frame and
// readback-B/frame; BenchmarkSpeed times SpEED's device side alone (upload, five
// passes, readback), a frame a submission. On lavapipe their speed says nothing of a
// GPU's (the counts hold); they are here for the GPU runs (docs/benchmarks.md).
func BenchmarkScoreV1(b *testing.B) {
	k := openOrSkip(b)
	const frames = 4
	for _, sz := range [][2]int{{1920, 1080}, {3840, 2160}} {
		rng := rand.New(rand.NewPCG(41, 42))
		var ref, dis []*vmaf.Frame
		for range frames {
			ref = append(ref, speedFrame(rng, sz[0], sz[1], vmaf.YUV420P, "waves"))
			dis = append(dis, speedFrame(rng, sz[0], sz[1], vmaf.YUV420P, "waves"))
		}
		for _, backend := range []string{"cpu", "vulkan"} {
			b.Run(fmt.Sprintf("%dx%d/%s", sz[0], sz[1], backend), func(b *testing.B) {
				var off vmaf.Offload
				if backend == "vulkan" {
					off = k
				}
				before := take(k)
				for b.Loop() {
					_, err := vmaf.Score(context.Background(), &frameSource{frames: ref, pf: vmaf.YUV420P},
						&frameSource{frames: dis, pf: vmaf.YUV420P}, vmaf.Options{Threads: 1, Offload: off, Model: "vmaf_v1.0.16_3d0h"})
					if err != nil {
						b.Fatal(err)
					}
				}
				n := float64(b.N * frames)
				b.ReportMetric(n/b.Elapsed().Seconds(), "frames/s")
				if off != nil {
					reportStructure(b, k, before, n)
				}
			})
		}
	}
}

func BenchmarkSpeed(b *testing.B) {
	k := openOrSkip(b)
	if k.speed == nil {
		b.Skipf("%s lacks shaderFloat64: SpEED runs on the CPU", k.Info().Name)
	}
	m, err := vmaf.LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		b.Fatal(err)
	}
	for _, sz := range [][2]int{{1920, 1080}, {3840, 2160}} {
		rng := rand.New(rand.NewPCG(43, 44))
		ref, dis := speedFrame(rng, sz[0], sz[1], vmaf.YUV420P, "waves"), speedFrame(rng, sz[0], sz[1], vmaf.YUV420P, "waves")
		cfg := m.OffloadConfig(sz[0], sz[1], 8)
		cfg.Speed = m.SpeedConfig(sz[0], sz[1], vmaf.YUV420P)
		wk, err := k.NewWorker(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			for b.Loop() {
				if _, ok, err := wk.(*worker).Speed(ref, dis); err != nil || !ok {
					b.Fatalf("Speed: %v, ok %v", err, ok)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
		wk.Close()
	}
}
