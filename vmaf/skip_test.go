package vmaf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

// skipReader is a bytes.Reader that skips by seeking (a Skipper) and counts what it
// read and what it skipped.
type skipReader struct {
	*bytes.Reader
	read, skipped int64
}

func (s *skipReader) Read(p []byte) (int, error) {
	n, err := s.Reader.Read(p)
	s.read += int64(n)
	return n, err
}

func (s *skipReader) Skip(n int64) (int64, error) {
	k := min(n, int64(s.Len()))
	if _, err := s.Seek(k, io.SeekCurrent); err != nil {
		return 0, err
	}
	s.skipped += k
	return k, nil
}

// The raw and Y4M readers skip the chroma planes of the frames that do not ask for them
// where their input is a Skipper, and read the same frames as from any other input:
// every format, luma as samples and as bytes, frames that ask for chroma between ones
// that do not. A frame whose chroma is cut short is ErrTruncated whether it asks for
// the chroma or not.
func TestReadSkipsChroma(t *testing.T) {
	for _, pf := range []PixelFormat{YUV420P, YUV422P, YUV444P, Gray, YUV420P10LE} {
		for _, container := range []string{"raw", "y4m"} {
			t.Run(fmt.Sprintf("%v/%s", pf, container), func(t *testing.T) {
				// Frames larger than the readers' 64 KiB buffers, as video's are: a buffer
				// holds what it read ahead, and only the rest of a skip is the input's.
				const w, h, frames = 385, 257, 4
				l, c := pf.planeSizes(w, h)
				bps := pf.bytesPerSample()
				frameBytes := (l + 2*c) * bps
				var data []byte
				var header string
				if container == "y4m" {
					cs := map[PixelFormat]string{YUV420P: "420", YUV422P: "422", YUV444P: "444", Gray: "mono", YUV420P10LE: "420p10"}[pf]
					header = fmt.Sprintf("YUV4MPEG2 W%d H%d F25:1 C%s\n", w, h, cs)
					data = append(data, header...)
				}
				for n := range frames {
					if container == "y4m" {
						data = append(data, "FRAME\n"...)
					}
					for i := range frameBytes {
						v := byte(i*7 + n*3 + 1)
						if bps == 2 && i%2 == 1 {
							v &= 3 // 10-bit samples in range
						}
						data = append(data, v)
					}
				}
				open := func(r io.Reader) FrameSource {
					var src FrameSource
					var err error
					if container == "y4m" {
						src, err = OpenY4M(r)
					} else {
						src, err = OpenRaw(r, w, h, pf)
					}
					if err != nil {
						t.Fatal(err)
					}
					return src
				}
				for _, packed := range []bool{false, true} {
					sk := &skipReader{Reader: bytes.NewReader(data)}
					skipping, plain := open(sk), open(bytes.NewReader(data))
					var a, b Frame
					skippedFrames := 0
					for n := range frames {
						chroma := n == 2 // the others skip
						if !chroma && c > 0 {
							skippedFrames++
						}
						a, b = Frame{Chroma: chroma, Packed: packed, Y: a.Y, Y8: a.Y8}, Frame{Chroma: chroma, Packed: packed}
						if err := skipping.ReadFrame(&a); err != nil {
							t.Fatalf("frame %d: %v", n, err)
						}
						if err := plain.ReadFrame(&b); err != nil {
							t.Fatal(err)
						}
						if !slices.Equal(a.Y, b.Y) || !bytes.Equal(a.Y8, b.Y8) || !slices.Equal(a.U, b.U) || !slices.Equal(a.V, b.V) ||
							a.ChromaWidth != b.ChromaWidth || a.BitDepth != b.BitDepth {
							t.Fatalf("frame %d (chroma %v, packed %v): read through the Skipper, it differs", n, chroma, packed)
						}
					}
					if err := skipping.ReadFrame(&a); !errors.Is(err, io.EOF) {
						t.Fatalf("after the last frame: %v, want io.EOF", err)
					}
					// A raw reader's buffer is empty at each plane: it skips every chroma
					// byte of those frames. A Y4M reader's frame line fills its buffer, and
					// the buffer may hold some of a plane it then skips by discarding.
					want := int64(skippedFrames * 2 * c * bps)
					if sk.read+sk.skipped != int64(len(data)) || container == "raw" && sk.skipped != want ||
						sk.skipped > want || want > 0 && sk.skipped == 0 {
						t.Errorf("packed %v: skipped %d bytes and read %d of %d; want %d skipped (raw; some for Y4M), the rest read",
							packed, sk.skipped, sk.read, len(data), want)
					}
				}
				if c == 0 {
					return
				}
				// The last frame cut inside its chroma, at its first byte and in the middle.
				for _, cut := range []int{l * bps, l*bps + c*bps} {
					cutData := data[:len(data)-frameBytes+cut]
					src := open(&skipReader{Reader: bytes.NewReader(cutData)})
					var f Frame
					var err error
					for range frames {
						if err = src.ReadFrame(&f); err != nil {
							break
						}
					}
					if !errors.Is(err, ErrTruncated) {
						t.Errorf("last frame cut at byte %d of %d, luma only: %v, want ErrTruncated", cut, frameBytes, err)
					}
				}
			})
		}
	}
}
