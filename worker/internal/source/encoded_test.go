package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/internal/testutil/fftest"
	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
)

// streamed serves local files as a remote fetcher would: by stream, with
// their size, under the "stream" scheme, so that ffmpeg gets them on stdin.
type streamed struct{ opened []string }

func (s *streamed) Open(ctx context.Context, u *url.URL) (*fetch.Object, error) {
	s.opened = append(s.opened, u.Path)
	return fetch.File{}.Open(ctx, &url.URL{Scheme: "file", Path: u.Path})
}

// uri is the URI of a test file, file:// or streamed.
func uri(path string, stream bool) *url.URL {
	if stream {
		return &url.URL{Scheme: "stream", Path: path}
	}
	return &url.URL{Scheme: "file", Path: path}
}

// openPair opens ref and dist as the worker does: the distorted scaled to
// the reference's size.
func openPair(t *testing.T, f fetch.Fetcher, ref, dist *url.URL, o Options) (*Input, *Input) {
	t.Helper()
	r, err := Open(context.Background(), f, ref, o)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	vi := r.Info()
	o.Width, o.Height = vi.Width, vi.Height
	d, err := Open(context.Background(), f, dist, o)
	if err != nil {
		t.Fatalf("distorted: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return r, d
}

// decodeRaw has ffmpeg decode path to a raw file of format pf (scaled to
// w x h when set), as a user would with ffmpeg alone, and returns its path.
func decodeRaw(t *testing.T, tools *decode.Tools, path string, pf vmaf.PixelFormat, w, h int) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "decoded.yuv")
	args := []string{"-hide_banner", "-loglevel", "error", "-nostdin", "-i", path, "-map", "0:v:0"}
	if w > 0 {
		args = append(args, "-vf", fmt.Sprintf("scale=%d:%d:flags=bicubic", w, h))
	}
	args = append(args, "-pix_fmt", pf.String(), "-fps_mode", "passthrough", "-f", "rawvideo", out)
	if msg, err := exec.Command(tools.FFmpeg, args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, msg)
	}
	return out
}

// TestTruth checks that every encoded pair scores exactly as the raw path
// scores ffmpeg's own decode of the same files to raw YUV: the pipe, the
// Y4M reader, the pixel format and the scaling add nothing.
func TestTruth(t *testing.T) {
	tools := fftest.Tools(t)
	pairs := []struct {
		ref, dist string
		format    vmaf.PixelFormat
		w, h      int
		scaled    string
	}{
		{ref: "ref_ffv1.mkv", dist: "dist_h264.mp4", format: vmaf.YUV420P, w: 176, h: 144},
		{ref: "ref_ffv1.mkv", dist: "dist_h264_moovend.mp4", format: vmaf.YUV420P, w: 176, h: 144},
		{ref: "ref_ffv1.mkv", dist: "dist_h264.ts", format: vmaf.YUV420P, w: 176, h: 144},
		{ref: "ref_ffv1.mkv", dist: "dist_hevc.mkv", format: vmaf.YUV420P, w: 176, h: 144},
		{ref: "ref_ffv1.mkv", dist: "dist_vp9.webm", format: vmaf.YUV420P, w: 176, h: 144},
		{ref: "ref10_ffv1.mkv", dist: "dist10_av1.webm", format: vmaf.YUV420P10LE, w: 320, h: 240},
		{ref: "ref_ffv1.mkv", dist: "dist_small_h264.mp4", format: vmaf.YUV420P, w: 176, h: 144, scaled: "128x96"},
	}
	model, err := vmaf.LoadModel(vmaf.DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		for _, stream := range []bool{false, true} {
			name := p.dist + map[bool]string{false: " by path", true: " streamed"}[stream]
			t.Run(name, func(t *testing.T) {
				refPath, distPath := fftest.Path(p.ref), fftest.Path(p.dist)
				ref, dist := openPair(t, &streamed{}, uri(refPath, stream), uri(distPath, stream),
					Options{Tools: tools, Spool: Spool{Dir: t.TempDir()}})
				if ref.Kind != KindEncoded || dist.Kind != KindEncoded || dist.ScaledFrom != p.scaled {
					t.Errorf("kinds %s, %s, scaled from %q; want encoded, encoded, %q", ref.Kind, dist.Kind, dist.ScaledFrom, p.scaled)
				}
				got, err := vmaf.Score(context.Background(), ref, dist, vmaf.Options{LoadedModel: model, Threads: 2})
				if err != nil {
					t.Fatal(err)
				}

				sw, sh := 0, 0
				if p.scaled != "" {
					sw, sh = p.w, p.h
				}
				rawRef := decodeRaw(t, tools, refPath, p.format, 0, 0)
				rawDist := decodeRaw(t, tools, distPath, p.format, sw, sh)
				raw := Options{Raw: Raw{Width: p.w, Height: p.h, Format: p.format}}
				rr, rd := openPair(t, fetch.File{}, uri(rawRef, false), uri(rawDist, false), raw)
				want, err := vmaf.Score(context.Background(), rr, rd, vmaf.Options{LoadedModel: model, Threads: 2})
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Frames) == 0 {
					t.Fatal("no frames scored")
				}
				// Exactly: no tolerance.
				if diff := cmp.Diff(want.Frames, got.Frames); diff != "" {
					t.Errorf("per-frame scores, encoded path against raw path (-raw +encoded):\n%s", diff)
				}
			})
		}
	}
}

