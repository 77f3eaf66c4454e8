package vmaf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// countingSource counts the reads of a FrameSource, end included.
type countingSource struct {
	FrameSource
	reads atomic.Int64
}

func (c *countingSource) ReadFrame(f *Frame) error {
	c.reads.Add(1)
	return c.FrameSource.ReadFrame(f)
}

// sameResult fails t unless got is want to the last digit: every frame's features and
// scores, the pooled values and the metrics. FPS, a speed, is left out.
func sameResult(t *testing.T, name string, want, got *Result) {
	t.Helper()
	if want.Model != got.Model || want.Width != got.Width || want.Height != got.Height || want.BitDepth != got.BitDepth {
		t.Errorf("%s: got %s %dx%d %d-bit, alone %s %dx%d %d-bit", name, got.Model, got.Width, got.Height, got.BitDepth,
			want.Model, want.Width, want.Height, want.BitDepth)
	}
	if diff := cmp.Diff(want.Frames, got.Frames); diff != "" {
		t.Errorf("%s: frames differ from scoring the pair alone (-alone,+shared):\n%s", name, diff)
	}
	if diff := cmp.Diff(want.Pooled, got.Pooled, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("%s: pooled values differ from scoring the pair alone (-alone,+shared):\n%s", name, diff)
	}
	if diff := cmp.Diff(want.Metrics(), got.Metrics()); diff != "" {
		t.Errorf("%s: metrics differ (-alone,+shared):\n%s", name, diff)
	}
	if !slices.Equal(want.Features, got.Features) {
		t.Errorf("%s: features %v, alone %v", name, got.Features, want.Features)
	}
}

// TestScoreManyEqualsScore: each rendition of one shared pass over the reference scores
// exactly as its pair alone, with different distorted videos, models, extra features
// (PSNR reads the chroma planes) and ranges side by side, on an 8-bit and a 10-bit
// reference clip; and the reference is read once.
func TestScoreManyEqualsScore(t *testing.T) {
	for _, name := range []string{"p01", "p07"} {
		t.Run(name, func(t *testing.T) {
			p := pairNamed(t, name)
			ref, dist := testClip(t, p.ref, p.frames, p), testClip(t, p.dist, p.frames, p)
			// A second distortion: the distorted clip's frames in reverse order, and the
			// reference itself, so that the renditions differ.
			fb := p.pf.FrameBytes(p.w, p.h)
			var reversed []byte
			for i := p.frames - 1; i >= 0; i-- {
				reversed = append(reversed, dist[i*fb:(i+1)*fb]...)
			}
			// MS-SSIM and CAMBI need bigger frames than p01's.
			more := []Feature{FeatureSSIM}
			if p.w >= 216 && p.h >= 216 {
				more = []Feature{FeatureMSSSIM, FeatureCAMBI}
			}
			// One loaded model shared by two renditions, as the worker shares it.
			shared, err := LoadModel(DefaultModel)
			if err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name string
				dist []byte
				opts Options
			}{
				{"default", dist, Options{}},
				{"features", dist, Options{Features: []Feature{FeaturePSNR, FeatureSSIM}}},
				{"neg model", reversed, Options{Model: "vmaf_v0.6.1neg"}},
				{"range", reversed, Options{Start: 2, Count: 5, Subsample: 2}},
				{"itself", ref, Options{Model: "vmaf_4k_v0.6.1", Features: []Feature{FeaturePSNR}}},
				{"loaded model", dist, Options{LoadedModel: shared}},
				{"loaded model again", reversed, Options{LoadedModel: shared, Features: more}},
			}
			src := &countingSource{FrameSource: rawSource(t, ref, p.w, p.h, p.pf)}
			var rs []Rendition
			for _, c := range cases {
				rs = append(rs, Rendition{Distorted: rawSource(t, c.dist, p.w, p.h, p.pf), Options: c.opts})
			}
			got, err := ScoreMany(context.Background(), src, rs, 3, 2)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range cases {
				if got[i].Err != nil {
					t.Fatalf("%s: %v", c.name, got[i].Err)
				}
				o := c.opts
				o.Threads = 2
				alone, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, c.dist, p.w, p.h, p.pf), o)
				if err != nil {
					t.Fatal(err)
				}
				sameResult(t, c.name, alone, got[i].Result)
			}
			// Every frame once, and the end once.
			if n := src.reads.Load(); n != int64(p.frames+1) {
				t.Errorf("the reference was read %d times for %d frames, want %d (once each and its end)", n, p.frames, p.frames+1)
			}
		})
	}
}

