package encode_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil/fftest"
	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/media/encode"
)

// TestRun encodes the 176x144, 24-frame, 25 fps test reference with Debian's ffmpeg,
// with each encoder of a ladder, and checks what the encode measures.
func TestRun(t *testing.T) {
	tools := fftest.Tools(t)
	tests := []struct {
		name      string
		s         encode.Settings
		wantW     int
		wantH     int
		wantCodec string
	}{
		{"x264 crf, aspect kept", encode.Settings{Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: 30, Height: 72}, 88, 72, "h264"},
		{"x264 qp, width set", encode.Settings{Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateQP, Value: 30, Width: 64, Height: 48, Preset: "veryfast"}, 64, 48, "h264"},
		{"x265 crf", encode.Settings{Encoder: vmafxv1.EncoderX265, RateControl: vmafxv1.RateCRF, Value: 32, Height: 144, Preset: "ultrafast"}, 176, 144, "hevc"},
		{"x265 qp", encode.Settings{Encoder: vmafxv1.EncoderX265, RateControl: vmafxv1.RateQP, Value: 32, Height: 72}, 88, 72, "hevc"},
		{"svt-av1 crf", encode.Settings{Encoder: vmafxv1.EncoderSVTAV1, RateControl: vmafxv1.RateCRF, Value: 45, Height: 72, Preset: "12"}, 88, 72, "av1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "rung.mkv")
			r, err := encode.Run(context.Background(), tools, fftest.Path("ref_ffv1.mkv"), out, encode.Raw{}, tc.s)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if r.Width != tc.wantW || r.Height != tc.wantH || r.Frames != 24 || r.Seconds != 0.96 || r.Bytes != fi.Size() {
				t.Errorf("result %+v (file %d bytes), want %dx%d, 24 frames, 0.96 s", r, fi.Size(), tc.wantW, tc.wantH)
			}
			if want := int64(float64(fi.Size()*8)/0.96 + 0.5); r.Bitrate != want {
				t.Errorf("bitrate %d, want %d (size over duration)", r.Bitrate, want)
			}
			info, err := tools.Probe(context.Background(), out, nil)
			if err != nil {
				t.Fatal(err)
			}
			if info.Codec != tc.wantCodec || info.Container != "matroska,webm" {
				t.Errorf("encode is %s in %s, want %s in Matroska", info.Codec, info.Container, tc.wantCodec)
			}
		})
	}
}

// TestQualityOrdersBitrate: a lower crf spends more bits, which the ladder's curves rest on.
func TestQualityOrdersBitrate(t *testing.T) {
	tools := fftest.Tools(t)
	var rates []int64
	for _, crf := range []int{20, 30, 40} {
		r, err := encode.Run(context.Background(), tools, fftest.Path("ref_ffv1.mkv"), filepath.Join(t.TempDir(), "r.mkv"), encode.Raw{},
			encode.Settings{Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: crf, Height: 144})
		if err != nil {
			t.Fatal(err)
		}
		rates = append(rates, r.Bitrate)
	}
	if rates[0] <= rates[1] || rates[1] <= rates[2] {
		t.Errorf("bitrates at crf 20, 30, 40: %v, want falling", rates)
	}
}

func TestRunRawReference(t *testing.T) {
	tools := fftest.Tools(t)
	r, err := encode.Run(context.Background(), tools, fftest.Clip("p01_ref.yuv"), filepath.Join(t.TempDir(), "r.mkv"),
		encode.Raw{Width: 176, Height: 144, PixelFormat: "yuv420p"},
		encode.Settings{Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: 30, Height: 72})
	if err != nil {
		t.Fatal(err)
	}
	if r.Width != 88 || r.Height != 72 || r.Frames <= 0 {
		t.Errorf("result %+v", r)
	}
}

func TestRunBadInputs(t *testing.T) {
	tools := fftest.Tools(t)
	s := encode.Settings{Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: 30, Height: 72}
	for _, name := range []string{"bad_audio_only.mka", "bad_truncated.mp4", "bad_zero_frames.mkv"} {
		t.Run(name, func(t *testing.T) {
			_, err := encode.Run(context.Background(), tools, fftest.Path(name), filepath.Join(t.TempDir(), "r.mkv"), encode.Raw{}, s)
			if !errors.Is(err, decode.ErrUndecodable) {
				t.Errorf("error %v, want ErrUndecodable", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := encode.Settings{Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: 23, Height: 720}
	bad := map[string]func(*encode.Settings){
		"unknown encoder":  func(s *encode.Settings) { s.Encoder = "libvpx" },
		"crf too high":     func(s *encode.Settings) { s.Value = 52 },
		"negative value":   func(s *encode.Settings) { s.Value = -1 },
		"odd height":       func(s *encode.Settings) { s.Height = 721 },
		"odd width":        func(s *encode.Settings) { s.Width = 1279 },
		"tiny height":      func(s *encode.Settings) { s.Height = 8 },
		"svt-av1 with qp":  func(s *encode.Settings) { s.Encoder, s.RateControl = vmafxv1.EncoderSVTAV1, vmafxv1.RateQP },
		"bad rate control": func(s *encode.Settings) { s.RateControl = "abr" },
	}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid settings refused: %v", err)
	}
	svt := encode.Settings{Encoder: vmafxv1.EncoderSVTAV1, RateControl: vmafxv1.RateCRF, Value: 63, Height: 720}
	if err := svt.Validate(); err != nil {
		t.Errorf("svt-av1 crf 63 refused: %v", err)
	}
	for name, mutate := range bad {
		s := ok
		mutate(&s)
		if err := s.Validate(); !errors.Is(err, encode.ErrBadSettings) {
			t.Errorf("%s: %v, want ErrBadSettings", name, err)
		}
	}
}

// TestRunRefusesOtherProtocols: a reference that is an HLS playlist naming a segment
// over http:// (a listener of this test that counts connections) fails the encode
// without ffmpeg opening it: encoding runs under decoding's protocol whitelist.
func TestRunRefusesOtherProtocols(t *testing.T) {
	tools := fftest.Tools(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	playlist := filepath.Join(t.TempDir(), "ref.m3u8")
	body := "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nhttp://" + ln.Addr().String() + "/seg.ts\n#EXT-X-ENDLIST\n"
	if err := os.WriteFile(playlist, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s := encode.Settings{Encoder: vmafxv1.EncoderX264, RateControl: vmafxv1.RateCRF, Value: 30, Height: 72}
	_, err = encode.Run(context.Background(), tools, playlist, filepath.Join(t.TempDir(), "r.mkv"), encode.Raw{}, s)
	if err == nil {
		t.Fatal("the playlist encoded; want a failure")
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("ffmpeg opened %d connections to the playlist's http:// segment; want none", n)
	}
	if args := strings.Join(encode.Args("in", "out", encode.Raw{}, s), " "); !strings.Contains(args, "-protocol_whitelist "+decode.ProtocolWhitelist+" -i file:in") {
		t.Errorf("ffmpeg arguments %q; want the protocol whitelist before the input", args)
	}
}
