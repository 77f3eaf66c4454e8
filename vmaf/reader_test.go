package vmaf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

// rawFrame builds one planar frame whose luma sample i is lumaAt(i) and
// whose chroma bytes are 0xEE, in format pf.
func rawFrame(w, h int, pf PixelFormat, lumaAt func(i int) uint16) []byte {
	l, c := pf.planeSizes(w, h)
	var b bytes.Buffer
	for i := 0; i < l; i++ {
		v := lumaAt(i)
		if pf.BitDepth() == 8 {
			b.WriteByte(byte(v))
		} else {
			b.Write([]byte{byte(v), byte(v >> 8)})
		}
	}
	b.Write(bytes.Repeat([]byte{0xEE}, 2*c*pf.bytesPerSample()))
	return b.Bytes()
}

func diffY(t *testing.T, got []uint16, w, h int, lumaAt func(int) uint16) {
	t.Helper()
	if len(got) != w*h {
		t.Fatalf("len(Y) = %d, want %d", len(got), w*h)
	}
	for i, v := range got {
		if want := lumaAt(i); v != want {
			t.Fatalf("Y[%d] = %d, want %d", i, v, want)
		}
	}
}

func TestRawReader(t *testing.T) {
	tests := []struct {
		w, h       int
		pf         PixelFormat
		frameBytes int
	}{
		{176, 144, YUV420P, 176 * 144 * 3 / 2},
		{177, 145, YUV420P, 177*145 + 2*89*73},
		{177, 145, YUV422P, 177*145 + 2*89*145},
		{177, 145, YUV444P, 177 * 145 * 3},
		{33, 35, YUV420P10LE, 2 * (33*35 + 2*17*18)},
		{33, 35, YUV422P12LE, 2 * (33*35 + 2*17*35)},
		{40, 40, YUV444P10LE, 2 * 40 * 40 * 3},
		{40, 40, Gray, 40 * 40},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%v/%dx%d", tc.pf, tc.w, tc.h), func(t *testing.T) {
			if got := tc.pf.FrameBytes(tc.w, tc.h); got != tc.frameBytes {
				t.Fatalf("FrameBytes = %d, want %d", got, tc.frameBytes)
			}
			max := uint16(1)<<uint(tc.pf.BitDepth()) - 1
			luma := func(frame int) func(int) uint16 {
				return func(i int) uint16 { return uint16(i*7+frame*13) & max }
			}
			data := append(rawFrame(tc.w, tc.h, tc.pf, luma(0)), rawFrame(tc.w, tc.h, tc.pf, luma(1))...)
			r, err := OpenRaw(bytes.NewReader(data), tc.w, tc.h, tc.pf)
			if err != nil {
				t.Fatal(err)
			}
			var f Frame
			for n := 0; n < 2; n++ {
				if err := r.ReadFrame(&f); err != nil {
					t.Fatalf("frame %d: %v", n, err)
				}
				if f.BitDepth != tc.pf.BitDepth() || f.Width != tc.w || f.Height != tc.h {
					t.Fatalf("frame %d: got %dx%d %d-bit", n, f.Width, f.Height, f.BitDepth)
				}
				diffY(t, f.Y, tc.w, tc.h, luma(n))
			}
			if err := r.ReadFrame(&f); !errors.Is(err, io.EOF) {
				t.Fatalf("after last frame: err = %v, want io.EOF", err)
			}
			// A frame cut short is ErrTruncated.
			r, _ = OpenRaw(bytes.NewReader(data[:len(data)-1]), tc.w, tc.h, tc.pf)
			if err := r.ReadFrame(&f); err != nil {
				t.Fatalf("first frame of the cut stream: %v", err)
			}
			if err := r.ReadFrame(&f); !errors.Is(err, ErrTruncated) {
				t.Fatalf("truncated frame: err = %v, want ErrTruncated", err)
			}
		})
	}
}

