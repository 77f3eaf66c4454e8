package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil/fftest"
	"github.com/vmafx/vmafx/vmaf"
)

// The alignment tests use p01 (176x144 yuv420p, 24 frames of testsrc2 and their x264
// CRF 18 encode): misaligned pairs are made from it by dropping and prepending frames.
var (
	p01Ref  = filepath.Join(testdata, "clips/p01_ref.yuv")
	p01Dist = filepath.Join(testdata, "clips/p01_dist.yuv")
)

const p01Frames = 24

// rawFrames returns the frames of a raw 176x144 yuv420p clip, one byte slice each.
func rawFrames(t *testing.T, clip string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	fb := vmaf.YUV420P.FrameBytes(pairW, pairH)
	var out [][]byte
	for i := 0; i+fb <= len(data); i += fb {
		out = append(out, data[i:i+fb])
	}
	return out
}

// blackFrame is a black 176x144 yuv420p frame (limited range).
func blackFrame() []byte {
	fb := vmaf.YUV420P.FrameBytes(pairW, pairH)
	f := bytes.Repeat([]byte{128}, fb)
	for i := range pairW * pairH {
		f[i] = 16
	}
	return f
}

// writeRaw writes frames as one raw clip and returns its path.
func writeRaw(t *testing.T, name string, frames ...[]byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, bytes.Join(frames, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The auto-aligned score equals, frame for frame, the score of the same frames cut by hand.
func TestAutoAlignExact(t *testing.T) {
	ref, dist := rawFrames(t, p01Ref), rawFrames(t, p01Dist)
	black := blackFrame()
	tests := []struct {
		name         string
		dist         [][]byte
		offset       int
		cutRef, cutD [][]byte // the hand-cut pair
	}{
		{"two black leader frames", append([][]byte{black, black}, dist...), 2, ref, dist},
		{"distorted starts 3 frames late", dist[3:], -3, ref[3:], dist[3:]},
		{"distorted has 5 other frames first", append(append([][]byte{}, dist[10:15]...), dist[:20]...), 5, ref[:20], dist[:20]},
		{"aligned", dist, 0, ref, dist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := perFrameVMAF(t, rawArgs(writeRaw(t, "ref.yuv", tc.cutRef...), writeRaw(t, "dist.yuv", tc.cutD...))...)
			d := writeRaw(t, "misaligned.yuv", tc.dist...)
			out := filepath.Join(t.TempDir(), "out.json")
			r := runWorker(t, context.Background(), nil, rawArgs(p01Ref, d, "--auto-align", "--output", out)...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			var got []float64
			for _, f := range readLibvmafJSON(t, out).Frames {
				got = append(got, f.Metrics["vmaf"])
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("auto-aligned per-frame VMAF differs from the hand-cut pair's (-want +got):\n%s", diff)
			}
			a := r.result(t).Alignment
			if a == nil || !a.Auto || a.Offset != tc.offset || a.Measure != "luma-psnr-thumbnail" || a.Pairs < 3 || a.Window < 3 {
				t.Fatalf("alignment %+v, want auto, offset %d", a, tc.offset)
			}
			wantStarts := [2]int{max(0, -tc.offset), max(0, tc.offset)}
			if got := [2]int{a.ReferenceStart, a.DistortedStart}; got != wantStarts {
				t.Errorf("starts %v, want %v", got, wantStarts)
			}
			if tc.offset != 0 && (a.Confidence < 0.2 || !a.Confirmed || a.BestPSNR <= a.BasePSNR) {
				t.Errorf("alignment %+v: want confident, confirmed, better than at 0", a)
			}
		})
	}
}

// Decoded inputs: ffmpeg cuts a lossless copy of the encoded test reference, and the
// auto-aligned score of the cut against the whole equals the hand-cut pair's.
func TestAutoAlignEncoded(t *testing.T) {
	tools := fftest.Tools(t)
	dir := t.TempDir()
	trim := func(in, out string, from int) string {
		t.Helper()
		p := filepath.Join(dir, out)
		cmd := exec.Command(tools.FFmpeg, "-v", "error", "-i", in, "-vf", "trim=start_frame="+strconv.Itoa(from)+",setpts=PTS-STARTPTS", "-c:v", "ffv1", p)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return p
	}
	ref, dist := encoded("ref_ffv1.mkv"), encoded("dist_h264.mp4")
	late := trim(dist, "late.mkv", 4) // the distorted lacks the reference's first 4 frames
	want := perFrameVMAF(t, "score", "--reference", trim(ref, "ref4.mkv", 4), "--distorted", late)
	got := perFrameVMAF(t, "score", "--reference", ref, "--distorted", late, "--auto-align", "--auto-align-window", "8")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("per-frame VMAF (-want +got):\n%s", diff)
	}
	r := runWorker(t, context.Background(), nil, "score", "--reference", ref, "--distorted", late, "--auto-align")
	if a := r.result(t).Alignment; a == nil || a.Offset != -4 || a.ReferenceStart != 4 {
		t.Fatalf("alignment %+v, want offset -4", a)
	}

	// A smaller distorted, scaled to the reference's size, behind two black leader
	// frames (a lossless copy, so that its frames decode as the original's).
	small := encoded("dist_small_h264.mp4")
	lead := filepath.Join(dir, "lead.mkv")
	cmd := exec.Command(tools.FFmpeg, "-v", "error", "-i", small, "-vf", "tpad=start=2:color=black", "-c:v", "ffv1", lead)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want = perFrameVMAF(t, "score", "--reference", ref, "--distorted", small)
	got = perFrameVMAF(t, "score", "--reference", ref, "--distorted", lead, "--auto-align")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scaled, two leader frames: per-frame VMAF (-want +got):\n%s", diff)
	}
	r = runWorker(t, context.Background(), nil, "score", "--reference", ref, "--distorted", lead, "--auto-align")
	if res := r.result(t); res.Alignment == nil || res.Alignment.Offset != 2 || res.DistortedScaledFrom != "128x96" {
		t.Fatalf("scaled: alignment %+v, scaled from %q; want offset +2 from 128x96", res.Alignment, res.DistortedScaledFrom)
	}
}

