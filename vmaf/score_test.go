package vmaf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// testClip returns the first n frames of a reference pair as raw bytes.
func testClip(t *testing.T, name string, frames int, p refPair) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/clips", name))
	if err != nil {
		t.Fatal(err)
	}
	return data[:frames*p.pf.FrameBytes(p.w, p.h)]
}

func rawSource(t *testing.T, data []byte, w, h int, pf PixelFormat) FrameSource {
	t.Helper()
	r, err := OpenRaw(bytes.NewReader(data), w, h, pf)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestScoreErrors(t *testing.T) {
	p := loadPairs(t)[0] // p01, 176x144 yuv420p
	ref := testClip(t, p.ref, 4, p)
	dist := testClip(t, p.dist, 4, p)
	fb := p.pf.FrameBytes(p.w, p.h)
	tests := []struct {
		name      string
		ref, dist func() FrameSource
		opts      Options
		want      error
	}{
		{"truncated distorted",
			func() FrameSource { return rawSource(t, ref, p.w, p.h, p.pf) },
			func() FrameSource { return rawSource(t, dist[:len(dist)-100], p.w, p.h, p.pf) },
			Options{}, ErrTruncated},
		{"distorted shorter",
			func() FrameSource { return rawSource(t, ref, p.w, p.h, p.pf) },
			func() FrameSource { return rawSource(t, dist[:3*fb], p.w, p.h, p.pf) },
			Options{}, ErrFrameCountMismatch},
		{"reference shorter",
			func() FrameSource { return rawSource(t, ref[:2*fb], p.w, p.h, p.pf) },
			func() FrameSource { return rawSource(t, dist, p.w, p.h, p.pf) },
			Options{}, ErrFrameCountMismatch},
		{"mismatched sizes",
			func() FrameSource { return rawSource(t, ref, p.w, p.h, p.pf) },
			func() FrameSource { return rawSource(t, dist, 144, 176, p.pf) },
			Options{}, ErrSizeMismatch},
		{"mismatched depth",
			func() FrameSource { return rawSource(t, ref, p.w, p.h, p.pf) },
			func() FrameSource { return rawSource(t, dist, p.w, p.h, YUV420P10LE) },
			Options{}, ErrSizeMismatch},
		{"zero frames",
			func() FrameSource { return rawSource(t, nil, p.w, p.h, p.pf) },
			func() FrameSource { return rawSource(t, nil, p.w, p.h, p.pf) },
			Options{}, ErrNoFrames},
		{"start past the end",
			func() FrameSource { return rawSource(t, ref, p.w, p.h, p.pf) },
			func() FrameSource { return rawSource(t, dist, p.w, p.h, p.pf) },
			Options{Start: 10}, ErrNoFrames},
		{"unknown model",
			func() FrameSource { return rawSource(t, ref, p.w, p.h, p.pf) },
			func() FrameSource { return rawSource(t, dist, p.w, p.h, p.pf) },
			Options{Model: "vmaf_v9.9"}, ErrUnknownModel},
		{"corrupt model",
			func() FrameSource { return rawSource(t, ref, p.w, p.h, p.pf) },
			func() FrameSource { return rawSource(t, dist, p.w, p.h, p.pf) },
			Options{Model: writeTemp(t, "bad.json", `{"model_dict": {"model_type": `)}, ErrBadModel},
		{"too small",
			func() FrameSource { return rawSource(t, ref, 32, 32, p.pf) },
			func() FrameSource { return rawSource(t, dist, 32, 32, p.pf) },
			Options{}, ErrTooSmall},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Score(context.Background(), tc.ref(), tc.dist(), tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestScoreCanceled(t *testing.T) {
	p := loadPairs(t)[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Score(ctx, rawSource(t, testClip(t, p.ref, 4, p), p.w, p.h, p.pf),
		rawSource(t, testClip(t, p.dist, 4, p), p.w, p.h, p.pf), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestScoreRange checks Start, Count and Subsample against the full run:
// features of a frame do not depend on the range except motion, whose first
// frame in the range is 0.
func TestScoreRange(t *testing.T) {
	p := loadPairs(t)[0]
	ref, dist := testClip(t, p.ref, 12, p), testClip(t, p.dist, 12, p)
	run := func(o Options) *Result {
		res, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf), o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	full := run(Options{Threads: 1})
	part := run(Options{Start: 3, Count: 5, Subsample: 2, Threads: 3})
	wantIdx := []int{3, 5, 7}
	if len(part.Frames) != len(wantIdx) {
		t.Fatalf("got %d frames, want %d", len(part.Frames), len(wantIdx))
	}
	for i, f := range part.Frames {
		if f.Index != wantIdx[i] {
			t.Fatalf("frame %d has index %d, want %d", i, f.Index, wantIdx[i])
		}
		g := full.Frames[f.Index]
		if f.VIF != g.VIF || f.ADM2 != g.ADM2 || f.ADMScale != g.ADMScale {
			t.Errorf("frame %d: features differ from the full run", f.Index)
		}
		if i > 0 && f.MotionSAD != g.MotionSAD {
			t.Errorf("frame %d: motion %v, full run %v", f.Index, f.MotionSAD, g.MotionSAD)
		}
	}
	if part.Frames[0].MotionSAD != 0 || part.Frames[0].Motion2 != 0 {
		t.Errorf("first frame of the range has motion %v/%v, want 0", part.Frames[0].MotionSAD, part.Frames[0].Motion2)
	}
}

// writeJSONLog writes res with WriteJSON and parses the output back.
func writeJSONLog(t *testing.T, res *Result) ([]byte, *libvmafLog) {
	t.Helper()
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var l libvmafLog
	if err := json.Unmarshal(buf.Bytes(), &l); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, buf.String())
	}
	return buf.Bytes(), &l
}

// pairNamed returns the reference pair called name.
func pairNamed(t *testing.T, name string) refPair {
	t.Helper()
	for _, p := range loadPairs(t) {
		if p.name == name {
			return p
		}
	}
	t.Fatalf("no pair %s in testdata/pairs.tsv", name)
	return refPair{}
}

// TestWriteJSON checks the libvmaf layout: the output parses, has every
// metric per frame and pooled, and matches the reference values at the
// printed precision.
func TestWriteJSON(t *testing.T) {
	p := loadPairs(t)[0]
	ref, dist := openPair(t, p)
	res, err := Score(context.Background(), ref, dist, Options{Model: "vmaf_v0.6.1neg"})
	if err != nil {
		t.Fatal(err)
	}
	_, got := writeJSONLog(t, res)
	want := readLog(t, "testdata/ref/p01_v061neg.json")
	if len(got.Frames) != len(want.Frames) {
		t.Fatalf("got %d frames, want %d", len(got.Frames), len(want.Frames))
	}
	for i := range got.Frames {
		if got.Frames[i].FrameNum != i {
			t.Fatalf("frame %d has frameNum %d", i, got.Frames[i].FrameNum)
		}
		for k, v := range got.Frames[i].Metrics {
			w, ok := want.Frames[i].Metrics[k]
			if !ok {
				t.Fatalf("frame %d: metric %q not in libvmaf's output", i, k)
			}
			if math.Abs(v-w) > 1.5e-6 {
				t.Errorf("frame %d %s: got %.6f, want %.6f", i, k, v, w)
			}
		}
	}
	for k, m := range got.PooledMetrics {
		for _, stat := range []string{"min", "max", "mean", "harmonic_mean"} {
			if _, ok := m[stat]; !ok {
				t.Errorf("pooled %s lacks %s", k, stat)
			}
		}
	}
	if len(got.PooledMetrics) != len(res.Metrics()) {
		t.Errorf("got %d pooled metrics, want %d", len(got.PooledMetrics), len(res.Metrics()))
	}
}

func TestPool(t *testing.T) {
	got := pool([]float64{0, 1, 3})
	want := Pooled{Min: 0, Max: 3, Mean: 4.0 / 3, HarmonicMean: 3/(1+0.5+0.25) - 1}
	if math.Abs(got.Mean-want.Mean) > 1e-15 || math.Abs(got.HarmonicMean-want.HarmonicMean) > 1e-15 || got.Min != want.Min || got.Max != want.Max {
		t.Fatalf("pool = %+v, want %+v", got, want)
	}
}
