package decode_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/internal/testutil/fftest"
	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/vmaf"
)

func TestOutputFormat(t *testing.T) {
	tests := map[string]vmaf.PixelFormat{
		"yuv420p": vmaf.YUV420P, "yuvj420p": vmaf.YUV420P, "nv12": vmaf.YUV420P, "yuv410p": vmaf.YUV420P,
		"yuv422p": vmaf.YUV422P, "yuyv422": vmaf.YUV422P, "yuv411p": vmaf.YUV422P,
		"yuv444p": vmaf.YUV444P, "yuv440p": vmaf.YUV444P, "gbrp": vmaf.YUV444P, "rgb24": vmaf.YUV444P, "bgra": vmaf.YUV444P,
		"yuv420p10le": vmaf.YUV420P10LE, "yuv420p10be": vmaf.YUV420P10LE, "p010le": vmaf.YUV420P10LE, "yuv420p9le": vmaf.YUV420P10LE,
		"yuv422p10le": vmaf.YUV422P10LE, "y210le": vmaf.YUV422P10LE, "yuva444p10le": vmaf.YUV444P10LE, "gbrp10le": vmaf.YUV444P10LE,
		"yuv420p12le": vmaf.YUV420P12LE, "yuv444p16le": vmaf.YUV444P12LE, "p016le": vmaf.YUV420P12LE, "rgb48le": vmaf.YUV444P12LE,
		"gray": vmaf.Gray, "gray10le": vmaf.Gray10, "gray12be": vmaf.Gray12, "gray16le": vmaf.Gray12,
	}
	for name, want := range tests {
		got, err := decode.OutputFormat(name)
		if err != nil || got != want {
			t.Errorf("OutputFormat(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	for _, name := range []string{"pal8", "monob", "", "bayer_rggb8"} {
		if _, err := decode.OutputFormat(name); !errors.Is(err, decode.ErrUndecodable) {
			t.Errorf("OutputFormat(%q) error = %v, want ErrUndecodable", name, err)
		}
	}
}

func TestSniff(t *testing.T) {
	y4m := []byte("YUV4MPEG2 W2 H2\nFRAME\n")
	ts := bytes.Repeat(append([]byte{0x47}, make([]byte, 187)...), 4)
	tests := []struct {
		name     string
		head     []byte
		want     string
		wantSeek bool
	}{
		{name: "y4m", head: y4m, want: decode.ContainerY4M},
		{name: "mp4 with its index first", head: head(t, "dist_h264.mp4"), want: decode.ContainerMP4},
		{name: "mp4 with its index last", head: head(t, "dist_h264_moovend.mp4"), want: decode.ContainerMP4, wantSeek: true},
		{name: "matroska", head: head(t, "dist_hevc.mkv"), want: decode.ContainerMKV},
		{name: "webm", head: head(t, "dist_vp9.webm"), want: decode.ContainerMKV},
		{name: "mpeg-ts file", head: head(t, "dist_h264.ts"), want: decode.ContainerTS},
		{name: "mpeg-ts packets", head: ts, want: decode.ContainerTS},
		{name: "avi", head: []byte("RIFF\x00\x00\x00\x00AVI LIST"), want: decode.ContainerOther},
		{name: "raw video", head: bytes.Repeat([]byte{16, 128}, 1000), want: decode.ContainerUnknown},
		{name: "zeros", head: make([]byte, 4096), want: decode.ContainerUnknown},
		{name: "empty", head: nil, want: decode.ContainerUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := decode.Sniff(tc.head); got != tc.want {
				t.Errorf("Sniff = %q, want %q", got, tc.want)
			}
			if tc.want == decode.ContainerMP4 {
				if got := decode.NeedsSeek(tc.head); got != tc.wantSeek {
					t.Errorf("NeedsSeek = %v, want %v", got, tc.wantSeek)
				}
			}
		})
	}
}

// head returns the first 64 KiB of a test video.
func head(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(fftest.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	return data[:min(len(data), 1<<16)]
}

func TestFind(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	_, err := decode.Find(env(map[string]string{decode.EnvFFmpeg: "/nonexistent/ffmpeg"}))
	if !errors.Is(err, decode.ErrNoFFmpeg) || !strings.Contains(err.Error(), "VMAFX_FFMPEG=/nonexistent/ffmpeg") {
		t.Errorf("Find with a missing VMAFX_FFMPEG: %v, want ErrNoFFmpeg naming it", err)
	}
	_, err = decode.Find(env(map[string]string{"PATH": ""}))
	if err == nil {
		// exec.LookPath reads the real PATH, not env: only check the error's kind when it fails.
		return
	}
	if !errors.Is(err, decode.ErrNoFFmpeg) {
		t.Errorf("Find: %v, want ErrNoFFmpeg", err)
	}
}

func TestProbe(t *testing.T) {
	tools := fftest.Tools(t)
	tests := []struct {
		file string
		want decode.Info
	}{
		{"ref_ffv1.mkv", decode.Info{Codec: "ffv1", Width: 176, Height: 144, PixFmt: "yuv420p", Format: vmaf.YUV420P, Frames: -1}},
		{"dist_h264.mp4", decode.Info{Codec: "h264", Width: 176, Height: 144, PixFmt: "yuv420p", Format: vmaf.YUV420P, Frames: 24}},
		{"dist_hevc.mkv", decode.Info{Codec: "hevc", Width: 176, Height: 144, PixFmt: "yuv420p", Format: vmaf.YUV420P, Frames: -1}},
		{"dist_vp9.webm", decode.Info{Codec: "vp9", Width: 176, Height: 144, PixFmt: "yuv420p", Format: vmaf.YUV420P, Frames: -1}},
		{"dist10_av1.webm", decode.Info{Codec: "av1", Width: 320, Height: 240, PixFmt: "yuv420p10le", Format: vmaf.YUV420P10LE, Frames: -1}},
		{"dist_small_h264.mp4", decode.Info{Codec: "h264", Width: 128, Height: 96, PixFmt: "yuv420p", Format: vmaf.YUV420P, Frames: 24}},
		{"dist_interlaced_h264.mkv", decode.Info{Codec: "h264", Width: 176, Height: 144, PixFmt: "yuv420p", Format: vmaf.YUV420P, Frames: -1, Interlaced: true}},
		{"dist_rotated_h264.mp4", decode.Info{Codec: "h264", Width: 144, Height: 176, PixFmt: "yuv420p", Format: vmaf.YUV420P, Frames: 12, Rotation: 270}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, err := tools.Probe(context.Background(), fftest.Path(tc.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Rate, tc.want.ConstantRate = decode.Rate{Num: 25, Den: 1}, true
			if diff := cmp.Diff(tc.want, *got, cmpIgnore); diff != "" {
				t.Errorf("Probe (-want +got):\n%s", diff)
			}
			// From the first bytes on stdin, as for a streamed input.
			data, err := os.ReadFile(fftest.Path(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			fromHead, err := tools.Probe(context.Background(), "", data)
			if err != nil {
				t.Fatal(err)
			}
			if fromHead.Codec != got.Codec || fromHead.Width != got.Width || fromHead.Format != got.Format {
				t.Errorf("Probe of the stream = %+v, want %+v", fromHead, got)
			}
		})
	}
}

// cmpIgnore leaves out the container name and the stream index.
var cmpIgnore = cmp.FilterPath(func(p cmp.Path) bool {
	s := p.String()
	return s == "Container" || s == "Stream"
}, cmp.Ignore())

func TestProbeBadInputs(t *testing.T) {
	tools := fftest.Tools(t)
	tests := []struct{ file, want string }{
		{"bad_audio_only.mka", "no video stream, only audio flac"},
		{"bad_unknown_codec.mkv", "unsupported video codec"},
		{"bad_zero_frames.mkv", "ffprobe"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			_, err := tools.Probe(context.Background(), fftest.Path(tc.file), nil)
			if !errors.Is(err, decode.ErrUndecodable) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Probe: %v, want a one-line ErrUndecodable mentioning %q", err, tc.want)
			}
		})
	}
	_, err := tools.Probe(context.Background(), "", []byte("not a video at all"))
	if !errors.Is(err, decode.ErrUndecodable) {
		t.Errorf("Probe of text: %v, want ErrUndecodable", err)
	}
}

// readAll reads every frame of d and returns their count and the last error.
func readAll(d *decode.Decoder) (int, error) {
	var f vmaf.Frame
	n := 0
	for {
		err := d.ReadFrame(&f)
		if err != nil {
			return n, err
		}
		n++
	}
}

func TestStart(t *testing.T) {
	tools := fftest.Tools(t)
	data, err := os.ReadFile(fftest.Path("dist_h264.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		in         decode.Input
		opts       decode.Options
		wantInfo   vmaf.VideoInfo
		wantFrames int
	}{
		{"file", decode.Input{Path: fftest.Path("dist_h264.mp4"), Index: 0}, decode.Options{Format: vmaf.YUV420P},
			vmaf.VideoInfo{Width: 176, Height: 144, Format: vmaf.YUV420P}, 24},
		{"stream", decode.Input{Stream: bytes.NewReader(data), Index: -1}, decode.Options{Format: vmaf.YUV420P},
			vmaf.VideoInfo{Width: 176, Height: 144, Format: vmaf.YUV420P}, 24},
		{"scaled", decode.Input{Path: fftest.Path("dist_small_h264.mp4"), Index: 0}, decode.Options{Format: vmaf.YUV420P, Width: 176, Height: 144},
			vmaf.VideoInfo{Width: 176, Height: 144, Format: vmaf.YUV420P}, 24},
		{"10-bit", decode.Input{Path: fftest.Path("dist10_av1.webm"), Index: 0}, decode.Options{Format: vmaf.YUV420P10LE},
			vmaf.VideoInfo{Width: 320, Height: 240, Format: vmaf.YUV420P10LE}, 12},
		{"rotated", decode.Input{Path: fftest.Path("dist_rotated_h264.mp4"), Index: 0}, decode.Options{Format: vmaf.YUV420P},
			vmaf.VideoInfo{Width: 144, Height: 176, Format: vmaf.YUV420P}, 12},
		{"deinterlaced", decode.Input{Path: fftest.Path("dist_interlaced_h264.mkv"), Index: 0}, decode.Options{Format: vmaf.YUV420P, Deinterlace: true},
			vmaf.VideoInfo{Width: 176, Height: 144, Format: vmaf.YUV420P}, 24},
		{"raw input scaled", decode.Input{Path: fftest.Clip("p01_ref.yuv"), Raw: &vmaf.VideoInfo{Width: 176, Height: 144, Format: vmaf.YUV420P}},
			decode.Options{Format: vmaf.YUV420P, Width: 88, Height: 72}, vmaf.VideoInfo{Width: 88, Height: 72, Format: vmaf.YUV420P}, 24},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tools.Start(context.Background(), tc.in, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if diff := cmp.Diff(tc.wantInfo, d.Info()); diff != "" {
				t.Errorf("Info (-want +got):\n%s", diff)
			}
			n, err := readAll(d)
			if !errors.Is(err, io.EOF) || n != tc.wantFrames {
				t.Errorf("read %d frames, then %v; want %d, then io.EOF", n, err, tc.wantFrames)
			}
		})
	}
}

func TestStartBadInputs(t *testing.T) {
	tools := fftest.Tools(t)
	tests := []struct {
		file     string
		want     error
		wantText string
	}{
		// Decoding stops at the damage: -xerror.
		{"bad_truncated.mp4", decode.ErrUndecodable, "ffmpeg: "},
		{"bad_zero_frames.mkv", decode.ErrUndecodable, "ffmpeg: "},
		{"bad_audio_only.mka", decode.ErrUndecodable, "ffmpeg: "},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			d, err := tools.Start(context.Background(), decode.Input{Path: fftest.Path(tc.file), Index: -1}, decode.Options{Format: vmaf.YUV420P})
			if err == nil {
				defer d.Close()
				_, err = readAll(d)
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.wantText) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), " @ 0x") {
				t.Errorf("decoding: %v, want a one-line %v quoting ffmpeg", err, tc.want)
			}
		})
	}
}