// The lossless references decode to exactly the kernel's raw clips.
func TestLosslessReferences(t *testing.T) {
	tools := fftest.Tools(t)
	for file, clip := range map[string]struct {
		clip string
		pf   vmaf.PixelFormat
	}{"ref_ffv1.mkv": {"p01_ref.yuv", vmaf.YUV420P}, "ref10_ffv1.mkv": {"p07_ref.yuv", vmaf.YUV420P10LE}} {
		got, err := os.ReadFile(decodeRaw(t, tools, fftest.Path(file), clip.pf, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(fftest.Clip(clip.clip))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s decodes to %d bytes that differ from %s (%d bytes)", file, len(got), clip.clip, len(want))
		}
	}
}

func TestOpenEncoded(t *testing.T) {
	tools := fftest.Tools(t)
	noTools := fmt.Errorf("%w: test without ffmpeg", decode.ErrNoFFmpeg)
	tests := []struct {
		name        string
		file        string
		stream      bool
		opts        Options
		wantErr     error
		wantKind    string
		wantFrames  int
		wantSpooled bool
		wantDesc    string
	}{
		{name: "mp4 streamed", file: "dist_h264.mp4", stream: true, opts: Options{Tools: tools}, wantKind: KindEncoded, wantFrames: 24, wantDesc: "h264 176x144 yuv420p 25 fps"},
		{name: "mp4 index last spooled", file: "dist_h264_moovend.mp4", stream: true, opts: Options{Tools: tools}, wantKind: KindEncoded, wantFrames: 24, wantSpooled: true},
		{name: "mp4 index last by path", file: "dist_h264_moovend.mp4", opts: Options{Tools: tools}, wantKind: KindEncoded, wantFrames: 24},
		{name: "mp4 index last over the spool limit", file: "dist_h264_moovend.mp4", stream: true, opts: Options{Tools: tools, Spool: Spool{Limit: 1000}}, wantErr: ErrSpoolLimit},
		{name: "spooling off", file: "dist_h264_moovend.mp4", stream: true, opts: Options{Tools: tools, Spool: Spool{Limit: -1}}, wantErr: ErrSpoolLimit},
		{name: "interlaced", file: "dist_interlaced_h264.mkv", opts: Options{Tools: tools}, wantKind: KindEncoded, wantFrames: -1, wantDesc: "interlaced"},
		{name: "rotated", file: "dist_rotated_h264.mp4", opts: Options{Tools: tools}, wantKind: KindEncoded, wantFrames: 12, wantDesc: "144x176 yuv420p 25 fps rotated 270°"},
		{name: "without ffmpeg", file: "dist_h264.mp4", opts: Options{ToolsErr: noTools}, wantErr: decode.ErrNoFFmpeg},
		{name: "audio only", file: "bad_audio_only.mka", opts: Options{Tools: tools}, wantErr: decode.ErrUndecodable},
		{name: "unknown codec", file: "bad_unknown_codec.mkv", stream: true, opts: Options{Tools: tools}, wantErr: decode.ErrUndecodable},
		{name: "zero frames", file: "bad_zero_frames.mkv", opts: Options{Tools: tools}, wantErr: decode.ErrUndecodable},
		{name: "raw without geometry", file: "../../../vmaf/testdata/clips/p01_ref.yuv", opts: Options{Tools: tools}, wantErr: ErrNoGeometry},
		{name: "raw without geometry or ffmpeg", file: "../../../vmaf/testdata/clips/p01_ref.yuv", opts: Options{ToolsErr: noTools}, wantErr: ErrNoGeometry},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.Spool.Dir == "" {
				tc.opts.Spool.Dir = t.TempDir()
			}
			in, err := Open(context.Background(), &streamed{}, uri(fftest.Path(tc.file), tc.stream), tc.opts)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want a one-line %v", err, tc.wantErr)
				}
				if entries, _ := os.ReadDir(tc.opts.Spool.Dir); len(entries) != 0 {
					t.Errorf("spool directory holds %d files after the failure", len(entries))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{tc.wantKind, tc.wantFrames, tc.wantSpooled}, []any{in.Kind, in.Frames, in.Spooled}); diff != "" {
				t.Errorf("kind, frames, spooled (-want +got):\n%s", diff)
			}
			if !strings.Contains(in.String(), tc.wantDesc) {
				t.Errorf("String() = %q, want it to contain %q", in.String(), tc.wantDesc)
			}
			var f vmaf.Frame
			if err := in.ReadFrame(&f); err != nil {
				t.Fatal(err)
			}
			if err := in.Close(); err != nil {
				t.Fatal(err)
			}
			if entries, _ := os.ReadDir(tc.opts.Spool.Dir); len(entries) != 0 {
				t.Errorf("spool directory holds %d files after Close", len(entries))
			}
		})
	}
}

