package vmaf

import (
	"errors"
	"fmt"
	"io"
)

// maxDimension bounds frame width and height so that a corrupt header cannot
// make a reader allocate gigabytes.
const maxDimension = 16384

// Frame is one picture's luma plane. VMAF only looks at luma, so readers
// drop the chroma planes after reading past them.
type Frame struct {
	Width    int
	Height   int
	BitDepth int
	// Y holds Width*Height samples, row-major, without padding.
	Y []uint16
}

// VideoInfo describes the frames a FrameSource yields.
type VideoInfo struct {
	Width  int
	Height int
	Format PixelFormat
}

// FrameSource yields frames one at a time, in display order.
type FrameSource interface {
	// Info returns the geometry and pixel format of every frame.
	Info() VideoInfo
	// ReadFrame reads the next frame into f, reusing f.Y's storage when it
	// is large enough. It returns io.EOF after the last frame, and an error
	// wrapping ErrTruncated when the input ends inside a frame.
	ReadFrame(f *Frame) error
}

// planeReader reads fixed-size planar frames from r and converts the luma
// plane to 16-bit samples. It is shared by the raw and Y4M readers.
type planeReader struct {
	r    io.Reader
	info VideoInfo
	buf  []byte // one whole frame, reused
}

func newPlaneReader(r io.Reader, info VideoInfo) (*planeReader, error) {
	if !info.Format.Valid() {
		return nil, fmt.Errorf("%w: %v", ErrUnknownPixelFormat, info.Format)
	}
	if info.Width <= 0 || info.Height <= 0 || info.Width > maxDimension || info.Height > maxDimension {
		return nil, fmt.Errorf("%w: invalid size %dx%d", ErrBadHeader, info.Width, info.Height)
	}
	return &planeReader{r: r, info: info, buf: make([]byte, info.Format.FrameBytes(info.Width, info.Height))}, nil
}

// readFrame reads one frame's bytes. A clean end of input before the first
// byte is io.EOF; a partial frame is ErrTruncated.
func (p *planeReader) readFrame(f *Frame) error {
	n, err := io.ReadFull(p.r, p.buf)
	switch {
	case err == nil:
	case errors.Is(err, io.EOF) && n == 0:
		return io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%w: got %d of %d bytes", ErrTruncated, n, len(p.buf))
	default:
		return err
	}
	w, h := p.info.Width, p.info.Height
	f.Width, f.Height, f.BitDepth = w, h, p.info.Format.BitDepth()
	if cap(f.Y) < w*h {
		f.Y = make([]uint16, w*h)
	}
	f.Y = f.Y[:w*h]
	y := f.Y
	if f.BitDepth == 8 {
		src := p.buf[:len(y)]
		for i, v := range src {
			y[i] = uint16(v)
		}
		return nil
	}
	src := p.buf[:2*len(y)]
	for i := range y {
		y[i] = uint16(src[2*i]) | uint16(src[2*i+1])<<8
	}
	return nil
}