// failingReader returns data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// A failure to read the input is the error, not the end of the video.
func TestStreamFailureWins(t *testing.T) {
	tools := fftest.Tools(t)
	data, err := os.ReadFile(fftest.Path("dist_hevc.mkv"))
	if err != nil {
		t.Fatal(err)
	}
	lost := errors.New("connection lost")
	d, err := tools.Start(context.Background(), decode.Input{Stream: &failingReader{data: data[:len(data)/2], err: lost}, Index: -1},
		decode.Options{Format: vmaf.YUV420P})
	n := 0
	if err == nil {
		// The failure may come before the first frame, or after a few.
		defer d.Close()
		n, err = readAll(d)
	}
	if !errors.Is(err, lost) {
		t.Errorf("read %d frames, then %v; want the stream's error", n, err)
	}
}

// blockingReader returns data, then blocks until stopped.
type blockingReader struct {
	data []byte
	stop chan struct{}
}

func (r *blockingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		<-r.stop
		return 0, errors.New("stopped")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// Close kills ffmpeg, by its PID, stops the stream and waits for both.
func TestCloseKillsFFmpeg(t *testing.T) {
	tools := fftest.Tools(t)
	data, err := os.ReadFile(fftest.Path("ref_ffv1.mkv"))
	if err != nil {
		t.Fatal(err)
	}
	r := &blockingReader{data: data[:len(data)/2], stop: make(chan struct{})}
	d, err := tools.Start(context.Background(), decode.Input{Stream: r, Stop: func() { close(r.stop) }, Index: -1},
		decode.Options{Format: vmaf.YUV420P})
	if err != nil {
		t.Fatal(err)
	}
	var f vmaf.Frame
	if err := d.ReadFrame(&f); err != nil {
		t.Fatal(err)
	}
	pid := d.PID()
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("ffmpeg (pid %d) is not running while decoding: %v", pid, err)
	}
	done := make(chan struct{})
	go func() { d.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	// Waited for: the PID is gone, not a zombie.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("after Close, signalling ffmpeg's pid %d: %v, want ESRCH", pid, err)
	}
}

