package command

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil/fftest"
	"github.com/vmafx/vmafx/worker/internal/report"
)

// aloneRow scores one pair on its own, as "score" does, and returns its result as a
// renditions row and its per-frame output.
func aloneRow(t *testing.T, args []string) (vmafxv1.WorkerRendition, *libvmafJSON) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "alone.json")
	r := runWorker(t, context.Background(), nil, append(args, "--output", out)...)
	if r.code != 0 {
		t.Fatalf("alone: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	return report.Row(r.result(t)), readLibvmafJSON(t, out)
}

// sameRow compares a shared run's row with the pair's own, leaving out the speed and
// whether a report was written (aloneRow always writes one).
func sameRow(t *testing.T, name string, want, got vmafxv1.WorkerRendition) {
	t.Helper()
	want.FPS, got.FPS = 0, 0
	want.Report, got.Report = false, false
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: row differs from scoring the pair alone (-alone +shared):\n%s", name, diff)
	}
}

// TestScoreRenditions: --distorted given three times scores each against one read of
// the reference exactly as alone (row and per-frame output), and a distorted video
// shorter than the reference fails its row only, with the message scoring it alone gives.
func TestScoreRenditions(t *testing.T) {
	short := cut(t, distClip, 0, frames-3)
	dists := []string{distClip, refClip, short}
	dir := t.TempDir()
	args := []string{"score", "--reference", refClip, "--width", strconv.Itoa(pairW), "--height", strconv.Itoa(pairH), "--features", "psnr", "--threads", "2"}
	var outs []string
	for i, d := range dists {
		outs = append(outs, filepath.Join(dir, "out"+strconv.Itoa(i)+".json"))
		args = append(args, "--distorted", d, "--output", outs[i])
	}
	r := runWorker(t, context.Background(), nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	got := r.result(t)
	if len(got.Renditions) != len(dists) || got.Frames != 0 || got.Model != "vmaf_v0.6.1" || got.Backend != "cpu" {
		t.Fatalf("result %+v, want %d rows beside the provenance", got, len(dists))
	}
	for i, d := range dists[:2] {
		want, wantFrames := aloneRow(t, rawArgs(refClip, d, "--features", "psnr", "--threads", "1"))
		sameRow(t, d, want, got.Renditions[i])
		if diff := cmp.Diff(wantFrames.Frames, readLibvmafJSON(t, outs[i]).Frames); diff != "" {
			t.Errorf("%s: per-frame output differs from scoring it alone (-alone +shared):\n%s", d, diff)
		}
	}
	alone := runWorker(t, context.Background(), nil, rawArgs(refClip, short)...)
	wantErr := alone.result(t).Error
	if e := got.Renditions[2].Error; e == nil || e.Reason != vmafxv1.ReasonBadInput || e.Message != wantErr.Message {
		t.Errorf("shorter distorted: row error %+v, want %+v (as alone)", e, wantErr)
	}
}

// TestScoreRenditionsEncoded: encoded inputs, the reference decoded once by ffmpeg, one
// distorted video scaled to its size: each row as alone.
func TestScoreRenditionsEncoded(t *testing.T) {
	fftest.Tools(t)
	ref := encoded("ref_ffv1.mkv")
	dists := []string{encoded("dist_h264.mp4"), encoded("dist_small_h264.mp4"), encoded("dist_hevc.mkv")}
	args := []string{"score", "--reference", ref, "--threads", "3", "-v", "1"}
	for _, d := range dists {
		args = append(args, "--distorted", d)
	}
	r := runWorker(t, context.Background(), nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	got := r.result(t)
	if len(got.Renditions) != len(dists) {
		t.Fatalf("%d rows, want %d", len(got.Renditions), len(dists))
	}
	for i, d := range dists {
		want, _ := aloneRow(t, []string{"score", "--reference", ref, "--distorted", d})
		sameRow(t, filepath.Base(d), want, got.Renditions[i])
	}
	// One decoder read the reference's 24 frames once for the three.
	if !strings.Contains(r.stderr, `"Decoded the reference once" frames=24`) {
		t.Errorf("no log of one read of the reference's 24 frames; stderr:\n%s", r.stderr)
	}
	if got.Renditions[1].DistortedScaledFrom != "128x96" {
		t.Errorf("the small distorted video's row says scaled from %q, want 128x96", got.Renditions[1].DistortedScaledFrom)
	}
}

// TestScoreRenditionsAllFail: when no rendition can be scored the run fails, for the
// first one's reason, and still lists every row.
func TestScoreRenditionsAllFail(t *testing.T) {
	short := cut(t, distClip, 0, frames-3)
	r := runWorker(t, context.Background(), nil, "score", "--reference", refClip, "--width", strconv.Itoa(pairW), "--height", strconv.Itoa(pairH),
		"--distorted", short, "--distorted", short)
	if r.code != report.ExitBadInput {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, report.ExitBadInput, r.stderr)
	}
	got := r.result(t)
	if got.Error == nil || got.Error.Reason != vmafxv1.ReasonBadInput || !strings.Contains(got.Error.Message, "every rendition failed") || len(got.Renditions) != 2 {
		t.Errorf("result %+v, want BadInput naming every rendition, with both rows", got)
	}
}

// TestScoreRenditionsFlags: command lines the renditions form refuses, each naming the flag.
func TestScoreRenditionsFlags(t *testing.T) {
	base := []string{"score", "--reference", refClip, "--width", "176", "--height", "144"}
	many := func(n int, extra ...string) []string {
		a := append([]string{}, base...)
		for range n {
			a = append(a, "--distorted", distClip)
		}
		return append(a, extra...)
	}
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"outputs of another count": {many(3, "--output", "/tmp/a.json", "--output", "/tmp/b.json"), "--output is given 2 times for 3 --distorted"},
		"too many":                 {many(vmafxv1.MaxWorkerRenditions + 1), "--distorted is given 9 times, at most 8"},
		"auto-align":               {many(2, "--auto-align"), "do not go with --auto-align"},
		"probe":                    {many(2, "--probe"), "do not go with --chunk, --merge-parts or --probe"},
		"outputs for one":          {append(append([]string{}, base...), "--distorted", distClip, "--output", "/tmp/a.json", "--output", "/tmp/b.json"), "--output is given 2 times"},
	} {
		r := runWorker(t, context.Background(), nil, c.args...)
		if r.code != report.ExitBadInput {
			t.Errorf("%s: exit %d, want %d", name, r.code, report.ExitBadInput)
			continue
		}
		if res := r.result(t); res.Error == nil || !strings.Contains(res.Error.Message, c.want) {
			t.Errorf("%s: result %+v, want an error saying %q", name, res.Error, c.want)
		}
	}
}

