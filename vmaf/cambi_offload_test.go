package vmaf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// cambiCPUOffload computes c-values with a CPU CAMBI state of its own (what
// a correct device returns), or fails with err; it counts its calls.
type cambiCPUOffload struct {
	s     *cambiState
	err   error
	calls int
}

func (o *cambiCPUOffload) CAMBICValues(band []int16, w, h int, out []float32) (bool, error) {
	o.calls++
	if o.err != nil {
		return false, o.err
	}
	o.s.cValuesFromBand(band, w, h, out)
	return true, nil
}

// TestCAMBIOffload: a CAMBI state that hands every scale's band to an
// Offload and takes its c-values back scores what it scores alone, and a
// failing Offload's error is kept for the frame.
func TestCAMBIOffload(t *testing.T) {
	m, err := LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 300, 240
	r := rand.New(rand.NewPCG(7, 7))
	y := make([]uint16, w*h)
	for i := range y {
		y[i] = uint16(64 + i%w/40 + r.IntN(2))
	}
	want := newCAMBIState(w, h, 8, *m.cambi).compute(y)
	s := newCAMBIState(w, h, 8, *m.cambi)
	off := &cambiCPUOffload{s: newCAMBIState(w, h, 8, *m.cambi)}
	s.off = off
	if got := s.compute(y); got != want || s.offErr != nil || off.calls != cambiNumScales {
		t.Errorf("with the Offload: %v (err %v, %d calls), alone %v", got, s.offErr, off.calls, want)
	}
	if want == 0 {
		t.Error("CAMBI 0: a test that cannot tell")
	}
	fail := errors.New("device lost")
	s = newCAMBIState(w, h, 8, *m.cambi)
	s.off = &cambiCPUOffload{err: fail}
	s.compute(y)
	if !errors.Is(s.offErr, fail) {
		t.Errorf("offErr %v, want %v", s.offErr, fail)
	}
}

// cambiReplay returns recorded c-values, scale after scale: the device's side
// at no cost, for timing what stays on the CPU.
type cambiReplay struct {
	scales [][]float32
	next   int
}

func (o *cambiReplay) CAMBICValues(band []int16, w, h int, out []float32) (bool, error) {
	copy(out, o.scales[o.next%len(o.scales)])
	o.next++
	return true, nil
}

// BenchmarkCAMBISplit measures CAMBI under vmaf_v1.0.16_3d0h's options: all of it on
// the CPU (cpu), and what stays on the CPU when an Offload computes the c-values
// (host-part: conversion, mask, decimation, mode filter, band, pooling).
func BenchmarkCAMBISplit(b *testing.B) {
	m, err := LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		b.Fatal(err)
	}
	for _, sz := range [][2]int{{1920, 1080}, {3840, 2160}} {
		w, h := sz[0], sz[1]
		r := rand.New(rand.NewPCG(8, 8))
		y := make([]uint16, w*h)
		for i := range y {
			y[i] = uint16(64 + i%w/40 + r.IntN(2))
		}
		rec := &cambiReplay{}
		s := newCAMBIState(w, h, 8, *m.cambi)
		s.off = &recorder{s: newCAMBIState(w, h, 8, *m.cambi), rec: rec}
		s.compute(y)
		b.Run(fmt.Sprintf("%dx%d/cpu", w, h), func(b *testing.B) {
			s := newCAMBIState(w, h, 8, *m.cambi)
			for b.Loop() {
				s.compute(y)
			}
		})
		b.Run(fmt.Sprintf("%dx%d/host-part", w, h), func(b *testing.B) {
			s := newCAMBIState(w, h, 8, *m.cambi)
			s.off = rec
			for b.Loop() {
				s.compute(y)
			}
		})
	}
}

// recorder computes c-values on the CPU and records them into rec.
type recorder struct {
	s   *cambiState
	rec *cambiReplay
}

func (o *recorder) CAMBICValues(band []int16, w, h int, out []float32) (bool, error) {
	o.s.cValuesFromBand(band, w, h, out)
	o.rec.scales = append(o.rec.scales, append([]float32(nil), out[:w*h]...))
	return true, nil
}
