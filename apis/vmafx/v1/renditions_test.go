package v1

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParseRenditions: a result of several renditions is checked row by row: failed rows
// pass, a scored row without frames or with a score out of range refuses the message.
func TestParseRenditions(t *testing.T) {
	ok := WorkerRendition{Score: 90, Min: 80, Max: 95, Frames: 10}
	failed := WorkerRendition{Error: &WorkerError{Reason: ReasonBadInput, Message: "short"}}
	for name, c := range map[string]struct {
		rows []WorkerRendition
		want string // "" accepted
	}{
		"scored and failed": {rows: []WorkerRendition{ok, failed}},
		"no frames":         {rows: []WorkerRendition{ok, {Score: 90, Min: 80, Max: 95}}, want: "rendition 1 has no frames"},
		"out of range":      {rows: []WorkerRendition{{Score: 101, Min: 80, Max: 102, Frames: 1}}, want: "rendition 0 score 101"},
		"too many":          {rows: make([]WorkerRendition, MaxWorkerRenditions+1), want: "at most 8"},
	} {
		msg, err := json.Marshal(WorkerResult{Version: ResultVersion, Renditions: c.rows})
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseWorkerResult(msg)
		switch {
		case c.want == "" && (err != nil || len(got.Renditions) != len(c.rows)):
			t.Errorf("%s: %v, %+v; want the rows", name, err, got)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err %v, want %q", name, err, c.want)
		}
	}
}

// TestVideos: a job of one video lists it with status.result; a group's job lists each
// video with its own row's score and worst frames, the job's phase while it has no row,
// and Failed for a video without a row once the job succeeded.
func TestVideos(t *testing.T) {
	out := OutputURI("s3://m/a.json")
	one := &VmafxJob{Spec: VmafxJobSpec{Distorted: "s3://m/a.mp4", Output: &out},
		Status: VmafxJobStatus{Phase: JobSucceeded, Result: &JobResult{Mean: "90.000000", JobWorst: JobWorst{WorstFrames: []JobFrame{{Index: 3, VMAF: "80.000000"}}}}}}
	if vs := one.Videos(); len(vs) != 1 || vs[0].Score != "90.000000" || vs[0].Output != string(out) || vs[0].Worst == nil || vs[0].Worst.WorstFrames[0].Index != 3 {
		t.Errorf("a job of one video: %+v", vs)
	}
	one.Status = VmafxJobStatus{Phase: JobFailed, Message: "BadInput: not a video"}
	if vs := one.Videos(); vs[0].Phase != JobFailed || vs[0].Worst != nil || vs[0].Message != "BadInput: not a video" {
		t.Errorf("a failed job of one video: %+v", vs)
	}

	group := &VmafxJob{Spec: VmafxJobSpec{Distorted: "s3://m/a.mp4", Renditions: []JobRendition{{Distorted: "s3://m/b.mp4"}, {Distorted: "s3://m/c.mp4"}}},
		Status: VmafxJobStatus{Phase: JobRunning, Results: []JobRenditionResult{
			{Distorted: "s3://m/b.mp4", Phase: JobSucceeded, Mean: "70.000000", JobWorst: JobWorst{WorstFrames: []JobFrame{{Index: 9, VMAF: "50.000000"}}}},
			{Distorted: "s3://m/c.mp4", Phase: JobFailed, Reason: "BadInput", Message: "too short"}}}}
	vs := group.Videos()
	if len(vs) != 3 || vs[0].Phase != JobRunning || vs[0].Worst != nil {
		t.Fatalf("a group's job: %+v", vs)
	}
	if vs[1].Score != "70.000000" || vs[1].Worst == nil || vs[1].Worst.WorstFrames[0].Index != 9 || vs[2].Phase != JobFailed || vs[2].Message != "BadInput: too short" {
		t.Errorf("rows: %+v, %+v", vs[1], vs[2])
	}
	group.Status.Phase = JobSucceeded
	if vs := group.Videos(); vs[0].Phase != JobFailed || vs[0].Message == "" {
		t.Errorf("a video without a row of a job that succeeded: %+v, want Failed", vs[0])
	}
}
