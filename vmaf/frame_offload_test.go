package vmaf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// errOneFrame is what cpuFrameWorker's one-frame methods return: with frames in
// flight, Score must take everything through Queue and Next.
var errOneFrame = errors.New("a one-frame method called on a worker with frames in flight")

// cpuFrameOffload is a FrameOffload whose workers compute on the CPU what a device
// hands back through Queue and Next: motion's SAD, SpEED chroma's pictures and CAMBI's
// c-values (VIF and ADM stay with Score), each frame's at Queue, handed out in order,
// a few frames in flight. With leave it leaves SpEED and CAMBI to the CPU (ok false);
// with corrupt it adds 1 to every c-value, as a wrong device would.
type cpuFrameOffload struct {
	m              *Model
	pf             PixelFormat
	leave, corrupt bool
	// depth, when not 0, is what the workers' FramesInFlight() says they hold,
	// fewer than the offload's FramesInFlight.
	depth int
	// flight is the offload's FramesInFlight; 0 means 3.
	flight int
	// most is the most frames a worker held queued.
	most atomic.Int64
	// asked counts the frames Queue was asked SpEED and CAMBI of.
	speed, cambi atomic.Int64
	// workers is the OffloadConfig.Workers a worker was last made with.
	workers atomic.Int64
	// packed counts the bytes of reference planes Queue was given as bytes
	// (OffloadFrame.Ref8): Score reads 8-bit frames Packed for a FrameOffload.
	packed atomic.Int64
	// motion counts the frames queued with motion, and away those whose previous
	// frame was not the one their worker queued last: a device would upload its plane.
	motion, away atomic.Int64
}

// samples16 is a plane Queue was given in either form, as 16-bit samples, widened
// into buf where it came as bytes.
func samples16(buf *[]uint16, y []uint16, y8 []byte) []uint16 {
	if y8 == nil {
		return y
	}
	*buf = toSamples(*buf, y8, len(y8), 8)
	return *buf
}

func (o *cpuFrameOffload) FramesInFlight(w, h int) int {
	if o.flight > 0 {
		return o.flight
	}
	return 3
}

func (o *cpuFrameOffload) NewWorker(cfg OffloadConfig) (OffloadWorker, error) {
	o.workers.Store(int64(cfg.Workers))
	w := &cpuFrameWorker{o: o, cfg: cfg, last: -1}
	if o.depth > 0 {
		return shallowWorker{w}, nil
	}
	return w, nil
}

// shallowWorker is a cpuFrameWorker that says it holds fewer frames than its
// offload's FramesInFlight.
type shallowWorker struct{ *cpuFrameWorker }

func (w shallowWorker) FramesInFlight() int { return w.o.depth }

type cpuFrameWorker struct {
	o     *cpuFrameOffload
	cfg   OffloadConfig
	queue []*OffloadSums
	// planes hold the planes Queue was given as bytes, widened.
	planes [3][]uint16
	last   int // the Index of the frame queued last
}

func (w *cpuFrameWorker) MotionSAD(prev, cur []uint16) (uint64, error) { return 0, errOneFrame }

func (w *cpuFrameWorker) VIF(ref, dis []uint16) ([4]VIFSums, bool, error) {
	return [4]VIFSums{}, false, errOneFrame
}

func (w *cpuFrameWorker) ADM(ref, dis []uint16) (*ADMRows, bool, error) {
	return nil, false, errOneFrame
}

func (w *cpuFrameWorker) Speed(ref, dis *Frame) (*SpeedPictures, bool, error) {
	return nil, false, errOneFrame
}

func (w *cpuFrameWorker) CAMBICValues(y []uint16, out *[5][]float32) (bool, error) {
	return false, errOneFrame
}

func (w *cpuFrameWorker) Close() {}

func (w *cpuFrameWorker) Queue(f *OffloadFrame) error {
	c := w.cfg
	s := new(OffloadSums)
	if f.Motion() {
		w.o.motion.Add(1)
		if f.PrevIndex != w.last {
			w.o.away.Add(1)
		}
		s.SAD = MotionSAD(samples16(&w.planes[0], f.Prev, f.Prev8), samples16(&w.planes[1], f.Ref, f.Ref8), c.Width, c.Height, c.BitDepth)
		w.o.packed.Add(int64(len(f.Ref8)))
	}
	if f.SpeedRef != nil {
		w.o.speed.Add(1)
		if !w.o.leave {
			p, err := SpeedPicturesCPU(f.SpeedRef, f.SpeedDis, w.o.pf, w.o.m)
			if err != nil {
				return err
			}
			s.Speed, s.SpeedOK = p, true
		}
	}
	if f.CAMBI {
		w.o.cambi.Add(1)
		dis := samples16(&w.planes[2], f.Dis, f.Dis8)
		if len(dis) < c.Width*c.Height {
			return fmt.Errorf("CAMBI asked without the distorted plane")
		}
		if !w.o.leave {
			cv := CAMBICValuesCPU(dis, c.Width, c.Height, c.BitDepth, w.o.m)
			if w.o.corrupt {
				for _, c := range cv {
					for i := range c {
						c[i]++
					}
				}
			}
			s.CAMBI, s.CAMBIOK = *cv, true
		}
	}
	w.last = f.Index
	w.queue = append(w.queue, s)
	for {
		most := w.o.most.Load()
		if int64(len(w.queue)) <= most || w.o.most.CompareAndSwap(most, int64(len(w.queue))) {
			break
		}
	}
	return nil
}

