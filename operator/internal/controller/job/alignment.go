package job

import (
	"fmt"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// The frame offset search's findings (vmafxv1.WorkerAlignment) in a job's status: in
// status.result.alignment, and in the Aligned condition: True once spec.alignment.auto
// scored the offset it found, False when a plain score's pairing is likely misaligned
// (the score is kept, and a Warning event names the offset).

// Condition and event reasons of the frame offset search.
const (
	// ReasonAutoAligned: spec.alignment.auto found the offset and scored it.
	ReasonAutoAligned = "AutoAligned"
	// ReasonLikelyMisaligned: another offset fits the frames clearly better than the
	// pairing scored.
	ReasonLikelyMisaligned = "LikelyMisaligned"
)

// requestAlignment is the worker's alignment and frames for spec.alignment.
func requestAlignment(a *vmafxv1.Alignment) (*vmafxv1.RequestAlignment, *vmafxv1.FrameRange) {
	ra := &vmafxv1.RequestAlignment{ReferenceStart: int(a.ReferenceStart), DistortedStart: int(a.DistortedStart)}
	if a.Auto {
		ra = &vmafxv1.RequestAlignment{Auto: true, Window: int(a.Window)}
	}
	if a.Frames == 0 {
		return ra, nil
	}
	return ra, &vmafxv1.FrameRange{Count: int(a.Frames)}
}

// jobAlignment is a worker's alignment as the job's status shows it.
func jobAlignment(a *vmafxv1.WorkerAlignment) *vmafxv1.JobAlignment {
	return &vmafxv1.JobAlignment{
		Auto: a.Auto, Offset: int32(a.Offset), ReferenceStart: int32(a.ReferenceStart), DistortedStart: int32(a.DistortedStart),
		Misaligned: a.Misaligned, Confidence: fmt.Sprintf("%.2f", a.Confidence),
		Measure: fmt.Sprintf("%s: %.2f dB at offset %s, %.2f dB at the starts given (or 0)", a.Measure, a.BestPSNR, vmafxv1.SignedOffset(a.Offset), a.BasePSNR),
		Rate:    a.Rate,
	}
}

// setAligned records r's alignment in the job's result and the Aligned condition.
func setAligned(job *vmafxv1.VmafxJob, r *vmafxv1.WorkerResult) {
	a := r.Alignment
	if a == nil || job.Status.Result == nil {
		return
	}
	job.Status.Result.Alignment = jobAlignment(a)
	switch {
	case a.Misaligned:
		setCondition(job, vmafxv1.JobAligned, false, ReasonLikelyMisaligned, oneLine(vmafxv1.MisalignedMessage(a)))
	case a.Auto:
		msg := fmt.Sprintf("scored at offset %s: %s (confidence %.2f, %d frame pairs compared at each offset within %d)",
			vmafxv1.SignedOffset(a.Offset), vmafxv1.DescribeOffset(a.Offset), a.Confidence, a.Pairs, a.Window)
		if a.Pairs == 0 {
			msg = "scored from the first frames: the inputs are too short to search for an offset"
		}
		if a.Rate != "" {
			msg += "; " + a.Rate
		}
		setCondition(job, vmafxv1.JobAligned, true, ReasonAutoAligned, oneLine(msg))
	}
}

// alignmentWarning is the Warning event's note for a likely misaligned result; "" if none.
func alignmentWarning(r *vmafxv1.WorkerResult) string {
	if r == nil || r.Alignment == nil || !r.Alignment.Misaligned {
		return ""
	}
	return oneLine(vmafxv1.MisalignedMessage(r.Alignment))
}

// A chunked job with spec.alignment.auto searches in its probe (--probe --auto-align); the
// chunks and the merge are given the starts it found, as spec.alignment's starts would
// be, since a chunk sees only its own frames.

// probedAlignment is the alignment a chunked job's probe found, when the job asked for
// one; nil otherwise.
func probedAlignment(job *vmafxv1.VmafxJob, r *vmafxv1.WorkerResult) *vmafxv1.JobAlignment {
	if a := job.Spec.Alignment; a == nil || !a.Auto || r == nil || r.Alignment == nil {
		return nil
	}
	return jobAlignment(r.Alignment)
}

// alignedJob is job as its chunks and merge are built: with the starts its probe found in
// place of spec.alignment.auto. Without them (no auto, or no probe result yet) it is job.
func (ss *steps) alignedJob(job *vmafxv1.VmafxJob) *vmafxv1.VmafxJob {
	a := job.Spec.Alignment
	if a == nil || !a.Auto || ss.alignment == nil {
		return job
	}
	j := job.DeepCopy()
	j.Spec.Alignment = &vmafxv1.Alignment{ReferenceStart: ss.alignment.ReferenceStart, DistortedStart: ss.alignment.DistortedStart, Frames: a.Frames}
	return j
}

// setChunkedAlignment records a chunked job's probed alignment in its result and the
// Aligned condition, once merged.
func setChunkedAlignment(job *vmafxv1.VmafxJob, a *vmafxv1.JobAlignment) {
	if a == nil || job.Status.Result == nil {
		return
	}
	job.Status.Result.Alignment = a.DeepCopy()
	msg := fmt.Sprintf("scored at offset %s, found by the probe: %s (confidence %s)",
		vmafxv1.SignedOffset(int(a.Offset)), vmafxv1.DescribeOffset(int(a.Offset)), a.Confidence)
	if a.Rate != "" {
		msg += "; " + a.Rate
	}
	setCondition(job, vmafxv1.JobAligned, true, ReasonAutoAligned, oneLine(msg))
}
