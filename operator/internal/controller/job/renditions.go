package job

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/workermemory"
	"github.com/vmafx/vmafx/operator/internal/attempt"
	"github.com/vmafx/vmafx/vmaf"
)

// A job with spec.renditions scores spec.distorted and every rendition in one worker Pod,
// against one decode of the reference (the worker's renditions mode), and records one row
// per distorted video in status.results, in spec order.
//
// Rows and attempts:
//   - A row that succeeded, or failed for a cause no retry changes (BadInput, BadModel),
//     is final and recorded at once.
//   - A row that failed for another cause (FetchFailed, Internal, BackendUnavailable) is
//     scored again by the next attempt while spec.backoffLimit allows: the attempt counts
//     as failed, and the next one's request lists only the distorted videos without a row
//     (missingRenditions). Once the limit is spent, such a row is final as it is.
//   - A failure that leaves no rows (the reference, the model, the Pod) is the attempt
//     engine's, as for any job; its retry scores the same missing videos.
//
// The job Succeeds once every distorted video has a row and at least one row succeeded:
// a comparison reads each row on its own. status.result and status.score are
// spec.distorted's row's, so the job's columns keep their meaning; they are empty when
// that row failed. A job whose every row failed Fails with the first row's reason.

// hasRenditions says whether job scores several distorted videos in one Pod.
func hasRenditions(job *vmafxv1.VmafxJob) bool { return len(job.Spec.Renditions) > 0 }

// rendition is one distorted video of a job and its output; index 0 is spec.distorted.
type rendition struct {
	distorted, output string
}

// renditionsOf lists job's distorted videos in spec order, spec.distorted first.
func renditionsOf(job *vmafxv1.VmafxJob) []rendition {
	first := rendition{distorted: string(job.Spec.Distorted)}
	if job.Spec.Output != nil {
		first.output = string(*job.Spec.Output)
	}
	out := []rendition{first}
	for _, r := range job.Spec.Renditions {
		rr := rendition{distorted: string(r.Distorted)}
		if r.Output != nil {
			rr.output = string(*r.Output)
		}
		out = append(out, rr)
	}
	return out
}

// missingRenditions are the indexes, in spec order, of the distorted videos without a
// row yet: what the next attempt scores.
func missingRenditions(job *vmafxv1.VmafxJob) []int {
	var out []int
	for i, row := range job.RenditionRows() {
		if row == nil {
			out = append(out, i)
		}
	}
	return out
}

// renditionMemory is what each distorted video beyond the first adds to the memory of a
// worker scoring job's videos against one decoded reference: its kernel at one thread and
// its decoder, over the share of the limit the worker plans to use, as the worker counts
// them (package workermemory), so that the group's Pod asks for what its worker will use
// (the worker lowers its threads to fit the limit, and fails at once when not even one
// each fits). The geometry is the spec's where it gives one (width, height and
// pixelFormat, scored at scoringBitDepth, the distorted videos decoded at encode's size
// when larger); a renditions job has no probe, and Y4M and encoded inputs carry their
// own, unknown until the worker opens them: then 1080p 8-bit 4:2:0 (about 320 MiB a
// video without extra features), as most ladders top out there.
func renditionMemory(job *vmafxv1.VmafxJob) resource.Quantity {
	s := job.Spec
	info := workermemory.Default1080p
	if s.Width != nil && s.Height != nil {
		info = vmaf.VideoInfo{Width: int(*s.Width), Height: int(*s.Height), Format: vmaf.YUV420P}
		if f, err := vmaf.ParsePixelFormat(string(s.PixelFormat)); err == nil {
			info.Format = f
		}
	}
	if d := s.ScoringBitDepth; d != nil && info.Format.BitDepth() < int(*d) {
		// Scored at a greater depth, every sample takes two bytes.
		if f, err := vmaf.ParsePixelFormat(fmt.Sprintf("%s%dle", info.Format, *d)); err == nil {
			info.Format = f
		}
	}
	decoded := info
	if e := s.Encode; e != nil && e.Width != nil && e.Height != nil && int64(*e.Width)*int64(*e.Height) > int64(info.Width)*int64(info.Height) {
		decoded.Width, decoded.Height = int(*e.Width), int(*e.Height)
	}
	var features []vmaf.Feature
	for _, f := range s.Features {
		if vf, err := vmaf.ParseFeature(string(f)); err == nil {
			features = append(features, vf)
		}
	}
	// A built-in model's own needs (VMAF v1's SpEED chroma and CAMBI take more than
	// VIF); a model from a registry is unknown until the worker loads it: counted as the
	// default model, as the worker then fits its threads to the limit.
	var model *vmaf.Model
	if s.Model != "" && !s.Model.IsOCI() {
		model, _ = vmaf.LoadModel(string(s.Model))
	}
	return *resource.NewQuantity(workermemory.Rendition(info, decoded, features, model), resource.BinarySI)
}

