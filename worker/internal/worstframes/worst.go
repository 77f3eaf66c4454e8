package worstframes

import (
	"cmp"
	"math"
	"slices"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/vmaf"
)

// Frame is one of the worst frames with every metric the result holds for it.
type Frame struct {
	// Pos is the frame's position in Result.Frames; Index its index in the inputs.
	Pos   int     `json:"-"`
	Index int     `json:"index"`
	VMAF  float64 `json:"vmaf"`
	// Metrics are the frame's values of every per-frame metric, by libvmaf's names.
	Metrics map[string]float64 `json:"metrics"`
}

// Worst returns the k lowest-scoring frames of res, lowest first, ties by index; frames
// whose score is not a number are left out. k is clamped to 0..vmafxv1.MaxWorstFrames.
func Worst(res *vmaf.Result, k int) []Frame {
	k = min(max(k, 0), vmafxv1.MaxWorstFrames)
	pos := make([]int, 0, len(res.Frames))
	for i := range res.Frames {
		if !math.IsNaN(res.Frames[i].VMAF) {
			pos = append(pos, i)
		}
	}
	slices.SortFunc(pos, func(a, b int) int {
		fa, fb := &res.Frames[a], &res.Frames[b]
		return cmp.Or(cmp.Compare(fa.VMAF, fb.VMAF), cmp.Compare(fa.Index, fb.Index))
	})
	pos = pos[:min(k, len(pos))]
	names := res.Metrics()
	out := make([]Frame, 0, len(pos))
	for _, p := range pos {
		f := Frame{Pos: p, Index: res.Frames[p].Index, VMAF: res.Frames[p].VMAF, Metrics: make(map[string]float64, len(names))}
		for _, n := range names {
			if v, ok := res.Metric(p, n); ok && finite(v) {
				f.Metrics[n] = v
			}
		}
		out = append(out, f)
	}
	return out
}

// keyFeatures are the model features a result lists beside each worst frame, by the start
// of their libvmaf names (which may carry an option suffix): detail loss (ADM), the finest
// scale of information fidelity (VIF) and the motion the model weighs them with. The
// first extra metric asked for (psnr_y, float_ssim, ...) follows.
var keyFeatures = []string{"integer_adm2", "integer_vif_scale0", "integer_motion2"}

// Compact returns frames as the worker result lists them: index, score and at most
// vmafxv1.MaxWorstFrameFeatures features each.
func Compact(res *vmaf.Result, frames []Frame) []vmafxv1.WorkerFrame {
	names := keyNames(res)
	out := make([]vmafxv1.WorkerFrame, 0, len(frames))
	for _, f := range frames {
		wf := vmafxv1.WorkerFrame{Index: f.Index, VMAF: f.VMAF}
		for _, n := range names {
			if v, ok := f.Metrics[n]; ok {
				if wf.Features == nil {
					wf.Features = map[string]float64{}
				}
				wf.Features[n] = v
			}
		}
		out = append(out, wf)
	}
	return out
}

func keyNames(res *vmaf.Result) []string {
	var names []string
	for _, prefix := range keyFeatures {
		for _, n := range res.Metrics() {
			if strings.HasPrefix(n, prefix) {
				names = append(names, n)
				break
			}
		}
	}
	if extra := res.ExtraMetrics(); len(extra) > 0 {
		names = append(names, extra[0])
	}
	return names[:min(len(names), vmafxv1.MaxWorstFrameFeatures)]
}

// Percentiles returns the 1st, 5th and 50th percentiles of res's per-frame scores; nil
// for a result without frames.
func Percentiles(res *vmaf.Result) *vmafxv1.WorkerPercentiles {
	scores := Scores(res)
	if len(scores) == 0 {
		return nil
	}
	p := vmaf.Percentiles(scores, 1, 5, 50)
	if !finite(p[0]) || !finite(p[1]) || !finite(p[2]) {
		return nil // a score that is not a number; the result's JSON cannot hold it
	}
	return &vmafxv1.WorkerPercentiles{P1: p[0], P5: p[1], P50: p[2]}
}

// Scores returns res's per-frame VMAF scores in frame order.
func Scores(res *vmaf.Result) []float64 {
	s := make([]float64, len(res.Frames))
	for i := range res.Frames {
		s[i] = res.Frames[i].VMAF
	}
	return s
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
