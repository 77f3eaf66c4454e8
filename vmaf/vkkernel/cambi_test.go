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

// cambiPlane is a w x h luma plane of depth bpc: a slow gradient quantised
// coarsely enough to band (what CAMBI looks for), noise, or flat.
func cambiPlane(r *rand.Rand, w, h, bpc int, pattern string) []uint16 {
	p := make([]uint16, w*h)
	maxV := 1<<bpc - 1
	step := 1 // bands of two codes: 8-bit ones, else 10-bit ones
	if bpc > 8 {
		step = 1 << (bpc - 10)
	}
	for i := range p {
		x, y := float64(i%w)/float64(w), float64(i/w)/float64(h)
		var v int
		switch pattern {
		case "gradient":
			v = int((0.2+0.3*x+0.1*y)*float64(maxV)) / (2 * step) * (2 * step)
		case "gradient8", "edge": // bands of two 8-bit codes at any depth
			s8 := 2 << (bpc - 8)
			v = int((0.2+0.3*x+0.1*y)*float64(maxV)) / s8 * s8
			if pattern == "edge" && i%w >= w-2 {
				v += (i / w % 2) * s8 // alternating rows at the right edge: the edge rules matter
			}
		case "noise":
			v = r.IntN(maxV + 1)
		default:
			v = maxV / 3
		}
		p[i] = uint16(min(max(v, 0), maxV))
	}
	return p
}

// TestCAMBICValues compares the device's c-values, every scale's, with the CPU's, bit
// for bit, under VMAF v1's CAMBI options: 8, 10 and 12 bits (the 8-bit ones
// anti-dithered), sizes from CAMBI's smallest up, odd ones, 1920x1080 (where v1 halves
// the picture first), smaller encodes, banded gradients, noise and a flat plane.
func TestCAMBICValues(t *testing.T) {
	k := openOrSkip(t)
	v1, err := vmaf.LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(61, 62))
	for _, c := range []struct {
		w, h, bpc int
		enc       vmaf.Encode
	}{
		{216, 216, 8, vmaf.Encode{}}, {331, 247, 10, vmaf.Encode{}}, {260, 300, 12, vmaf.Encode{}},
		{1920, 1080, 8, vmaf.Encode{}}, {500, 400, 10, vmaf.Encode{Width: 333, Height: 251, BitDepth: 8}},
	} {
		m := v1
		if c.enc != (vmaf.Encode{}) {
			m = v1.WithEncode(c.enc)
		}
		banded := 0 // nonzero c-values of the gradients
		for _, pattern := range []string{"gradient", "gradient8", "edge", "noise", "flat"} {
			if c.w == 1920 && pattern != "gradient" {
				continue // lavapipe's time
			}
			y := cambiPlane(rng, c.w, c.h, c.bpc, pattern)
			want := vmaf.CAMBICValuesCPU(y, c.w, c.h, c.bpc, m)
			cfg := m.OffloadConfig(c.w, c.h, c.bpc)
			cfg.CAMBI = vmaf.CAMBIConfigCPU(c.w, c.h, c.bpc, m)
			wk, err := k.NewWorker(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got [5][]float32
			ok, err := wk.(vmaf.CAMBIOffloader).CAMBICValues(y, &got)
			wk.Close()
			if err != nil || !ok {
				t.Fatalf("CAMBICValues: %v, ok %v", err, ok)
			}
			where := fmt.Sprintf("%dx%d %d-bit encode %+v %s", c.w, c.h, c.bpc, c.enc, pattern)
			for scale := range want {
				if len(got[scale]) != len(want[scale]) {
					t.Fatalf("%s scale %d: %d c-values, CPU %d", where, scale, len(got[scale]), len(want[scale]))
				}
				for i := range want[scale] {
					if math.Float32bits(got[scale][i]) != math.Float32bits(want[scale][i]) {
						t.Fatalf("%s scale %d: c-value %d: %v, CPU %v", where, scale, i, got[scale][i], want[scale][i])
					}
					if want[scale][i] != 0 && pattern != "noise" {
						banded++
					}
				}
			}
		}
		if banded == 0 {
			t.Errorf("%dx%d %d-bit encode %+v: every gradient's c-values 0: a comparison that cannot tell them apart", c.w, c.h, c.bpc, c.enc)
		}
	}
}

// TestScoreCAMBIMatchesCPU scores banded gradients under VMAF v1 with CAMBI on the
// device, with and without the encode's size and depth (a smaller
// encode, an 8-bit encode of 10-bit input): every frame's features are the CPU's.
func TestScoreCAMBIMatchesCPU(t *testing.T) {
	k := openOrSkip(t)
	rng := rand.New(rand.NewPCG(63, 64))
	for _, c := range []struct {
		w, h int
		pf   vmaf.PixelFormat
		enc  vmaf.Encode
	}{
		{352, 320, vmaf.YUV420P, vmaf.Encode{}},
		{352, 320, vmaf.YUV420P10LE, vmaf.Encode{BitDepth: 8}},
		{448, 336, vmaf.YUV420P, vmaf.Encode{Width: 320, Height: 240}},
	} {
		var ref, dis []*vmaf.Frame
		grad := "gradient"
		if c.enc.BitDepth == 8 {
			grad = "gradient8"
		}
		for _, pattern := range []string{grad, "noise", grad} {
			r, d := speedFrame(rng, c.w, c.h, c.pf, "waves"), speedFrame(rng, c.w, c.h, c.pf, "waves")
			r.Y = cambiPlane(rng, c.w, c.h, c.pf.BitDepth(), grad)
			d.Y = cambiPlane(rng, c.w, c.h, c.pf.BitDepth(), pattern)
			ref, dis = append(ref, r), append(dis, d)
		}
		score := func(off vmaf.Offload) *vmaf.Result {
			res, err := vmaf.Score(context.Background(), &frameSource{frames: ref, pf: c.pf}, &frameSource{frames: dis, pf: c.pf},
				vmaf.Options{Threads: 2, Offload: off, Model: "vmaf_v1.0.16_3d0h", Encode: c.enc})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		off := &countingOffload{k: k}
		cpu, gpu := score(nil), score(off)
		where := fmt.Sprintf("%dx%d %v encode %+v", c.w, c.h, c.pf, c.enc)
		if off.cambi.Load() != int64(len(ref)) {
			t.Errorf("%s: CAMBI of %d frames on the device, want %d", where, off.cambi.Load(), len(ref))
		}
		if diff := cmp.Diff(cpu.Frames, gpu.Frames); diff != "" {
			t.Errorf("%s: per-frame features (-cpu +vulkan):\n%s", where, diff)
		}
		if gpu.Frames[0].ModelCAMBI == 0 {
			t.Errorf("%s: CAMBI 0 on a banded gradient: a comparison that cannot tell", where)
		}
	}
}
