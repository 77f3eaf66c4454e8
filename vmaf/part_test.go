package vmaf

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// scoreChunk scores frames [start, start+count) of n as one chunk of a split run: with
// one frame of context on each side that borders another chunk, trimmed afterwards.
func scoreChunk(t *testing.T, ref, dist []byte, w, h int, pf PixelFormat, start, count, n int, o Options) *Part {
	t.Helper()
	lead, trail := min(start, 1), 0
	if start+count < n {
		trail = 1
	}
	o.Start, o.Count = start-lead, count+lead+trail
	res, err := Score(context.Background(), rawSource(t, ref, w, h, pf), rawSource(t, dist, w, h, pf), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Trim(lead, trail); err != nil {
		t.Fatal(err)
	}
	return res.Part()
}

// TestMergeEqualsOneRun: a run split into chunks, each scoring its frames with one frame
// of context on each inner border, merges into exactly the frames and pooled values of
// one run, for every split of a clip with motion, the first and last frames included.
func TestMergeEqualsOneRun(t *testing.T) {
	const w, h, n = 64, 48, 9
	pf := YUV420P
	ref, dist := synthClip(w, h, pf, n)
	opts := Options{Threads: 2, Features: []Feature{FeaturePSNR, FeatureSSIM}}
	whole, err := Score(context.Background(), rawSource(t, ref, w, h, pf), rawSource(t, dist, w, h, pf), opts)
	if err != nil {
		t.Fatal(err)
	}
	var moving bool
	for _, f := range whole.Frames {
		moving = moving || f.Motion2 > 0
	}
	if !moving {
		t.Fatal("the clip has no motion: the test would not see a wrong overlap")
	}
	for _, chunks := range [][]int{{9}, {5, 4}, {3, 3, 3}, {1, 8}, {8, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {2, 1, 6}} {
		var parts []*Part
		start := 0
		for _, c := range chunks {
			parts = append(parts, scoreChunk(t, ref, dist, w, h, pf, start, c, n, opts))
			start += c
		}
		got, err := Merge(parts)
		if err != nil {
			t.Fatalf("chunks %v: %v", chunks, err)
		}
		if diff := cmp.Diff(whole.Frames, got.Frames); diff != "" {
			t.Errorf("chunks %v: frames differ from one run (-want,+got):\n%s", chunks, diff)
		}
		if diff := cmp.Diff(whole.Pooled, got.Pooled, cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("chunks %v: pooled values differ from one run (-want,+got):\n%s", chunks, diff)
		}
		if diff := cmp.Diff(whole.Metrics(), got.Metrics()); diff != "" {
			t.Errorf("chunks %v: metrics differ (-want,+got):\n%s", chunks, diff)
		}
	}
}

func TestMergeRefusesGaps(t *testing.T) {
	a := &Part{Model: "m", Width: 64, Height: 48, BitDepth: 8, Frames: []FrameScore{{Index: 0}, {Index: 1}}}
	gap := &Part{Model: "m", Width: 64, Height: 48, BitDepth: 8, Frames: []FrameScore{{Index: 3}}}
	other := &Part{Model: "n", Width: 64, Height: 48, BitDepth: 8, Frames: []FrameScore{{Index: 2}}}
	for name, parts := range map[string][]*Part{"gap": {a, gap}, "other model": {a, other}, "empty": {a, {Model: "m", Width: 64, Height: 48, BitDepth: 8}}} {
		if _, err := Merge(parts); !errors.Is(err, ErrBadPart) {
			t.Errorf("%s: Merge = %v, want ErrBadPart", name, err)
		}
	}
}

// TestMergeReadsPartsOfTheLastRelease: a part written before MetricLayout (a VIF model,
// its suffixes in VIFSuffix and ADMSuffix) merges with the metric names it was scored
// under, so a chunked job that straddles an upgrade keeps vmaf_v0.6.1neg's names.
func TestMergeReadsPartsOfTheLastRelease(t *testing.T) {
	const w, h, n = 64, 48, 4
	ref, dist := synthClip(w, h, YUV420P, n)
	res, err := Score(context.Background(), rawSource(t, ref, w, h, YUV420P), rawSource(t, dist, w, h, YUV420P), Options{Model: "vmaf_v0.6.1neg"})
	if err != nil {
		t.Fatal(err)
	}
	old := res.Part()
	old.Layout, old.VIFSuffix, old.ADMSuffix = MetricLayout{}, "_egl_1", "_egl_1"
	got, err := Merge([]*Part{old})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.Metrics(), got.Metrics()); diff != "" {
		t.Errorf("metrics of an old part (-scored +merged):\n%s", diff)
	}
}
