package report

import (
	"strings"
	"testing"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// fullRow is a rendition's row with every field a score fills, at its longest.
func fullRow(i int) vmafxv1.WorkerRendition {
	return vmafxv1.WorkerRendition{Score: 91.123456789012345 + float64(i)/10, HarmonicMean: 90.123456789012345, Min: 80.123456789012345,
		Max: 99.123456789012345, Frames: 100000, FPS: 123.456, P5: 85.123456789012345,
		WorstFrame:          &vmafxv1.WorkerFrame{Index: 99999, VMAF: 80.123456789012345},
		Features:            map[string]float64{"psnr_y": 40.123456789012345, "psnr_cb": 42.123456789012345, "psnr_cr": 43.123456789012345, "float_ssim": 0.99123456789012345},
		DistortedScaledFrom: "1280x720",
		Alignment:           &vmafxv1.WorkerAlignment{Offset: 3, Confidence: 0.987654321, Measure: "luma-psnr", BestPSNR: 41.123456789, BasePSNR: 20.123456789, Window: 30, Pairs: 60},
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
		if row.Score != rows[i].Score || row.Frames != rows[i].Frames || row.P5 != rows[i].P5 {
			t.Errorf("row %d lost its score: %+v", i, row)
		}
	}
	if rows[0].Features == nil {
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