func (w *cpuFrameWorker) Next() (*OffloadSums, error) {
	if len(w.queue) == 0 {
		return nil, errors.New("no frame queued for Next")
	}
	s := w.queue[0]
	w.queue = w.queue[1:]
	return s, nil
}

// TestScoreFrameOffloadV1: a FrameOffloader's SpEED pictures and CAMBI c-values come
// with each frame's sums (Queue asks them of the full frames only, with the distorted
// plane), Score uses them and never the one-frame methods, the scores are the CPU's on
// one goroutine and on two, frames it leaves to the CPU are scored there, and wrong
// c-values change the score (the sums are used, not recomputed).
func TestScoreFrameOffloadV1(t *testing.T) {
	const model = "vmaf_v1.0.16_3d0h"
	p := pairNamed(t, "p03") // 320x240 4:2:0, 12 frames
	m, err := LoadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	ref, dist := testClip(t, p.ref, 7, p), testClip(t, p.dist, 7, p)
	score := func(off Offload, threads, sub int) *Result {
		t.Helper()
		res, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf),
			Options{Model: model, Threads: threads, Offload: off, Subsample: sub})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, sub := range []int{1, 3} {
		cpu := score(nil, 1, sub)
		full := len(cpu.Frames) // the frames SpEED and CAMBI score
		for _, threads := range []int{1, 2} {
			for _, leave := range []bool{false, true} {
				where := fmt.Sprintf("subsample %d, %d threads, leave %v", sub, threads, leave)
				off := &cpuFrameOffload{m: m, pf: p.pf, leave: leave}
				got := score(off, threads, sub)
				if off.speed.Load() != int64(full) || off.cambi.Load() != int64(full) {
					t.Errorf("%s: SpEED asked of %d frames and CAMBI of %d, want %d", where, off.speed.Load(), off.cambi.Load(), full)
				}
				if diff := cmp.Diff(cpu.Frames, got.Frames); diff != "" {
					t.Errorf("%s: per-frame features (-cpu +offload):\n%s", where, diff)
				}
				// The 8-bit frames reach the worker as the bytes read: none
				// is widened on the host only to be narrowed for a device.
				if got := off.packed.Load(); got == 0 {
					t.Errorf("%s: no reference plane reached Queue as bytes", where)
				}
				// Each worker knows how many share the frames in flight.
				if w := off.workers.Load(); w != int64(threads) {
					t.Errorf("%s: workers made with OffloadConfig.Workers %d, want %d", where, w, threads)
				}
			}
		}
	}
	if cpu, bad := score(nil, 1, 1), score(&cpuFrameOffload{m: m, pf: p.pf, corrupt: true}, 1, 1); cmp.Equal(cpu.Frames, bad.Frames) {
		t.Error("wrong c-values gave the CPU's scores: the offload's c-values are not what Score pools")
	}
}

// TestScoreFrameOffloadDepth: Score keeps as many frames queued on a worker as its
// FrameOffload says, or as the worker's own FramesInFlight says when it holds fewer
// (a v1 model's vkkernel worker), on one goroutine, which holds them all.
func TestScoreFrameOffloadDepth(t *testing.T) {
	const model = "vmaf_v1.0.16_3d0h"
	p := pairNamed(t, "p03")
	m, err := LoadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	ref, dist := testClip(t, p.ref, 7, p), testClip(t, p.dist, 7, p)
	for _, depth := range []int{0, 2} {
		off := &cpuFrameOffload{m: m, pf: p.pf, depth: depth}
		_, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf),
			Options{Model: model, Threads: 1, Offload: off})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(3)
		if depth > 0 {
			want = int64(depth)
		}
		if got := off.most.Load(); got != want {
			t.Errorf("worker depth %d: at most %d frames queued, want %d", depth, got, want)
		}
	}
}

// TestScoreFrameOffloadRuns: with several threads on a FrameOffload's device, a job is a
// run of frameRun consecutive frames, so that a frame's motion finds its previous
// frame on its own worker (a device keeps the reference it queued last) but for a
// run's first: at most one frame in frameRun stages its previous frame's plane, where
// nearly every frame did when threads took a frame a job. The scores are the CPU's.
func TestScoreFrameOffloadRuns(t *testing.T) {
	const model = "vmaf_v0.6.1"
	p := pairNamed(t, "p01")
	m, err := LoadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	var ref, dist []byte
	for range 6 { // 42 frames
		ref, dist = append(ref, testClip(t, p.ref, 7, p)...), append(dist, testClip(t, p.dist, 7, p)...)
	}
	frames := 6 * 7
	want, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf),
		Options{Model: model, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{2, 4} {
		off := &cpuFrameOffload{m: m, pf: p.pf, flight: 8}
		got, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf),
			Options{Model: model, Threads: threads, Offload: off})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Frames, got.Frames); diff != "" {
			t.Errorf("%d threads: frames differ from the CPU's (-want +got):\n%s", threads, diff)
		}
		runs := (frames + frameRun - 1) / frameRun
		if n, away := off.motion.Load(), off.away.Load(); n != int64(frames-1) || away > int64(runs) {
			t.Errorf("%d threads: %d of %d frames with motion queued away from their previous frame, want at most %d (one a run)",
				threads, away, n, runs)
		}
	}
}