// TestScoreRenditionsStarts: --reference-start and --distorted-start apply to every
// rendition, each reading the shared reference from the same frame, as alone.
func TestScoreRenditionsStarts(t *testing.T) {
	late := cut(t, distClip, 2, frames) // starts 2 frames into the reference
	starts := []string{"--reference-start", "2", "--distorted-start", "1"}
	args := append([]string{"score", "--reference", refClip, "--width", strconv.Itoa(pairW), "--height", strconv.Itoa(pairH),
		"--distorted", late, "--distorted", distClip}, starts...)
	r := runWorker(t, context.Background(), nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	got := r.result(t)
	if len(got.Renditions) != 2 {
		t.Fatalf("%d rows, want 2", len(got.Renditions))
	}
	for i, d := range []string{late, distClip} {
		want, _ := aloneRow(t, rawArgs(refClip, d, starts...))
		sameRow(t, filepath.Base(d), want, got.Renditions[i])
	}
}

// TestScoreRenditionsPictures: with --pictures every rendition, not only the first,
// writes its own report beside its own output (report.json, each worst frame's picture
// and the plot), byte for byte the report scoring it alone writes, and its row lists the
// worst frames, percentiles and scenes of scoring it alone.
func TestScoreRenditionsPictures(t *testing.T) {
	dir := t.TempDir()
	ref, dist := twoScenes(t, dir)
	dists := []string{dist, ref, dist}
	worst := []string{"--pictures", "--worst-frames", "3"}
	args := append([]string{"score", "--reference", ref, "--width", strconv.Itoa(pairW), "--height", strconv.Itoa(pairH), "--threads", "3"}, worst...)
	var outs []string
	for i, d := range dists {
		outs = append(outs, filepath.Join(dir, "out"+strconv.Itoa(i)+".json"))
		args = append(args, "--distorted", d, "--output", "file://"+outs[i])
	}
	r := runWorker(t, context.Background(), nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	got := r.result(t)
	if len(got.Renditions) != len(dists) {
		t.Fatalf("%d rows, want %d", len(got.Renditions), len(dists))
	}
	for i, d := range dists {
		aloneOut := filepath.Join(t.TempDir(), "alone.json")
		alone := runWorker(t, context.Background(), nil, rawArgs(ref, d, append(worst, "--threads", "1", "--output", "file://"+aloneOut)...)...)
		if alone.code != 0 {
			t.Fatalf("alone: exit %d, stderr:\n%s", alone.code, alone.stderr)
		}
		want := report.Row(alone.result(t))
		row := got.Renditions[i]
		if len(row.WorstFrames) != 3 || row.Percentiles == nil || row.Scenes == nil || row.Scenes.Count != 2 || !row.Report {
			t.Errorf("rendition %d: row %+v, want 3 worst frames, percentiles, 2 scenes and a report", i, row)
		}
		sameRow(t, "rendition "+strconv.Itoa(i), want, row)
		// The report lies beside the rendition's own output, as alone.
		aloneFiles, _ := filepath.Glob(filepath.Join(aloneOut+".report", "*"))
		if len(aloneFiles) != 1+3+2 {
			t.Fatalf("alone: report holds %v, want report.json, 3 pictures and the plot", aloneFiles)
		}
		for _, f := range aloneFiles {
			name := filepath.Base(f)
			wantData, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			gotData, err := os.ReadFile(filepath.Join(outs[i]+".report", name))
			if err != nil {
				t.Errorf("rendition %d: %v", i, err)
				continue
			}
			if !bytes.Equal(gotData, wantData) {
				t.Errorf("rendition %d: %s differs from scoring it alone", i, name)
			}
		}
	}
}
