package vmaf

import (
	"errors"
	"fmt"
	"io"
	"unsafe"
)

// maxDimension bounds frame width and height so that a corrupt header cannot
// make a reader allocate gigabytes.
const maxDimension = 16384

// Frame is one picture's luma plane and, on request, its chroma planes.
// VMAF only looks at luma, so by default readers drop the chroma planes after
// reading past them; PSNR's psnr_cb and psnr_cr need them.
type Frame struct {
	Width    int
	Height   int
	BitDepth int
	// Y holds Width*Height samples, row-major, without padding.
	Y []uint16
	// Chroma is set by the caller, not the reader: it asks ReadFrame to
	// fill U and V too. Left false, chroma costs neither memory nor a
	// conversion.
	Chroma bool
	// Packed is set by the caller, not the reader: it asks ReadFrame to
	// keep an 8-bit frame's luma as the bytes it read, in Y8, and leave Y
	// empty. A GPU backend uploads 8-bit planes as bytes: widening each
	// sample on the host only for the device worker to narrow it back cost
	// most of the host's side of a GPU run (docs/benchmarks.md). Readers
	// that do not know Packed fill Y as always, so a caller that sets it
	// takes either form (Packed8).
	Packed bool
	// Y8 holds the Width*Height luma samples of an 8-bit frame read with
	// Packed, when Y is empty.
	Y8 []byte
	// ChromaWidth and ChromaHeight are the size of U and V (4:2:0 and 4:2:2
	// round odd sizes up); both are zero when Chroma is false or the format
	// has no chroma (gray).
	ChromaWidth, ChromaHeight int
	// U and V hold ChromaWidth*ChromaHeight samples each (Cb and Cr),
	// row-major, without padding.
	U, V []uint16
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
	// is large enough. When f.Chroma is set it fills f.U and f.V as well
	// (reusing their storage too). It returns io.EOF after the last frame,
	// and an error wrapping ErrTruncated when the input ends inside a frame.
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
	// The frame buffer is allocated by the first read, not here: a caller can check the
	// memory the geometry needs (MemoryEstimate) before a corrupt 32-byte header that
	// claims 16384x16384 costs gigabytes.
	return &planeReader{r: r, info: info}, nil
}

// readFrame reads one frame's bytes. A clean end of input before the first
// byte is io.EOF; a partial frame is ErrTruncated.
func (p *planeReader) readFrame(f *Frame) error {
	w, h := p.info.Width, p.info.Height
	size := p.info.Format.FrameBytes(w, h)
	bps := p.info.Format.bytesPerSample()
	// The luma goes straight into the frame where its bytes are what the frame
	// keeps, so that it is copied once, by the read: an 8-bit frame read Packed
	// into Y8, and 16-bit samples (little-endian, as every format above 8 bits
	// stores them) into Y on a little-endian machine. Other frames' luma goes
	// into buf, converted below. The chroma planes go into buf after the luma,
	// or are skipped where the frame does not ask for them and the input can
	// (Skipper).
	packed := f.Packed && bps == 1
	words := bps == 2 && littleEndian
	if p.buf == nil {
		p.buf = make([]byte, size)
	}
	lumaBytes := w * h * bps
	luma := p.buf[:lumaBytes]
	switch {
	case packed:
		if cap(f.Y8) < lumaBytes {
			f.Y8 = make([]byte, lumaBytes)
		}
		f.Y8 = f.Y8[:lumaBytes]
		luma = f.Y8
	case words:
		if cap(f.Y) < w*h {
			f.Y = make([]uint16, w*h)
		}
		f.Y = f.Y[:w*h]
		luma = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f.Y))), lumaBytes)
	}
	n, err := io.ReadFull(p.r, luma)
	if err := readErr(n, err, size); err != nil {
		return err
	}
	if rest := p.buf[lumaBytes:size]; len(rest) > 0 {
		var n int
		var err error
		if f.Chroma {
			n, err = io.ReadFull(p.r, rest)
		} else {
			n, err = skip(p.r, len(rest), rest)
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the frame began with its luma
		}
		if err := readErr(lumaBytes+n, err, size); err != nil {
			return err
		}
	}
	f.Width, f.Height, f.BitDepth = w, h, p.info.Format.BitDepth()
	switch {
	case packed:
		f.Y = f.Y[:0]
	case !words:
		f.Y = toSamples(f.Y, p.buf, w*h, f.BitDepth)
	}
	f.ChromaWidth, f.ChromaHeight = 0, 0
	f.U, f.V = f.U[:0], f.V[:0]
	if !f.Chroma {
		return nil
	}
	cw, ch := p.info.Format.chromaSize(w, h)
	if cw == 0 {
		return nil
	}
	chromaBytes := cw * ch * bps
	f.ChromaWidth, f.ChromaHeight = cw, ch
	f.U = toSamples(f.U, p.buf[lumaBytes:], cw*ch, f.BitDepth)
	f.V = toSamples(f.V, p.buf[lumaBytes+chromaBytes:], cw*ch, f.BitDepth)
	return nil
}

