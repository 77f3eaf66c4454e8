package outputs

import (
	"strings"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestReportFileName: the doors serve the names the worker gives its pictures
// and no other path.
func TestReportFileName(t *testing.T) {
	for name, want := range map[string]bool{
		vmafxv1.WorstFramePicture(24): true, vmafxv1.WorstFramePicture(123456): true,
		vmafxv1.ReportPlotSVG: true, vmafxv1.ReportPlotPNG: true,
		vmafxv1.ReportJSON: false, "frame-24.png": false, "frame-0000024.png": false, "frame-000024.png.bak": false,
		"../x264.json": false, "frame-000024.png/../../x": false, "FRAME-000024.PNG": false, "scores.svgz": false, "": false,
	} {
		if got := IsPictureName(name); got != want {
			t.Errorf("report file %q served: %v, want %v", name, got, want)
		}
	}
	if n, ok := frameOf(vmafxv1.WorstFramePicture(37)); !ok || n != 37 {
		t.Errorf("frameOf(%q) = %d, %v; want 37", vmafxv1.WorstFramePicture(37), n, ok)
	}
}

// TestReportOf: a door reads pictures only beside the output the spec names, and
// only when the job drew them.
func TestReportOf(t *testing.T) {
	job := func(pictures bool, report string) *vmafxv1.VmafxJob {
		out := vmafxv1.OutputURI("s3://media/a.json")
		return &vmafxv1.VmafxJob{Spec: vmafxv1.VmafxJobSpec{Output: &out, WorstFrames: &vmafxv1.WorstFrames{Pictures: pictures}},
			Status: vmafxv1.VmafxJobStatus{Result: &vmafxv1.JobResult{JobWorst: vmafxv1.JobWorst{Report: report}}}}
	}
	for _, tc := range []struct {
		name string
		job  *vmafxv1.VmafxJob
		want string
	}{
		{"drawn", job(true, "s3://media/a.json.report/"), "s3://media/a.json.report/"},
		{"no pictures asked", job(false, "s3://media/a.json.report/"), ""},
		{"status elsewhere", job(true, "s3://other/secrets/"), ""},
		{"no report yet", job(true, ""), ""},
		{"no result", &vmafxv1.VmafxJob{}, ""},
	} {
		if got := ReportOf(tc.job); got != tc.want {
			t.Errorf("%s: ReportOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestPictures: a scored job that drew pictures has its worst frames' (lowest first) and
// the plot's; a job still running, or without pictures, has none.
func TestPictures(t *testing.T) {
	out := vmafxv1.OutputURI("s3://media/a.json")
	job := &vmafxv1.VmafxJob{Spec: vmafxv1.VmafxJobSpec{Output: &out, WorstFrames: &vmafxv1.WorstFrames{Pictures: true}},
		Status: vmafxv1.VmafxJobStatus{Phase: vmafxv1.JobSucceeded, Result: &vmafxv1.JobResult{JobWorst: vmafxv1.JobWorst{Report: "s3://media/a.json.report/",
			WorstFrames: []vmafxv1.JobFrame{{Index: 31, VMAF: "20.000000"}, {Index: 4, VMAF: "30.000000"}}}}}}
	if got, want := strings.Join(Pictures(job), " "), "frame-000031.png frame-000004.png scores.svg scores.png"; got != want {
		t.Errorf("Pictures = %q, want %q", got, want)
	}
	if ContentType("scores.svg") != SVG || ContentType("scores.png") != PNG || ContentType("frame-000031.png") != PNG {
		t.Error("content types: want image/svg+xml for the SVG plot, image/png for the rest")
	}
	job.Status.Phase = vmafxv1.JobRunning
	if got := Pictures(job); len(got) != 0 {
		t.Errorf("Pictures of a running job = %q, want none", got)
	}
}
