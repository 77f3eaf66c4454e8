package worstframes

import (
	"bytes"
	"context"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/beside"
)

const clips = "../../../vmaf/testdata/clips/"

// clipPair opens the concatenation of the named clip pairs (176x144 yuv420p) as one
// reference and one distorted video: a real cut where one clip ends and the next begins.
func clipPair(t *testing.T, names ...string) (ref, dist vmaf.FrameSource) {
	t.Helper()
	var r, d []byte
	for _, n := range names {
		rb, err := os.ReadFile(clips + n + "_ref.yuv")
		if err != nil {
			t.Fatal(err)
		}
		db, err := os.ReadFile(clips + n + "_dist.yuv")
		if err != nil {
			t.Fatal(err)
		}
		r, d = append(r, rb...), append(d, db...)
	}
	open := func(b []byte) vmaf.FrameSource {
		src, err := vmaf.OpenRaw(bytes.NewReader(b), 176, 144, vmaf.YUV420P)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	return open(r), open(d)
}

func score(t *testing.T, ref, dist vmaf.FrameSource, opts vmaf.Options) *vmaf.Result {
	t.Helper()
	res, err := vmaf.Score(context.Background(), ref, dist, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestWorstOnRealClips(t *testing.T) {
	ref, dist := clipPair(t, "p01", "p02") // CRF 18, then CRF 45: the worst frames are p02's
	res := score(t, ref, dist, vmaf.Options{Features: []vmaf.Feature{vmaf.FeaturePSNR}})
	worst := Worst(res, 5)
	if len(worst) != 5 {
		t.Fatalf("Worst gave %d frames, want 5", len(worst))
	}
	// Lowest first, and nothing outside the list is lower: compare with a sort of every score.
	all := Scores(res)
	sorted := slices.Clone(all)
	slices.Sort(sorted)
	for i, f := range worst {
		if f.VMAF != sorted[i] {
			t.Errorf("worst[%d].VMAF = %v, want the %d-th lowest %v", i, f.VMAF, i, sorted[i])
		}
		if f.VMAF != res.Frames[f.Pos].VMAF || f.Index != res.Frames[f.Pos].Index {
			t.Errorf("worst[%d] = index %d %v, the result's frame %d is %v", i, f.Index, f.VMAF, f.Pos, res.Frames[f.Pos].VMAF)
		}
		if f.Index < 24 {
			t.Errorf("worst[%d] is frame %d of the CRF 18 clip, want one of the CRF 45 clip (24 on)", i, f.Index)
		}
		if got, want := len(f.Metrics), len(res.Metrics()); got != want {
			t.Errorf("worst[%d] has %d metrics, want every one of the result's %d", i, got, want)
		}
		if f.Metrics["vmaf"] != f.VMAF {
			t.Errorf("worst[%d] metrics vmaf = %v, want %v", i, f.Metrics["vmaf"], f.VMAF)
		}
	}
	compact := Compact(res, worst)
	for i, f := range compact {
		if len(f.Features) == 0 || len(f.Features) > vmafxv1.MaxWorstFrameFeatures {
			t.Errorf("compact[%d] has %d features, want 1 to %d", i, len(f.Features), vmafxv1.MaxWorstFrameFeatures)
		}
		for _, n := range []string{"integer_adm2", "integer_vif_scale0", "integer_motion2", "psnr_y"} {
			if v, ok := f.Features[n]; !ok || v != worst[i].Metrics[n] {
				t.Errorf("compact[%d] %s = %v (%v), want %v", i, n, v, ok, worst[i].Metrics[n])
			}
		}
	}
	if got := Worst(res, 1000); len(got) != vmafxv1.MaxWorstFrames {
		t.Errorf("Worst(1000) gave %d frames, want the bound %d", len(got), vmafxv1.MaxWorstFrames)
	}
	if got := Worst(res, -1); len(got) != 0 {
		t.Errorf("Worst(-1) gave %d frames", len(got))
	}

	p := Percentiles(res)
	if p == nil || !(sorted[0] <= p.P1 && p.P1 <= p.P5 && p.P5 <= p.P50 && p.P50 <= sorted[len(sorted)-1]) {
		t.Fatalf("percentiles %+v out of order for scores %v..%v", p, sorted[0], sorted[len(sorted)-1])
	}
	// 40 frames: the median lies halfway between the 20th and 21st lowest.
	if want := (sorted[19] + sorted[20]) / 2; math.Abs(p.P50-want) > 1e-9 {
		t.Errorf("P50 = %v, want %v", p.P50, want)
	}
}

func TestScenesOnRealClips(t *testing.T) {
	ref, dist := clipPair(t, "p01", "p02")
	cuts := NewCuts(ref)
	res := score(t, cuts, dist, vmaf.Options{})
	starts := cuts.Starts(0, DefaultSceneThreshold)
	if !slices.Equal(starts, []int{0, 24}) {
		t.Fatalf("scene starts %v, want [0 24] (the clips meet at frame 24); distances %v", starts, cuts.Distances())
	}
	scenes := Scenes(res, starts)
	if len(scenes) != 2 || scenes[0].Frames != 24 || scenes[1].Frames != 16 || scenes[1].Start != 24 {
		t.Fatalf("scenes %+v, want 24 frames from 0 and 16 from 24", scenes)
	}
	// Each scene's pooled values are those of its frames' scores in the whole run (not of
	// its clip scored alone: the first frame after the cut has motion against the last
	// frame before it).
	all := Scores(res)
	for k, sc := range scenes {
		part := all[sc.Start : sc.Start+sc.Frames]
		p := vmaf.PoolValues(part)
		if sc.Mean != p.Mean || sc.Min != p.Min || sc.HarmonicMean != p.HarmonicMean || sc.P5 != vmaf.Percentile(part, 5) {
			t.Errorf("scene %d = %+v, want the pool of its frames %+v", k, sc, p)
		}
	}
	sum := Summary(scenes)
	if sum.Count != 2 || sum.Worst.Start != 24 {
		t.Errorf("summary %+v (worst %+v), want 2 scenes, the CRF 45 one worst", sum, sum.Worst)
	}

	// Within one shot nothing cuts, noise and motion included.
	for _, clip := range []struct {
		name string
		w, h int
	}{{"p01", 176, 144}, {"p02", 176, 144}, {"p03", 320, 240}, {"p04", 320, 240}} {
		b, err := os.ReadFile(clips + clip.name + "_ref.yuv")
		if err != nil {
			t.Fatal(err)
		}
		src, err := vmaf.OpenRaw(bytes.NewReader(b), clip.w, clip.h, vmaf.YUV420P)
		if err != nil {
			t.Fatal(err)
		}
		c := NewCuts(src)
		f := &vmaf.Frame{}
		for c.ReadFrame(f) == nil {
		}
		if got := c.Starts(7, DefaultSceneThreshold); !slices.Equal(got, []int{7}) {
			t.Errorf("%s: scene starts %v, want one scene from the first index 7; distances %v", clip.name, got, c.Distances())
		}
	}
}

func TestScenesSubsampled(t *testing.T) {
	ref, dist := clipPair(t, "p01", "p02")
	cuts := NewCuts(ref)
	res := score(t, cuts, dist, vmaf.Options{Subsample: 5})
	scenes := Scenes(res, cuts.Starts(0, DefaultSceneThreshold))
	// Frames 0, 5, ..., 20 lie in the first scene, 25, ..., 35 in the second.
	if len(scenes) != 2 || scenes[0].Frames != 5 || scenes[1].Frames != 3 {
		t.Fatalf("scenes %+v, want 5 and 3 scored frames", scenes)
	}
	if Scenes(res, nil) != nil || Summary(nil) != nil {
		t.Error("no starts or no scenes must give nil")
	}
}

// Frames read as bytes for a GPU backend (vmaf.Frame.Packed) give the same distances
// as their samples.
func TestCutsOfBytes(t *testing.T) {
	b, err := os.ReadFile(clips + "p01_ref.yuv")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, must(os.ReadFile(clips+"p02_ref.yuv"))...)
	var dist [2][]float64
	for i, packed := range []bool{false, true} {
		src, err := vmaf.OpenRaw(bytes.NewReader(b), 176, 144, vmaf.YUV420P)
		if err != nil {
			t.Fatal(err)
		}
		c := NewCuts(src)
		f := &vmaf.Frame{Packed: packed}
		for c.ReadFrame(f) == nil {
			if packed && f.Packed8() == nil {
				t.Fatal("the reader did not keep the frame as bytes")
			}
		}
		dist[i] = c.Distances()
	}
	if len(dist[0]) != 40 || !slices.Equal(dist[0], dist[1]) {
		t.Errorf("distances of the frames' bytes %v, of their samples %v", dist[1], dist[0])
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A caller that reads every frame into new storage never makes a read wait, so the
// histograms still counting are bounded by number (beside.MaxPending), however far behind
// the reading they are (here a millisecond each, where a read takes microseconds), and
// the distances are every frame's, in order.
func TestCutsBoundPending(t *testing.T) {
	slow := make(chan func(), 300)
	go func() {
		for run := range slow {
			time.Sleep(time.Millisecond)
			run()
		}
	}()
	defer close(slow)
	// 300 64x32 frames alternating two flat pictures.
	data := make([]byte, 300*64*32)
	for i := range data {
		data[i] = byte(40 + 160*(i/(64*32)%2))
	}
	src, err := vmaf.OpenRaw(bytes.NewReader(data), 64, 32, vmaf.Gray)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCuts(src)
	c.jobs.Start = func(run func()) { slow <- run }
	for {
		var f vmaf.Frame // a new frame each read: no read waits for a plane
		if c.ReadFrame(&f) != nil {
			break
		}
		if c.jobs.Pending() > beside.MaxPending {
			t.Fatalf("%d histograms pending, want at most %d", c.jobs.Pending(), beside.MaxPending)
		}
	}
	d := c.Distances()
	if len(d) != 300 || d[0] != 0 || d[1] != 1 || d[299] != 1 {
		t.Fatalf("%d distances, first %v", len(d), d[:min(len(d), 3)])
	}
}
