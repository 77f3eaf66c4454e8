package vmaf

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"
)

// TestUpconvertIsAShiftedInput: scoring an 8-bit pair at 10 bits equals scoring the pair
// written as 10-bit samples shifted left by two (what ffmpeg's format=yuv420p10le writes;
// worker/internal/command checks that against ffmpeg itself), frame for frame, and
// differs from scoring at 8 bits.
func TestUpconvertIsAShiftedInput(t *testing.T) {
	const w, h, n = 96, 64, 4
	ref8, dist8 := synthClip(w, h, YUV420P, n)
	widen := func(b []byte) []byte {
		out := make([]byte, 0, 2*len(b))
		for _, v := range b {
			out = binary.LittleEndian.AppendUint16(out, uint16(v)<<2)
		}
		return out
	}
	open := func(data []byte, pf PixelFormat) FrameSource {
		r, err := OpenRaw(bytes.NewReader(data), w, h, pf)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	up := func(src FrameSource) FrameSource {
		u, err := Upconvert(src, 10)
		if err != nil {
			t.Fatal(err)
		}
		if u.Info().Format != YUV420P10LE {
			t.Fatalf("upconverted format %v", u.Info().Format)
		}
		return u
	}
	opts := Options{Features: []Feature{FeaturePSNR}}
	got, err := Score(context.Background(), up(open(ref8, YUV420P)), up(open(dist8, YUV420P)), opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Score(context.Background(), open(widen(ref8), YUV420P10LE), open(widen(dist8), YUV420P10LE), opts)
	if err != nil {
		t.Fatal(err)
	}
	at8, err := Score(context.Background(), open(ref8, YUV420P), open(dist8, YUV420P), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got.BitDepth != 10 {
		t.Errorf("scored at %d bits", got.BitDepth)
	}
	same8 := true
	for i := range want.Frames {
		g, w := got.values(&got.Frames[i], nil), want.values(&want.Frames[i], nil)
		for k := range w {
			if g[k] != w[k] {
				t.Fatalf("frame %d %s: got %v, want %v", i, got.Metrics()[k], g[k], w[k])
			}
		}
		same8 = same8 && got.Frames[i].PSNRY == at8.Frames[i].PSNRY
	}
	if same8 {
		t.Error("scoring at 10 bits gave the 8-bit PSNR: the conversion did nothing")
	}
}

func TestUpconvertRefusesWhatFfmpegWouldNot(t *testing.T) {
	ref, _ := synthClip(64, 64, YUV420P10LE, 1)
	src, err := OpenRaw(bytes.NewReader(ref), 64, 64, YUV420P10LE)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Upconvert(src, 8); !errors.Is(err, ErrUnknownPixelFormat) {
		t.Errorf("10 to 8 bits: err = %v", err)
	}
	if _, err := Upconvert(src, 11); !errors.Is(err, ErrUnknownPixelFormat) {
		t.Errorf("to 11 bits: err = %v", err)
	}
	if same, err := Upconvert(src, 10); err != nil || same != src {
		t.Errorf("10 to 10 bits: %v, %v; want the source itself", same, err)
	}
}

// TestEncodeReachesCAMBI: Options.Encode gives the extra CAMBI feature the encode's
// size and bit depth, so its score is CAMBI's under enc_width, enc_height and
// enc_bitdepth, and without it CAMBI judges the input as it is.
func TestEncodeReachesCAMBI(t *testing.T) {
	const w, h = 432, 240
	ref, dist := synthClip(w, h, YUV420P10LE, 2)
	score := func(e Encode) float64 {
		r, _ := OpenRaw(bytes.NewReader(ref), w, h, YUV420P10LE)
		d, _ := OpenRaw(bytes.NewReader(dist), w, h, YUV420P10LE)
		res, err := Score(context.Background(), r, d, Options{Features: []Feature{FeatureCAMBI}, Encode: e})
		if err != nil {
			t.Fatal(err)
		}
		return res.Frames[1].CAMBI
	}
	direct := func(e Encode) float64 {
		d, _ := OpenRaw(bytes.NewReader(dist), w, h, YUV420P10LE)
		var f Frame
		for range 2 {
			if err := d.ReadFrame(&f); err != nil {
				t.Fatal(err)
			}
		}
		return newCAMBIState(w, h, 10, defaultCAMBIOptions().withEncode(e)).compute(f.Y)
	}
	for _, e := range []Encode{{}, {Width: w / 2, Height: h / 2}, {BitDepth: 8}} {
		if got, want := score(e), direct(e); got != want {
			t.Errorf("encode %+v: Score's CAMBI %v, the state's %v", e, got, want)
		}
	}
	if score(Encode{Width: w / 2, Height: h / 2}) == score(Encode{}) {
		t.Error("a half-size encode scored like the input: Options.Encode did not reach CAMBI")
	}
}
