package command

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil/fftest"
)

// splitRun scores args as the operator runs a job of the given parallelism: a probe,
// one chunk per planned range, a merge into output. It returns the merge's result and
// the last chunk's log.
func splitRun(t *testing.T, args []string, parallelism int, output string) (*vmafxv1.WorkerResult, string) {
	t.Helper()
	chunks, lastLog := scoreChunks(t, args, parallelism, output, -1)
	merge := runWorker(t, context.Background(), nil, append(args, "--output", output, "--merge-parts", strconv.Itoa(chunks))...)
	if merge.code != 0 {
		t.Fatalf("merge: exit %d, stderr:\n%s", merge.code, merge.stderr)
	}
	return merge.result(t), lastLog
}

// scoreChunks runs the probe and the chunks of a job of the given parallelism, writing
// the parts beside output, and returns the number of chunks and the last chunk's log.
// With only >= 0 it runs only that chunk.
func scoreChunks(t *testing.T, args []string, parallelism int, output string, only int) (int, string) {
	t.Helper()
	ctx := context.Background()
	probe := runWorker(t, ctx, nil, append(args, "--probe")...)
	if probe.code != 0 {
		t.Fatalf("probe: exit %d, stderr:\n%s", probe.code, probe.stderr)
	}
	frames := probe.result(t).Frames
	plan := vmafxv1.PlanChunks(frames, parallelism)
	var lastLog string
	for i, c := range plan {
		if only >= 0 && i != only {
			continue
		}
		r := runWorker(t, ctx, nil, append(args, "--chunk", strconv.Itoa(c.Start)+":"+strconv.Itoa(c.Count),
			"--total-frames", strconv.Itoa(frames), "--chunk-part", vmafxv1.ChunkPartURI(output, i))...)
		if r.code != 0 {
			t.Fatalf("chunk %d (%+v of %d): exit %d, stderr:\n%s", i, c, frames, r.code, r.stderr)
		}
		lastLog = r.stderr
	}
	return len(plan), lastLog
}

// fpsLine is the one line of the JSON output that depends on the run's speed.
var fpsLine = regexp.MustCompile(`(?m)^  "fps": .*$`)

// TestSplitEqualsOneRun: a job split into chunks, each on its own, merges into the same
// per-frame output, to the last byte but the speed, and the same pooled values as one
// run, for raw, Y4M and encoded inputs, odd splits and more chunks than frames.
// p03Args scores the 320x240 pair p03, large enough for VMAF v1's CAMBI and SpEED.
func p03Args(extra ...string) []string {
	return append([]string{"score", "--reference", filepath.Join(testdata, "clips/p03_ref.yuv"), "--distorted", filepath.Join(testdata, "clips/p03_dist.yuv"),
		"--width", "320", "--height", "240"}, extra...)
}

