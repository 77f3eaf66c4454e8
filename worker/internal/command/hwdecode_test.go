package command

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil/fftest"
)

// TestScoreEncodedGPUDecode scores two encoded inputs with a FAKE ffmpeg
// (fftest.FakeHW: no GPU decoder exists where the tests run) on slots of each kind: an
// NVIDIA slot whose ffmpeg offers cuda asks for NVDEC, an Intel slot with a render node
// for VA-API, and the result says so; a hardware decoder that fails to start is given up
// for software once per input, which the result says; a CPU slot and a raw input decode
// in software, or not at all. The scores are the software path's in every case.
func TestScoreEncodedGPUDecode(t *testing.T) {
	args := []string{"score", "--reference", encoded("ref_ffv1.mkv"), "--distorted", encoded("dist_h264.mp4")}
	dev := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dev, "dri"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dev, "dri", "renderD128"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(orig string) { devDir = orig }(devDir)
	devDir = dev

	soft := runWorker(t, context.Background(), nil, args...)
	if soft.code != 0 {
		t.Fatalf("software: exit %d, stderr:\n%s", soft.code, soft.stderr)
	}
	want := soft.result(t)
	if diff := cmp.Diff(&vmafxv1.WorkerDecode{Reference: "software", Distorted: "software"}, want.Decode); diff != "" {
		t.Errorf("software decode (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name     string
		device   string
		works    bool
		want     vmafxv1.WorkerDecode
		fallback string
		hwaccel  string // in every decoding call's arguments, or "" in none
		calls    int    // ffmpeg runs: -hwaccels once, then one per input and try
	}{
		{name: "nvidia, nvdec starts", device: "nvidia-0", works: true, want: vmafxv1.WorkerDecode{Reference: "nvdec", Distorted: "nvdec"}, hwaccel: "-hwaccel cuda", calls: 3},
		{name: "intel, vaapi starts", device: "intel-1", works: true, want: vmafxv1.WorkerDecode{Reference: "vaapi", Distorted: "vaapi"},
			hwaccel: "-hwaccel vaapi -hwaccel_device " + filepath.Join(dev, "dri", "renderD128"), calls: 3},
		{name: "nvidia, nvdec fails to start", device: "nvidia-0", want: vmafxv1.WorkerDecode{Reference: "software", Distorted: "software"},
			fallback: "nvdec decoding failed to start, decoded in software", calls: 5},
		{name: "cpu slot", device: "cpu", works: true, want: vmafxv1.WorkerDecode{Reference: "software", Distorted: "software"}, calls: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ffmpeg, log := fftest.FakeHW(t, []string{"vdpau", "cuda", "vaapi"}, tc.works)
			env := map[string]string{"VMAFX_FFMPEG": ffmpeg, "VMAFX_FFPROBE": fftest.Tools(t).FFprobe, vmafxv1.EnvDevice: tc.device}
			r := runWorker(t, context.Background(), env, args...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			got := r.result(t)
			if got.Decode == nil {
				t.Fatal("the result does not say which decoder ran")
			}
			if !strings.Contains(got.Decode.Fallback, tc.fallback) || (tc.fallback == "") != (got.Decode.Fallback == "") {
				t.Errorf("fallback %q, want one containing %q", got.Decode.Fallback, tc.fallback)
			}
			got.Decode.Fallback = ""
			if diff := cmp.Diff(&tc.want, got.Decode); diff != "" {
				t.Errorf("decode (-want +got):\n%s", diff)
			}
			if got.Score != want.Score || got.Frames != want.Frames {
				t.Errorf("score %v over %d frames, want software's %v over %d", got.Score, got.Frames, want.Score, want.Frames)
			}
			calls := fftest.Calls(t, log)
			if len(calls) != tc.calls {
				t.Errorf("ffmpeg ran %d times, want %d:\n%s", len(calls), tc.calls, strings.Join(calls, "\n"))
			}
			for _, c := range calls {
				switch {
				case strings.Contains(c, "-hwaccels"), tc.fallback != "":
				case tc.hwaccel != "" && !strings.Contains(c, tc.hwaccel+" "):
					t.Errorf("ffmpeg was not asked for %q: %s", tc.hwaccel, c)
				case tc.hwaccel == "" && strings.Contains(c, "-hwaccel "):
					t.Errorf("ffmpeg asked for a hardware decoder on a %s slot: %s", tc.device, c)
				}
			}
		})
	}
}
