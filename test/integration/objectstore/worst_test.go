package objectstore_test

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// The report and pictures land beside an s3:// output, as objects under its URI followed
// by ".report/", and the result names them.
func TestWorkerWritesTheReportToABucket(t *testing.T) {
	bucket := s3.bucket(t)
	clips := filepath.Join(testenv.RepoRoot(), "vmaf/testdata/clips")
	for _, name := range []string{"p02_ref.yuv", "p02_dist.yuv"} {
		data, err := os.ReadFile(filepath.Join(clips, name))
		if err != nil {
			t.Fatal(err)
		}
		s3.put(t, bucket, name, data)
	}
	got, code, logs := runWorker(t, "--reference", "s3://"+bucket+"/p02_ref.yuv", "--distorted", "s3://"+bucket+"/p02_dist.yuv",
		"--width", "176", "--height", "144", "--credentials-dir", testutil.CredentialsDir(t, rootKeys()),
		"--s3-endpoint", s3.endpoint(), "--s3-path-style",
		"--output", "s3://"+bucket+"/results/scores.json", "--pictures", "--worst-frames", "2")
	if code != 0 || got.Error != nil || got.OutputError != "" {
		t.Fatalf("exit %d, %+v, output error %q\n%s", code, got.Error, got.OutputError, logs)
	}
	if want := "s3://" + bucket + "/results/scores.json" + vmafxv1.ReportSuffix; got.Report != want {
		t.Errorf("report %q, want %q", got.Report, want)
	}
	var doc struct {
		WorstFrames []struct {
			Index   int    `json:"index"`
			Picture string `json:"picture"`
		} `json:"worstFrames"`
	}
	prefix := "results/scores.json" + vmafxv1.ReportSuffix
	if err := json.Unmarshal(s3.get(t, bucket, prefix+vmafxv1.ReportJSON), &doc); err != nil || len(doc.WorstFrames) != 2 {
		t.Fatalf("report.json: %v %+v", err, doc)
	}
	for i, f := range doc.WorstFrames {
		if f.Index != got.WorstFrames[i].Index || f.Picture != vmafxv1.WorstFramePicture(f.Index) {
			t.Errorf("report frame %+v, result frame %+v", f, got.WorstFrames[i])
		}
		img, err := png.Decode(bytes.NewReader(s3.get(t, bucket, prefix+f.Picture)))
		if err != nil || img.Bounds().Dy() != 144 {
			t.Errorf("%s: %v %v", f.Picture, err, img)
		}
	}
	if svg := s3.get(t, bucket, prefix+vmafxv1.ReportPlotSVG); !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("scores.svg: %q", svg)
	}
	s3.get(t, bucket, prefix+vmafxv1.ReportPlotPNG)
}
