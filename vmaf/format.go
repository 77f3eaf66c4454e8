package vmaf

import (
	"fmt"
	"strings"
)

// PixelFormat is the layout of a planar YUV frame: chroma subsampling and
// bits per sample. High bit depth samples are little-endian 16-bit words.
type PixelFormat int

// The pixel formats read by OpenRaw and OpenY4M. Names follow ffmpeg's.
const (
	PixelFormatUnknown PixelFormat = iota
	YUV420P
	YUV422P
	YUV444P
	YUV420P10LE
	YUV422P10LE
	YUV444P10LE
	YUV420P12LE
	YUV422P12LE
	YUV444P12LE
	Gray   // 8-bit luma only (Y4M "mono")
	Gray10 // 10-bit luma only
	Gray12 // 12-bit luma only
)

type formatInfo struct {
	name   string
	depth  int
	xShift int // chroma width = ceil(W / 2^xShift)
	yShift int // chroma height = ceil(H / 2^yShift)
	planes int
}

var formats = [...]formatInfo{
	PixelFormatUnknown: {name: "unknown"},
	YUV420P:            {"yuv420p", 8, 1, 1, 3},
	YUV422P:            {"yuv422p", 8, 1, 0, 3},
	YUV444P:            {"yuv444p", 8, 0, 0, 3},
	YUV420P10LE:        {"yuv420p10le", 10, 1, 1, 3},
	YUV422P10LE:        {"yuv422p10le", 10, 1, 0, 3},
	YUV444P10LE:        {"yuv444p10le", 10, 0, 0, 3},
	YUV420P12LE:        {"yuv420p12le", 12, 1, 1, 3},
	YUV422P12LE:        {"yuv422p12le", 12, 1, 0, 3},
	YUV444P12LE:        {"yuv444p12le", 12, 0, 0, 3},
	Gray:               {"gray", 8, 0, 0, 1},
	Gray10:             {"gray10le", 10, 0, 0, 1},
	Gray12:             {"gray12le", 12, 0, 0, 1},
}

func (pf PixelFormat) info() formatInfo {
	if pf <= PixelFormatUnknown || int(pf) >= len(formats) {
		return formats[PixelFormatUnknown]
	}
	return formats[pf]
}

// String returns the ffmpeg name of the format, e.g. "yuv420p10le".
func (pf PixelFormat) String() string { return pf.info().name }

// BitDepth returns the bits per sample (8, 10 or 12), or 0 for an unknown format.
func (pf PixelFormat) BitDepth() int { return pf.info().depth }

// Valid reports whether pf is one of the known formats.
func (pf PixelFormat) Valid() bool { return pf.info().depth != 0 }

// bytesPerSample is 1 for 8-bit formats and 2 otherwise.
func (pf PixelFormat) bytesPerSample() int {
	if pf.BitDepth() > 8 {
		return 2
	}
	return 1
}

// planeSizes returns the sample counts of the luma plane and of each chroma
// plane for a w x h frame; odd sizes round the chroma dimensions up.
func (pf PixelFormat) planeSizes(w, h int) (luma, chroma int) {
	cw, ch := pf.chromaSize(w, h)
	return w * h, cw * ch
}

// chromaSize returns the width and height of each chroma plane of a w x h
// frame, or zeros for a format without chroma.
func (pf PixelFormat) chromaSize(w, h int) (cw, ch int) {
	fi := pf.info()
	if fi.planes != 3 {
		return 0, 0
	}
	return (w + (1 << fi.xShift) - 1) >> fi.xShift, (h + (1 << fi.yShift) - 1) >> fi.yShift
}

// FrameBytes returns the size in bytes of one w x h frame in this format.
func (pf PixelFormat) FrameBytes(w, h int) int {
	l, c := pf.planeSizes(w, h)
	return (l + 2*c) * pf.bytesPerSample()
}

// ParsePixelFormat parses an ffmpeg-style format name such as "yuv420p" or
// "yuv422p10le" (case-insensitive). It returns an error wrapping
// ErrUnknownPixelFormat for any other name.
func ParsePixelFormat(name string) (PixelFormat, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for i, fi := range formats {
		if i != 0 && fi.name == n {
			return PixelFormat(i), nil
		}
	}
	return PixelFormatUnknown, fmt.Errorf("%w: %q", ErrUnknownPixelFormat, name)
}
