package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// plainResult is a rendition's result as a plain score with the default worst frames,
// percentiles, scenes and a report, at the longest figures a float64 prints.
func plainResult(i int) *vmafxv1.WorkerResult {
	r := &vmafxv1.WorkerResult{Score: 91.123456789012345 + float64(i)/10, HarmonicMean: 90.123456789012345, Min: 80.123456789012345,
		Max: 99.123456789012345, Frames: 100000, FPS: 123.456,
		Percentiles: &vmafxv1.WorkerPercentiles{P1: 81.123456789012345, P5: 85.123456789012345, P50: 92.123456789012345},
		Scenes: &vmafxv1.WorkerScenes{Count: 120, Worst: &vmafxv1.WorkerScene{Start: 99000, Frames: 1000, Mean: 84.123456789012345,
			HarmonicMean: 83.123456789012345, Min: 80.123456789012345, P5: 81.123456789012345}},
		Report: "s3://media/renditions/some-title/out.json" + vmafxv1.ReportSuffix}
	for k := range vmafxv1.DefaultWorstFrames {
		r.WorstFrames = append(r.WorstFrames, vmafxv1.WorkerFrame{Index: 99990 + k, VMAF: 80.123456789012345 + float64(k),
			Features: map[string]float64{"vif_scale0": 0.123456789012345}})
	}
	return r
}

// fullRow is a rendition's row with every field a score fills, at its longest.
func fullRow(i int) vmafxv1.WorkerRendition {
	r := plainResult(i)
	r.Features = map[string]float64{"psnr_y": 40.123456789012345, "psnr_cb": 42.123456789012345, "psnr_cr": 43.123456789012345, "float_ssim": 0.99123456789012345}
	r.DistortedScaledFrom = "1280x720"
	r.Alignment = &vmafxv1.WorkerAlignment{Offset: 3, Confidence: 0.987654321, Measure: "luma-psnr", BestPSNR: 41.123456789, BasePSNR: 20.123456789, Window: 30, Pairs: 60}
	return Row(r)
}

// TestRow: a row keeps a plain score's worst frames (without their features), percentiles
// and scenes, rounded to the status's six decimals, and says that its report is written.
func TestRow(t *testing.T) {
	r := plainResult(0)
	row := Row(r)
	if len(row.WorstFrames) != len(r.WorstFrames) || !row.Report || row.Percentiles == nil || row.Scenes == nil || row.Scenes.Worst == nil {
		t.Fatalf("row %+v of %+v", row, r)
	}
	for i, f := range row.WorstFrames {
		if f.Index != r.WorstFrames[i].Index || fmt.Sprintf("%.6f", f.VMAF) != fmt.Sprintf("%.6f", r.WorstFrames[i].VMAF) || len(fmt.Sprint(f.VMAF)) > len("80.123457") || f.Features != nil {
			t.Errorf("worst frame %d: %+v, want index %d, VMAF %.6f, no features", i, f, r.WorstFrames[i].Index, r.WorstFrames[i].VMAF)
		}
	}
	if row.Percentiles.P5 != 85.123457 || row.Scenes.Worst.Mean != 84.123457 || row.Scenes.Count != 120 {
		t.Errorf("percentiles %+v, scenes %+v", row.Percentiles, row.Scenes.Worst)
	}
	r.Report = ""
	if Row(r).Report {
		t.Error("a row without a written report says it has one")
	}
}

// TestRowsKeepTheirWorstFrames: renditions of a plain score (no extra features, no
// alignment) at the longest figures keep every default worst frame, percentile and scene
// in one termination message, four of them (a comparison's default group); eight keep
// four worst frames each.
func TestRowsKeepTheirWorstFrames(t *testing.T) {
	p := Provenance{Backend: "cpu", Model: "vmaf_v0.6.1", ModelSHA256: strings.Repeat("a", 64)}
	for _, tc := range []struct{ rows, frames int }{{vmafxv1.DefaultMaxRenditionsPerPod, vmafxv1.DefaultWorstFrames}, {vmafxv1.MaxWorkerRenditions, 4}} {
		var rows []vmafxv1.WorkerRendition
		for i := range tc.rows {
			rows = append(rows, Row(plainResult(i)))
		}
		r, _ := Renditions(rows, p, time.Second)
		line := Encode(r)
		got, err := vmafxv1.ParseWorkerResult(line)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d rows of %d worst frames: %d bytes", len(rows), len(got.Renditions[0].WorstFrames), len(line))
		for i, row := range got.Renditions {
			if len(row.WorstFrames) != tc.frames || row.Percentiles == nil || row.Scenes == nil || !row.Report {
				t.Errorf("%d rows: row %d has %d worst frames, percentiles %v, scenes %v, report %v; want %d frames and all the rest",
					tc.rows, i, len(row.WorstFrames), row.Percentiles, row.Scenes, row.Report, tc.frames)
			}
		}
	}
}