// A distorted raw or Y4M input of another size is scaled with ffmpeg, and
// refused without it.
func TestScaleRawAndY4M(t *testing.T) {
	tools := fftest.Tools(t)
	raw := Raw{Width: 176, Height: 144, Format: vmaf.YUV420P}
	u := uri(fftest.Clip("p01_ref.yuv"), true)
	in, err := Open(context.Background(), &streamed{}, u, Options{Raw: raw, Tools: tools, Width: 352, Height: 288})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if vi := in.Info(); vi.Width != 352 || vi.Height != 288 || in.ScaledFrom != "176x144" || in.Frames != 24 {
		t.Errorf("scaled raw input: %+v, scaled from %q, %d frames", vi, in.ScaledFrom, in.Frames)
	}
	_, err = Open(context.Background(), &streamed{}, u, Options{Raw: raw, ToolsErr: decode.ErrNoFFmpeg, Width: 352, Height: 288})
	if !errors.Is(err, vmaf.ErrSizeMismatch) || !strings.Contains(err.Error(), "176x144, reference 352x288") {
		t.Errorf("without ffmpeg: %v, want ErrSizeMismatch naming both sizes", err)
	}
}

// --deinterlace reaches interlaced Y4M inputs too: through ffmpeg.
func TestDeinterlaceY4M(t *testing.T) {
	tools := fftest.Tools(t)
	data, err := os.ReadFile(fftest.Clip("p01_ref.yuv"))
	if err != nil {
		t.Fatal(err)
	}
	fb := vmaf.YUV420P.FrameBytes(176, 144)
	y4m := []byte("YUV4MPEG2 W176 H144 F25:1 It C420jpeg\n")
	for i := 0; i+fb <= len(data); i += fb {
		y4m = append(append(y4m, "FRAME\n"...), data[i:i+fb]...)
	}
	path := filepath.Join(t.TempDir(), "interlaced.y4m")
	if err := os.WriteFile(path, y4m, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, deint := range []bool{false, true} {
		in, err := Open(context.Background(), fetch.File{}, uri(path, false), Options{Tools: tools, Deinterlace: deint})
		if err != nil {
			t.Fatal(err)
		}
		_, viaFFmpeg := in.FrameSource.(*decode.Decoder)
		if !in.Interlaced || viaFFmpeg != deint {
			t.Errorf("deinterlace %v: interlaced %v, through ffmpeg %v", deint, in.Interlaced, viaFFmpeg)
		}
		var f vmaf.Frame
		n := 0
		for in.ReadFrame(&f) == nil {
			n++
		}
		if n != 24 {
			t.Errorf("deinterlace %v: %d frames, want 24", deint, n)
		}
		in.Close()
	}
}
