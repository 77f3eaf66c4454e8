package vmaf

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// openAfter is a FrameSource that calls open once, when the frame at index at
// is read: the reader only gets that far once the frames a slot's length
// before it are scored.
type openAfter struct {
	FrameSource
	at, n int
	open  func()
}

func (s *openAfter) ReadFrame(f *Frame) error {
	err := s.FrameSource.ReadFrame(f)
	if err == nil {
		if s.n == s.at {
			s.open()
		}
		s.n++
	}
	return err
}

// TestScoreWhileOffloadOpens: with an Options.Opening, Score scores on the CPU until
// the Offload is open and then goes on with it: the frames are the CPU kernel's
// whichever side scored them, Result.Offloaded counts the Offload's, only
// Opening.Threads of the threads make workers, and a run that ends before the open,
// or whose open gives no Offload, scores everything on the CPU.
func TestScoreWhileOffloadOpens(t *testing.T) {
	const model = "vmaf_v1.0.16_3d0h" // the offload gives motion, SpEED and CAMBI
	p := pairNamed(t, "p03")
	m, err := LoadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	// 24 frames: the clip's 12 twice, so that frames are left to score after the open.
	ref, dist := slices.Concat(testClip(t, p.ref, 12, p), testClip(t, p.ref, 12, p)),
		slices.Concat(testClip(t, p.dist, 12, p), testClip(t, p.dist, 12, p))
	const frames = 24
	score := func(opts Options, at int, open func(*OffloadOpening)) *Result {
		t.Helper()
		opts.Model = model
		src := &openAfter{FrameSource: rawSource(t, ref, p.w, p.h, p.pf), at: at, open: func() { open(opts.Opening) }}
		res, err := Score(context.Background(), src, rawSource(t, dist, p.w, p.h, p.pf), opts)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	cpu := score(Options{Threads: 1}, -1, nil)
	if cpu.Offloaded != 0 {
		t.Fatalf("CPU run: Offloaded %d, want 0", cpu.Offloaded)
	}
	for _, threads := range []int{1, 2, 3} {
		for _, devThreads := range []int{1, 2} {
			where := fmt.Sprintf("%d threads, %d go on with the offload", threads, devThreads)
			off := &cpuFrameOffload{m: m, pf: p.pf}
			opening := &OffloadOpening{Ready: make(chan struct{}), FramesInFlight: 3}
			got := score(Options{Threads: threads, Opening: opening}, 16, func(op *OffloadOpening) {
				op.Offload, op.Threads = off, devThreads
				close(op.Ready)
			})
			if diff := cmp.Diff(cpu.Frames, got.Frames); diff != "" {
				t.Errorf("%s: per-frame features (-cpu +opening):\n%s", where, diff)
			}
			// The reader reads frame 16 once frame 16 - slots is done: at most 3 + 2 + 2
			// + 3 - 1 slots at 3 threads with the five-frame window.
			if got.Offloaded == 0 || got.Offloaded >= frames-5 {
				t.Errorf("%s: the offload scored %d of %d frames, want some but not the first 6", where, got.Offloaded, frames)
			}
			if w, want := off.workers.Load(), int64(min(devThreads, threads)); w != want {
				t.Errorf("%s: workers made with OffloadConfig.Workers %d, want %d", where, w, want)
			}
		}
	}

	// OffloadThreads: one thread with the offload, the others on the CPU beside it after
	// the open too.
	off := &cpuFrameOffload{m: m, pf: p.pf}
	opening := &OffloadOpening{Ready: make(chan struct{}), FramesInFlight: 3}
	got := score(Options{Threads: 3, OffloadThreads: 1, Opening: opening}, 4, func(op *OffloadOpening) {
		op.Offload, op.Threads = off, 3
		close(op.Ready)
	})
	if !cmp.Equal(cpu.Frames, got.Frames) || got.Offloaded == 0 || off.workers.Load() != 1 {
		t.Errorf("one thread of 3 with the offload: frames equal %v, %d offloaded, workers made with OffloadConfig.Workers %d; want the CPU's, some, 1",
			cmp.Equal(cpu.Frames, got.Frames), got.Offloaded, off.workers.Load())
	}

	// The open ends after the last frame: every frame on the CPU, and Score does not wait.
	never := &OffloadOpening{Ready: make(chan struct{})}
	if got := score(Options{Threads: 2, Opening: never}, -1, nil); got.Offloaded != 0 || !cmp.Equal(cpu.Frames, got.Frames) {
		t.Errorf("open never ends: Offloaded %d, frames equal %v; want 0 and the CPU's", got.Offloaded, cmp.Equal(cpu.Frames, got.Frames))
	}
	// Nothing opened (a backend that falls back to the CPU): every thread goes on there.
	none := &OffloadOpening{Ready: make(chan struct{})}
	got = score(Options{Threads: 2, Opening: none}, 3, func(op *OffloadOpening) { close(op.Ready) })
	if got.Offloaded != 0 || !cmp.Equal(cpu.Frames, got.Frames) {
		t.Errorf("nothing opened: Offloaded %d, frames equal %v; want 0 and the CPU's", got.Offloaded, cmp.Equal(cpu.Frames, got.Frames))
	}
}

// TestScoreOffloadOpenFails: an open that fails fails the run with its error, and
// Offload and Opening together are refused.
func TestScoreOffloadOpenFails(t *testing.T) {
	p := pairNamed(t, "p03")
	ref, dist := testClip(t, p.ref, 12, p), testClip(t, p.dist, 12, p)
	errOpen := errors.New("the device failed its self-test")
	for _, threads := range []int{1, 2} {
		op := &OffloadOpening{Ready: make(chan struct{}), Err: errOpen}
		src := &openAfter{FrameSource: rawSource(t, ref, p.w, p.h, p.pf), at: 2, open: func() { close(op.Ready) }}
		_, err := Score(context.Background(), src, rawSource(t, dist, p.w, p.h, p.pf), Options{Threads: threads, Opening: op})
		if !errors.Is(err, errOpen) {
			t.Errorf("%d threads: Score returned %v, want the open's error", threads, err)
		}
	}
	op := &OffloadOpening{Ready: make(chan struct{})}
	_, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf),
		Options{Opening: op, Offload: &cpuFrameOffload{}})
	if err == nil {
		t.Error("Offload and Opening both set: Score did not refuse")
	}
}