// TestRenditionsFitTheTerminationMessage: eight rows, every one at its longest, or with
// errors of the longest a row keeps, fit 4 KiB; rows give up their features, then their
// alignments and worst frames, and keep their scores.
func TestRenditionsFitTheTerminationMessage(t *testing.T) {
	p := Provenance{Backend: "cpu", Model: "vmaf_v0.6.1", ModelSHA256: strings.Repeat("a", 64)}
	var rows []vmafxv1.WorkerRendition
	for i := range vmafxv1.MaxWorkerRenditions {
		rows = append(rows, fullRow(i))
	}
	r, code := Renditions(rows, p, time.Second)
	if code != ExitOK || r.Error != nil {
		t.Fatalf("code %d, error %+v for rows that all scored", code, r.Error)
	}
	line := Encode(r)
	got, err := vmafxv1.ParseWorkerResult(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if len(line) > MaxBytes || len(got.Renditions) != len(rows) {
		t.Fatalf("%d bytes, %d rows; want under %d with %d rows", len(line), len(got.Renditions), MaxBytes, len(rows))
	}
	for i, row := range got.Renditions {
		if row.Score != rows[i].Score || row.Frames != rows[i].Frames || row.Percentiles == nil {
			t.Errorf("row %d lost its score: %+v", i, row)
		}
	}
	if n := len(got.Renditions[0].WorstFrames); n == 0 {
		t.Error("the rows gave up every worst frame")
	} else {
		t.Logf("%d rows at their longest: %d bytes, %d worst frames each", len(rows), len(line), n)
	}
	if rows[0].Features == nil || len(rows[0].WorstFrames) != vmafxv1.DefaultWorstFrames {
		t.Error("Encode changed its argument's rows")
	}

	// Failed rows with the longest messages a row keeps fit too.
	for i := range rows {
		if i%2 == 1 {
			rows[i] = vmafxv1.WorkerRendition{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonBadInput, Message: strings.Repeat("m", 256)}}
		}
	}
	r, _ = Renditions(rows, p, time.Second)
	if line := Encode(r); len(line) > MaxBytes {
		t.Errorf("%d bytes with failed rows", len(line))
	} else if got, err := vmafxv1.ParseWorkerResult(line); err != nil || len(got.Renditions) != len(rows) || got.Renditions[1].Error == nil {
		t.Errorf("with failed rows: %v, %+v", err, got)
	}
}

// TestRenditionsAllFailed: with no row scored the run fails for the first row's reason,
// with its exit code; one scored row makes the run succeed.
func TestRenditionsAllFailed(t *testing.T) {
	bad := vmafxv1.WorkerRendition{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonFetchFailed, Message: "distorted: 403"}}
	other := vmafxv1.WorkerRendition{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonBadInput, Message: "short"}}
	r, code := Renditions([]vmafxv1.WorkerRendition{bad, other}, Provenance{}, 0)
	if code != ExitFetchFailed || r.Error == nil || r.Error.Reason != vmafxv1.ReasonFetchFailed || !strings.Contains(r.Error.Message, "distorted: 403") {
		t.Errorf("code %d, error %+v; want FetchFailed naming the first row's message", code, r.Error)
	}
	if _, code := Renditions([]vmafxv1.WorkerRendition{bad, fullRow(0)}, Provenance{}, 0); code != ExitOK {
		t.Errorf("one scored row: code %d, want 0", code)
	}
}

// TestRound6: a row's figure prints as the status prints the figure it rounds, even where
// the sixth decimal is a tie in decimal but not in binary.
func TestRound6(t *testing.T) {
	for _, x := range []float64{12.3456785, 0.0000005, 99.9999995, 80.12345678901235, 1e-9, 100} {
		if got, want := fmt.Sprintf("%.6f", round6(x)), fmt.Sprintf("%.6f", x); got != want {
			t.Errorf("round6(%v) prints %s, want %s", x, got, want)
		}
	}
}
