package comparison

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func sharedComparison(n int32, inputs ...string) *vmafxv1.VmafxComparison {
	c := &vmafxv1.VmafxComparison{ObjectMeta: metav1.ObjectMeta{Name: "ab", Namespace: "ns", UID: "u1"}, Spec: vmafxv1.VmafxComparisonSpec{
		Reference: "s3://m/ref.mp4", Output: ptr.To[vmafxv1.OutputURI]("s3://m/out"), SharedReference: &vmafxv1.SharedReference{MaxRenditionsPerPod: n},
	}}
	for _, name := range inputs {
		c.Spec.Distorted = append(c.Spec.Distorted, vmafxv1.ComparisonInput{Name: name, URI: vmafxv1.VideoURI("s3://m/" + name + ".mp4")})
	}
	return c
}

// TestBuildJobGroups: with sharedReference the inputs are grouped in spec order, N to a
// job named after its first input, the others its renditions with their own outputs;
// without it, one job each.
func TestBuildJobGroups(t *testing.T) {
	c := sharedComparison(2, "a", "b", "c", "d", "e")
	for i, want := range []struct {
		job        string
		distorted  string
		renditions []string
	}{
		{"ab-a", "s3://m/a.mp4", []string{"s3://m/b.mp4"}},
		{"ab-a", "s3://m/a.mp4", []string{"s3://m/b.mp4"}},
		{"ab-c", "s3://m/c.mp4", []string{"s3://m/d.mp4"}},
		{"ab-c", "s3://m/c.mp4", []string{"s3://m/d.mp4"}},
		{"ab-e", "s3://m/e.mp4", nil},
	} {
		job := BuildJob(c, i)
		var got []string
		for _, r := range job.Spec.Renditions {
			got = append(got, string(r.Distorted))
			if r.Output == nil || string(*r.Output) != "s3://m/out/"+string(r.Distorted)[len("s3://m/"):len(r.Distorted)-len(".mp4")]+".json" {
				t.Errorf("input %d: rendition %s has output %v, want its own under the comparison's output", i, r.Distorted, r.Output)
			}
		}
		if job.Name != want.job || string(job.Spec.Distorted) != want.distorted || len(got) != len(want.renditions) || (len(got) > 0 && got[0] != want.renditions[0]) {
			t.Errorf("input %d: job %s scores %s and %v; want %s scoring %s and %v", i, job.Name, job.Spec.Distorted, got, want.job, want.distorted, want.renditions)
		}
	}
	c.Spec.SharedReference = &vmafxv1.SharedReference{} // not defaulted: 4
	if job := BuildJob(c, 4); job.Name != "ab-e" || len(BuildJob(c, 0).Spec.Renditions) != 3 {
		t.Errorf("default group size: input 5's job %s, input 1's job has %d renditions; want ab-e and 3", job.Name, len(BuildJob(c, 0).Spec.Renditions))
	}
	c.Spec.SharedReference = nil
	if job := BuildJob(c, 1); job.Name != "ab-b" || len(job.Spec.Renditions) != 0 {
		t.Errorf("without sharedReference: input 2's job %s with %d renditions, want ab-b alone", job.Name, len(job.Spec.Renditions))
	}
}

// TestFromJobRow: each input reads its own row of its group's job; an input without a
// row is where the job is.
func TestFromJobRow(t *testing.T) {
	c := sharedComparison(3, "a", "b", "c")
	job := BuildJob(c, 0)
	job.Status.Phase = vmafxv1.JobRunning
	job.Status.Results = []vmafxv1.JobRenditionResult{
		{Distorted: "s3://m/b.mp4", Phase: vmafxv1.JobFailed, Reason: vmafxv1.ReasonBadInput, Message: "not a video"},
	}
	var a, b, cc vmafxv1.ComparisonEntry
	fromJobRow(&a, job, 0)
	fromJobRow(&b, job, 1)
	if a.Phase != vmafxv1.JobRunning || b.Phase != vmafxv1.JobFailed || b.Message != "BadInput: not a video" {
		t.Errorf("a %+v, b %+v; want a Running with its job, b Failed with its row's reason", a, b)
	}
	job.Status.Phase = vmafxv1.JobSucceeded
	job.Status.Results = append(job.Status.Results, vmafxv1.JobRenditionResult{Distorted: "s3://m/c.mp4", Phase: vmafxv1.JobSucceeded,
		Mean: "88.000000", HarmonicMean: "87.000000", Min: "70.000000", Frames: 48,
		JobWorst:  vmafxv1.JobWorst{Percentiles: &vmafxv1.JobPercentiles{P5: "75.000000"}, WorstFrames: []vmafxv1.JobFrame{{Index: 3, VMAF: "70.000000"}, {Index: 4, VMAF: "71.000000"}}},
		Alignment: &vmafxv1.JobAlignment{Offset: 2, Misaligned: true}})
	fromJobRow(&cc, job, 2)
	fromJobRow(&a, job, 0)
	if cc.Phase != vmafxv1.JobSucceeded || cc.Score != "88.000000" || cc.Frames != 48 || cc.P5 != "75.000000" || cc.WorstFrame.Index != 3 || *cc.Offset != 2 || !cc.Misaligned {
		t.Errorf("c %+v, want its row's scores", cc)
	}
	if a.Phase != vmafxv1.JobFailed {
		t.Errorf("a %+v: its job finished without its row; want Failed", a)
	}
}
