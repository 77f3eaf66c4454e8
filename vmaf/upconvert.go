package vmaf

import "fmt"

// WithBitDepth returns the pixel format of pf's layout (subsampling, or gray) at bits
// per sample, and false when there is none.
func (pf PixelFormat) WithBitDepth(bits int) (PixelFormat, bool) {
	fi := pf.info()
	for f := range formats {
		cand := PixelFormat(f)
		ci := cand.info()
		if ci.depth == bits && ci.xShift == fi.xShift && ci.yShift == fi.yShift && ci.planes == fi.planes {
			return cand, true
		}
	}
	return PixelFormatUnknown, false
}

// Upconvert returns a FrameSource that yields src's frames at bits per sample, converted
// as ffmpeg's format filter converts between planar YUV formats of one layout (e.g.
// format=yuv420p10le): every sample shifted left by the difference, so 8-bit 255 becomes
// 10-bit 1020. libvmaf recommends scoring VMAF v1 at 10 bits even for 8-bit encodes;
// this gives it the picture ffmpeg would. A source already at bits is returned as it is;
// a deeper one, or bits that no format has, is an error wrapping ErrUnknownPixelFormat.
func Upconvert(src FrameSource, bits int) (FrameSource, error) {
	info := src.Info()
	from := info.Format.BitDepth()
	if from == bits {
		return src, nil
	}
	to, ok := info.Format.WithBitDepth(bits)
	if !ok || from > bits {
		return nil, fmt.Errorf("%w: cannot score %v at %d bits (only 8 to 10 or 12, 10 to 12)", ErrUnknownPixelFormat, info.Format, bits)
	}
	info.Format = to
	return &upconverted{src: src, info: info, shift: uint(bits - from)}, nil
}

type upconverted struct {
	src   FrameSource
	info  VideoInfo
	shift uint
}

func (u *upconverted) Info() VideoInfo { return u.info }

func (u *upconverted) ReadFrame(f *Frame) error {
	if err := u.src.ReadFrame(f); err != nil {
		return err
	}
	// The frames are deeper than 8 bits now: a source that kept 8-bit luma
	// as bytes (Frame.Packed) has it widened first.
	f.unpack()
	for _, plane := range [][]uint16{f.Y, f.U, f.V} {
		for i, v := range plane {
			plane[i] = v << u.shift
		}
	}
	f.BitDepth = u.info.Format.BitDepth()
	return nil
}
