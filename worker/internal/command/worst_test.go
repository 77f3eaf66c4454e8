package command

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil/fftest"
	"github.com/vmafx/vmafx/worker/internal/pictures"
)

// twoScenes writes p01 (24 frames, libx264 CRF 18) followed by p02 (16 frames, CRF 45) as
// one raw pair: two scenes, the second worse.
func twoScenes(t *testing.T, dir string) (ref, dist string) {
	t.Helper()
	cat := func(name string, parts ...string) string {
		var all []byte
		for _, p := range parts {
			b, err := os.ReadFile(filepath.Join(testdata, "clips", p))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, all, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return cat("ref.yuv", "p01_ref.yuv", "p02_ref.yuv"), cat("dist.yuv", "p01_dist.yuv", "p02_dist.yuv")
}

func TestScoreWorstFramesScenesAndPictures(t *testing.T) {
	dir := t.TempDir()
	ref, dist := twoScenes(t, dir)
	out := filepath.Join(dir, "out.json")
	r := runWorker(t, context.Background(), nil, rawArgs(ref, dist, "--output", "file://"+out, "--pictures", "--worst-frames", "3", "--features", "psnr")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := r.result(t)

	// The per-frame output is the truth the summary must match exactly.
	perFrame := readLibvmafJSON(t, out)
	scores := map[int]float64{}
	lowest := 101.0
	for _, f := range perFrame.Frames {
		scores[f.FrameNum] = f.Metrics["vmaf"]
		lowest = min(lowest, f.Metrics["vmaf"])
	}
	if len(res.WorstFrames) != 3 {
		t.Fatalf("result lists %d worst frames, want 3: %+v", len(res.WorstFrames), res.WorstFrames)
	}
	if res.WorstFrames[0].VMAF != res.Min || res.Min-lowest > 1e-6 || lowest-res.Min > 1e-6 {
		t.Errorf("worst frame %v, result min %v, output's lowest %v: want all equal", res.WorstFrames[0].VMAF, res.Min, lowest)
	}
	for i, f := range res.WorstFrames {
		// libvmaf's JSON has six decimals; the result has every digit.
		if d := f.VMAF - scores[f.Index]; d > 1e-6 || d < -1e-6 {
			t.Errorf("worst frame %d: VMAF %v, the output says %v", f.Index, f.VMAF, scores[f.Index])
		}
		if i > 0 && f.VMAF < res.WorstFrames[i-1].VMAF {
			t.Errorf("worst frames not lowest first: %+v", res.WorstFrames)
		}
		if f.Index < 24 {
			t.Errorf("worst frame %d is in the CRF 18 scene", f.Index)
		}
		if _, ok := f.Features["psnr_y"]; !ok || len(f.Features) != 4 {
			t.Errorf("worst frame %d features %v, want adm2, vif0, motion2 and psnr_y", f.Index, f.Features)
		}
	}
	if p := res.Percentiles; p == nil || !(res.Min <= p.P1 && p.P1 <= p.P5 && p.P5 <= p.P50 && p.P50 <= res.Max) {
		t.Errorf("percentiles %+v out of min %v .. max %v", p, res.Min, res.Max)
	}
	if s := res.Scenes; s == nil || s.Count != 2 || s.Worst == nil || s.Worst.Start != 24 || s.Worst.Frames != 16 {
		t.Errorf("scenes %+v, want 2 with the worst from frame 24, 16 frames", s)
	}
	wantReport := "file://" + out + ".report/"
	if res.Report != wantReport || res.OutputError != "" {
		t.Fatalf("report %q (output error %q), want %q", res.Report, res.OutputError, wantReport)
	}

	// report.json lists everything, and names the pictures.
	var doc struct {
		WorstFrames []struct {
			Index   int                `json:"index"`
			VMAF    float64            `json:"vmaf"`
			Metrics map[string]float64 `json:"metrics"`
			Picture string             `json:"picture"`
		} `json:"worstFrames"`
		Scenes struct {
			Threshold float64 `json:"threshold"`
			List      []vmafxv1.WorkerScene
		} `json:"scenes"`
		Plot map[string]string `json:"plot"`
	}
	data, err := os.ReadFile(filepath.Join(out+".report", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.WorstFrames) != 3 || len(doc.Scenes.List) != 2 || doc.Plot["png"] != "scores.png" {
		t.Fatalf("report.json: %s", data)
	}
	refFrames, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	frameBytes := pairW * pairH * 3 / 2
	for i, f := range doc.WorstFrames {
		if f.Index != res.WorstFrames[i].Index || len(f.Metrics) < 10 {
			t.Errorf("report frame %d: index %d with %d metrics", i, f.Index, len(f.Metrics))
		}
		img := decodePNG(t, filepath.Join(out+".report", f.Picture))
		if got, want := img.Bounds().Size(), image.Pt(3*pairW+2*pictures.Gap, pairH); got != want {
			t.Errorf("%s: size %v, want %v", f.Picture, got, want)
		}
		// The picture is of the right frame: its left panel is that frame of the reference,
		// read again from the input.
		luma := refFrames[f.Index*frameBytes:]
		for _, pt := range []image.Point{{0, 0}, {37, 91}, {175, 143}} {
			c, _, _, _ := img.At(pt.X, pt.Y).RGBA()
			if uint8(c>>8) != luma[pt.Y*pairW+pt.X] {
				t.Errorf("%s: reference pixel %v = %d, frame %d of the reference has %d", f.Picture, pt, c>>8, f.Index, luma[pt.Y*pairW+pt.X])
			}
		}
		var heat uint64
		for y := range pairH {
			for x := range pairW {
				c, _, _, _ := img.At(2*(pairW+pictures.Gap)+x, y).RGBA()
				heat += uint64(c >> 8)
			}
		}
		if heat == 0 {
			t.Errorf("%s: the heat map is black, but a CRF 45 frame differs from its reference", f.Picture)
		}
	}
	if img := decodePNG(t, filepath.Join(out+".report", "scores.png")); img.Bounds().Dx() != pictures.PlotWidth {
		t.Errorf("scores.png is %v", img.Bounds())
	}
	svg, err := os.ReadFile(filepath.Join(out+".report", "scores.svg"))
	if err != nil || strings.Count(string(svg), "<circle") != 3 || !strings.Contains(string(svg), ">scene 24<") {
		t.Errorf("scores.svg marks %d frames (%v), want 3, and the scene cut at 24:\n%s", strings.Count(string(svg), "<circle"), err, svg)
	}

	// Asking for all this changes no score.
	plain := runWorker(t, context.Background(), nil, rawArgs(ref, dist, "--features", "psnr")...).result(t)
	if plain.Score != res.Score || plain.HarmonicMean != res.HarmonicMean || plain.Min != res.Min || plain.Features["psnr_y"] != res.Features["psnr_y"] {
		t.Errorf("score with the report %v/%v/%v, without %v/%v/%v", res.Score, res.HarmonicMean, res.Min, plain.Score, plain.HarmonicMean, plain.Min)
	}
	// Without --output there is no report, but the result still lists the worst frames.
	if len(plain.WorstFrames) != vmafxv1.DefaultWorstFrames || plain.Report != "" || plain.Scenes.Count != 2 {
		t.Errorf("plain run: %d worst frames, report %q, scenes %+v", len(plain.WorstFrames), plain.Report, plain.Scenes)
	}
}

func TestScoreWorstFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--pictures"}, "--pictures needs --output"},
		{[]string{"--worst-frames", "21"}, "worst-frames"},
		{[]string{"--scene-threshold", "0"}, "scene-threshold"},
	} {
		r := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip, tc.args...)...)
		res := r.result(t)
		if r.code != 2 || res.Error == nil || res.Error.Reason != vmafxv1.ReasonBadInput || !strings.Contains(res.Error.Message, tc.want) {
			t.Errorf("%v: exit %d, error %+v, want BadInput naming %q", tc.args, r.code, res.Error, tc.want)
		}
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// TestDocsPictures keeps the pictures in docs/images what the worker draws for the
// two-scene test pair: the worst frame and the score plot.
// VMAFX_UPDATE_DOCS=1 go test ./worker/internal/command -run TestDocs rewrites them.
func TestDocsPictures(t *testing.T) {
	dir := t.TempDir()
	ref, dist := twoScenes(t, dir)
	out := filepath.Join(dir, "out.json")
	r := runWorker(t, context.Background(), nil, rawArgs(ref, dist, "--output", "file://"+out, "--pictures", "--worst-frames", "3")...)
	res := r.result(t)
	if res.Error != nil || len(res.WorstFrames) == 0 {
		t.Fatalf("result %+v", res)
	}
	report := out + vmafxv1.ReportSuffix
	for src, doc := range map[string]string{
		vmafxv1.WorstFramePicture(res.WorstFrames[0].Index): "worst-frame.png",
		vmafxv1.ReportPlotSVG:                               "scores.svg",
		vmafxv1.ReportPlotPNG:                               "scores.png",
	} {
		got, err := os.ReadFile(filepath.Join(report, src))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("../../../docs/images", doc)
		if os.Getenv("VMAFX_UPDATE_DOCS") != "" {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the worker draws (%v); VMAFX_UPDATE_DOCS=1 go test ./worker/internal/command -run TestDocs rewrites it", path, err)
		}
	}
}

// TestScoreNoWorstFrames: --worst-frames 0 lists none, in the result and the report, and
// keeps the percentiles and the plot.
func TestScoreNoWorstFrames(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.json")
	res := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip, "--output", "file://"+out, "--pictures", "--worst-frames", "0")...).result(t)
	if res.Error != nil || res.WorstFrames != nil || res.Percentiles == nil || res.Scenes == nil || res.Scenes.Count != 1 {
		t.Fatalf("result %+v", res)
	}
	data, err := os.ReadFile(filepath.Join(out+vmafxv1.ReportSuffix, vmafxv1.ReportJSON))
	if err != nil || !strings.Contains(string(data), `"worstFrames": []`) {
		t.Errorf("report.json (%v):\n%s", err, data)
	}
	entries, _ := os.ReadDir(out + vmafxv1.ReportSuffix)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "report.json scores.png scores.svg" {
		t.Errorf("report holds %v, want report.json and the plot only", names)
	}
}

