package report

import (
	"math"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Row is the compact row of one rendition's result r, for a result of several
// (vmafxv1.WorkerResult.Renditions).
func Row(r *vmafxv1.WorkerResult) vmafxv1.WorkerRendition {
	for _, v := range []float64{r.Score, r.HarmonicMean, r.Min, r.Max, r.FPS} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return vmafxv1.WorkerRendition{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonInternal, Message: "the score is not a finite number"}}
		}
	}
	row := vmafxv1.WorkerRendition{
		Score: r.Score, HarmonicMean: r.HarmonicMean, Min: r.Min, Max: r.Max, Frames: r.Frames, FPS: r.FPS,
		Features: r.Features, DistortedScaledFrom: r.DistortedScaledFrom, Alignment: r.Alignment, OutputError: oneLine(r.OutputError, 128),
		Error: r.Error,
	}
	if r.Percentiles != nil {
		row.P5 = r.Percentiles.P5
	}
	if len(r.WorstFrames) > 0 {
		row.WorstFrame = &vmafxv1.WorkerFrame{Index: r.WorstFrames[0].Index, VMAF: r.WorstFrames[0].VMAF}
	}
	return row
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

// shrinkRenditions gives up, to fit the termination message, the rows' extra features,
// then their alignments and worst frames; false once there is nothing left to give up.
func shrinkRenditions(rows []vmafxv1.WorkerRendition) ([]vmafxv1.WorkerRendition, bool) {
	out := make([]vmafxv1.WorkerRendition, len(rows))
	copy(out, rows)
	for _, drop := range []func(*vmafxv1.WorkerRendition) bool{
		func(r *vmafxv1.WorkerRendition) bool { d := r.Features != nil; r.Features = nil; return d },
		func(r *vmafxv1.WorkerRendition) bool {
			d := r.Alignment != nil || r.WorstFrame != nil
			r.Alignment, r.WorstFrame = nil, nil
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
