package worstframes

import (
	"cmp"
	"slices"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/beside"
)

// Scene cuts are found on luma histograms: each reference frame's luma (every other
// sample of every other row) is counted into HistogramBins bins, and frame i starts a new scene when the share of its samples that
// changed bins since frame i-1,
//
//	d(i) = sum over bins |h_i(b) - h_{i-1}(b)| / (2 x samples),
//
// a number from 0 (same histogram) to 1 (no sample in a common bin), is at least the
// threshold. A histogram ignores motion within a shot (a pan, a zoom, noise) and jumps at
// a cut to other content; unlike ffmpeg's scene score (a sum of absolute pixel
// differences) it does not fire on fast motion. Fades are not cuts: they spread over
// frames, each one under the threshold.
const (
	// HistogramBins is the number of luma bins, whatever the bit depth.
	HistogramBins = 64
	// DefaultSceneThreshold is the default d(i) that cuts: on the test clips no frame
	// within a shot comes near it (testsrc2 0.033, mandelbrot 0.022, SMPTE bars with
	// temporal noise 0.027, the game of life 0.176), and a cut between two of them scores
	// 0.65 or more.
	DefaultSceneThreshold = 0.3
)

// Cuts watches the reference's frames as the kernel reads them and records each frame's
// histogram distance to the one before: eight bytes a frame.
//
// The histograms are counted on goroutines of their own, beside the reading
// (beside.Queue): the reference's reader is the one step every frame passes through in
// turn, and a 1080p histogram cost about as much as reading a frame pair
// (docs/benchmarks.md). ReadFrame is called by one goroutine at a time, and Distances
// and Starts after the last read.
type Cuts struct {
	vmaf.FrameSource
	prev [HistogramBins]int
	n    int
	// dist[k] is d of the k-th frame read; dist[0] is 0.
	dist []float64
	// jobs count the histograms of the frames read whose distances are not in dist yet.
	jobs beside.Queue[*cutHistogram]
}

// cutHistogram is one frame's histogram.
type cutHistogram struct {
	hist    [4][HistogramBins]int32
	samples int
}

// NewCuts wraps src.
func NewCuts(src vmaf.FrameSource) *Cuts { return &Cuts{FrameSource: src} }

// ReadFrame reads the next frame and starts counting its histogram.
func (c *Cuts) ReadFrame(f *vmaf.Frame) error {
	c.jobs.BeforeRead(f, c.record)
	if err := c.FrameSource.ReadFrame(f); err != nil {
		return err
	}
	w, h, shift := f.Width, f.Height, uint(max(f.BitDepth, 6)-6)
	y, y8 := f.Y, f.Packed8() // a frame read as bytes for a GPU backend has no Y
	c.jobs.Go(f, func() *cutHistogram {
		ch := new(cutHistogram)
		if y8 != nil {
			ch.samples = histogram(&ch.hist, y8, w, h, shift)
		} else {
			ch.samples = histogram(&ch.hist, y, w, h, shift)
		}
		return ch
	})
	return nil
}

// record appends the distance of the next frame's histogram to the one before.
func (c *Cuts) record(ch *cutHistogram) {
	var cur [HistogramBins]int
	for b := range cur {
		cur[b] = int(ch.hist[0][b]) + int(ch.hist[1][b]) + int(ch.hist[2][b]) + int(ch.hist[3][b])
	}
	d := 0.0
	if c.n > 0 && ch.samples > 0 {
		diff := 0
		for b := range cur {
			diff += abs(cur[b] - c.prev[b])
		}
		d = float64(diff) / float64(2*ch.samples)
	}
	c.dist = append(c.dist, d)
	c.prev = cur
	c.n++
}

// histogram counts the samples of a w x h luma plane, shifted right by shift, into
// part's bins, and returns how many it counted. Every other sample of every other row:
// a quarter of the work, and the same histogram but for noise (a cut changes most of
// the picture, not a pixel in four). Neighbouring samples mostly fall in the same bin,
// and an increment waits on the one before it in the same counter: four sets of
// counters, one per sample in four, let them overlap.
func histogram[S uint8 | uint16](part *[4][HistogramBins]int32, y []S, w, h int, shift uint) int {
	const mask = HistogramBins - 1 // keeps corrupt samples in range
	samples := 0
	for r := 0; r < h; r += 2 {
		row := y[r*w : (r+1)*w]
		x := 0
		for ; x+6 < len(row); x += 8 {
			part[0][(int(row[x])>>shift)&mask]++
			part[1][(int(row[x+2])>>shift)&mask]++
			part[2][(int(row[x+4])>>shift)&mask]++
			part[3][(int(row[x+6])>>shift)&mask]++
		}
		for ; x < len(row); x += 2 {
			part[0][(int(row[x])>>shift)&mask]++
		}
		samples += (len(row) + 1) / 2
	}
	return samples
}

// Distances returns d of every frame read, in read order.
func (c *Cuts) Distances() []float64 {
	c.jobs.Fold(true, c.record)
	return c.dist
}

// Starts returns the indices of the frames that start a scene, given the index of the
// first frame read (vmaf.Options.FirstIndex): the first frame, and every frame whose
// distance is at least threshold.
func (c *Cuts) Starts(first int, threshold float64) []int {
	var starts []int
	for k, d := range c.Distances() {
		if k == 0 || d >= threshold {
			starts = append(starts, first+k)
		}
	}
	return starts
}

// Scene is one scene's pooled VMAF.
type Scene = vmafxv1.WorkerScene

// Scenes pools res's per-frame scores by scene, given the scene starts (ascending
// indices; the first at or before the first frame). Scenes without a scored frame (a
// short scene between subsampled frames) are left out.
func Scenes(res *vmaf.Result, starts []int) []Scene {
	if len(starts) == 0 || len(res.Frames) == 0 {
		return nil
	}
	var scenes []Scene
	var scores []float64
	sceneStart := starts[0]
	flush := func() {
		if len(scores) == 0 {
			return
		}
		p := vmaf.PoolValues(scores)
		scenes = append(scenes, Scene{
			Start: sceneStart, Frames: len(scores), Mean: p.Mean, HarmonicMean: p.HarmonicMean, Min: p.Min,
			P5: vmaf.Percentile(scores, 5),
		})
		scores = scores[:0]
	}
	next := 1
	for i := range res.Frames {
		f := &res.Frames[i]
		for next < len(starts) && f.Index >= starts[next] {
			flush()
			sceneStart = starts[next]
			next++
		}
		scores = append(scores, f.VMAF)
	}
	flush()
	return scenes
}

// Summary returns the scene count and the scene with the lowest mean (ties: the first).
func Summary(scenes []Scene) *vmafxv1.WorkerScenes {
	if len(scenes) == 0 {
		return nil
	}
	worst := slices.MinFunc(scenes, func(a, b Scene) int { return cmp.Or(cmp.Compare(a.Mean, b.Mean), cmp.Compare(a.Start, b.Start)) })
	if !finite(worst.Mean) || !finite(worst.HarmonicMean) || !finite(worst.Min) || !finite(worst.P5) {
		return &vmafxv1.WorkerScenes{Count: len(scenes)}
	}
	return &vmafxv1.WorkerScenes{Count: len(scenes), Worst: &worst}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
