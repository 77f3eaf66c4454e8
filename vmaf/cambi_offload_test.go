package vmaf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// cambiCPUOffload computes c-values with a CPU CAMBI state of its own (what
// a correct device returns), replays recorded ones, or fails with err; it
// counts its calls.
type cambiCPUOffload struct {
	s      *cambiState
	replay *[5][]float32
	err    error
	calls  int
}

func (o *cambiCPUOffload) CAMBICValues(y []uint16, out *[5][]float32) (bool, error) {
	o.calls++
	switch {
	case o.err != nil:
		return false, o.err
	case o.replay != nil:
		*out = *o.replay
	default:
		o.s.scales(y, func(scale int, c []float32) { out[scale] = append(out[scale][:0], c...) })
	}
	return true, nil
}

// cambiTestPlane is a noisy gradient, bands of one 8-bit code.
func cambiTestPlane(w, h int) []uint16 {
	r := rand.New(rand.NewPCG(7, 7))
	y := make([]uint16, w*h)
	for i := range y {
		y[i] = uint16(64 + i%w/40 + r.IntN(2))
	}
	return y
}

// TestCAMBIOffload: a CAMBI state that takes every scale's c-values from an
// Offload scores what it scores alone, and a failing Offload's error is
// kept for the frame.
func TestCAMBIOffload(t *testing.T) {
	m, err := LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 300, 240
	y := cambiTestPlane(w, h)
	want := newCAMBIState(w, h, 8, *m.cambi).compute(y)
	s := newCAMBIState(w, h, 8, *m.cambi)
	off := &cambiCPUOffload{s: newCAMBIState(w, h, 8, *m.cambi)}
	s.off = off
	if got := s.compute(y); got != want || s.offErr != nil || off.calls != 1 {
		t.Errorf("with the Offload: %v (err %v, %d calls), alone %v", got, s.offErr, off.calls, want)
	}
	if want == 0 {
		t.Error("CAMBI 0: a test that cannot tell")
	}
	var short [5][]float32
	s = newCAMBIState(w, h, 8, *m.cambi)
	s.off = &cambiCPUOffload{replay: &short}
	s.compute(y)
	if s.offErr == nil {
		t.Error("an Offload's missing c-values were pooled")
	}
	fail := errors.New("device lost")
	s = newCAMBIState(w, h, 8, *m.cambi)
	s.off = &cambiCPUOffload{err: fail}
	s.compute(y)
	if !errors.Is(s.offErr, fail) {
		t.Errorf("offErr %v, want %v", s.offErr, fail)
	}
}

// TestCAMBIConfigScales: the scale sizes the configuration gives are those of
// the c-values the CPU makes, with and without the speed-up and an encode size.
func TestCAMBIConfigScales(t *testing.T) {
	m, err := LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		w, h int
		enc  Encode
	}{{300, 240, Encode{}}, {1920, 1080, Encode{}}, {640, 480, Encode{Width: 333, Height: 250}}} {
		o := m.cambi.withEncode(c.enc)
		s := newCAMBIState(c.w, c.h, 8, o)
		cfg := s.offloadConfig()
		sizes := cfg.CAMBIScales()
		s.scales(cambiTestPlane(c.w, c.h), func(scale int, cv []float32) {
			if n := sizes[scale][0] * sizes[scale][1]; n != len(cv) {
				t.Errorf("%dx%d encode %+v scale %d: %v, the CPU's c-values %d", c.w, c.h, c.enc, scale, sizes[scale], len(cv))
			}
		})
		if len(cfg.Rows) != cfg.Height || len(cfg.Cols) != cfg.Width {
			t.Errorf("%dx%d encode %+v: %d rows and %d columns for %dx%d", c.w, c.h, c.enc, len(cfg.Rows), len(cfg.Cols), cfg.Width, cfg.Height)
		}
	}
}

// BenchmarkCAMBISplit measures CAMBI under vmaf_v1.0.16_3d0h's options: all of it on
// the CPU (cpu), and what stays on the CPU when an Offload computes the c-values of
// every scale (host-part: the pooling; the c-values replayed at no cost).
func BenchmarkCAMBISplit(b *testing.B) {
	m, err := LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		b.Fatal(err)
	}
	for _, sz := range [][2]int{{1920, 1080}, {3840, 2160}} {
		w, h := sz[0], sz[1]
		y := cambiTestPlane(w, h)
		rec := new([5][]float32)
		newCAMBIState(w, h, 8, *m.cambi).scales(y, func(scale int, c []float32) { rec[scale] = append([]float32(nil), c...) })
		b.Run(fmt.Sprintf("%dx%d/cpu", w, h), func(b *testing.B) {
			s := newCAMBIState(w, h, 8, *m.cambi)
			for b.Loop() {
				s.compute(y)
			}
		})
		b.Run(fmt.Sprintf("%dx%d/host-part", w, h), func(b *testing.B) {
			s := newCAMBIState(w, h, 8, *m.cambi)
			s.off = &cambiCPUOffload{replay: rec}
			for b.Loop() {
				s.compute(y)
			}
		})
	}
}
