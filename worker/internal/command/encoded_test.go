package command

import (
	"context"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil/fftest"
	"github.com/vmafx/vmafx/vmaf"
)

// testSecret is the secret key of the tests' credentials; it must never
// appear in a result or a log line.
const testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYTESTSECRET"

// writeCredentials writes a credentials directory, as a mounted Secret.
func writeCredentials(t *testing.T, keys map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range keys {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func encoded(name string) string { return fftest.Path(name) }

func TestScoreEncoded(t *testing.T) {
	fftest.Tools(t)
	tests := []struct {
		name             string
		args             []string
		wantFrames       int
		wantScaled       string
		wantInterlaced   []string
		wantDeinterlaced bool
	}{
		{name: "h264 against a lossless reference", args: []string{"--reference", encoded("ref_ffv1.mkv"), "--distorted", encoded("dist_h264.mp4")}, wantFrames: 24},
		{name: "downscaled distorted", args: []string{"--reference", encoded("ref_ffv1.mkv"), "--distorted", encoded("dist_small_h264.mp4")}, wantFrames: 24, wantScaled: "128x96"},
		{name: "10-bit av1", args: []string{"--reference", encoded("ref10_ffv1.mkv"), "--distorted", encoded("dist10_av1.webm")}, wantFrames: 12},
		{name: "raw reference, encoded distorted", args: []string{"--reference", fftest.Clip("p01_ref.yuv"), "--distorted", encoded("dist_hevc.mkv"), "--width", "176", "--height", "144"}, wantFrames: 24},
		{name: "interlaced scored as stored", args: []string{"--reference", encoded("ref_ffv1.mkv"), "--distorted", encoded("dist_interlaced_h264.mkv")}, wantFrames: 24, wantInterlaced: []string{"distorted"}},
		{name: "interlaced deinterlaced", args: []string{"--reference", encoded("ref_ffv1.mkv"), "--distorted", encoded("dist_interlaced_h264.mkv"), "--deinterlace"}, wantFrames: 24, wantInterlaced: []string{"distorted"}, wantDeinterlaced: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runWorker(t, context.Background(), nil, append([]string{"score"}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			got := r.result(t)
			type summary struct {
				Frames       int
				Scaled       string
				Interlaced   []string
				Deinterlaced bool
			}
			if diff := cmp.Diff(summary{tc.wantFrames, tc.wantScaled, tc.wantInterlaced, tc.wantDeinterlaced},
				summary{got.Frames, got.DistortedScaledFrom, got.Interlaced, got.Deinterlaced}); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if got.Score <= 0 || got.Score > 100 {
				t.Errorf("score %v", got.Score)
			}
		})
	}
}

// cut writes frames [from, to) of a raw 176x144 yuv420p clip to a new file.
func cut(t *testing.T, clip string, from, to int) string {
	t.Helper()
	data, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	fb := vmaf.YUV420P.FrameBytes(pairW, pairH)
	p := filepath.Join(t.TempDir(), "cut.yuv")
	if err := os.WriteFile(p, data[from*fb:min(to*fb, len(data))], 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// perFrameVMAF runs the worker with --output and returns the per-frame VMAF scores.
func perFrameVMAF(t *testing.T, args ...string) []float64 {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.json")
	r := runWorker(t, context.Background(), nil, append(args, "--output", out)...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var scores []float64
	for _, f := range readLibvmafJSON(t, out).Frames {
		scores = append(scores, f.Metrics["vmaf"])
	}
	return scores
}

func TestScoreAlignment(t *testing.T) {
	// The distorted input lacks the reference's first 2 frames and its last.
	dist := cut(t, distClip, 2, frames-1)
	want := perFrameVMAF(t, rawArgs(cut(t, refClip, 2, frames-1), dist)...)
	if len(want) != frames-3 {
		t.Fatalf("%d frames, want %d", len(want), frames-3)
	}
	// Without an alignment: refused, naming both counts.
	r := runWorker(t, context.Background(), nil, rawArgs(refClip, dist)...)
	if r.code != 2 || !strings.Contains(r.result(t).Error.Message, "reference has 16 frames, distorted 13") {
		t.Fatalf("unaligned: exit %d, %+v", r.code, r.result(t).Error)
	}
	// Skipping the reference's first 2 frames pairs them, and scoring stops
	// at the shorter input.
	got := perFrameVMAF(t, rawArgs(refClip, dist, "--reference-start", "2")...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aligned per-frame VMAF (-want +got):\n%s", diff)
	}
	// The env twins, and a count.
	r = runWorker(t, context.Background(), map[string]string{"VMAFX_REFERENCE_START": "2", "VMAFX_FRAMES": ":5"}, rawArgs(refClip, dist)...)
	if r.code != 0 || r.result(t).Frames != 5 {
		t.Fatalf("exit %d, %d frames; want 5 frames", r.code, r.result(t).Frames)
	}
	// --align alone pairs frames from the start and stops at the shorter.
	r = runWorker(t, context.Background(), nil, rawArgs(refClip, dist, "--align")...)
	if r.code != 0 || r.result(t).Frames != frames-3 {
		t.Fatalf("--align: exit %d, %d frames; want %d", r.code, r.result(t).Frames, frames-3)
	}
	// Skipping past the end of an input.
	r = runWorker(t, context.Background(), nil, rawArgs(refClip, dist, "--distorted-start", "20")...)
	if r.code != 2 || !strings.Contains(r.result(t).Error.Message, "distorted: vmaf: no frames: fewer frames than --distorted-start skips") {
		t.Fatalf("start past the end: exit %d, %+v", r.code, r.result(t).Error)
	}
}

// Inputs whose lengths are known only once read: the mismatch names both counts.
func TestScoreLateFrameCountMismatch(t *testing.T) {
	fftest.Tools(t)
	r := runWorker(t, context.Background(), nil, "score", "--reference", encoded("ref_ffv1.mkv"),
		"--distorted", cut(t, fftest.Clip("p01_dist.yuv"), 0, 20), "--width", "176", "--height", "144")
	if r.code != 2 || !strings.Contains(r.result(t).Error.Message, "distorted has 20 frames, reference at least 21") {
		t.Fatalf("exit %d, %+v", r.code, r.result(t).Error)
	}
}

func TestScoreRateMismatchAligned(t *testing.T) {
	dir := t.TempDir()
	ref, _ := writeY4MPair(t, dir)
	data, err := os.ReadFile(distClip)
	if err != nil {
		t.Fatal(err)
	}
	dist := filepath.Join(dir, "dist30.y4m")
	if err := os.WriteFile(dist, []byte(strings.Replace(string(y4m(data, pairW, pairH)), "F25:1", "F30:1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runWorker(t, context.Background(), nil, "score", "--reference", ref, "--distorted", dist, "--align")
	if r.code != 0 || r.result(t).Frames != frames {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

func TestScoreCSVOutput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "scores.csv")
	r := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip, "--output", out, "--output-format", "csv")...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != frames+1 {
		t.Fatalf("%d rows, want a header and %d frames", len(rows), frames)
	}
	// libvmaf's layout: "Frame," then the metrics, each field followed by a comma.
	header := rows[0]
	if header[0] != "Frame" || header[len(header)-1] != "" || !slices.Contains(header, "vmaf") || !slices.Contains(header, "integer_adm2") {
		t.Errorf("header %q", header)
	}
	want := readLibvmafJSON(t, filepath.Join(testdata, "ref/p02_v061.json"))
	col := slices.Index(header, "vmaf")
	for i, row := range rows[1:] {
		if row[0] != strconv.Itoa(i) || len(row) != len(header) {
			t.Fatalf("row %d: %q", i, row)
		}
		v, err := strconv.ParseFloat(row[col], 64)
		if err != nil || math.Abs(v-want.Frames[i].Metrics["vmaf"]) > 1e-4 {
			t.Errorf("frame %d vmaf %q, want %.6f", i, row[col], want.Frames[i].Metrics["vmaf"])
		}
	}
}

// An output that cannot be written after the score is made keeps the score.
func TestScoreOutputFailureKeepsTheScore(t *testing.T) {
	creds := writeCredentials(t, map[string]string{"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": testSecret})
	r := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip, "--output", "s3://bucket/out/x.json?versionId=secret",
		"--credentials-dir", creds, "--s3-endpoint", "http://127.0.0.1:1", "--http-retries", "0")...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	got := r.result(t)
	if got.Frames != frames || got.Error != nil || !strings.HasPrefix(got.OutputError, "store s3://bucket/out/x.json: ") {
		t.Errorf("result %+v, want the score and an output error naming the output", got)
	}
	if strings.Contains(r.termination+r.stderr, testSecret) || strings.Contains(got.OutputError, "versionId") {
		t.Errorf("a secret leaked:\n%s\n%s", r.termination, r.stderr)
	}
}

// Encoded inputs over HTTP stream into ffmpeg (an MP4 with its index last is spooled)
// and score as the same files do from disk.
func TestScoreEncodedOverHTTP(t *testing.T) {
	fftest.Tools(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(fftest.Dir())))
	defer srv.Close()
	spool := t.TempDir()
	for _, dist := range []string{"dist_h264_moovend.mp4", "dist_vp9.webm"} {
		r := runWorker(t, context.Background(), nil, "score", "--reference", srv.URL+"/ref_ffv1.mkv", "--distorted", srv.URL+"/"+dist, "--spool-dir", spool)
		local := runWorker(t, context.Background(), nil, "score", "--reference", encoded("ref_ffv1.mkv"), "--distorted", encoded(dist))
		if r.code != 0 || local.code != 0 {
			t.Fatalf("%s: exit %d over HTTP, %d from disk; stderr:\n%s", dist, r.code, local.code, r.stderr)
		}
		if got, want := r.result(t), local.result(t); got.Score != want.Score || got.Frames != want.Frames {
			t.Errorf("%s: over HTTP %v (%d frames), from disk %v (%d frames)", dist, got.Score, got.Frames, want.Score, want.Frames)
		}
		if entries, _ := os.ReadDir(spool); len(entries) != 0 {
			t.Errorf("%s: %d files left in the spool", dist, len(entries))
		}
	}
}

// TestScoringBitDepthIsFfmpegs: --scoring-bit-depth 10 on an 8-bit pair scores exactly
// what the same pair converted by ffmpeg's format=yuv420p10le scores, frame for frame;
// the kernel equals libvmaf at 10 bits (vmaf's accuracy tests), so this is libvmaf's
// score of ffmpeg's conversion.
func TestScoringBitDepthIsFfmpegs(t *testing.T) {
	tools := fftest.Tools(t)
	dir := t.TempDir()
	convert := func(clip string) string {
		out := filepath.Join(dir, filepath.Base(clip)+".10")
		cmd := exec.Command(tools.FFmpeg, "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", fmt.Sprintf("%dx%d", pairW, pairH),
			"-i", clip, "-vf", "format=yuv420p10le", "-f", "rawvideo", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v\n%s", err, b)
		}
		return out
	}
	perFrame := func(args ...string) ([]map[string]float64, *vmafxv1.WorkerResult) {
		out := filepath.Join(dir, fmt.Sprintf("out%d.json", len(args)))
		r := runWorker(t, context.Background(), nil, append(args, "--output", out, "--features", "psnr")...)
		if r.code != 0 {
			t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
		}
		var frames []map[string]float64
		for _, f := range readLibvmafJSON(t, out).Frames {
			frames = append(frames, f.Metrics)
		}
		return frames, r.result(t)
	}
	got, gotRes := perFrame(rawArgs(refClip, distClip, "--scoring-bit-depth", "10")...)
	want, wantRes := perFrame("score", "--reference", convert(refClip), "--distorted", convert(distClip),
		"--width", strconv.Itoa(pairW), "--height", strconv.Itoa(pairH), "--pixel-format", "yuv420p10le")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("per-frame metrics differ from ffmpeg's 10-bit conversion (-ffmpeg +flag):\n%s", diff)
	}
	if gotRes.Score != wantRes.Score {
		t.Errorf("score %v, ffmpeg's conversion scores %v", gotRes.Score, wantRes.Score)
	}
	at8, res8 := perFrame(rawArgs(refClip, distClip)...)
	if cmp.Equal(at8, got) || res8.Features["psnr_y"] == gotRes.Features["psnr_y"] {
		t.Error("scoring at 10 bits changed nothing: the flag was not applied")
	}
}

// TestScoringBitDepthThumbnailsAtOnce: --scoring-bit-depth 10 on an 8-bit pair scores
// what the pair's samples shifted to 10 bits score, with the alignment check's thumbnails
// taken beside the reading (make test runs it under the race detector: the shift went
// after the thumbnails' wrapper, and wrote a frame's samples while a thumbnail read them).
func TestScoringBitDepthThumbnailsAtOnce(t *testing.T) {
	dir := t.TempDir()
	to10 := func(clip string) string {
		b, err := os.ReadFile(clip)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 2*len(b))
		for i, v := range b {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(v)<<2)
		}
		name := filepath.Join(dir, filepath.Base(clip)+".10")
		if err := os.WriteFile(name, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	up := runWorker(t, context.Background(), nil, rawArgs(refClip, distClip, "--scoring-bit-depth", "10", "--threads", "2")...)
	deep := runWorker(t, context.Background(), nil, "score", "--reference", to10(refClip), "--distorted", to10(distClip),
		"--width", strconv.Itoa(pairW), "--height", strconv.Itoa(pairH), "--pixel-format", "yuv420p10le", "--threads", "2")
	if up.code != 0 || deep.code != 0 {
		t.Fatalf("exit %d and %d; stderr:\n%s\n%s", up.code, deep.code, up.stderr, deep.stderr)
	}
	if got, want := up.result(t), deep.result(t); got.Score != want.Score || got.Frames != want.Frames {
		t.Errorf("--scoring-bit-depth 10: score %v over %d frames, want the 10-bit samples' %v over %d", got.Score, got.Frames, want.Score, want.Frames)
	}
}
