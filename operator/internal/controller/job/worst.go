package job

import (
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// requestWorst sets the worker's worst frames and pictures from spec.worstFrames.
// Pictures are drawn only by a Pod that scores the whole video (the API refuses them with
// parallelism above 1).
func requestWorst(s vmafxv1.VmafxJobSpec, r *vmafxv1.ScoreRequest) {
	w := s.WorstFrames
	if w == nil {
		return
	}
	if w.Count != nil {
		r.WorstFrames = ptr.To(int(*w.Count))
	}
	r.Pictures = w.Pictures && s.Parallelism <= 1
}

// jobWorst is the result's percentiles, worst frames, scene summary and report as the
// job's status shows them, bounded as the CRD bounds them: in status.result, or in a row
// of status.results.
func jobWorst(r *vmafxv1.WorkerResult) (jr vmafxv1.JobWorst) {
	if p := r.Percentiles; p != nil {
		jr.Percentiles = &vmafxv1.JobPercentiles{P1: decimal(p.P1), P5: decimal(p.P5), P50: decimal(p.P50)}
	}
	for i, f := range r.WorstFrames {
		if i == vmafxv1.MaxWorstFrames {
			break
		}
		jr.WorstFrames = append(jr.WorstFrames, vmafxv1.JobFrame{Index: int32(f.Index), VMAF: decimal(f.VMAF)})
	}
	if sc := r.Scenes; sc != nil {
		jr.Scenes = &vmafxv1.JobScenes{Count: int32(sc.Count)}
		if w := sc.Worst; w != nil {
			jr.Scenes.Worst = &vmafxv1.JobScene{Start: int32(w.Start), Frames: int32(w.Frames), Mean: decimal(w.Mean), Min: decimal(w.Min), P5: decimal(w.P5)}
		}
	}
	jr.Report = r.Report
	return jr
}

// rowWorst is where row's score is made, as a single score's result has it; output is
// its video's output, beside which its report lies when the row says it was written.
func rowWorst(row vmafxv1.WorkerRendition, output string) vmafxv1.WorkerResult {
	r := vmafxv1.WorkerResult{Percentiles: row.Percentiles, WorstFrames: row.WorstFrames, Scenes: row.Scenes}
	if row.Report && output != "" {
		r.Report = output + vmafxv1.ReportSuffix
	}
	return r
}