// TestScoreManyFailsOneRendition: a distorted video shorter than the reference, or of
// another size, fails its rendition with the error scoring it alone gives; the others
// are scored as alone.
func TestScoreManyFailsOneRendition(t *testing.T) {
	p := pairNamed(t, "p01")
	ref, dist := testClip(t, p.ref, p.frames, p), testClip(t, p.dist, p.frames, p)
	short := dist[:(p.frames-3)*p.pf.FrameBytes(p.w, p.h)]
	other := pairNamed(t, "p03") // 320x240
	otherDist := testClip(t, other.dist, 4, other)
	rs := []Rendition{
		{Distorted: rawSource(t, short, p.w, p.h, p.pf)},
		{Distorted: rawSource(t, dist, p.w, p.h, p.pf)},
		{Distorted: rawSource(t, otherDist, other.w, other.h, other.pf)},
		{Distorted: rawSource(t, dist, p.w, p.h, p.pf), Options: Options{Features: []Feature{FeatureSSIM}}},
	}
	got, err := ScoreMany(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rs, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	alone := func(d []byte, w, h int, o Options) (*Result, error) {
		return Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, d, w, h, p.pf), o)
	}
	_, wantShort := alone(short, p.w, p.h, Options{})
	if !errors.Is(got[0].Err, ErrFrameCountMismatch) || got[0].Err.Error() != wantShort.Error() {
		t.Errorf("shorter distorted: err %v, want %v (as alone)", got[0].Err, wantShort)
	}
	_, wantSize := alone(otherDist, other.w, other.h, Options{})
	if !errors.Is(got[2].Err, ErrSizeMismatch) || got[2].Err.Error() != wantSize.Error() {
		t.Errorf("other size: err %v, want %v (as alone)", got[2].Err, wantSize)
	}
	for i, o := range map[int]Options{1: {}, 3: {Features: []Feature{FeatureSSIM}}} {
		if got[i].Err != nil {
			t.Fatalf("rendition %d failed beside the failing ones: %v", i, got[i].Err)
		}
		want, err := alone(dist, p.w, p.h, o)
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, fmt.Sprint("rendition ", i), want, got[i].Result)
	}
}

// failingSource fails after n frames.
type failingSource struct {
	FrameSource
	n int
}

var errBroken = errors.New("broken pipe")

func (f *failingSource) ReadFrame(fr *Frame) error {
	if f.n == 0 {
		return errBroken
	}
	f.n--
	return f.FrameSource.ReadFrame(fr)
}

// TestScoreManyReferenceFails: a reference that cannot be read fails every rendition,
// each naming the reference.
func TestScoreManyReferenceFails(t *testing.T) {
	p := pairNamed(t, "p01")
	ref, dist := testClip(t, p.ref, p.frames, p), testClip(t, p.dist, p.frames, p)
	rs := []Rendition{{Distorted: rawSource(t, dist, p.w, p.h, p.pf)}, {Distorted: rawSource(t, dist, p.w, p.h, p.pf)}}
	got, err := ScoreMany(context.Background(), &failingSource{FrameSource: rawSource(t, ref, p.w, p.h, p.pf), n: 5}, rs, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if !errors.Is(r.Err, errBroken) || r.Result != nil {
			t.Errorf("rendition %d: %v, %v; want the reference's error", i, r.Result, r.Err)
		}
	}
}

func TestScoreManyCanceled(t *testing.T) {
	p := pairNamed(t, "p01")
	ref, dist := testClip(t, p.ref, p.frames, p), testClip(t, p.dist, p.frames, p)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := ScoreMany(ctx, rawSource(t, ref, p.w, p.h, p.pf),
		[]Rendition{{Distorted: rawSource(t, dist, p.w, p.h, p.pf)}, {Distorted: rawSource(t, dist, p.w, p.h, p.pf)}}, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("rendition %d: err %v, want context.Canceled", i, r.Err)
		}
	}
	if _, err := ScoreMany(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), nil, 1, 0); err == nil {
		t.Error("ScoreMany of no rendition: no error")
	}
}

// boundedSource checks that it is never read more than window frames past the frames
// its slow reader has taken.
type boundedSource struct {
	FrameSource
	window   int
	reads    int // this source's reads, by whichever reader
	slowDone atomic.Int64
	overrun  atomic.Int64 // the furthest reads got past slowDone+window, if ever
}