// Cancelling the context kills ffmpeg too.
func TestCancelKillsFFmpeg(t *testing.T) {
	tools := fftest.Tools(t)
	data, err := os.ReadFile(fftest.Path("ref_ffv1.mkv"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &blockingReader{data: data[:len(data)/2], stop: make(chan struct{})}
	var once sync.Once
	stop := func() { once.Do(func() { close(r.stop) }) }
	d, err := tools.Start(ctx, decode.Input{Stream: r, Stop: stop, Index: -1}, decode.Options{Format: vmaf.YUV420P})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cancel()
	stop() // as the fetch's context would end
	if _, err := readAll(d); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v, want context.Canceled", err)
	}
}

// TestSeekArgs: a seek is ffmpeg's input -ss, before the file it applies to.
func TestSeekArgs(t *testing.T) {
	got := strings.Join(decode.Args(decode.Input{Path: "/v/in.mp4", Index: -1, Seek: 0.62}, decode.Options{Format: vmaf.YUV420P}), " ")
	if !strings.Contains(got, "-ss 0.620000 -nostdin -i file:/v/in.mp4") {
		t.Errorf("args %q lack the seek before the input", got)
	}
	if got := strings.Join(decode.Args(decode.Input{Path: "/v/in.mp4", Index: -1}, decode.Options{Format: vmaf.YUV420P}), " "); strings.Contains(got, "-ss") {
		t.Errorf("args %q seek without Seek", got)
	}
}

func TestArgs(t *testing.T) {
	got := strings.Join(decode.Args(decode.Input{Stream: strings.NewReader(""), Index: 2},
		decode.Options{Format: vmaf.YUV420P10LE, Width: 1920, Height: 1080, Deinterlace: true}), " ")
	for _, want := range []string{
		"-protocol_whitelist file,pipe", "-xerror", "-i pipe:0", "-map 0:2",
		"-vf bwdif=mode=send_frame:parity=auto:deint=interlaced,scale=1920:1080:flags=bicubic",
		"-pix_fmt yuv420p10le", "-fps_mode passthrough", "-f yuv4mpegpipe pipe:1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("args %q lack %q", got, want)
		}
	}
}
