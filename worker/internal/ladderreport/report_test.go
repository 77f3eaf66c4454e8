package ladderreport

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func table() []vmafxv1.LadderRung {
	r := func(name string, h int32, enc vmafxv1.LadderEncoder, v int32, bitrate int64, score string, hull bool) vmafxv1.LadderRung {
		return vmafxv1.LadderRung{Name: name, Encoder: enc, RateControl: vmafxv1.RateCRF, Value: v, Height: h, Phase: vmafxv1.RungSucceeded,
			Resolution: "x", Bitrate: bitrate, Bytes: bitrate / 8, Score: score, Hull: hull}
	}
	worst := r("360p-x264-crf40", 360, vmafxv1.EncoderX264, 40, 300000, "40.000000", true)
	worst.P5, worst.WorstFrame = "21.500000", &vmafxv1.JobFrame{Index: 117, VMAF: "18.250000"}
	return []vmafxv1.LadderRung{
		worst,
		r("360p-x264-crf30", 360, vmafxv1.EncoderX264, 30, 800000, "62.000000", true),
		r("720p-x264-crf40", 720, vmafxv1.EncoderX264, 40, 700000, "45.000000", false),
		r("720p-x264-crf30", 720, vmafxv1.EncoderX264, 30, 1800000, "80.000000", true),
		{Name: "720p-x264-crf20", Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: 20, Height: 720, Phase: vmafxv1.RungFailed, Message: "boom"},
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestWriteSVG(t *testing.T) {
	var a, b bytes.Buffer
	if err := WriteSVG(&a, "title-<1>", table()); err != nil {
		t.Fatal(err)
	}
	if err := WriteSVG(&b, "title-<1>", table()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two renderings of one table differ")
	}
	// Well-formed XML, the title escaped, a curve per encoder and resolution, one hull.
	if err := xml.Unmarshal(a.Bytes(), new(struct{})); err != nil {
		t.Errorf("not XML: %v", err)
	}
	s := a.String()
	for _, want := range []string{"title-&lt;1&gt;", "x264 360p", "x264 720p", "x264 hull (chosen)"} {
		if !strings.Contains(s, want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	if n := strings.Count(s, "<polyline"); n != 3 {
		t.Errorf("%d polylines, want 2 curves and 1 hull", n)
	}
	golden(t, "ladder.svg", a.Bytes())
}

func TestWriteSVGEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSVG(&b, "none", nil); err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b.Bytes(), new(struct{})); err != nil || strings.Contains(b.String(), "NaN") {
		t.Errorf("empty plot is not clean XML: %v", err)
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, table()); err != nil {
		t.Fatal(err)
	}
	golden(t, "ladder.csv", b.Bytes())
}

func TestNiceCeil(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 0.7: 1, 1: 1, 1.3: 2, 3: 5, 7: 10, 1800: 2000, 4001: 5000} {
		if got := niceCeil(in); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", in, got, want)
		}
	}
}