func (b *boundedSource) ReadFrame(f *Frame) error {
	b.reads++ // one reader at a time reads the source
	// The slow reader's count is taken after its read returns, so it may lag the shared
	// reference's by one.
	if over := int64(b.reads) - (b.slowDone.Load() + int64(b.window) + 1); over > b.overrun.Load() {
		b.overrun.Store(over)
	}
	return b.FrameSource.ReadFrame(f)
}

// TestSharedReferenceWindow: a fast reader does not run more than the window ahead of a
// slow one, and both get every frame intact, in order.
func TestSharedReferenceWindow(t *testing.T) {
	p := pairNamed(t, "p01")
	ref := testClip(t, p.ref, p.frames, p)
	const window = 3
	src := &boundedSource{FrameSource: rawSource(t, ref, p.w, p.h, p.pf), window: window}
	s, err := NewSharedReference(context.Background(), src, 2, window)
	if err != nil {
		t.Fatal(err)
	}
	want := rawSource(t, ref, p.w, p.h, p.pf)
	var frames []Frame
	for {
		var f Frame
		if err := want.ReadFrame(&f); err != nil {
			break
		}
		frames = append(frames, f)
	}
	// The slow reader asks for 8-bit luma as bytes (a GPU backend's run) and gets the
	// bytes the source read; the other gets them widened.
	read := func(r *SharedReader, slow bool) error {
		defer r.Close()
		for i := 0; ; i++ {
			f := Frame{Packed: slow}
			err := r.ReadFrame(&f)
			if errors.Is(err, io.EOF) {
				if i != len(frames) {
					return fmt.Errorf("EOF after %d frames, want %d", i, len(frames))
				}
				return nil
			}
			if err != nil {
				return err
			}
			if slow {
				if b := f.Packed8(); b == nil {
					return fmt.Errorf("frame %d: luma as 16-bit samples, asked as bytes", i)
				}
				f.unpack()
			}
			if !slices.Equal(f.Y, frames[i].Y) || len(f.U) != 0 {
				return fmt.Errorf("frame %d differs from the source's (or has chroma not asked for)", i)
			}
			if slow {
				src.slowDone.Add(1)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = read(s.Reader(0), false) })
	wg.Go(func() { errs[1] = read(s.Reader(1), true) })
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("reader %d: %v", i, err)
		}
	}
	if o := src.overrun.Load(); o > 0 {
		t.Errorf("the source was read %d frames past the window ahead of the slow reader", o)
	}
	if s.Frames() != len(frames) {
		t.Errorf("read %d frames, want %d", s.Frames(), len(frames))
	}
}

// TestSharedReaderClose: a closed reader no longer holds the others back and reads no more.
func TestSharedReaderClose(t *testing.T) {
	p := pairNamed(t, "p01")
	ref := testClip(t, p.ref, p.frames, p)
	s, err := NewSharedReference(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	idle := s.Reader(1)
	idle.Close()
	idle.Close()
	r := s.Reader(0)
	n := 0
	var f Frame
	for ; ; n++ {
		if err := r.ReadFrame(&f); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
	}
	if n != p.frames {
		t.Errorf("read %d frames past a closed reader, want %d", n, p.frames)
	}
	if err := idle.ReadFrame(&f); !errors.Is(err, ErrReaderClosed) {
		t.Errorf("closed reader: %v, want ErrReaderClosed", err)
	}
	for _, n := range []int{0, MaxRenditions + 1} {
		if _, err := NewSharedReference(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), n, 0); err == nil {
			t.Errorf("%d readers: no error", n)
		}
	}
}

// TestSharedReaderCanceled: a reader waiting for a slow one returns when the context ends.
func TestSharedReaderCanceled(t *testing.T) {
	p := pairNamed(t, "p01")
	ref := testClip(t, p.ref, p.frames, p)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := NewSharedReference(ctx, rawSource(t, ref, p.w, p.h, p.pf), 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Reader(0)
	var f Frame
	if err := r.ReadFrame(&f); err != nil { // the window's one frame
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.ReadFrame(&f) }() // waits for reader 1, which never reads
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestSplitThreads(t *testing.T) {
	for _, c := range []struct {
		threads, n int
		want       []int
	}{
		{6, 6, []int{1, 1, 1, 1, 1, 1}},
		{8, 3, []int{3, 3, 2}},
		{2, 6, []int{1, 1, 1, 1, 1, 1}},
		{16, 1, []int{16}},
	} {
		if got := SplitThreads(c.threads, c.n); !slices.Equal(got, c.want) {
			t.Errorf("SplitThreads(%d, %d) = %v, want %v", c.threads, c.n, got, c.want)
		}
	}
}