func TestOpenRawErrors(t *testing.T) {
	tests := []struct {
		name string
		w, h int
		pf   PixelFormat
		want error
	}{
		{"unknown format", 16, 16, PixelFormatUnknown, ErrUnknownPixelFormat},
		{"bad format value", 16, 16, PixelFormat(99), ErrUnknownPixelFormat},
		{"zero width", 0, 16, YUV420P, ErrBadHeader},
		{"negative height", 16, -1, YUV420P, ErrBadHeader},
		{"huge", 1 << 20, 16, YUV420P, ErrBadHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := OpenRaw(bytes.NewReader(nil), tc.w, tc.h, tc.pf); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestParsePixelFormat(t *testing.T) {
	for _, pf := range []PixelFormat{YUV420P, YUV422P, YUV444P, YUV420P10LE, YUV422P10LE, YUV444P10LE, YUV420P12LE, YUV422P12LE, YUV444P12LE, Gray, Gray10, Gray12} {
		got, err := ParsePixelFormat(pf.String())
		if err != nil || got != pf {
			t.Errorf("ParsePixelFormat(%q) = %v, %v", pf.String(), got, err)
		}
	}
	if _, err := ParsePixelFormat("nv12"); !errors.Is(err, ErrUnknownPixelFormat) {
		t.Errorf("nv12: err = %v, want ErrUnknownPixelFormat", err)
	}
}

func TestY4MReader(t *testing.T) {
	tests := []struct {
		name   string
		header string
		w, h   int
		pf     PixelFormat
		frame  string // FRAME line
	}{
		{"default colorspace", "YUV4MPEG2 W36 H34 F30:1", 36, 34, YUV420P, "FRAME"},
		{"420jpeg", "YUV4MPEG2 W36 H34 F25:1 Ip A1:1 C420jpeg XYSCSS=420JPEG", 36, 34, YUV420P, "FRAME"},
		{"420mpeg2", "YUV4MPEG2 W35 H33 F30000:1001 It A0:0 C420mpeg2", 35, 33, YUV420P, "FRAME"},
		{"420paldv", "YUV4MPEG2 W36 H34 F25:1 Ib C420paldv", 36, 34, YUV420P, "FRAME"},
		{"420", "YUV4MPEG2 W36 H34 F25:1 Im C420", 36, 34, YUV420P, "FRAME"},
		{"422", "YUV4MPEG2 W35 H34 F25:1 C422", 35, 34, YUV422P, "FRAME"},
		{"444", "YUV4MPEG2 W35 H33 F25:1 C444", 35, 33, YUV444P, "FRAME"},
		{"420p10", "YUV4MPEG2 W35 H33 F25:1 C420p10 XYSCSS=420P10", 35, 33, YUV420P10LE, "FRAME"},
		{"422p10", "YUV4MPEG2 W36 H34 C422p10", 36, 34, YUV422P10LE, "FRAME"},
		{"444p10", "YUV4MPEG2 W36 H34 C444p10", 36, 34, YUV444P10LE, "FRAME"},
		{"420p12", "YUV4MPEG2 W36 H34 C420p12", 36, 34, YUV420P12LE, "FRAME"},
		{"422p12", "YUV4MPEG2 W36 H34 C422p12", 36, 34, YUV422P12LE, "FRAME"},
		{"444p12", "YUV4MPEG2 W36 H34 C444p12", 36, 34, YUV444P12LE, "FRAME"},
		{"mono", "YUV4MPEG2 W36 H34 Cmono", 36, 34, Gray, "FRAME"},
		{"frame params", "YUV4MPEG2 W36 H34 C420jpeg", 36, 34, YUV420P, "FRAME Ip XFOO=1"},
		{"unknown tag ignored", "YUV4MPEG2 W36 H34 Zfoo C444", 36, 34, YUV444P, "FRAME"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			max := uint16(1)<<uint(tc.pf.BitDepth()) - 1
			luma := func(frame int) func(int) uint16 {
				return func(i int) uint16 { return uint16(i*5+frame*11) & max }
			}
			var b bytes.Buffer
			b.WriteString(tc.header + "\n")
			for n := 0; n < 3; n++ {
				b.WriteString(tc.frame + "\n")
				b.Write(rawFrame(tc.w, tc.h, tc.pf, luma(n)))
			}
			data := b.Bytes()
			y, err := OpenY4M(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if info := y.Info(); info.Width != tc.w || info.Height != tc.h || info.Format != tc.pf {
				t.Fatalf("Info = %+v, want %dx%d %v", info, tc.w, tc.h, tc.pf)
			}
			var f Frame
			for n := 0; n < 3; n++ {
				if err := y.ReadFrame(&f); err != nil {
					t.Fatalf("frame %d: %v", n, err)
				}
				diffY(t, f.Y, tc.w, tc.h, luma(n))
			}
			if err := y.ReadFrame(&f); !errors.Is(err, io.EOF) {
				t.Fatalf("after last frame: err = %v, want io.EOF", err)
			}
			// Cut inside the last frame's data.
			y, _ = OpenY4M(bytes.NewReader(data[:len(data)-3]))
			var lastErr error
			for lastErr == nil {
				lastErr = y.ReadFrame(&f)
			}
			if !errors.Is(lastErr, ErrTruncated) {
				t.Fatalf("truncated: err = %v, want ErrTruncated", lastErr)
			}
		})
	}
}

func TestY4MHeaderFields(t *testing.T) {
	h, err := ParseY4MHeader([]byte("YUV4MPEG2 W352 H288 F30000:1001 It A128:117 C420mpeg2 XYSCSS=420MPEG2 XCOLORRANGE=LIMITED"))
	if err != nil {
		t.Fatal(err)
	}
	want := Y4MHeader{Width: 352, Height: 288, FrameRateNum: 30000, FrameRateDen: 1001, Interlace: 't',
		AspectNum: 128, AspectDen: 117, Colorspace: "420mpeg2", Format: YUV420P,
		Extensions: []string{"YSCSS=420MPEG2", "COLORRANGE=LIMITED"}}
	if fmt.Sprint(h) != fmt.Sprint(want) {
		t.Fatalf("got  %+v\nwant %+v", h, want)
	}
}

func TestY4MErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want error
	}{
		{"empty", "", ErrBadHeader},
		{"no signature", "YUV4MPEG W16 H16\n", ErrBadHeader},
		{"missing height", "YUV4MPEG2 W16\n", ErrBadHeader},
		{"bad width", "YUV4MPEG2 Wabc H16\n", ErrBadHeader},
		{"zero width", "YUV4MPEG2 W0 H16\n", ErrBadHeader},
		{"bad rate", "YUV4MPEG2 W16 H16 F30\n", ErrBadHeader},
		{"bad interlace", "YUV4MPEG2 W16 H16 Ix\n", ErrBadHeader},
		{"unknown colorspace", "YUV4MPEG2 W16 H16 C411\n", ErrUnknownPixelFormat},
		{"unterminated header", "YUV4MPEG2 W16 H16", ErrTruncated},
		{"long header", "YUV4MPEG2 W16 H16 X" + string(bytes.Repeat([]byte("a"), 5000)) + "\n", ErrBadHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := OpenY4M(bytes.NewReader([]byte(tc.data))); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	frameTests := []struct {
		name string
		data string
		want error
	}{
		{"bad marker", "YUV4MPEG2 W2 H2 C444\nFRAMX\n", ErrBadHeader},
		{"marker glued to params", "YUV4MPEG2 W2 H2 C444\nFRAMEIp\n", ErrBadHeader},
		{"marker without data", "YUV4MPEG2 W2 H2 C444\nFRAME\n", ErrTruncated},
		{"cut marker", "YUV4MPEG2 W2 H2 C444\nFRA", ErrTruncated},
	}
	for _, tc := range frameTests {
		t.Run(tc.name, func(t *testing.T) {
			y, err := OpenY4M(bytes.NewReader([]byte(tc.data)))
			if err != nil {
				t.Fatal(err)
			}
			var f Frame
			if err := y.ReadFrame(&f); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzY4MHeader checks that arbitrary headers never panic and that every
// error wraps one of the reader's sentinel errors.
func FuzzY4MHeader(f *testing.F) {
	for _, s := range []string{
		"YUV4MPEG2 W176 H144 F30:1 Ip A1:1 C420jpeg XYSCSS=420JPEG",
		"YUV4MPEG2 W35 H33 C444p10",
		"YUV4MPEG2 W1 H1 Cmono",
		"YUV4MPEG2 W16 H16 F0:0",
		"YUV4MPEG2",
		"",
		"YUV4MPEG2 W99999999999 H1",
	} {
		f.Add([]byte(s + "\nFRAME\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		y, err := OpenY4M(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrBadHeader) && !errors.Is(err, ErrUnknownPixelFormat) && !errors.Is(err, ErrTruncated) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		info := y.Info()
		if info.Width <= 0 || info.Height <= 0 || !info.Format.Valid() {
			t.Fatalf("accepted invalid header: %+v", info)
		}
		var fr Frame
		for i := 0; i < 4; i++ {
			if err := y.ReadFrame(&fr); err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrBadHeader) && !errors.Is(err, ErrTruncated) {
					t.Fatalf("unexpected frame error: %v", err)
				}
				return
			}
		}
	})
}

// TestReadChroma checks that Frame.Chroma makes the readers fill U and V
// with the right samples for every subsampling, depth and odd size, that
// gray input yields none, and that turning it off drops them again.
func TestReadChroma(t *testing.T) {
	tests := []struct {
		w, h   int
		pf     PixelFormat
		cw, ch int
	}{
		{36, 34, YUV420P, 18, 17},
		{35, 33, YUV420P, 18, 17},
		{35, 33, YUV422P10LE, 18, 33},
		{35, 33, YUV444P12LE, 35, 33},
		{35, 33, Gray10, 0, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%v/%dx%d", tc.pf, tc.w, tc.h), func(t *testing.T) {
			maxV := uint16(1)<<uint(tc.pf.BitDepth()) - 1
			l, c := tc.pf.planeSizes(tc.w, tc.h)
			sample := func(i int) uint16 { return uint16(i*5+3) & maxV } // i counts over all planes
			var data []byte
			for i := 0; i < l+2*c; i++ {
				v := sample(i)
				if tc.pf.BitDepth() == 8 {
					data = append(data, byte(v))
				} else {
					data = append(data, byte(v), byte(v>>8))
				}
			}
			frame := data
			data = append(append([]byte(nil), frame...), frame...)
			// Y4M goes through the same plane reader; check both front ends.
			y4m := []byte(fmt.Sprintf("YUV4MPEG2 W%d H%d C%s\nFRAME\n", tc.w, tc.h, map[PixelFormat]string{
				YUV420P: "420", YUV422P10LE: "422p10", YUV444P12LE: "444p12", Gray10: "mono10"}[tc.pf]))
			y4m = append(append(y4m, frame...), "FRAME\n"...)
			y4m = append(y4m, frame...)
			raw, err := OpenRaw(bytes.NewReader(data), tc.w, tc.h, tc.pf)
			if err != nil {
				t.Fatal(err)
			}
			yr, err := OpenY4M(bytes.NewReader(y4m))
			if err != nil {
				t.Fatal(err)
			}
			for _, src := range []FrameSource{raw, yr} {
				f := Frame{Chroma: true}
				if err := src.ReadFrame(&f); err != nil {
					t.Fatal(err)
				}
				diffY(t, f.Y, tc.w, tc.h, sample)
				if f.ChromaWidth != tc.cw || f.ChromaHeight != tc.ch || len(f.U) != c || len(f.V) != c {
					t.Fatalf("chroma %dx%d, len(U) %d, len(V) %d; want %dx%d, %d", f.ChromaWidth, f.ChromaHeight, len(f.U), len(f.V), tc.cw, tc.ch, c)
				}
				for i := 0; i < c; i++ {
					if f.U[i] != sample(l+i) || f.V[i] != sample(l+c+i) {
						t.Fatalf("chroma sample %d: U %d V %d, want %d %d", i, f.U[i], f.V[i], sample(l+i), sample(l+c+i))
					}
				}
				f.Chroma = false
				if err := src.ReadFrame(&f); err != nil {
					t.Fatal(err)
				}
				if f.ChromaWidth != 0 || len(f.U) != 0 || len(f.V) != 0 {
					t.Fatalf("Chroma off: chroma %dx%d, len(U) %d", f.ChromaWidth, f.ChromaHeight, len(f.U))
				}
			}
		})
	}
}

// TestReadPacked: a frame read Packed keeps an 8-bit frame's luma as its bytes
// (Y8, Y empty), with the chroma planes as without it; deeper frames ignore Packed;
// widening gives what an unpacked read gives; a frame cut in its luma or in its
// chroma is ErrTruncated, a clean end io.EOF, as without Packed.
func TestReadPacked(t *testing.T) {
	for _, pf := range []PixelFormat{YUV420P, YUV444P, Gray, YUV420P10LE} {
		t.Run(pf.String(), func(t *testing.T) {
			const w, h = 35, 33
			maxV := uint16(1)<<uint(pf.BitDepth()) - 1
			l, c := pf.planeSizes(w, h)
			sample := func(i int) uint16 { return uint16(i*7+1) & maxV }
			var frame []byte
			for i := 0; i < l+2*c; i++ {
				if v := sample(i); pf.BitDepth() == 8 {
					frame = append(frame, byte(v))
				} else {
					frame = append(frame, byte(v), byte(v>>8))
				}
			}
			two := append(append([]byte(nil), frame...), frame...)
			for _, chroma := range []bool{false, true} {
				plain, packed := Frame{Chroma: chroma}, Frame{Chroma: chroma, Packed: true}
				pr, _ := OpenRaw(bytes.NewReader(two), w, h, pf)
				rr, _ := OpenRaw(bytes.NewReader(two), w, h, pf)
				for n := range 2 {
					if err := pr.ReadFrame(&plain); err != nil {
						t.Fatal(err)
					}
					if err := rr.ReadFrame(&packed); err != nil {
						t.Fatal(err)
					}
					b := packed.Packed8()
					if pf.BitDepth() != 8 {
						if b != nil {
							t.Fatalf("%d-bit frame read Packed: %d bytes in Y8, want its samples in Y", pf.BitDepth(), len(b))
						}
					} else {
						if len(packed.Y) != 0 || len(b) != l || !bytes.Equal(b, frame[:l]) {
							t.Fatalf("frame %d: len(Y) %d, Y8 equal to the luma bytes %v; want 0 and true", n, len(packed.Y), bytes.Equal(b, frame[:l]))
						}
						packed.unpack()
					}
					if !slices.Equal(packed.Y, plain.Y) || !slices.Equal(packed.U, plain.U) || !slices.Equal(packed.V, plain.V) ||
						packed.ChromaWidth != plain.ChromaWidth || packed.ChromaHeight != plain.ChromaHeight {
						t.Fatalf("chroma %v, frame %d: the Packed read, widened, differs from the plain one", chroma, n)
					}
					// Frame 1 is read into frame 0's widened samples: the read
					// leaves Y empty again.
					diffY(t, packed.Y, w, h, sample)
				}
				if err := rr.ReadFrame(&packed); !errors.Is(err, io.EOF) {
					t.Fatalf("after the last frame: %v, want io.EOF", err)
				}
			}
			// Cut inside the luma and inside the chroma.
			for _, cut := range []int{1, l * pf.bytesPerSample() / 2, l*pf.bytesPerSample() + 1} {
				if cut >= len(frame) {
					continue
				}
				r, _ := OpenRaw(bytes.NewReader(frame[:cut]), w, h, pf)
				err := r.ReadFrame(&Frame{Packed: true})
				if !errors.Is(err, ErrTruncated) {
					t.Errorf("frame cut at byte %d of %d: %v, want ErrTruncated", cut, len(frame), err)
				}
			}
		})
	}
}
