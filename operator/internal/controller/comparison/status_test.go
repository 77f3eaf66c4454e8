package comparison

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestSetStatus(t *testing.T) {
	e := func(name string, phase vmafxv1.JobPhase, score string) vmafxv1.ComparisonEntry {
		return vmafxv1.ComparisonEntry{Name: name, Phase: phase, Score: score}
	}
	tests := []struct {
		name                string
		table               []vmafxv1.ComparisonEntry
		phase               vmafxv1.JobPhase
		best                string
		complete, failed    bool
		succeeded, failures int32
	}{
		{"all pending", []vmafxv1.ComparisonEntry{e("a", vmafxv1.JobPending, ""), e("b", vmafxv1.JobPending, "")}, vmafxv1.JobPending, "", false, false, 0, 0},
		{"one running", []vmafxv1.ComparisonEntry{e("a", vmafxv1.JobRunning, ""), e("b", vmafxv1.JobPending, "")}, vmafxv1.JobRunning, "", false, false, 0, 0},
		{"one scored", []vmafxv1.ComparisonEntry{e("a", vmafxv1.JobSucceeded, "80.000000"), e("b", vmafxv1.JobPending, "")}, vmafxv1.JobRunning, "a", false, false, 1, 0},
		{"all scored, best by number", []vmafxv1.ComparisonEntry{e("a", vmafxv1.JobSucceeded, "9.500000"), e("b", vmafxv1.JobSucceeded, "10.000000")}, vmafxv1.JobSucceeded, "b", true, false, 2, 0},
		{"one failed, one running", []vmafxv1.ComparisonEntry{e("a", vmafxv1.JobFailed, ""), e("b", vmafxv1.JobRunning, "")}, vmafxv1.JobRunning, "", false, true, 0, 1},
		{"all finished, one failed", []vmafxv1.ComparisonEntry{e("a", vmafxv1.JobFailed, ""), e("b", vmafxv1.JobSucceeded, "50.000000")}, vmafxv1.JobFailed, "b", true, true, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &vmafxv1.VmafxComparison{}
			setStatus(c, tc.table)
			s := c.Status
			if s.Phase != tc.phase || s.Best != tc.best || s.Succeeded != tc.succeeded || s.Failed != tc.failures || s.Total != int32(len(tc.table)) {
				t.Errorf("status %+v; want phase %s, best %q, %d succeeded, %d failed", s, tc.phase, tc.best, tc.succeeded, tc.failures)
			}
			if got := meta.IsStatusConditionTrue(s.Conditions, vmafxv1.ComparisonComplete); got != tc.complete {
				t.Errorf("Complete %v, want %v", got, tc.complete)
			}
			if got := meta.IsStatusConditionTrue(s.Conditions, vmafxv1.ComparisonFailed); got != tc.failed {
				t.Errorf("Failed %v, want %v", got, tc.failed)
			}
		})
	}
}

// TestAlignmentInTable: the comparison hands its alignment to every job, and the table
// shows the offset each job's search found, and whether its score is likely misaligned.
func TestAlignmentInTable(t *testing.T) {
	cmp := &vmafxv1.VmafxComparison{Spec: vmafxv1.VmafxComparisonSpec{
		Reference: "s3://m/ref.mkv",
		Distorted: []vmafxv1.ComparisonInput{{URI: "s3://m/a.mp4"}, {URI: "s3://m/b.mp4"}},
		Alignment: &vmafxv1.Alignment{Auto: true, Window: 10},
	}}
	job := BuildJob(cmp, 1)
	if a := job.Spec.Alignment; a == nil || !a.Auto || a.Window != 10 || a == cmp.Spec.Alignment {
		t.Fatalf("job alignment %+v, want a copy of the comparison's", a)
	}
	job.Status.Phase = vmafxv1.JobSucceeded
	job.Status.Result = &vmafxv1.JobResult{Mean: "90.000000", Alignment: &vmafxv1.JobAlignment{Auto: true, Offset: -3, ReferenceStart: 3}}
	var e vmafxv1.ComparisonEntry
	fromJob(&e, job)
	if e.Offset == nil || *e.Offset != -3 || e.Misaligned {
		t.Errorf("entry offset %v misaligned %v, want -3, false", e.Offset, e.Misaligned)
	}
	job.Status.Result.Alignment = &vmafxv1.JobAlignment{Offset: 2, Misaligned: true}
	fromJob(&e, job)
	if e.Offset == nil || *e.Offset != 2 || !e.Misaligned {
		t.Errorf("entry offset %v misaligned %v, want 2, true", e.Offset, e.Misaligned)
	}
	job.Status.Result.Alignment = nil
	fromJob(&e, job)
	if e.Offset != nil || e.Misaligned {
		t.Errorf("entry offset %v misaligned %v without an alignment, want none", e.Offset, e.Misaligned)
	}
}
