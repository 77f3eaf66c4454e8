package vmaf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestY4MEndToEnd wraps a 10-bit reference pair in Y4M and checks the scores
// equal those of the raw input.
func TestY4MEndToEnd(t *testing.T) {
	var p refPair
	for _, q := range loadPairs(t) {
		if q.pf == YUV420P10LE {
			p = q
		}
	}
	const frames = 3
	toY4M := func(raw []byte) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420p10 XYSCSS=420P10\n", p.w, p.h)
		fb := p.pf.FrameBytes(p.w, p.h)
		for i := 0; i < frames; i++ {
			b.WriteString("FRAME\n")
			b.Write(raw[i*fb : (i+1)*fb])
		}
		return b.Bytes()
	}
	refRaw, distRaw := testClip(t, p.ref, frames, p), testClip(t, p.dist, frames, p)
	ry, err := OpenY4M(bytes.NewReader(toY4M(refRaw)))
	if err != nil {
		t.Fatal(err)
	}
	dy, err := OpenY4M(bytes.NewReader(toY4M(distRaw)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Score(context.Background(), ry, dy, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Score(context.Background(), rawSource(t, refRaw, p.w, p.h, p.pf), rawSource(t, distRaw, p.w, p.h, p.pf), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Frames {
		if got.Frames[i] != want.Frames[i] {
			t.Errorf("frame %d:\n got %+v\nwant %+v", i, got.Frames[i], want.Frames[i])
		}
	}
}

// TestWorkerNoAllocs checks that scoring a frame in steady state allocates
// nothing: all scratch lives in the worker and the slots.
func TestWorkerNoAllocs(t *testing.T) {
	const w, h = 96, 64
	ref, dist := synthPair(w, h, 2)
	prev := &slot{ref: Frame{Width: w, Height: h, BitDepth: 8, Y: ref[0]}}
	s := &slot{ref: Frame{Width: w, Height: h, BitDepth: 8, Y: ref[1]}, dist: Frame{Width: w, Height: h, BitDepth: 8, Y: dist[1]}, prev: prev, full: true}
	for _, c := range []CPU{CPUGeneric, CPUAVX2, CPUAVX512} {
		if !c.Supported() {
			t.Logf("this processor has no %v; not checked", c)
			continue
		}
		wk := &worker{k: kernelsFor(c), vif: newVIFState(w, h, defaultEnhnGainLimit).with(kernelsFor(c)), adm: newADMState(w, h, defaultADMOptions()).with(kernelsFor(c)), row: make([]int64, w)}
		defer wk.closeWalk()
		if n := testing.AllocsPerRun(5, func() { _ = wk.process(s, w, h, 8) }); n != 0 {
			t.Fatalf("process on the %v path allocates %v times per frame", c, n)
		}
	}
	// The same with every extra feature, at a size all of them accept.
	const ew, eh = 232, 184
	info := VideoInfo{Width: ew, Height: eh, Format: YUV420P}
	cfg, err := newExtraConfig(AllFeatures, info, info, defaultCAMBIOptions())
	if err != nil {
		t.Fatal(err)
	}
	eref, edist := synthPair(ew, eh, 2)
	ewk := &worker{k: kernelsFor(CPUGeneric), vif: newVIFState(ew, eh, defaultEnhnGainLimit), adm: newADMState(ew, eh, defaultADMOptions()),
		row: make([]int64, ew), extra: cfg.newState(ew, eh, 8, kernelsFor(CPUGeneric))}
	defer ewk.closeWalk()
	chroma := func(p []uint16) []uint16 { return p[:(ew/2)*(eh/2)] }
	frame := func(p []uint16) Frame {
		return Frame{Width: ew, Height: eh, BitDepth: 8, Y: p, Chroma: true, ChromaWidth: ew / 2, ChromaHeight: eh / 2, U: chroma(p), V: chroma(p)}
	}
	es := &slot{ref: frame(eref[1]), dist: frame(edist[1]), prev: &slot{ref: frame(eref[0])}, full: true}
	if n := testing.AllocsPerRun(3, func() { _ = ewk.process(es, ew, eh, 8) }); n != 0 {
		t.Fatalf("process with every extra feature allocates %v times per frame", n)
	}
	if es.score.MSSSIM == 0 || es.score.PSNRCr == 0 {
		t.Fatalf("extra features not computed: %+v", es.score)
	}
	var f Frame
	data := bytes.Repeat(rawFrame(w, h, YUV420P, func(i int) uint16 { return uint16(i) }), 8)
	raw, err := OpenRaw(bytes.NewReader(data), w, h, YUV420P)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.ReadFrame(&f); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(5, func() { _ = raw.ReadFrame(&f) }); n != 0 {
		t.Fatalf("RawReader.ReadFrame allocates %v times per frame", n)
	}
	f.Chroma = true
	if err := raw.ReadFrame(&f); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(5, func() { _ = raw.ReadFrame(&f) }); n != 0 || len(f.U) == 0 {
		t.Fatalf("RawReader.ReadFrame with chroma allocates %v times per frame", n)
	}
}

// TestScoreSizes runs the smallest and odd frame sizes at every bit depth
// to check no kernel indexes outside its buffers: VMAF with PSNR and SSIM
// at the smallest sizes, and all extra features from the sizes MS-SSIM and
// CAMBI accept (1001x180 gives CAMBI a window taller than its coarsest
// scale, where libvmaf's loops overrun).
func TestScoreSizes(t *testing.T) {
	small := []Feature{FeaturePSNR, FeatureSSIM}
	for _, sz := range []struct {
		w, h     int
		features []Feature
	}{
		{33, 33, small}, {33, 47, small}, {47, 33, small}, {65, 37, small}, {129, 34, small},
		{217, 177, AllFeatures}, {177, 217, AllFeatures}, {1001, 180, AllFeatures},
	} {
		for _, pf := range []PixelFormat{YUV420P, YUV420P10LE, YUV444P12LE} {
			t.Run(fmt.Sprintf("%dx%d/%v", sz.w, sz.h, pf), func(t *testing.T) {
				w, h := sz.w, sz.h
				refP, distP := synthPair(w, h, 3)
				shift := uint(pf.BitDepth() - 8)
				for _, planes := range [][][]uint16{refP, distP} {
					for _, p := range planes {
						for i := range p {
							p[i] <<= shift
						}
					}
				}
				info := VideoInfo{Width: w, Height: h, Format: pf}
				res, err := Score(context.Background(), &memSource{info: info, planes: refP, n: 3},
					&memSource{info: info, planes: distP, n: 3}, Options{Threads: 2, Features: sz.features})
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range res.Frames {
					if !(f.VMAF >= 0 && f.VMAF <= 100) || f.ADM2 <= 0 || f.VIF[0] <= 0 {
						t.Fatalf("implausible frame %+v", f)
					}
					if !(f.PSNRY > 10 && f.PSNRCb > 10 && f.SSIM > 0.5 && f.SSIM < 1) || f.MSSSIM < 0 || f.MSSSIM > 1 || f.CAMBI < 0 {
						t.Fatalf("implausible extra features %+v", f)
					}
				}
			})
		}
	}
}

// meeting is a FrameSource whose every read waits until the other side's
// read of the same frame has begun: it completes only when the two sides are
// read at once.
type meeting struct {
	FrameSource
	here, there chan struct{}
}

func (m *meeting) ReadFrame(f *Frame) error {
	m.here <- struct{}{}
	select {
	case <-m.there:
	case <-time.After(10 * time.Second):
		return errors.New("the other side was not read at the same time")
	}
	return m.FrameSource.ReadFrame(f)
}

// TestScoreReadsBothSidesAtOnce checks that Score reads the reference and the
// distorted side at the same time (readDistorted), at every thread count and
// with frames skipped at the start, and that the scores are those of reading
// them in turn.
func TestScoreReadsBothSidesAtOnce(t *testing.T) {
	const w, h, n = 176, 144, 5
	refB, distB := synthClip(w, h, YUV420P, n)
	open := func() (FrameSource, FrameSource) {
		r, _ := OpenRaw(bytes.NewReader(refB), w, h, YUV420P)
		d, _ := OpenRaw(bytes.NewReader(distB), w, h, YUV420P)
		return r, d
	}
	for _, opts := range []Options{{Threads: 1}, {Threads: 3}, {Threads: 2, Start: 2}} {
		r, d := open()
		want, err := Score(context.Background(), r, d, opts)
		if err != nil {
			t.Fatal(err)
		}
		r, d = open()
		a, b := make(chan struct{}, 1), make(chan struct{}, 1)
		got, err := Score(context.Background(), &meeting{r, a, b}, &meeting{d, b, a}, opts)
		if err != nil {
			t.Fatalf("threads %d, start %d: %v", opts.Threads, opts.Start, err)
		}
		if len(got.Frames) != n-opts.Start {
			t.Fatalf("threads %d, start %d: %d frames, want %d", opts.Threads, opts.Start, len(got.Frames), n-opts.Start)
		}
		for i, f := range got.Frames {
			if f != want.Frames[i] {
				t.Errorf("threads %d, start %d: frame %d: %+v, want %+v", opts.Threads, opts.Start, f.Index, f, want.Frames[i])
			}
		}
	}
}

// readCount counts a source's frames, notes where the first frame's luma
// lives (the slot it was read into) and closes reached once at frames are read.
type readCount struct {
	FrameSource
	n       atomic.Int64
	first   atomic.Pointer[uint16]
	at      int64
	reached chan struct{}
}

func (c *readCount) ReadFrame(f *Frame) error {
	err := c.FrameSource.ReadFrame(f)
	if err == nil {
		n := c.n.Add(1)
		if n == 1 {
			c.first.Store(&f.Y[0])
		}
		if n == c.at {
			close(c.reached)
		}
	}
	return err
}

// straggler is an Offload that computes nothing (the CPU does it all) but holds
// the first frame's VIF until the reference has been read up to ref.at.
type straggler struct {
	ref  *readCount
	held atomic.Bool
}

func (o *straggler) NewWorker(cfg OffloadConfig) (OffloadWorker, error) {
	return stragglerWorker{o, cfg}, nil
}

type stragglerWorker struct {
	o   *straggler
	cfg OffloadConfig
}

func (w stragglerWorker) MotionSAD(prev, cur []uint16) (uint64, error) {
	return MotionSAD(prev, cur, w.cfg.Width, w.cfg.Height, w.cfg.BitDepth), nil
}

func (w stragglerWorker) VIF(ref, dis []uint16) ([4]VIFSums, bool, error) {
	if &ref[0] == w.o.ref.first.Load() && w.o.held.CompareAndSwap(false, true) {
		select {
		case <-w.o.ref.reached:
		case <-time.After(10 * time.Second):
			return [4]VIFSums{}, false, fmt.Errorf("frame 0 held: the reader stopped at frame %d", w.o.ref.n.Load())
		}
	}
	return [4]VIFSums{}, false, nil
}

func (w stragglerWorker) ADM(ref, dis []uint16) (*ADMRows, bool, error) { return nil, false, nil }

func (w stragglerWorker) Close() {}

// TestSlowFrameHoldsOnlyItsSlots holds the first frame's scoring until the
// reader is 24 frames further, far more than Score's frame slots: the other
// threads must go on scoring (a slot goes back when its frame and the one
// whose motion reads it are done, not when every frame before it is), and the
// scores must be those of a run where no frame waits.
func TestSlowFrameHoldsOnlyItsSlots(t *testing.T) {
	const w, h, frames = 176, 144, 40
	refP, distP := synthPair(w, h, 4)
	info := VideoInfo{Width: w, Height: h, Format: YUV420P}
	// One frame's motion reads the frame before, or two before with the
	// five-frame window: the slot waits for that frame too.
	five := motionOptions{blendFactor: 1, blendOffset: 40, fpsWeight: 1, fiveFrame: true}
	for _, mo := range []*motionOptions{nil, &five} {
		want, err := Score(context.Background(), &memSource{info: info, planes: refP, n: frames},
			&memSource{info: info, planes: distP, n: frames}, Options{Threads: 3, motion: mo})
		if err != nil {
			t.Fatal(err)
		}
		ref := &readCount{FrameSource: &memSource{info: info, planes: refP, n: frames}, at: 24, reached: make(chan struct{})}
		slow := &straggler{ref: ref}
		opts := Options{Threads: 3, motion: mo, Offload: slow}
		got, err := Score(context.Background(), ref, &memSource{info: info, planes: distP, n: frames}, opts)
		if err != nil {
			t.Fatalf("five-frame window %v: %v", mo != nil, err)
		}
		if !slow.held.Load() {
			t.Fatalf("five-frame window %v: the first frame was not held", mo != nil)
		}
		if diff := cmp.Diff(want.Frames, got.Frames); diff != "" {
			t.Errorf("five-frame window %v: frames differ from a run where none waits (-want +got):\n%s", mo != nil, diff)
		}
	}
}
