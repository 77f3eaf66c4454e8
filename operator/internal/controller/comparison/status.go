package comparison

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/text"
)

// maxMessage bounds a job's message copied into the table.
const maxMessage = 512

// recorded returns the entry called name of a previous status, or an empty one.
func recorded(results []vmafxv1.ComparisonEntry, name string) vmafxv1.ComparisonEntry {
	for _, e := range results {
		if e.Name == name {
			return e
		}
	}
	return vmafxv1.ComparisonEntry{}
}

// fromJob fills e from its job's status.
func fromJob(e *vmafxv1.ComparisonEntry, job *vmafxv1.VmafxJob) {
	e.Phase = job.Status.Phase
	if e.Phase == "" {
		e.Phase = vmafxv1.JobPending
	}
	e.Message = ""
	if res := job.Status.Result; e.Phase == vmafxv1.JobSucceeded && res != nil {
		e.Score, e.HarmonicMean, e.Min, e.Frames = res.Mean, res.HarmonicMean, res.Min, res.Frames
		e.P5, e.WorstFrame = res.WorstOf()
		e.Offset, e.Misaligned = nil, false
		if a := res.Alignment; a != nil {
			e.Offset, e.Misaligned = ptr.To(a.Offset), a.Misaligned
		}
	}
	if e.Phase == vmafxv1.JobFailed {
		e.Message = oneLine(job.Status.Message)
	}
}

// fromJobRow fills e from its job's status: the job's own result for a job of one
// input, else row k of the job's status.results (k 0 is the job's spec.distorted).
func fromJobRow(e *vmafxv1.ComparisonEntry, job *vmafxv1.VmafxJob, k int) {
	if len(job.Spec.Renditions) == 0 {
		fromJob(e, job)
		return
	}
	rows := job.RenditionRows()
	var row *vmafxv1.JobRenditionResult
	if k < len(rows) {
		row = rows[k]
	}
	if row == nil {
		// No row yet: the input is where its job is; a job that finished without one
		// failed as a whole (its reference, its Pods).
		fromJob(e, job)
		if e.Phase == vmafxv1.JobSucceeded {
			e.Phase, e.Message = vmafxv1.JobFailed, oneLine("job "+job.Name+" finished without a row for this input")
		}
		return
	}
	e.Phase, e.Message = row.Phase, ""
	if row.Phase != vmafxv1.JobSucceeded {
		e.Message = oneLine(fmt.Sprintf("%s: %s", row.Reason, row.Message))
		return
	}
	e.Score, e.HarmonicMean, e.Min, e.Frames = row.Mean, row.HarmonicMean, row.Min, row.Frames
	e.P5, e.WorstFrame = row.WorstOf()
	e.Offset, e.Misaligned = nil, false
	if a := row.Alignment; a != nil {
		e.Offset, e.Misaligned = ptr.To(a.Offset), a.Misaligned
	}
}

// setStatus derives the comparison's phase, counts, best entry and conditions from its
// table.
func setStatus(cmp *vmafxv1.VmafxComparison, table []vmafxv1.ComparisonEntry) {
	s := &cmp.Status
	s.Results = table
	s.Total = int32(len(table))
	s.Succeeded, s.Failed, s.Best = 0, 0, ""
	started := false
	best := -1.0
	for _, e := range table {
		switch e.Phase {
		case vmafxv1.JobSucceeded:
			s.Succeeded++
			if v, err := strconv.ParseFloat(e.Score, 64); err == nil && v > best {
				best, s.Best = v, e.Name
			}
		case vmafxv1.JobFailed:
			s.Failed++
		case vmafxv1.JobRunning:
			started = true
		}
	}
	done := s.Succeeded + s.Failed
	complete := metav1.Condition{Type: vmafxv1.ComparisonComplete, Status: metav1.ConditionFalse, Reason: ReasonInProgress,
		Message: fmt.Sprintf("%d of %d jobs finished", done, s.Total), ObservedGeneration: cmp.Generation}
	failed := metav1.Condition{Type: vmafxv1.ComparisonFailed, Status: metav1.ConditionFalse, Reason: ReasonInProgress,
		Message: "no job failed", ObservedGeneration: cmp.Generation}
	if done == s.Total {
		failed.Reason = ReasonAllScored
	}
	if s.Failed > 0 {
		failed.Status, failed.Reason = metav1.ConditionTrue, ReasonSomeFailed
		failed.Message = fmt.Sprintf("%d of %d jobs failed: %s", s.Failed, s.Total, failedNames(table))
	}
	switch {
	case done == s.Total && s.Failed == 0:
		s.Phase = vmafxv1.JobSucceeded
		complete.Status, complete.Reason = metav1.ConditionTrue, ReasonAllScored
	case done == s.Total:
		s.Phase = vmafxv1.JobFailed
		complete.Status, complete.Reason = metav1.ConditionTrue, ReasonSomeFailed
	case started || done > 0:
		s.Phase = vmafxv1.JobRunning
	default:
		s.Phase = vmafxv1.JobPending
	}
	meta.SetStatusCondition(&s.Conditions, complete)
	meta.SetStatusCondition(&s.Conditions, failed)
}

func failedNames(table []vmafxv1.ComparisonEntry) string {
	var names []string
	for _, e := range table {
		if e.Phase == vmafxv1.JobFailed {
			names = append(names, e.Name)
		}
	}
	return strings.Join(names, ", ")
}

// oneLine folds s to one bounded line for status and events (text.OneLine).
func oneLine(s string) string { return text.OneLine(s, maxMessage) }