// Without --auto-align a likely misalignment is reported beside the score, which is kept.
func TestMisalignedWarning(t *testing.T) {
	ref, dist := rawFrames(t, p01Ref), rawFrames(t, p01Dist)
	black := blackFrame()
	// The same length as the reference: two black leader frames, the last two cut.
	d := writeRaw(t, "leader.yuv", append([][]byte{black, black}, dist[:p01Frames-2]...)...)
	r := runWorker(t, context.Background(), nil, rawArgs(p01Ref, d)...)
	res := r.result(t)
	if r.code != 0 || res.Frames != p01Frames {
		t.Fatalf("exit %d, %d frames; stderr:\n%s", r.code, res.Frames, r.stderr)
	}
	a := res.Alignment
	if a == nil || a.Auto || !a.Misaligned || a.Offset != 2 || a.BestPSNR <= a.BasePSNR {
		t.Fatalf("alignment %+v, want misaligned at +2", a)
	}
	// The desk form says it on stderr.
	var stdout, stderr bytes.Buffer
	y4mRef, y4mDist := filepath.Join(t.TempDir(), "ref.y4m"), filepath.Join(t.TempDir(), "dist.y4m")
	for _, c := range []struct {
		to     string
		frames [][]byte
	}{{y4mRef, ref}, {y4mDist, append([][]byte{black, black}, dist[:p01Frames-2]...)}} {
		if err := os.WriteFile(c.to, y4m(bytes.Join(c.frames, nil), pairW, pairH), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code := Run(context.Background(), []string{"score", y4mRef, y4mDist}, func(string) string { return "" }, &stdout, &stderr)
	if code != 0 || !strings.Contains(stderr.String(), "warning: the inputs look misaligned: the distorted's frame 2 shows the reference's first (2 extra frames, e.g. leader frames) (offset +2") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	// An aligned pair says nothing.
	if a := runWorker(t, context.Background(), nil, rawArgs(p01Ref, p01Dist)...).result(t).Alignment; a != nil {
		t.Errorf("aligned pair: alignment %+v, want none", a)
	}
	// Given starts that fit: nothing either; starts that do not: the offset counts from
	// the inputs' first frames.
	if a := runWorker(t, context.Background(), nil, rawArgs(p01Ref, d, "--distorted-start", "2")...).result(t).Alignment; a != nil {
		t.Errorf("right starts: alignment %+v, want none", a)
	}
	if a := runWorker(t, context.Background(), nil, rawArgs(p01Ref, d, "--distorted-start", "1")...).result(t).Alignment; a == nil || a.Offset != 2 || a.DistortedStart != 1 {
		t.Errorf("wrong starts: alignment %+v, want misaligned at +2", a)
	}
}

// A pair refused for its frame counts names the offset its first frames suggest.
func TestCountMismatchHint(t *testing.T) {
	dist := rawFrames(t, p01Dist)
	r := runWorker(t, context.Background(), nil, rawArgs(p01Ref, writeRaw(t, "late.yuv", dist[3:]...))...)
	want := "reference has 24 frames, distorted 21 (give an alignment to score the frames they share); the first frames suggest an offset of -3: the distorted's first frame shows the reference's frame 3 (the distorted lacks 3 frames)"
	if r.code != 2 || !strings.Contains(r.result(t).Error.Message, want) {
		t.Fatalf("exit %d, %+v", r.code, r.result(t).Error)
	}
}

func TestAutoAlignRates(t *testing.T) {
	data, err := os.ReadFile(p01Dist)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	refData, err := os.ReadFile(p01Ref)
	if err != nil {
		t.Fatal(err)
	}
	withRate := func(name string, data []byte, rate string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Replace(string(y4m(data, pairW, pairH)), "F25:1", "F"+rate, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ref24 := withRate("ref24.y4m", refData, "24:1")
	// 24 against 23.976: the same pictures, paired by index.
	r := runWorker(t, context.Background(), nil, "score", "--reference", ref24, "--distorted", withRate("d.y4m", data, "24000:1001"), "--auto-align")
	a := r.result(t).Alignment
	if r.code != 0 || a == nil || a.Rate != "reference 24 fps, distorted 24000/1001 fps: the same pictures retimed by 1000/1001 (NTSC), paired by index" {
		t.Fatalf("exit %d, alignment %+v, stderr:\n%s", r.code, a, r.stderr)
	}
	// Without an alignment the pair is refused, and the message says what to give.
	r = runWorker(t, context.Background(), nil, "score", "--reference", ref24, "--distorted", withRate("d.y4m", data, "24000:1001"))
	if r.code != 2 || !strings.Contains(r.result(t).Error.Message, "frame rate mismatch: reference 24 fps, distorted 24000/1001 fps: the same pictures retimed by 1000/1001 (NTSC); give an alignment") {
		t.Fatalf("exit %d, %+v", r.code, r.result(t).Error)
	}
	// Without an alignment 25 against 50 is refused, naming the factor and the fixes.
	ref25 := withRate("ref25.y4m", refData, "25:1")
	dist50 := bytes.Join(func() (out [][]byte) {
		for _, f := range rawFrames(t, p01Dist) {
			out = append(out, f, f) // each frame twice: 50 fps made from 25
		}
		return out
	}(), nil)
	r = runWorker(t, context.Background(), nil, "score", "--reference", ref25, "--distorted", withRate("d50.y4m", dist50, "50:1"))
	if e := r.result(t).Error; r.code != 2 || e.Reason != vmafxv1.ReasonBadInput || !strings.Contains(e.Message, "frame rate mismatch: reference 25 fps, distorted 50 fps: the distorted has 2 times the other's frame rate") ||
		!strings.Contains(e.Message, "ffmpeg -vf fps=25") || !strings.Contains(e.Message, "give --auto-align") {
		t.Fatalf("exit %d, %+v", r.code, e)
	}
	// 25 against 30: refused with --auto-align too.
	r = runWorker(t, context.Background(), nil, "score", "--reference", ref25, "--distorted", withRate("d30.y4m", data, "30:1"), "--auto-align")
	if e := r.result(t).Error; r.code != 2 || !strings.Contains(e.Message, "--auto-align aligns only rates that differ by 1000/1001 (24 and 24000/1001) or by a whole factor") {
		t.Fatalf("25 against 30: exit %d, %+v", r.code, e)
	}
}

// Rates a whole factor apart: --auto-align keeps every n-th frame of the faster input,
// from the phase whose frames match, and scores exactly the pairs cut by hand.
func TestAutoAlignDecimates(t *testing.T) {
	ref, dist := rawFrames(t, p01Ref), rawFrames(t, p01Dist)
	black := blackFrame()
	want := perFrameVMAF(t, rawArgs(p01Ref, p01Dist)...)
	dir := t.TempDir()
	write := func(name, rate string, frames [][]byte) string {
		p := filepath.Join(dir, name)
		data := y4m(bytes.Join(frames, nil), pairW, pairH)
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), "F25:1", "F"+rate, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	interleave := func(frames [][]byte, other func(i int) []byte) (out [][]byte) {
		for i, f := range frames {
			out = append(out, other(i), f)
		}
		return out
	}
	tests := []struct {
		name, ref, dist  string
		refStart, dStart int
	}{
		// The distorted at 50 fps, each frame after another picture: phase 1.
		{"distorted 50, phase 1", write("ref25.y4m", "25:1", ref), write("d50.y4m", "50:1", interleave(dist, func(int) []byte { return black })), 0, 1},
		// The reference at 50 fps, each frame twice: phase 0, the reference decimated.
		{"reference 50, doubled", write("ref50.y4m", "50:1", interleave(ref, func(i int) []byte { return ref[i] })), write("d25.y4m", "25:1", dist), 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := perFrameVMAF(t, "score", "--reference", tc.ref, "--distorted", tc.dist, "--auto-align")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("per-frame VMAF differs from the 25 fps pair's (-want +got):\n%s", diff)
			}
			r := runWorker(t, context.Background(), nil, "score", "--reference", tc.ref, "--distorted", tc.dist, "--auto-align")
			a := r.result(t).Alignment
			if a == nil || a.ReferenceStart != tc.refStart || a.DistortedStart != tc.dStart || !strings.Contains(a.Rate, "every 2 frames of the") {
				t.Fatalf("alignment %+v, want starts %d, %d and a rate note", a, tc.refStart, tc.dStart)
			}
		})
	}
	// A chunked job's probe cannot decimate.
	r := runWorker(t, context.Background(), nil, "score", "--reference", tests[0].ref, "--distorted", tests[0].dist, "--auto-align", "--probe")
	if e := r.result(t).Error; r.code != 2 || !strings.Contains(e.Message, "a chunked job cannot decimate") {
		t.Fatalf("probe: exit %d, %+v", r.code, e)
	}
}

func TestAutoAlignFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--auto-align", "--reference-start", "2"}, "--auto-align finds the starts itself"},
		{[]string{"--auto-align-window", "5"}, "--auto-align-window is the offsets --auto-align searches"},
		{[]string{"--auto-align", "--auto-align-window", "301"}, "auto-align-window"},
		{[]string{"--auto-align", "--chunk", "0:4", "--total-frames", "8", "--chunk-part", "/tmp/p"}, "--auto-align does not go with --chunk or --merge-parts"},
	} {
		r := runWorker(t, context.Background(), nil, rawArgs(p01Ref, p01Dist, tc.args...)...)
		if e := r.result(t).Error; r.code != 2 || e == nil || e.Reason != vmafxv1.ReasonBadInput || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%q: exit %d, %+v; want a bad request naming %q", tc.args, r.code, e, tc.want)
		}
	}
}

