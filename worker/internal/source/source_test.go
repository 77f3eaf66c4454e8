package source

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
)

func TestOpen(t *testing.T) {
	const w, h = 36, 34 // 4:2:0 frame: 36*34 + 2*18*17 = 1836 bytes
	frame := bytes.Repeat([]byte{128}, vmaf.YUV420P.FrameBytes(w, h))
	y4m := []byte("YUV4MPEG2 W36 H34 F25:1 C420jpeg\n")
	for range 3 {
		y4m = append(y4m, "FRAME\n"...)
		y4m = append(y4m, frame...)
	}
	raw := bytes.Repeat(frame, 4)
	geometry := Raw{Width: w, Height: h, Format: vmaf.YUV420P}

	tests := []struct {
		name       string
		file       string
		data       []byte
		raw        Raw
		wantKind   string
		wantFrames int
		wantErr    error
	}{
		{name: "y4m", file: "a.y4m", data: y4m, wantKind: KindY4M, wantFrames: 3},
		{name: "y4m whatever its name", file: "a.bin", data: y4m, raw: geometry, wantKind: KindY4M, wantFrames: 3},
		{name: "raw named .y4m", file: "a.y4m", data: raw, raw: geometry, wantKind: KindRaw, wantFrames: 4},
		{name: "raw", file: "a.yuv", data: raw, raw: geometry, wantKind: KindRaw, wantFrames: 4},
		{name: "raw without geometry", file: "a.yuv", data: raw, wantErr: ErrNoGeometry},
		{name: "empty raw", file: "a.yuv", data: nil, raw: geometry, wantKind: KindRaw, wantFrames: 0},
		{name: "empty, named .y4m", file: "a.y4m", data: nil, wantErr: ErrNoGeometry},
		{name: "y4m with a bad header", file: "a.y4m", data: []byte("YUV4MPEG2 W36 Hx\n"), wantErr: vmaf.ErrBadHeader},
		{name: "y4m with a bad colour space", file: "a.y4m", data: []byte("YUV4MPEG2 W36 H34 C411\n"), wantErr: vmaf.ErrUnknownPixelFormat},
		{name: "missing file", file: "", wantErr: fetch.ErrNotFound},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "missing")
			if tc.file != "" {
				p = filepath.Join(t.TempDir(), tc.file)
				if err := os.WriteFile(p, tc.data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			u, err := fetch.ParseURI(p)
			if err != nil {
				t.Fatal(err)
			}
			in, err := Open(context.Background(), fetch.File{}, u, Options{Raw: tc.raw})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if diff := cmp.Diff([]any{tc.wantKind, tc.wantFrames}, []any{in.Kind, in.Frames}); diff != "" {
				t.Errorf("kind, frames (-want +got):\n%s", diff)
			}
			var f vmaf.Frame
			n := 0
			for in.ReadFrame(&f) == nil {
				n++
			}
			if n != tc.wantFrames {
				t.Errorf("read %d frames, want %d", n, tc.wantFrames)
			}
		})
	}
}

// A local raw or Y4M file's frames that ask for luma only are read with their chroma
// skipped (seeked over, vmaf.Skipper): the luma and the chroma of a frame that asks for
// it are the file's, and a last frame cut inside its chroma is still ErrTruncated.
func TestOpenSkipsChroma(t *testing.T) {
	const w, h = 640, 360 // larger than the readers' buffers, as video frames are
	size := vmaf.YUV420P.FrameBytes(w, h)
	frame := func(n int) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(i*5 + n*11)
		}
		return b
	}
	for _, kind := range []string{KindRaw, KindY4M} {
		t.Run(kind, func(t *testing.T) {
			var data []byte
			if kind == KindY4M {
				data = append(data, "YUV4MPEG2 W640 H360 F25:1 C420jpeg\n"...)
			}
			for n := range 4 {
				if kind == KindY4M {
					data = append(data, "FRAME\n"...)
				}
				f := frame(n)
				if n == 3 {
					f = f[:w*h+w*h/8] // cut inside the U plane
				}
				data = append(data, f...)
			}
			p := filepath.Join(t.TempDir(), "clip")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			u, err := fetch.ParseURI(p)
			if err != nil {
				t.Fatal(err)
			}
			in, err := Open(context.Background(), fetch.File{}, u, Options{Raw: Raw{Width: w, Height: h, Format: vmaf.YUV420P}})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			for n := range 3 {
				f := vmaf.Frame{Packed: true, Chroma: n == 1}
				if err := in.ReadFrame(&f); err != nil {
					t.Fatalf("frame %d: %v", n, err)
				}
				want := frame(n)
				if !bytes.Equal(f.Y8, want[:w*h]) {
					t.Fatalf("frame %d: the luma differs from the file's", n)
				}
				if f.Chroma && (len(f.U) != w*h/4 || f.U[7] != uint16(want[w*h+7]) || f.V[7] != uint16(want[w*h+w*h/4+7])) {
					t.Fatalf("frame %d: the chroma differs from the file's", n)
				}
			}
			if err := in.ReadFrame(&vmaf.Frame{}); !errors.Is(err, vmaf.ErrTruncated) {
				t.Errorf("the last frame, cut inside its chroma: %v, want ErrTruncated", err)
			}
		})
	}
}