func TestSplitEqualsOneRun(t *testing.T) {
	y4mRef, y4mDist := writeY4MPair(t, t.TempDir())
	tests := []struct {
		name        string
		args        []string
		parallelism int
		encoded     bool
		wantFrames  int
		// seeks is what the last chunk's log says of its seek, for encoded inputs.
		seeks string
	}{
		{name: "raw in 3", args: rawArgs(refClip, distClip), parallelism: 3, wantFrames: frames},
		{name: "raw, odd frame count, with features", args: rawArgs(refClip, distClip, "--frames", ":15", "--features", "psnr,ssim"), parallelism: 4, wantFrames: 15},
		{name: "VMAF v1 HFR in 4 (motion reaches four frames back)", args: p03Args("--model", "vmaf_v1.0.16_hfr_3d0h"), parallelism: 4, wantFrames: 12},
		{name: "bootstrapped model in 3, with its interval", args: p03Args("--model", "vmaf_b_v0.6.3"), parallelism: 3, wantFrames: 12},
		{name: "y4m in 2", args: []string{"score", "--reference", y4mRef, "--distorted", y4mDist}, parallelism: 2, wantFrames: frames},
		{name: "more chunks than frames", args: rawArgs(refClip, distClip, "--frames", "3:5"), parallelism: 8, wantFrames: 5},
		{name: "aligned", args: []string{"score", "--reference", y4mRef, "--distorted", y4mDist, "--reference-start", "2", "--distorted-start", "1"}, parallelism: 3, wantFrames: frames - 2},
		{name: "h264 against ffv1", args: []string{"score", "--reference", encoded("ref_ffv1.mkv"), "--distorted", encoded("dist_h264.mp4")}, parallelism: 5, encoded: true, wantFrames: 24,
			// The last chunk reads from frame 19: the decoder seeks to the keyframe at 12
			// and drops frames 12 to 18; the FFV1 reference (all keyframes) seeks too.
			seeks: "referenceSeekedFrames=19 distortedSeekedFrames=19"},
		{name: "vp9 webm, frames counted by decoding", args: []string{"score", "--reference", encoded("ref_ffv1.mkv"), "--distorted", encoded("dist_vp9.webm")}, parallelism: 3, encoded: true, wantFrames: 24},
		{name: "hevc against raw", args: []string{"score", "--reference", fftest.Clip("p01_ref.yuv"), "--distorted", encoded("dist_hevc.mkv"), "--width", "176", "--height", "144"}, parallelism: 4, encoded: true, wantFrames: 24,
			seeks: "referenceSeekedFrames=0 distortedSeekedFrames=17"},
		{name: "mpeg-ts, read from the start", args: []string{"score", "--reference", encoded("ref_ffv1.mkv"), "--distorted", encoded("dist_h264.ts")}, parallelism: 3, encoded: true, wantFrames: 24,
			seeks: "referenceSeekedFrames=15 distortedSeekedFrames=0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.encoded {
				fftest.Tools(t)
			}
			dir := t.TempDir()
			one := filepath.Join(dir, "one.json")
			r := runWorker(t, context.Background(), nil, append(tc.args, "--output", one)...)
			if r.code != 0 {
				t.Fatalf("one run: exit %d, stderr:\n%s", r.code, r.stderr)
			}
			want := r.result(t)
			split := "file://" + filepath.Join(dir, "split.json")
			got, lastLog := splitRun(t, tc.args, tc.parallelism, split)
			if tc.seeks != "" && !strings.Contains(lastLog, tc.seeks) {
				t.Errorf("the last chunk did not seek as %s; its log:\n%s", tc.seeks, lastLog)
			}
			if want.Frames != tc.wantFrames {
				t.Fatalf("one run scored %d frames, want %d", want.Frames, tc.wantFrames)
			}
			type pooled struct {
				Score, HarmonicMean, Min, Max float64
				Frames                        int
				Features                      map[string]float64
				Model, ModelSHA256, Scaled    string
			}
			if diff := cmp.Diff(pooled{want.Score, want.HarmonicMean, want.Min, want.Max, want.Frames, want.Features, want.Model, want.ModelSHA256, want.DistortedScaledFrom},
				pooled{got.Score, got.HarmonicMean, got.Min, got.Max, got.Frames, got.Features, got.Model, got.ModelSHA256, got.DistortedScaledFrom}, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("merged result differs from one run (-want,+got):\n%s", diff)
			}
			wantOut, err := os.ReadFile(one)
			if err != nil {
				t.Fatal(err)
			}
			gotOut, err := os.ReadFile(filepath.Join(dir, "split.json"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fpsLine.ReplaceAllString(string(wantOut), ""), fpsLine.ReplaceAllString(string(gotOut), "")); diff != "" {
				t.Errorf("merged output differs from one run's (-want,+got):\n%s", diff)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "split.json.chunk-*")); len(left) != 0 {
				t.Errorf("the merge left its parts: %v", left)
			}
		})
	}
}

func TestChunkFlags(t *testing.T) {
	for name, extra := range map[string][]string{
		"probe and chunk":      {"--probe", "--chunk", "0:4", "--total-frames", "16", "--chunk-part", "/tmp/p"},
		"chunk without total":  {"--chunk", "0:4", "--chunk-part", "/tmp/p"},
		"chunk past total":     {"--chunk", "14:4", "--total-frames", "16", "--chunk-part", "/tmp/p"},
		"chunk without part":   {"--chunk", "0:4", "--total-frames", "16"},
		"empty chunk":          {"--chunk", "4:0", "--total-frames", "16", "--chunk-part", "/tmp/p"},
		"merge without output": {"--merge-parts", "2"},
		"total frames alone":   {"--total-frames", "16"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip, extra...)...)
			if got := r.result(t); r.code != 2 || got.Error == nil || got.Error.Reason != vmafxv1.ReasonBadInput {
				t.Errorf("exit %d, result %+v; want exit 2, BadInput", r.code, got)
			}
		})
	}
}

// TestMergeMissingPart: a merge whose part is missing fails and names the chunk.
func TestMergeMissingPart(t *testing.T) {
	out := "file://" + filepath.Join(t.TempDir(), "out.json")
	r := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip, "--output", out, "--merge-parts", "2")...)
	got := r.result(t)
	if r.code == 0 || got.Error == nil || !regexp.MustCompile(`^chunk 0: `).MatchString(got.Error.Message) {
		t.Errorf("exit %d, result %+v; want a failure naming chunk 0", r.code, got.Error)
	}
}

