package vkkernel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/vmaf"
)

// v1Config is the configuration Score gives a worker for w x h frames in pf under
// model with encode enc: SpEED's and CAMBI's included.
func v1Config(t testing.TB, model string, w, h int, pf vmaf.PixelFormat, enc vmaf.Encode) vmaf.OffloadConfig {
	t.Helper()
	m, err := vmaf.LoadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	if enc != (vmaf.Encode{}) {
		m = m.WithEncode(enc)
	}
	cfg := m.OffloadConfig(w, h, pf.BitDepth())
	cfg.Speed = m.SpeedConfig(w, h, pf)
	cfg.CAMBI = vmaf.CAMBIConfigCPU(w, h, pf.BitDepth(), m)
	if cfg.Speed == nil || cfg.CAMBI == nil {
		t.Fatalf("%s %dx%d %v: SpEED config %v, CAMBI config %v", model, w, h, pf, cfg.Speed != nil, cfg.CAMBI != nil)
	}
	return cfg
}

// TestScoreV1Batched: a v1 model's SpEED chroma and CAMBI go in each frame's batch
// with its motion and ADM, on one goroutine one submission and one host wait a batch,
// and what comes back is each frame's sums, SpEED pictures and c-values, nothing more;
// the scores are the CPU's, on one goroutine and on two. The cases cross batch
// boundaries and wrap the ring (frame counts that are not a multiple of the batch),
// at odd sizes, in 4:2:0, 4:2:2 and 4:4:4, at 8, 10 and 12 bits, with the HFR
// model's five-frame window, a smaller encode for CAMBI, and subsampling (frames
// with motion alone between those with SpEED and CAMBI in a batch).
func TestScoreV1Batched(t *testing.T) {
	k := openOrSkip(t)
	if k.speed == nil {
		t.Skipf("%s lacks shaderFloat64: SpEED runs on the CPU", k.Info().Name)
	}
	rng := rand.New(rand.NewPCG(71, 72))
	for _, c := range []struct {
		model  string
		pf     vmaf.PixelFormat
		w, h   int
		frames int
		enc    vmaf.Encode
		sub    int
	}{
		{"vmaf_v1.0.16_3d0h", vmaf.YUV420P, 331, 247, 7, vmaf.Encode{}, 1},
		{"vmaf_v1.0.16_hfr_3d0h", vmaf.YUV420P10LE, 320, 240, 5, vmaf.Encode{}, 1},
		{"vmaf_v1.0.16_3d0h", vmaf.YUV422P10LE, 352, 320, 5, vmaf.Encode{}, 1},
		{"vmaf_v1.0.16_5d0h", vmaf.YUV444P12LE, 336, 352, 3, vmaf.Encode{}, 1},
		{"vmaf_v1.0.16_3d0h", vmaf.YUV420P, 448, 336, 5, vmaf.Encode{Width: 320, Height: 240}, 1},
		{"vmaf_v1.0.16_3d0h", vmaf.YUV420P, 320, 240, 7, vmaf.Encode{}, 3},
	} {
		where := fmt.Sprintf("%s %v %dx%d, %d frames, encode %+v, subsample %d", c.model, c.pf, c.w, c.h, c.frames, c.enc, c.sub)
		var ref, dis []*vmaf.Frame
		patterns := []string{"waves", "noise", "steps"}
		for i := range c.frames {
			r, d := speedFrame(rng, c.w, c.h, c.pf, "waves"), speedFrame(rng, c.w, c.h, c.pf, patterns[i%len(patterns)])
			// Banded distorted luma, so that CAMBI's c-values are not all 0; the
			// references' waves differ frame to frame, for motion.
			d.Y = cambiPlane(rng, c.w, c.h, c.pf.BitDepth(), "gradient")
			ref, dis = append(ref, r), append(dis, d)
		}
		score := func(off vmaf.Offload, threads int) *vmaf.Result {
			t.Helper()
			res, err := vmaf.Score(context.Background(), &frameSource{frames: ref, pf: c.pf}, &frameSource{frames: dis, pf: c.pf},
				vmaf.Options{Threads: threads, Offload: off, Model: c.model, Encode: c.enc, Subsample: c.sub})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		cpu := score(nil, 1)
		cfg := v1Config(t, c.model, c.w, c.h, c.pf, c.enc)
		batch := batchFor(c.w, c.h, k.extraFrameBytes(cfg))
		before := k.dev.Stats()
		gpu := score(k, 1)
		after := k.dev.Stats()
		batches := uint64((c.frames + batch - 1) / batch)
		if n := after.Submits - before.Submits; n != batches {
			t.Errorf("%s: %d submissions, want %d (batches of %d)", where, n, batches, batch)
		}
		if n := after.Waits - before.Waits; n != batches {
			t.Errorf("%s: %d host waits, want %d", where, n, batches)
		}
		// Every frame's sums; SpEED's pictures and CAMBI's c-values of the scored ones.
		full := int64(len(cpu.Frames))
		perFull := speedBackBytes(cfg.Speed) + int64(4*cambiOutN(cfg.CAMBI))
		if n, want := after.ReadbackBytes-before.ReadbackBytes, uint64(int64(c.frames)*resultWords*8+full*perFull); n != want {
			t.Errorf("%s: %d bytes read back, want %d (%d a frame and %d a scored one)", where, n, want, resultWords*8, perFull)
		}
		if diff := cmp.Diff(cpu.Frames, gpu.Frames); diff != "" {
			t.Errorf("%s: per-frame features (-cpu +vulkan):\n%s", where, diff)
		}
		if diff := cmp.Diff(cpu.Pooled, gpu.Pooled); diff != "" {
			t.Errorf("%s: pooled (-cpu +vulkan):\n%s", where, diff)
		}
		banded := false
		for _, f := range gpu.Frames {
			banded = banded || f.ModelCAMBI > 0
		}
		if !banded {
			t.Errorf("%s: CAMBI 0 on every frame: a comparison that cannot tell", where)
		}
		moving := false
		for _, f := range cpu.Frames {
			moving = moving || f.MotionSAD > 0
		}
		if !moving {
			t.Errorf("%s: motion 0 on every frame: a comparison that cannot tell", where)
		}
		// On two goroutines a worker uploads previous references another scored:
		// three planes a frame, more than a one-frame batch's two.
		if diff := cmp.Diff(cpu.Frames, score(k, 2).Frames); diff != "" {
			t.Errorf("%s, 2 threads: per-frame features (-cpu +vulkan):\n%s", where, diff)
		}
	}
}

// TestV1OneFrameMethods: a worker closed with a batch recorded and never submitted,
// the one that would have uploaded SpEED's and CAMBI's tables, is kept, and its next
// batch uploads them: its one-frame SpEED and CAMBI methods give the CPU's numbers.
// Those methods refuse to run while frames are queued (Next would hand them another
// frame's results) and run again once the frames are taken.
func TestV1OneFrameMethods(t *testing.T) {
	k := openOrSkip(t)
	if k.speed == nil {
		t.Skipf("%s lacks shaderFloat64: SpEED runs on the CPU", k.Info().Name)
	}
	const w, h = 322, 242 // a size no other test keeps a worker of
	pf := vmaf.YUV420P
	m, err := vmaf.LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		t.Fatal(err)
	}
	cfg := v1Config(t, "vmaf_v1.0.16_3d0h", w, h, pf, vmaf.Encode{})
	rng := rand.New(rand.NewPCG(73, 74))
	ref, dis := speedFrame(rng, w, h, pf, "waves"), speedFrame(rng, w, h, pf, "noise")
	dis.Y = cambiPlane(rng, w, h, 8, "gradient")
	wantSpeed, err := vmaf.SpeedPicturesCPU(ref, dis, pf, m)
	if err != nil {
		t.Fatal(err)
	}
	wantCV := vmaf.CAMBICValuesCPU(dis.Y, w, h, 8, m)
	bits := cmp.Comparer(func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) })
	check := func(wk *worker, where string) {
		t.Helper()
		got, ok, err := wk.Speed(ref, dis)
		if err != nil || !ok {
			t.Fatalf("%s: Speed: %v, ok %v", where, err, ok)
		}
		checkSpeedPictures(t, where, got, wantSpeed)
		var cv [5][]float32
		if ok, err := wk.CAMBICValues(dis.Y, &cv); err != nil || !ok {
			t.Fatalf("%s: CAMBICValues: %v, ok %v", where, err, ok)
		}
		if !cmp.Equal(cv, *wantCV, bits) {
			t.Errorf("%s: c-values differ from the CPU's", where)
		}
	}
	frame := &vmaf.OffloadFrame{Index: 0, Ref: ref.Y, Dis: dis.Y, PrevIndex: -1, ADM: true, CAMBI: true, SpeedRef: ref, SpeedDis: dis}

	off, err := k.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wk := off.(*worker)
	if !wk.speed.tabPending || !wk.cambi.tabPending {
		t.Fatal("a new worker's SpEED and CAMBI tables are not waiting for its first batch")
	}
	if err := wk.Queue(frame); err != nil {
		t.Fatal(err)
	}
	wk.Close() // the batch with the tables' upload is never submitted
	made := func() int { k.mu.Lock(); defer k.mu.Unlock(); return k.made }
	kept := made()
	if off, err = k.NewWorker(cfg); err != nil {
		t.Fatal(err)
	}
	wk = off.(*worker)
	defer wk.Close()
	if n := made() - kept; n != 0 {
		t.Errorf("%d workers made, want the kept one", n)
	}
	check(wk, "after an abandoned batch")

	if err := wk.Queue(frame); err != nil {
		t.Fatal(err)
	}
	if _, _, err := wk.Speed(ref, dis); err == nil {
		t.Error("Speed with a frame queued succeeded")
	}
	var cv [5][]float32
	if _, err := wk.CAMBICValues(dis.Y, &cv); err == nil {
		t.Error("CAMBICValues with a frame queued succeeded")
	}
	sums, err := wk.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !sums.SpeedOK || !sums.CAMBIOK || !sums.ADMOK {
		t.Fatalf("Next: SpEED ok %v, CAMBI ok %v, ADM ok %v, want all", sums.SpeedOK, sums.CAMBIOK, sums.ADMOK)
	}
	checkSpeedPictures(t, "queued", sums.Speed, wantSpeed)
	if !cmp.Equal(sums.CAMBI, *wantCV, bits) {
		t.Error("queued: c-values differ from the CPU's")
	}
	check(wk, "after Next")
}
