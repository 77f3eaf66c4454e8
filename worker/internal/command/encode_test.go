package command

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil/fftest"
)

// TestEncodeThenScore runs what a ladder rung runs: "encode" writes a downscaled encode
// and reports it, and "score" scores it against the reference, scaled back.
func TestEncodeThenScore(t *testing.T) {
	fftest.Tools(t)
	out := filepath.Join(t.TempDir(), "rungs", "72p-x264-crf30.mkv")
	r := runWorker(t, context.Background(), nil, "encode", "--reference", "file://"+encoded("ref_ffv1.mkv"),
		"--output", "file://"+out, "--encoder", "libx264", "--value", "30", "--height", "72")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if r.stdout != r.termination {
		t.Errorf("stdout %q differs from the termination message %q", r.stdout, r.termination)
	}
	res, err := vmafxv1.ParseEncodeResult([]byte(r.termination))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "file://"+out || res.Bytes != fi.Size() || res.Width != 88 || res.Height != 72 || res.Frames != 24 || res.Encoder != "libx264" {
		t.Errorf("result %+v, want the 88x72 24-frame encode at %s of %d bytes", res, out, fi.Size())
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*.tmp")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	s := runWorker(t, context.Background(), nil, "score", "--reference", encoded("ref_ffv1.mkv"), "--distorted", "file://"+out)
	if s.code != 0 {
		t.Fatalf("score exit %d, stderr:\n%s", s.code, s.stderr)
	}
	got := s.result(t)
	if got.DistortedScaledFrom != "88x72" || got.Score <= 0 || got.Score >= 100 || got.Frames != 24 {
		t.Errorf("score %v of %d frames scaled from %q; want a score of the 88x72 encode", got.Score, got.Frames, got.DistortedScaledFrom)
	}
}

func TestEncodeFailures(t *testing.T) {
	fftest.Tools(t)
	dir := t.TempDir()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantReason string
		wantIn     string
	}{
		{"no output", []string{"--reference", encoded("ref_ffv1.mkv"), "--encoder", "libx264", "--value", "30", "--height", "72"}, 2, vmafxv1.ReasonBadInput, "--output"},
		{"unknown encoder", []string{"--reference", encoded("ref_ffv1.mkv"), "--output", "file://" + dir + "/a.mkv", "--encoder", "libvpx", "--value", "30", "--height", "72"}, 2, vmafxv1.ReasonBadInput, "libvpx"},
		{"audio only", []string{"--reference", encoded("bad_audio_only.mka"), "--output", "file://" + dir + "/a.mkv", "--encoder", "libx264", "--value", "30", "--height", "72"}, 2, vmafxv1.ReasonBadInput, "libx264"},
		{"missing reference", []string{"--reference", "file://" + dir + "/none.mkv", "--output", "file://" + dir + "/a.mkv", "--encoder", "libx264", "--value", "30", "--height", "72"}, 2, vmafxv1.ReasonBadInput, "none.mkv"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runWorker(t, context.Background(), nil, append([]string{"encode"}, tc.args...)...)
			res, err := vmafxv1.ParseEncodeResult([]byte(r.termination))
			if err != nil {
				t.Fatalf("%v (stderr %s)", err, r.stderr)
			}
			if r.code != tc.wantCode || res.Error == nil || res.Error.Reason != tc.wantReason || !strings.Contains(res.Error.Message, tc.wantIn) {
				t.Errorf("exit %d, result %+v; want exit %d, %s naming %q", r.code, res.Error, tc.wantCode, tc.wantReason, tc.wantIn)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "a.mkv")); err == nil {
		t.Error("a failed encode left an output")
	}
}

func TestLadderReport(t *testing.T) {
	dir := t.TempDir()
	table := `[{"name":"72p-x264-crf30","encoder":"libx264","rateControl":"crf","value":30,"height":72,"phase":"Succeeded","resolution":"88x72","bitrate":25000,"bytes":3000,"score":"60.000000","hull":true}]`
	r := runWorker(t, context.Background(), nil, "ladder-report", "--output", "file://"+dir+"/run1/", "--name", "l1", "--table", table)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	res, err := vmafxv1.ParseReportResult([]byte(r.termination))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ladder.json", "ladder.csv", "ladder.svg"} {
		data, err := os.ReadFile(filepath.Join(dir, "run1", f))
		if err != nil || !strings.Contains(string(data), "72p") {
			t.Errorf("%s: %v, content %q", f, err, data)
		}
	}
	if len(res.Files) != 3 || res.Files[2] != "file://"+dir+"/run1/ladder.svg" {
		t.Errorf("files %v", res.Files)
	}
	for _, bad := range []run{
		runWorker(t, context.Background(), nil, "ladder-report", "--output", "file://"+dir, "--table", "{"),
		runWorker(t, context.Background(), map[string]string{"VMAFX_TABLE": "{"}, "ladder-report", "--output", "file://"+dir),
	} {
		if res, err := vmafxv1.ParseReportResult([]byte(bad.termination)); err != nil || bad.code != 2 || res.Error == nil || res.Error.Reason != vmafxv1.ReasonBadInput {
			t.Errorf("a broken table: exit %d, %+v, %v; want BadInput", bad.code, res, err)
		}
	}
}