// addRenditionMemory raises the memory request and limit, where set, of a worker Pod
// scoring n of job's distorted videos by renditionMemory for each beyond the first.
func addRenditionMemory(res corev1.ResourceRequirements, job *vmafxv1.VmafxJob, n int) {
	if n <= 1 {
		return
	}
	each := renditionMemory(job)
	for _, list := range []corev1.ResourceList{res.Requests, res.Limits} {
		if q, ok := list[corev1.ResourceMemory]; ok {
			extra := each.DeepCopy()
			extra.Mul(int64(n - 1))
			q.Add(extra)
			list[corev1.ResourceMemory] = q
		}
	}
}

// requestRenditions sets the distorted videos of r to those of job without a row yet:
// the first as r's own, the rest as its renditions.
func requestRenditions(job *vmafxv1.VmafxJob, r *vmafxv1.ScoreRequest) {
	all, missing := renditionsOf(job), missingRenditions(job)
	if len(missing) == 0 { // a finished job makes no Pod; keep the request whole
		missing = []int{0}
	}
	r.Distorted, r.Output, r.Renditions = all[missing[0]].distorted, all[missing[0]].output, nil
	for _, i := range missing[1:] {
		r.Renditions = append(r.Renditions, vmafxv1.RequestRendition{Distorted: all[i].distorted, Output: all[i].output})
	}
	// The output format goes with an output, and none of these may have one.
	some := r.Output != ""
	for _, rr := range r.Renditions {
		some = some || rr.Output != ""
	}
	if !some {
		r.OutputFormat = ""
	}
}

// renditionsResult is the renditions result in pod's termination message, when it has
// one the job can record: a row for each distorted video the attempt scored. Nil
// otherwise (the worker failed before any row, or its message is not such a result): then
// the attempt engine decides, as for any job.
func renditionsResult(job *vmafxv1.VmafxJob, pod *corev1.Pod) *vmafxv1.WorkerResult {
	msg := attempt.TerminationMessage(pod)
	if msg == "" {
		return nil
	}
	res, err := vmafxv1.ParseWorkerResult([]byte(msg))
	if err != nil {
		return nil
	}
	if len(res.Renditions) == 0 && len(missingRenditions(job)) == 1 {
		// A retry of one video's request is a plain score: its result is that row.
		r := *res
		r.Renditions = []vmafxv1.WorkerRendition{asRow(res)}
		r.Error = res.Error
		return &r
	}
	if len(res.Renditions) == 0 || len(res.Renditions) != len(missingRenditions(job)) {
		return nil
	}
	if res.Error != nil {
		// Every row failed: a row without its error is not a result to record.
		for _, row := range res.Renditions {
			if row.Error == nil {
				return nil
			}
		}
	}
	return res
}

// asRow is a single score's result as a renditions row.
func asRow(r *vmafxv1.WorkerResult) vmafxv1.WorkerRendition {
	if r.Error != nil {
		return vmafxv1.WorkerRendition{Error: r.Error}
	}
	row := vmafxv1.WorkerRendition{Score: r.Score, HarmonicMean: r.HarmonicMean, Min: r.Min, Max: r.Max, Frames: r.Frames, FPS: r.FPS,
		Features: r.Features, DistortedScaledFrom: r.DistortedScaledFrom, Alignment: r.Alignment, OutputError: r.OutputError,
		Percentiles: r.Percentiles, WorstFrames: r.WorstFrames, Scenes: r.Scenes, Report: r.Report != ""}
	return row
}

// renditionsEnded records the rows of attempt n, whose Pod ended with result res, and
// decides what follows: another attempt for the rows that may fare better, or the end.
func (r *Reconciler) renditionsEnded(s *scope, n int32, pod *corev1.Pod, o observation, res *vmafxv1.WorkerResult) ctrl.Result {
	job, st := s.job, &s.job.Status
	all, missing := renditionsOf(job), missingRenditions(job)
	retries := st.FailedAttempts+1 <= backoffLimit(job)
	var again []string
	var why *vmafxv1.WorkerError
	for i, row := range res.Renditions {
		idx := missing[i]
		if row.Error != nil && !attempt.Permanent(row.Error.Reason) && retries {
			again = append(again, all[idx].distorted)
			if why == nil {
				why = row.Error
			}
			continue
		}
		recordRow(job, idx, all[idx], row)
		if idx == 0 && row.Error == nil {
			setResult(job, rowResult(res, row, all[idx].output))
		}
	}
	if len(again) > 0 {
		st.FailedAttempts++
		st.LostAttempts = max(n-st.FailedAttempts, 0)
		at := r.policy(job).RetryAt(st.FailedAttempts, o.Ended, s.now)
		msg := fmt.Sprintf("%d of %d distorted videos to score again (%s), the first: %s", len(again), len(all), strings.Join(again, ", "), oneLine(why.Message))
		setRetrying(job, observation{Reason: why.Reason, Message: msg}, n, at)
		s.emit(true, attempt.ReasonAttemptFailed, "Retry", job.Status.Message, pod)
		return ctrl.Result{RequeueAfter: max(at.Sub(s.now), 0) + recheckMargin}
	}
	if reason := setRenditionsDone(job, o, res, s.now); reason != "" {
		s.emit(true, reason, "Fail", job.Status.Message, pod)
	} else {
		s.emit(false, ReasonSucceeded, "Score", job.Status.Message, pod)
	}
	return ctrl.Result{}
}