// TestFailedMergeKeepsParts: a merge that fails (here on a damaged part) writes no output
// and removes no part, so that its retry, once the part is written again, merges them
// all; the merge that succeeds removes them.
func TestFailedMergeKeepsParts(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	chunks, _ := scoreChunks(t, rawArgs(refClip, distClip), 3, out, -1)
	parts := func() []string {
		left, err := filepath.Glob(out + ".chunk-*")
		if err != nil {
			t.Fatal(err)
		}
		return left
	}
	if got := parts(); len(got) != chunks {
		t.Fatalf("parts before the merge: %v, want %d", got, chunks)
	}
	if err := os.WriteFile(vmafxv1.ChunkPartURI(out, 1), []byte("not a part"), 0o644); err != nil {
		t.Fatal(err)
	}
	merge := append(rawArgs(refClip, distClip), "--output", out, "--merge-parts", strconv.Itoa(chunks))
	r := runWorker(t, context.Background(), nil, merge...)
	if got := r.result(t); r.code == 0 || got.Error == nil || !strings.HasPrefix(got.Error.Message, "chunk 1: ") {
		t.Fatalf("merge of a damaged part: exit %d, %+v; want a failure naming chunk 1", r.code, got.Error)
	}
	if got := parts(); len(got) != chunks {
		t.Errorf("the failed merge left %v, want all %d parts", got, chunks)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the failed merge wrote the output (stat: %v)", err)
	}

	scoreChunks(t, rawArgs(refClip, distClip), 3, out, 1)
	r = runWorker(t, context.Background(), nil, merge...)
	if got := r.result(t); r.code != 0 || got.Frames != frames || got.OutputError != "" {
		t.Fatalf("retried merge: exit %d, %d frames, output error %q, stderr:\n%s", r.code, got.Frames, got.OutputError, r.stderr)
	}
	if got := parts(); len(got) != 0 {
		t.Errorf("the merge that wrote the output left %v", got)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the output: %v", err)
	}
}

// TestMergeKilledWhileRemovingParts: a merge stopped after it wrote the output and removed
// some parts (a kill, here a panic after the first removal, reports nothing) leaves a
// record; its replacement reports the same result from it, removes the parts left and the
// record, and leaves the output as written. Without the record the replacement fails on
// the missing part, and a record of other parts (an earlier job's) is not taken.
func TestMergeKilledWhileRemovingParts(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	leftovers := func() []string {
		left, err := filepath.Glob(out + ".chunk*")
		if err != nil {
			t.Fatal(err)
		}
		return left
	}
	chunks, _ := scoreChunks(t, rawArgs(refClip, distClip), 3, out, -1)
	merge := append(rawArgs(refClip, distClip), "--output", out, "--merge-parts", strconv.Itoa(chunks))

	afterPartRemoved = func(i int) { panic(fmt.Sprintf("killed after removing part %d", i)) }
	killed := runWorker(t, context.Background(), nil, merge...)
	afterPartRemoved = func(int) {}
	if killed.code == 0 {
		t.Fatalf("the killed merge succeeded: %s", killed.stderr)
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the killed merge wrote no output: %v", err)
	}
	if got := len(leftovers()); got != chunks {
		t.Fatalf("after the kill: %v, want %d parts left and the record", leftovers(), chunks-1)
	}
	record, err := os.ReadFile(mergeRecordURI(out))
	if err != nil {
		t.Fatal(err)
	}

	// A record of other parts: the replacement must not take its result.
	var rec mergeRecord
	if err := json.Unmarshal(record, &rec); err != nil {
		t.Fatal(err)
	}
	rec.Parts[chunks-1] = strings.Repeat("0", 64)
	stale, err := json.Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mergeRecordURI(out), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runWorker(t, context.Background(), nil, merge...); r.code == 0 || !strings.HasPrefix(r.result(t).Error.Message, "chunk 0: ") {
		t.Fatalf("merge beside another merge's record: exit %d, %+v; want a failure naming chunk 0", r.code, r.result(t).Error)
	}
	if err := os.WriteFile(mergeRecordURI(out), record, 0o644); err != nil {
		t.Fatal(err)
	}
	// The record without the output it speaks of (removed since): the merge fails and says so.
	if err := os.Rename(out, out+".aside"); err != nil {
		t.Fatal(err)
	}
	if r := runWorker(t, context.Background(), nil, merge...); r.code == 0 || !strings.Contains(r.result(t).Error.Message, "recorded its result, but its output") {
		t.Fatalf("merge whose recorded output is gone: exit %d, %+v; want a failure naming the output", r.code, r.result(t).Error)
	}
	if err := os.Rename(out+".aside", out); err != nil {
		t.Fatal(err)
	}

	r := runWorker(t, context.Background(), nil, merge...)
	got := r.result(t)
	if r.code != 0 || got.Error != nil {
		t.Fatalf("replacement merge: exit %d, %+v, stderr:\n%s", r.code, got.Error, r.stderr)
	}
	one := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip)...).result(t)
	if got.Score != one.Score || got.HarmonicMean != one.HarmonicMean || got.Min != one.Min || got.Max != one.Max || got.Frames != one.Frames {
		t.Errorf("replacement merge reported %+v, want one run's %+v", got, one)
	}
	if left := leftovers(); len(left) != 0 {
		t.Errorf("the replacement left %v", left)
	}
	if now, err := os.ReadFile(out); err != nil || !bytes.Equal(now, written) {
		t.Errorf("the output changed or went (%v)", err)
	}

	// With neither parts nor record, there is nothing to report: the missing part is named.
	if r := runWorker(t, context.Background(), nil, merge...); r.code == 0 || !strings.HasPrefix(r.result(t).Error.Message, "chunk 0: ") {
		t.Errorf("merge with no parts: exit %d, %+v; want a failure naming chunk 0", r.code, r.result(t).Error)
	}
}