// A chunked job's probe searches: it counts the frame pairs the found starts leave and
// reports the offset beside them, for the chunks.
func TestAutoAlignProbe(t *testing.T) {
	dist := rawFrames(t, p01Dist)
	d := writeRaw(t, "leader.yuv", append([][]byte{blackFrame(), blackFrame()}, dist...)...)
	r := runWorker(t, context.Background(), nil, rawArgs(p01Ref, d, "--probe", "--auto-align")...)
	res := r.result(t)
	if r.code != 0 || res.Frames != p01Frames || res.Alignment == nil || res.Alignment.Offset != 2 || res.Alignment.DistortedStart != 2 {
		t.Fatalf("exit %d, %d frames, alignment %+v; want %d frames at offset +2", r.code, res.Frames, res.Alignment, p01Frames)
	}
}

// The operator's flow for a chunked auto-aligned job: the probe searches, the chunks and
// the merge are given its starts; the merged per-frame scores equal one --auto-align run's.
func TestAutoAlignChunked(t *testing.T) {
	dist := rawFrames(t, p01Dist)
	d := writeRaw(t, "late.yuv", dist[3:]...)
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	if r := runWorker(t, context.Background(), nil, rawArgs(p01Ref, d, "--auto-align", "--output", one)...); r.code != 0 {
		t.Fatalf("one run: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	probe := runWorker(t, context.Background(), nil, rawArgs(p01Ref, d, "--auto-align", "--probe")...)
	a := probe.result(t).Alignment
	if probe.code != 0 || a == nil || a.ReferenceStart != 3 || a.DistortedStart != 0 {
		t.Fatalf("probe: exit %d, alignment %+v", probe.code, a)
	}
	split := filepath.Join(dir, "split.json")
	merged, _ := splitRun(t, rawArgs(p01Ref, d, "--reference-start", strconv.Itoa(a.ReferenceStart), "--distorted-start", strconv.Itoa(a.DistortedStart)), 3, "file://"+split)
	if merged.Frames != p01Frames-3 {
		t.Errorf("merged %d frames, want %d", merged.Frames, p01Frames-3)
	}
	var want, got []float64
	for _, f := range readLibvmafJSON(t, one).Frames {
		want = append(want, f.Metrics["vmaf"])
	}
	for _, f := range readLibvmafJSON(t, split).Frames {
		got = append(got, f.Metrics["vmaf"])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunked per-frame VMAF differs from one auto-aligned run's (-want +got):\n%s", diff)
	}
}

// numbered is a source of n one-pixel frames whose luma is their index.
type numbered struct{ i, n int }

func (s *numbered) Info() vmaf.VideoInfo {
	return vmaf.VideoInfo{Width: 1, Height: 1, Format: vmaf.Gray}
}

func (s *numbered) ReadFrame(f *vmaf.Frame) error {
	if s.i == s.n {
		return io.EOF
	}
	f.Width, f.Height, f.BitDepth, f.Y = 1, 1, 8, []uint16{uint16(s.i)}
	s.i++
	return nil
}

// decimated keeps frames 0, n, 2n ...; a last group cut short still gives its first frame.
func TestDecimated(t *testing.T) {
	for _, tc := range []struct{ frames, n int }{{7, 2}, {6, 3}, {1, 2}, {0, 2}} {
		d := &decimated{FrameSource: &numbered{n: tc.frames}, n: tc.n}
		var got, want []uint16
		for i := 0; i < tc.frames; i += tc.n {
			want = append(want, uint16(i))
		}
		var f vmaf.Frame
		for {
			err := d.ReadFrame(&f)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, f.Y[0])
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%d frames by %d (-want +got):\n%s", tc.frames, tc.n, diff)
		}
	}
}

// TestShortestSidesAtOnce reads the two sides of a shortest pairing from two goroutines,
// a frame of each at a time as the kernel does, and wants every common frame paired with
// its own and both sides ended together. Under the race detector (make test runs it
// there) it also fails when the sides' shared state is not guarded.
func TestShortestSidesAtOnce(t *testing.T) {
	for _, tc := range []struct{ ref, dist int }{{5, 7}, {7, 5}, {6, 6}, {0, 3}} {
		for range 20 {
			rs, ds := pairShortest(&numbered{n: tc.ref}, &numbered{n: tc.dist})
			want := min(tc.ref, tc.dist)
			var fr, fd vmaf.Frame
			for i := 0; ; i++ {
				errD := make(chan error)
				go func() { errD <- ds.ReadFrame(&fd) }()
				er, ed := rs.ReadFrame(&fr), <-errD
				if i == want {
					if !errors.Is(er, io.EOF) || !errors.Is(ed, io.EOF) {
						t.Fatalf("%d and %d frames: after %d frames, errors %v and %v, want both io.EOF", tc.ref, tc.dist, i, er, ed)
					}
					break
				}
				if er != nil || ed != nil {
					t.Fatalf("%d and %d frames: frame %d: errors %v and %v", tc.ref, tc.dist, i, er, ed)
				}
				if fr.Y[0] != uint16(i) || fd.Y[0] != uint16(i) {
					t.Fatalf("%d and %d frames: frame %d paired %d with %d", tc.ref, tc.dist, i, fr.Y[0], fd.Y[0])
				}
			}
		}
	}
}

// askedFlags is a numbered source that fails a read whose frame does not ask for chroma
// and 8-bit luma as bytes.
type askedFlags struct{ numbered }

func (s *askedFlags) ReadFrame(f *vmaf.Frame) error {
	if !f.Chroma || !f.Packed {
		return fmt.Errorf("frame %d read with Chroma %v and Packed %v", s.i, f.Chroma, f.Packed)
	}
	return s.numbered.ReadFrame(f)
}

// The frame a shortest pairing reads ahead for the other side is read as that side's
// caller asks (PSNR's chroma, a GPU backend's bytes), and so is every frame after it,
// whose storage it swaps.
func TestShortestReadsAsAsked(t *testing.T) {
	rs, ds := pairShortest(&askedFlags{numbered{n: 4}}, &askedFlags{numbered{n: 4}})
	fr, fd := vmaf.Frame{Chroma: true, Packed: true}, vmaf.Frame{Chroma: true, Packed: true}
	for i := range 4 {
		if err := rs.ReadFrame(&fr); err != nil {
			t.Fatalf("reference frame %d: %v", i, err)
		}
		if err := ds.ReadFrame(&fd); err != nil {
			t.Fatalf("distorted frame %d: %v", i, err)
		}
	}
}