// recordRow records row as the row of job's distorted video idx (in spec order), v,
// keeping status.results in spec order.
func recordRow(job *vmafxv1.VmafxJob, idx int, v rendition, row vmafxv1.WorkerRendition) {
	jr := vmafxv1.JobRenditionResult{Distorted: v.distorted, Phase: vmafxv1.JobSucceeded}
	if e := row.Error; e != nil {
		jr.Phase, jr.Reason, jr.Message = vmafxv1.JobFailed, e.Reason, oneLine(e.Message)
	} else {
		jr.Mean, jr.HarmonicMean, jr.Min, jr.Max = decimal(row.Score), decimal(row.HarmonicMean), decimal(row.Min), decimal(row.Max)
		jr.Frames, jr.DistortedScaledFrom, jr.OutputError = int32(row.Frames), row.DistortedScaledFrom, oneLine(row.OutputError)
		w := rowWorst(row, v.output)
		jr.JobWorst = jobWorst(&w)
		if len(row.Features) > 0 {
			jr.Features = make(map[string]string, len(row.Features))
			for name, v := range row.Features {
				jr.Features[name] = decimal(v)
			}
		}
		if a := row.Alignment; a != nil {
			jr.Alignment = jobAlignment(a)
		}
	}
	rows := job.RenditionRows()
	rows[idx] = &jr
	var results []vmafxv1.JobRenditionResult
	for _, r := range rows {
		if r != nil {
			results = append(results, *r)
		}
	}
	job.Status.Results = results
}

// rowResult is row as a single score's result, with the provenance of res, the result
// it is a row of; output is the row's video's.
func rowResult(res *vmafxv1.WorkerResult, row vmafxv1.WorkerRendition, output string) *vmafxv1.WorkerResult {
	r := *res
	r.Renditions, r.Error = nil, nil
	r.Score, r.HarmonicMean, r.Min, r.Max, r.Frames, r.FPS = row.Score, row.HarmonicMean, row.Min, row.Max, row.Frames, row.FPS
	r.Features, r.DistortedScaledFrom, r.Alignment, r.OutputError = row.Features, row.DistortedScaledFrom, row.Alignment, row.OutputError
	w := rowWorst(row, output)
	r.Percentiles, r.WorstFrames, r.Scenes, r.Report = w.Percentiles, w.WorstFrames, w.Scenes, w.Report
	return &r
}

// setRenditionsDone ends a job whose every distorted video has its row: Succeeded when
// any row succeeded, else Failed with the first row's reason, which it returns.
func setRenditionsDone(job *vmafxv1.VmafxJob, o observation, res *vmafxv1.WorkerResult, now time.Time) (failReason string) {
	rows := job.Status.Results
	var failed []string
	for _, row := range rows {
		if row.Phase != vmafxv1.JobSucceeded {
			failed = append(failed, row.Distorted)
		}
	}
	if len(failed) == len(rows) {
		first := rows[0]
		setFailed(job, first.Reason, oneLine(fmt.Sprintf("every distorted video failed; the first (%s): %s", first.Distorted, first.Message)), now)
		return first.Reason
	}
	var msg string
	if job.Status.Result != nil {
		msg = scoreMessage(job, rowResult(res, vmafxv1.WorkerRendition{Frames: int(job.Status.Result.Frames)}, ""), o.Node)
		msg = strings.Replace(msg, "VMAF", "spec.distorted: VMAF", 1)
	} else {
		msg = fmt.Sprintf("spec.distorted failed (%s): %s", rows[0].Reason, rows[0].Message)
	}
	msg = fmt.Sprintf("%d of %d distorted videos scored (status.results); %s", len(rows)-len(failed), len(rows), msg)
	if len(failed) > 0 {
		msg += "; failed: " + strings.Join(failed, ", ")
	}
	succeed(job, o, now, oneLine(msg))
	return ""
}
