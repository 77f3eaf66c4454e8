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
			Status: vmafxv1.VmafxJobStatus{Phase: vmafxv1.JobSucceeded, Result: &vmafxv1.JobResult{JobWorst: vmafxv1.JobWorst{Report: report}}}}
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
		if got := ReportOf(tc.job, 0); got != tc.want {
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
	if got, want := strings.Join(Pictures(job, 0), " "), "frame-000031.png frame-000004.png scores.svg scores.png"; got != want {
		t.Errorf("Pictures = %q, want %q", got, want)
	}
	if ContentType("scores.svg") != SVG || ContentType("scores.png") != PNG || ContentType("frame-000031.png") != PNG {
		t.Error("content types: want image/svg+xml for the SVG plot, image/png for the rest")
	}
	job.Status.Phase = vmafxv1.JobRunning
	if got := Pictures(job, 0); len(got) != 0 {
		t.Errorf("Pictures of a running job = %q, want none", got)
	}
}

// TestGroupPictures: each distorted video of a shared-reference group has its own report
// beside its own output, and its own worst frames' pictures; a video without a row, or
// whose status names a report elsewhere, has none.
func TestGroupPictures(t *testing.T) {
	out := func(s string) *vmafxv1.OutputURI { o := vmafxv1.OutputURI(s); return &o }
	job := &vmafxv1.VmafxJob{Spec: vmafxv1.VmafxJobSpec{Distorted: "s3://media/a.mp4", Output: out("s3://media/a.json"),
		Renditions: []vmafxv1.JobRendition{{Distorted: "s3://media/b.mp4", Output: out("s3://media/b.json")},
			{Distorted: "s3://media/c.mp4", Output: out("s3://media/c.json")}, {Distorted: "s3://media/d.mp4", Output: out("s3://media/d.json")}},
		WorstFrames: &vmafxv1.WorstFrames{Pictures: true}},
		Status: vmafxv1.VmafxJobStatus{Phase: vmafxv1.JobSucceeded, Results: []vmafxv1.JobRenditionResult{
			{Distorted: "s3://media/a.mp4", Phase: vmafxv1.JobSucceeded, JobWorst: vmafxv1.JobWorst{Report: "s3://media/a.json.report/",
				WorstFrames: []vmafxv1.JobFrame{{Index: 3, VMAF: "20.000000"}}}},
			{Distorted: "s3://media/b.mp4", Phase: vmafxv1.JobSucceeded, JobWorst: vmafxv1.JobWorst{Report: "s3://media/b.json.report/",
				WorstFrames: []vmafxv1.JobFrame{{Index: 17, VMAF: "40.000000"}, {Index: 2, VMAF: "41.000000"}}}},
			{Distorted: "s3://media/c.mp4", Phase: vmafxv1.JobSucceeded, JobWorst: vmafxv1.JobWorst{Report: "s3://media/a.json.report/",
				WorstFrames: []vmafxv1.JobFrame{{Index: 5, VMAF: "50.000000"}}}},
		}}}
	for k, want := range []string{"frame-000003.png scores.svg scores.png", "frame-000017.png frame-000002.png scores.svg scores.png", "", "", ""} {
		if got := strings.Join(Pictures(job, k), " "); got != want {
			t.Errorf("rendition %d: Pictures = %q, want %q", k, got, want)
		}
	}
	if got := ReportOf(job, 1); got != "s3://media/b.json.report/" {
		t.Errorf("rendition 1: ReportOf = %q, want b's", got)
	}
}