// planesWorker is a cpuFrameWorker that checks what OffloadConfig.Planes promises a
// device: each queued plane lies in the block, and holds the same samples from Queue
// until Next has returned its frame's sums, the previous frame's plane too.
type planesWorker struct {
	*cpuFrameWorker
	t      *testing.T
	held   []heldPlanes // queued frames', oldest first
	inside *atomic.Int64
}

type heldPlanes struct {
	index  int
	planes [][]byte // the planes as Queue saw them (bytes, or samples' bytes)
	was    [][]byte // their content then
}

type planesOffload struct {
	cpuFrameOffload
	t      *testing.T
	inside atomic.Int64 // planes queued inside the block
}

func (o *planesOffload) NewWorker(cfg OffloadConfig) (OffloadWorker, error) {
	if len(cfg.Planes) == 0 || uintptr(unsafe.Pointer(&cfg.Planes[0]))%planesAlign != 0 || len(cfg.Planes)%planesAlign != 0 {
		o.t.Errorf("OffloadConfig.Planes: %d bytes, want a block at a multiple of %d, a multiple of it long", len(cfg.Planes), planesAlign)
	}
	w, _ := o.cpuFrameOffload.NewWorker(cfg)
	return &planesWorker{cpuFrameWorker: w.(*cpuFrameWorker), t: o.t, inside: &o.inside}, nil
}

func (w *planesWorker) Queue(f *OffloadFrame) error {
	h := heldPlanes{index: f.Index}
	for _, p := range [][]byte{f.Ref8, f.Dis8, f.Prev8, asBytes(f.Ref), asBytes(f.Dis), asBytes(f.Prev)} {
		if len(p) == 0 {
			continue
		}
		base := uintptr(unsafe.Pointer(&w.cfg.Planes[0]))
		at := uintptr(unsafe.Pointer(&p[0]))
		if at < base || at-base+uintptr(len(p)) > uintptr(len(w.cfg.Planes)) || (at-base)%planeAlign != 0 {
			w.t.Errorf("frame %d: a plane of %d bytes outside the block or not at a page", f.Index, len(p))
		} else {
			w.inside.Add(1)
		}
		h.planes, h.was = append(h.planes, p), append(h.was, bytes.Clone(p))
	}
	w.held = append(w.held, h)
	return w.cpuFrameWorker.Queue(f)
}

func (w *planesWorker) Next() (*OffloadSums, error) {
	h := w.held[0]
	w.held = w.held[1:]
	// Another goroutine reading the next frames meanwhile must not touch these.
	time.Sleep(time.Millisecond)
	for i, p := range h.planes {
		if !bytes.Equal(p, h.was[i]) {
			w.t.Errorf("frame %d: a plane changed between Queue and Next", h.index)
		}
	}
	return w.cpuFrameWorker.Next()
}

func asBytes(y []uint16) []byte {
	if len(y) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&y[0])), 2*len(y))
}

// TestScoreFramePlanes: where a FrameOffload scores the frames, the readers put every
// luma plane in one block (OffloadConfig.Planes) and leave a queued frame's planes, and
// its previous frame's, unchanged until Next has returned its sums: what a device that
// copies the planes from there needs. At 8 bits and 10, on 1 thread and 3, with more
// frames than slots; the scores are the CPU's.
func TestScoreFramePlanes(t *testing.T) {
	const model = "vmaf_v0.6.1"
	m, err := LoadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"p01", "p07"} {
		p := pairNamed(t, name)
		var ref, dist []byte
		for range 4 {
			ref, dist = append(ref, testClip(t, p.ref, 6, p)...), append(dist, testClip(t, p.dist, 6, p)...)
		}
		want, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf),
			Options{Model: model, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 3} {
			off := &planesOffload{cpuFrameOffload: cpuFrameOffload{m: m, pf: p.pf, flight: 4}, t: t}
			got, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf),
				Options{Model: model, Threads: threads, Offload: off})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Frames, got.Frames); diff != "" {
				t.Errorf("%s, %d threads: frames differ from the CPU's (-want +got):\n%s", name, threads, diff)
			}
			// 24 frames, each queued with its two planes, the 23 after the first with
			// their previous frame's.
			if n := off.inside.Load(); n != 2*24+23 {
				t.Errorf("%s, %d threads: %d planes queued inside the block, want %d", name, threads, n, 2*24+23)
			}
		}
	}
}
