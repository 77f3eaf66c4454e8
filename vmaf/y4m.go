package vmaf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxY4MLine bounds the stream and frame header lines.
const maxY4MLine = 4096

// Y4MHeader holds the parameters of a YUV4MPEG2 stream header.
type Y4MHeader struct {
	Width, Height int
	// FrameRateNum and FrameRateDen are the F tag (0 when absent).
	FrameRateNum, FrameRateDen int
	// Interlace is the I tag's letter ('p', 't', 'b', 'm', or 0 when absent).
	Interlace byte
	// AspectNum and AspectDen are the A tag (0 when absent or unknown).
	AspectNum, AspectDen int
	// Colorspace is the C tag as written ("420jpeg" when absent).
	Colorspace string
	// Format is the pixel format the C tag maps to.
	Format PixelFormat
	// Extensions holds the X tags, without the leading X.
	Extensions []string
}

// y4mColorspaces maps C tags to pixel formats. The 4:2:0 variants differ
// only in chroma siting, which does not matter for luma-only VMAF.
var y4mColorspaces = map[string]PixelFormat{
	"420jpeg":  YUV420P,
	"420mpeg2": YUV420P,
	"420paldv": YUV420P,
	"420":      YUV420P,
	"422":      YUV422P,
	"444":      YUV444P,
	"420p10":   YUV420P10LE,
	"422p10":   YUV422P10LE,
	"444p10":   YUV444P10LE,
	"420p12":   YUV420P12LE,
	"422p12":   YUV422P12LE,
	"444p12":   YUV444P12LE,
	"mono":     Gray,
	"mono10":   Gray10,
	"mono12":   Gray12,
}

// Y4MReader reads a YUV4MPEG2 stream.
type Y4MReader struct {
	br     *bufio.Reader
	header Y4MHeader
	p      *planeReader
}

// OpenY4M reads the stream header from r and returns a FrameSource for its
// frames. Errors wrap ErrBadHeader for a malformed header and
// ErrUnknownPixelFormat for an unsupported C tag.
func OpenY4M(r io.Reader) (*Y4MReader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	line, err := readLine(br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty stream", ErrBadHeader)
		}
		return nil, err
	}
	h, err := ParseY4MHeader(line)
	if err != nil {
		return nil, err
	}
	p, err := newPlaneReader(SkipThrough(br, r), VideoInfo{Width: h.Width, Height: h.Height, Format: h.Format})
	if err != nil {
		return nil, err
	}
	return &Y4MReader{br: br, header: h, p: p}, nil
}

// Header returns the parsed stream header.
func (y *Y4MReader) Header() Y4MHeader { return y.header }

// Info returns the frame geometry and pixel format.
func (y *Y4MReader) Info() VideoInfo { return y.p.info }

// ReadFrame reads the next FRAME into f. Frame parameters are accepted and
// ignored. See FrameSource.
func (y *Y4MReader) ReadFrame(f *Frame) error {
	line, err := readLine(y.br)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("FRAME")) || (len(line) > 5 && line[5] != ' ') {
		return fmt.Errorf("%w: bad frame marker %q", ErrBadHeader, truncateForError(line))
	}
	if err := y.p.readFrame(f); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: FRAME marker without data", ErrTruncated)
		}
		return err
	}
	return nil
}

// readLine reads a '\n'-terminated line of at most maxY4MLine bytes and
// returns it without the newline. io.EOF means no byte was read; a line cut
// by the end of input is ErrTruncated.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxY4MLine+1 {
			return nil, fmt.Errorf("%w: header line longer than %d bytes", ErrBadHeader, maxY4MLine)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(line) == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("%w: header line cut short", ErrTruncated)
		default:
			return nil, err
		}
	}
}

func truncateForError(b []byte) string {
	if len(b) > 32 {
		b = b[:32]
	}
	return string(b)
}

// ParseY4MHeader parses a YUV4MPEG2 stream header line (without its
// trailing newline). Errors wrap ErrBadHeader or ErrUnknownPixelFormat.
func ParseY4MHeader(line []byte) (Y4MHeader, error) {
	var h Y4MHeader
	fields := strings.Split(string(line), " ")
	if len(fields) == 0 || fields[0] != "YUV4MPEG2" {
		return h, fmt.Errorf("%w: missing YUV4MPEG2 signature", ErrBadHeader)
	}
	h.Colorspace = "420jpeg"
	for _, f := range fields[1:] {
		if f == "" {
			continue // tolerate doubled separators
		}
		tag, val := f[0], f[1:]
		var err error
		switch tag {
		case 'W':
			h.Width, err = parseDimension(val)
		case 'H':
			h.Height, err = parseDimension(val)
		case 'F':
			h.FrameRateNum, h.FrameRateDen, err = parseRatio(val)
			if err == nil && (h.FrameRateNum <= 0 || h.FrameRateDen <= 0) {
				err = fmt.Errorf("frame rate %q", val)
			}
		case 'A':
			h.AspectNum, h.AspectDen, err = parseRatio(val)
		case 'I':
			if len(val) != 1 || !strings.ContainsRune("ptbm?", rune(val[0])) {
				err = fmt.Errorf("interlace %q", val)
			} else {
				h.Interlace = val[0]
			}
		case 'C':
			h.Colorspace = val
		case 'X':
			h.Extensions = append(h.Extensions, val)
		default:
			// The YUV4MPEG2 convention is to ignore unknown tags.
		}
		if err != nil {
			return h, fmt.Errorf("%w: %w", ErrBadHeader, err)
		}
	}
	if h.Width == 0 || h.Height == 0 {
		return h, fmt.Errorf("%w: missing W or H", ErrBadHeader)
	}
	pf, ok := y4mColorspaces[h.Colorspace]
	if !ok {
		return h, fmt.Errorf("%w: Y4M colorspace %q", ErrUnknownPixelFormat, h.Colorspace)
	}
	h.Format = pf
	return h, nil
}

func parseDimension(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > maxDimension {
		return 0, fmt.Errorf("dimension %q", s)
	}
	return n, nil
}

func parseRatio(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("ratio %q", s)
	}
	n, err1 := strconv.Atoi(a)
	d, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || n < 0 || d < 0 {
		return 0, 0, fmt.Errorf("ratio %q", s)
	}
	return n, d, nil
}
