package decode_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vmafx/vmafx/internal/testutil/fftest"
	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/vmaf"
)

// fakeFFmpeg is fftest.FakeHW, a FAKE ffmpeg (no GPU decoder exists where the tests
// run), as Tools.
func fakeFFmpeg(t *testing.T, hwaccels []string, hwWorks bool) (tools *decode.Tools, calls func() []string) {
	t.Helper()
	ffmpeg, log := fftest.FakeHW(t, hwaccels, hwWorks)
	return &decode.Tools{FFmpeg: ffmpeg, FFprobe: fftest.Tools(t).FFprobe}, func() []string { return fftest.Calls(t, log) }
}

func TestChooseHW(t *testing.T) {
	render := []string{"/dev/dri/renderD129"}
	tests := []struct {
		name     string
		hwaccels []string
		vendor   string
		nodes    []string
		want     decode.HW
	}{
		{"nvidia with cuda", []string{"vdpau", "cuda", "vaapi"}, "nvidia", nil, decode.HW{Name: decode.NVDEC}},
		{"nvidia without cuda", []string{"vaapi"}, "nvidia", render, decode.HW{Name: decode.Software}},
		{"amd with vaapi", []string{"cuda", "vaapi"}, "amd", render, decode.HW{Name: decode.VAAPI, Device: render[0]}},
		{"intel with vaapi", []string{"vaapi", "qsv"}, "intel", render, decode.HW{Name: decode.VAAPI, Device: render[0]}},
		{"intel without a render node", []string{"vaapi"}, "intel", nil, decode.HW{Name: decode.Software}},
		{"amd without vaapi", []string{"cuda"}, "amd", render, decode.HW{Name: decode.Software}},
		{"cpu", []string{"cuda", "vaapi"}, "cpu", render, decode.HW{Name: decode.Software}},
		{"no hwaccels", nil, "nvidia", nil, decode.HW{Name: decode.Software}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tools, calls := fakeFFmpeg(t, tc.hwaccels, false)
			for i := range 3 {
				if i == 2 {
					// Tools found again for another input: the answer is the process's.
					tools = &decode.Tools{FFmpeg: tools.FFmpeg, FFprobe: tools.FFprobe}
				}
				if got := tools.ChooseHW(context.Background(), tc.vendor, tc.nodes); got != tc.want {
					t.Fatalf("ChooseHW = %+v, want %+v", got, tc.want)
				}
			}
			if n := len(calls()); tc.vendor != "cpu" && (tc.vendor == "nvidia" || len(tc.nodes) > 0) && n != 1 {
				t.Errorf("ffmpeg ran %d times for three choices, want once (-hwaccels is asked once per process)", n)
			}
		})
	}
}