// TestScoreOffloadThreads: with OffloadThreads below Threads, that many threads score
// with the Offload and the others on the CPU beside them, every frame the CPU's; the
// Offload's workers know how many they are.
func TestScoreOffloadThreads(t *testing.T) {
	const model = "vmaf_v1.0.16_3d0h"
	p := pairNamed(t, "p03")
	m, err := LoadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	ref, dist := testClip(t, p.ref, 12, p), testClip(t, p.dist, 12, p)
	score := func(opts Options) *Result {
		t.Helper()
		opts.Model = model
		res, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf), opts)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	cpu := score(Options{Threads: 1})
	for _, c := range []struct{ threads, offload int }{{2, 1}, {3, 1}, {3, 2}, {2, 0}, {2, 5}} {
		off := &cpuFrameOffload{m: m, pf: p.pf}
		got := score(Options{Threads: c.threads, OffloadThreads: c.offload, Offload: off})
		where := fmt.Sprintf("%d threads, OffloadThreads %d", c.threads, c.offload)
		if diff := cmp.Diff(cpu.Frames, got.Frames); diff != "" {
			t.Errorf("%s: per-frame features (-cpu +split):\n%s", where, diff)
		}
		want := c.offload
		if want <= 0 || want >= c.threads {
			want = c.threads
		}
		if w := off.workers.Load(); w != int64(want) {
			t.Errorf("%s: workers made with OffloadConfig.Workers %d, want %d", where, w, want)
		}
		if all := want == c.threads; got.Offloaded == 0 || all != (got.Offloaded == len(got.Frames)) {
			t.Errorf("%s: the offload took part in %d of %d frames", where, got.Offloaded, len(got.Frames))
		}
	}
}