// TestScorePicturesOfAScaledDistorted: the pictures read the inputs again as the score
// read them, the distorted scaled to the reference's size (dist_small_h264.mp4 is
// 128x96 against a 176x144 reference); reading it at its own size indexed past its
// frame (the e2e's bucket job failed with a panic before).
func TestScorePicturesOfAScaledDistorted(t *testing.T) {
	fftest.Tools(t)
	out := filepath.Join(t.TempDir(), "out.json")
	res := runWorker(t, context.Background(), nil, "score", "--reference", fftest.Path("ref_ffv1.mkv"),
		"--distorted", fftest.Path("dist_small_h264.mp4"), "--output", "file://"+out, "--pictures", "--worst-frames", "2").result(t)
	if res.Error != nil || res.OutputError != "" || len(res.WorstFrames) != 2 {
		t.Fatalf("result: error %+v, output error %q, worst frames %+v", res.Error, res.OutputError, res.WorstFrames)
	}
	for _, f := range res.WorstFrames {
		name := filepath.Join(out+vmafxv1.ReportSuffix, fmt.Sprintf("frame-%06d.png", f.Index))
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Three panels of the reference's size side by side.
		if b := img.Bounds(); b.Dy() < 144 || b.Dx() < 3*176 {
			t.Errorf("%s is %v, want three 176x144 panels", name, b)
		}
	}
}