func TestRenderNodes(t *testing.T) {
	dev := t.TempDir()
	if err := os.Mkdir(filepath.Join(dev, "dri"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"renderD129", "renderD128", "card0"} {
		if err := os.WriteFile(filepath.Join(dev, "dri", n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := decode.RenderNodes(dev)
	want := []string{filepath.Join(dev, "dri", "renderD128"), filepath.Join(dev, "dri", "renderD129")}
	if !slices.Equal(got, want) {
		t.Errorf("RenderNodes = %v, want %v", got, want)
	}
}

func TestHWArgs(t *testing.T) {
	in := decode.Input{Path: "/v/in.mp4", Index: -1}
	for _, tc := range []struct {
		hw   decode.HW
		want string
	}{
		{decode.HW{Name: decode.NVDEC}, "-hwaccel cuda -nostdin -i file:/v/in.mp4"},
		{decode.HW{Name: decode.VAAPI, Device: "/dev/dri/renderD128"}, "-hwaccel vaapi -hwaccel_device /dev/dri/renderD128 -nostdin -i file:/v/in.mp4"},
	} {
		got := strings.Join(decode.Args(in, decode.Options{Format: vmaf.YUV420P, HW: tc.hw}), " ")
		if !strings.Contains(got, tc.want) || !strings.Contains(got, "-pix_fmt yuv420p") {
			t.Errorf("%s: args %q lack %q and the planar output format", tc.hw.Name, got, tc.want)
		}
	}
	for _, hw := range []decode.HW{{}, {Name: decode.Software}} {
		if got := strings.Join(decode.Args(in, decode.Options{Format: vmaf.YUV420P, HW: hw}), " "); strings.Contains(got, "-hwaccel") {
			t.Errorf("software: args %q ask for a hardware decoder", got)
		}
	}
}

// TestStartHW decodes a real H.264 file through the fake ffmpeg: a hardware decoder that
// starts is the one named; one that fails to start is given up for software once, which
// Fallback says, and the frames are the same; a stream is decoded in software.
func TestStartHW(t *testing.T) {
	in := decode.Input{Path: fftest.Path("dist_h264.mp4"), Index: 0}
	want := frames(t, fftest.Tools(t), in, decode.Options{Format: vmaf.YUV420P})
	for _, tc := range []struct {
		name                 string
		hwWorks              bool
		hw                   decode.HW
		wantName, wantReason string
		wantCalls            int
	}{
		{"nvdec starts", true, decode.HW{Name: decode.NVDEC}, decode.NVDEC, "", 1},
		{"vaapi starts", true, decode.HW{Name: decode.VAAPI, Device: "/dev/dri/renderD128"}, decode.VAAPI, "", 1},
		{"nvdec fails to start", false, decode.HW{Name: decode.NVDEC}, decode.Software, "nvdec decoding failed to start, decoded in software", 2},
		{"software", false, decode.HW{}, decode.Software, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, calls := fakeFFmpeg(t, []string{"cuda", "vaapi"}, tc.hwWorks)
			d, err := tools.Start(context.Background(), in, decode.Options{Format: vmaf.YUV420P, HW: tc.hw})
			if err != nil {
				t.Fatal(err)
			}
			got := readFrames(t, d)
			d.Close()
			if d.Name() != tc.wantName || !strings.Contains(d.Fallback(), tc.wantReason) || (tc.wantReason == "") != (d.Fallback() == "") {
				t.Errorf("decoder %q, fallback %q; want %q and a fallback containing %q", d.Name(), d.Fallback(), tc.wantName, tc.wantReason)
			}
			if tc.wantReason != "" && !strings.Contains(d.Fallback(), "libcuda") {
				t.Errorf("fallback %q does not quote ffmpeg's error", d.Fallback())
			}
			if n := len(calls()); n != tc.wantCalls {
				t.Errorf("ffmpeg started %d times, want %d", n, tc.wantCalls)
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%d frames differ from software decoding's %d", len(got), len(want))
			}
		})
	}

	tools, _ := fakeFFmpeg(t, []string{"cuda"}, false)
	data, err := os.ReadFile(in.Path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tools.Start(context.Background(), decode.Input{Stream: strings.NewReader(string(data)), Index: -1}, decode.Options{Format: vmaf.YUV420P, HW: decode.HW{Name: decode.NVDEC}})
	if err != nil {
		t.Fatalf("stream with nvdec asked: %v, want software decoding", err)
	}
	defer d.Close()
	if d.Name() != decode.Software || d.Fallback() != "" {
		t.Errorf("stream: decoder %q, fallback %q; want software without a fallback", d.Name(), d.Fallback())
	}
}

// TestStartHWBothFail: when software decoding fails too, the error is software's.
func TestStartHWBothFail(t *testing.T) {
	tools, _ := fakeFFmpeg(t, []string{"cuda"}, false)
	bad := filepath.Join(t.TempDir(), "bad.mp4")
	if err := os.WriteFile(bad, []byte("not a video at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := tools.Start(context.Background(), decode.Input{Path: bad, Index: -1}, decode.Options{Format: vmaf.YUV420P, HW: decode.HW{Name: decode.NVDEC}})
	if !errors.Is(err, decode.ErrUndecodable) || strings.Contains(err.Error(), "libcuda") {
		t.Errorf("err = %v, want software's ErrUndecodable", err)
	}
}

func frames(t *testing.T, tools *decode.Tools, in decode.Input, o decode.Options) [][]uint16 {
	t.Helper()
	d, err := tools.Start(context.Background(), in, o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	return readFrames(t, d)
}

func readFrames(t *testing.T, d *decode.Decoder) [][]uint16 {
	t.Helper()
	var out [][]uint16
	for {
		var f vmaf.Frame
		err := d.ReadFrame(&f)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, slices.Clone(f.Y))
	}
}