// readErr is a frame read's error after n of its size bytes (err from
// io.ReadFull): io.EOF before the first byte, ErrTruncated inside the frame.
func readErr(n int, err error, size int) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) && n == 0:
		return io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%w: got %d of %d bytes", ErrTruncated, n, size)
	default:
		return err
	}
}

// Packed8 returns an 8-bit frame's luma bytes when it was read Packed (Y is
// then empty), else nil: the frame's luma is then Y.
func (f *Frame) Packed8() []byte {
	if len(f.Y) == 0 && len(f.Y8) > 0 {
		return f.Y8
	}
	return nil
}

// unpack widens a Packed frame's luma into Y; it does nothing to a frame
// that has Y already.
func (f *Frame) unpack() {
	if b := f.Packed8(); b != nil {
		f.Y = toSamples(f.Y, b, len(b), 8)
	}
}

// toSamples converts the first n samples of src (bytes, or little-endian
// 16-bit words above 8 bits) into dst, reusing dst's storage when it is
// large enough.
func toSamples(dst []uint16, src []byte, n, bitDepth int) []uint16 {
	if cap(dst) < n {
		dst = make([]uint16, n)
	}
	dst = dst[:n]
	if bitDepth == 8 {
		src = src[:n]
		v := widen8(src, dst)
		for i, b := range src[v:] {
			dst[v+i] = uint16(b)
		}
		return dst
	}
	src = src[:2*n]
	if littleEndian {
		// Little-endian words are the samples' own layout: one copy.
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 2*n), src)
		return dst
	}
	wordsLE(dst, src)
	return dst
}

// Narrow8 sets dst[i] to the 8-bit sample src[i], for i < len(src): the
// reverse of what the reader does to 8-bit input. A GPU backend stages 8-bit
// planes as bytes, half the bytes a plane of 16-bit samples sends over the
// bus. Samples must be below 256 (those of 8-bit frames are); larger ones
// saturate on the vector path and wrap on the other. dst must be at least as
// long as src.
func Narrow8(dst []byte, src []uint16) {
	dst = dst[:len(src)]
	v := narrow8(dst, src)
	for i, s := range src[v:] {
		dst[v+i] = byte(s)
	}
}

// CopyPlane8 copies an 8-bit plane's bytes (Frame.Y8) into a GPU backend's
// staging at dst, which must be at least as long as src: what Narrow8 does
// for 16-bit samples. It copies half a MiB at a time, below the 1 MiB from
// which Go's memmove on amd64 switches to non-temporal stores, which took
// 1.5 times as long for a 1080p plane on the development machine
// (BenchmarkStagePlane, docs/benchmarks.md).
func CopyPlane8(dst, src []byte) {
	const chunk = 512 << 10
	for len(src) > 0 {
		k := copy(dst, src[:min(len(src), chunk)])
		dst, src = dst[k:], src[k:]
	}
}

// wordsLE sets dst[i] to the little-endian word at src[2i], on any machine.
func wordsLE(dst []uint16, src []byte) {
	for i := range dst {
		dst[i] = uint16(src[2*i]) | uint16(src[2*i+1])<<8
	}
}

// littleEndian is whether this machine stores a uint16's low byte first, as
// high-bit-depth raw video does.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()
