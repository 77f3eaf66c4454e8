package report

import (
	"strings"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestEncodeShrinksWorstFrames: a result whose worst frames would pass the termination
// message's 4 KiB gives up their features, then half of them at a time, and keeps its
// score and the lowest frames.
func TestEncodeShrinksWorstFrames(t *testing.T) {
	r := &vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Score: 80, Min: 10, Max: 99, Frames: 1000, Backend: "cpu",
		Model: "vmaf_v0.6.1", Percentiles: &vmafxv1.WorkerPercentiles{P1: 11, P5: 20, P50: 85}}
	long := strings.Repeat("x", 60)
	for i := range vmafxv1.MaxWorstFrames {
		r.WorstFrames = append(r.WorstFrames, vmafxv1.WorkerFrame{Index: 100000 + i, VMAF: 10.123456789012345 + float64(i),
			Features: map[string]float64{"integer_adm2" + long: 0.123456789012345, "integer_vif_scale0" + long: 0.123456789012345,
				"integer_motion2" + long: 1.123456789012345, "psnr_y" + long: 30.123456789012345}})
	}
	got, err := vmafxv1.ParseWorkerResult(Encode(r))
	if err != nil {
		t.Fatal(err)
	}
	if got.Error != nil || got.Score != 80 || got.Percentiles == nil {
		t.Fatalf("result lost its score: %+v", got)
	}
	if len(got.WorstFrames) != vmafxv1.MaxWorstFrames || got.WorstFrames[0].Features != nil || got.WorstFrames[0].Index != 100000 {
		t.Errorf("want all %d frames without features, got %d, first %+v", vmafxv1.MaxWorstFrames, len(got.WorstFrames), got.WorstFrames[0])
	}
	if r.WorstFrames[0].Features == nil {
		t.Error("Encode changed its argument's worst frames")
	}

	// A result already near the limit (a long output error) halves the frames too.
	r.OutputError = strings.Repeat("y", 3300)
	got, err = vmafxv1.ParseWorkerResult(Encode(r))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.WorstFrames); n == 0 || n >= vmafxv1.MaxWorstFrames || got.WorstFrames[0].Index != 100000 {
		t.Errorf("near the limit: %d worst frames, want fewer than %d, the lowest kept", n, vmafxv1.MaxWorstFrames)
	}
}
