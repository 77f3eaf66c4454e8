package vmaf

import (
	"bufio"
	"io"
)

// RawReader reads headerless planar YUV frames of a known geometry.
type RawReader struct {
	p *planeReader
}

// OpenRaw returns a FrameSource reading raw planar frames of w x h samples in
// format pf from r: the Y plane, then the U and V planes (if any), each
// row-major without padding; 4:2:0 and 4:2:2 chroma planes are rounded up
// for odd sizes. High bit depth samples are little-endian 16-bit words.
func OpenRaw(r io.Reader, w, h int, pf PixelFormat) (*RawReader, error) {
	p, err := newPlaneReader(SkipThrough(bufio.NewReaderSize(r, 1<<16), r), VideoInfo{Width: w, Height: h, Format: pf})
	if err != nil {
		return nil, err
	}
	return &RawReader{p: p}, nil
}

// Info returns the frame geometry and format given to OpenRaw.
func (r *RawReader) Info() VideoInfo { return r.p.info }

// ReadFrame reads the next frame into f. See FrameSource.
func (r *RawReader) ReadFrame(f *Frame) error { return r.p.readFrame(f) }
