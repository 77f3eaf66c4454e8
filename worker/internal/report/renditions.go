package report

import (
	"math"
	"strconv"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Row is the compact row of one rendition's result r, for a result of several
// (vmafxv1.WorkerResult.Renditions): its scores, and where they are made as r has it,
// the worst frames without their features. So that all rows fit one termination
// message, every figure but the score is rounded to six decimals (the status's) and the
// worst scene's harmonic mean, which the status does not show, is left out.
func Row(r *vmafxv1.WorkerResult) vmafxv1.WorkerRendition {
	for _, v := range []float64{r.Score, r.HarmonicMean, r.Min, r.Max, r.FPS} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return vmafxv1.WorkerRendition{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonInternal, Message: "the score is not a finite number"}}
		}
	}
	row := vmafxv1.WorkerRendition{
		Score: r.Score, HarmonicMean: round6(r.HarmonicMean), Min: round6(r.Min), Max: round6(r.Max), Frames: r.Frames, FPS: r.FPS,
		Features: r.Features, DistortedScaledFrom: r.DistortedScaledFrom, Alignment: r.Alignment, OutputError: oneLine(r.OutputError, 128),
		Report: r.Report != "", Error: r.Error,
	}
	if p := r.Percentiles; p != nil {
		row.Percentiles = &vmafxv1.WorkerPercentiles{P1: round6(p.P1), P5: round6(p.P5), P50: round6(p.P50)}
	}
	for _, f := range r.WorstFrames {
		row.WorstFrames = append(row.WorstFrames, vmafxv1.WorkerFrame{Index: f.Index, VMAF: round6(f.VMAF)})
	}
	if sc := r.Scenes; sc != nil {
		row.Scenes = &vmafxv1.WorkerScenes{Count: sc.Count}
		if w := sc.Worst; w != nil {
			row.Scenes.Worst = &vmafxv1.WorkerScene{Start: w.Start, Frames: w.Frames, Mean: round6(w.Mean), Min: round6(w.Min), P5: round6(w.P5)}
		}
	}
	return row
}

// round6 is x to six decimals as the status prints it (%.6f), so that the status shows a
// row's figures as it shows a single score's, to the digit; a value that is not a
// finite number is 0, as the JSON cannot carry it.
func round6(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 6, 64), 64)
	return r
}

// reasonCodes are the exit codes of the reasons.
var reasonCodes = map[string]int{
	vmafxv1.ReasonBadInput:           ExitBadInput,
	vmafxv1.ReasonFetchFailed:        ExitFetchFailed,
	vmafxv1.ReasonBadModel:           ExitBadModel,
	vmafxv1.ReasonBackendUnavailable: ExitBackendUnavailable,
	vmafxv1.ReasonInternal:           ExitInternal,
}

// Renditions returns the result of a run that scored rows, one per rendition, and its
// exit code: 0 when at least one rendition has a score, as the others failed alone;
// when none has, the run failed for the first row's reason, which its Error repeats.
func Renditions(rows []vmafxv1.WorkerRendition, p Provenance, wall time.Duration) (*vmafxv1.WorkerResult, int) {
	r := p.result(wall)
	r.Renditions = rows
	for _, row := range rows {
		if row.Error == nil {
			return r, ExitOK
		}
	}
	first := rows[0].Error
	r.Error = &vmafxv1.WorkerError{Reason: first.Reason, Message: oneLine("every rendition failed; the first: "+first.Message, maxMessage)}
	code, ok := reasonCodes[first.Reason]
	if !ok {
		code = ExitInternal
	}
	return r, code
}

// shrinkRenditions gives up, to fit the termination message, the last of every row's
// worst frames (down to one each), then the rows' extra features, their alignments, their
// scenes, and last their percentiles and worst frames; false once there is nothing left
// to give up.
func shrinkRenditions(rows []vmafxv1.WorkerRendition) ([]vmafxv1.WorkerRendition, bool) {
	out := make([]vmafxv1.WorkerRendition, len(rows))
	copy(out, rows)
	for _, drop := range []func(*vmafxv1.WorkerRendition) bool{
		func(r *vmafxv1.WorkerRendition) bool {
			if len(r.WorstFrames) <= 1 {
				return false
			}
			r.WorstFrames = r.WorstFrames[:len(r.WorstFrames)-1]
			return true
		},
		func(r *vmafxv1.WorkerRendition) bool { d := r.Features != nil; r.Features = nil; return d },
		func(r *vmafxv1.WorkerRendition) bool { d := r.Alignment != nil; r.Alignment = nil; return d },
		func(r *vmafxv1.WorkerRendition) bool { d := r.Scenes != nil; r.Scenes = nil; return d },
		func(r *vmafxv1.WorkerRendition) bool {
			d := r.Percentiles != nil || r.WorstFrames != nil
			r.Percentiles, r.WorstFrames = nil, nil
			return d
		},
	} {
		dropped := false
		for i := range out {
			dropped = drop(&out[i]) || dropped
		}
		if dropped {
			return out, true
		}
	}
	return rows, false
}
