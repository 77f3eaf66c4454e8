package source

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
)

// Sentinel errors. Test them with errors.Is.
var (
	// ErrNoGeometry reports a raw YUV input without a width and height.
	ErrNoGeometry = errors.New("raw YUV input needs a width and height")
	// ErrRateMismatch reports inputs of different frame rates, which the
	// caller refuses unless it aligns them.
	ErrRateMismatch = errors.New("frame rate mismatch")
)

// Kinds of input.
const (
	KindY4M     = "y4m"
	KindRaw     = "raw"
	KindEncoded = "encoded"
)

// bufferSize is the read buffer: the kernel's readers reuse a bufio.Reader of
// at least 64 KiB instead of adding their own. It is also what is sniffed.
const bufferSize = 1 << 16

// probeBytes is how much of a streamed encoded input ffprobe sees: enough for
// the stream headers and the first frames of any common container at
// broadcast bit rates, and bounded, as it is held in memory until ffmpeg
// has read it.
const probeBytes = 8 << 20

// Raw is the geometry of raw YUV inputs. Y4M and encoded inputs carry their own.
type Raw struct {
	Width, Height int
	Format        vmaf.PixelFormat
}

// Options say how to open an input.
type Options struct {
	// Raw is the geometry of a raw YUV input.
	Raw Raw
	// Tools are ffmpeg and ffprobe; nil when they are missing, and then
	// ToolsErr says why and encoded inputs fail with it.
	Tools    *decode.Tools
	ToolsErr error
	// Width and Height, when set, are the size the frames must have: an
	// input of another size is scaled to it by ffmpeg (bicubic), or fails
	// with vmaf.ErrSizeMismatch without ffmpeg. Set for the distorted input,
	// to the reference's size.
	Width, Height int
	// Deinterlace has ffmpeg deinterlace frames marked interlaced (bwdif).
	Deinterlace bool
	// Spool is where inputs that need seeking are copied first.
	Spool Spool
	// SkipFrames is how many leading frames the caller skips. An encoded
	// local file of a known frame rate, not deinterlaced, starts decoding
	// there (ffmpeg seeks to the keyframe before and drops what precedes the
	// frame); Input.Skipped says so. Other inputs leave the skip to the caller.
	SkipFrames int
	// HW is the hardware decoder to try for an encoded input (decode.Tools.ChooseHW);
	// the zero value decodes in software.
	HW decode.HW
}

// Input is an opened video.
type Input struct {
	vmaf.FrameSource
	// Kind is KindY4M, KindRaw or KindEncoded.
	Kind string
	// Frames is the number of frames, or -1 when unknown. It is exact when
	// FramesExact is set (raw and Y4M inputs of a known size), else what a
	// container declares, which edit lists or damage can contradict.
	Frames      int
	FramesExact bool
	// Rate is the frame rate; zero when unknown (raw YUV).
	Rate decode.Rate
	// Interlaced is set when the input says its frames are interlaced.
	Interlaced bool
	// ScaledFrom is the input's own size, e.g. "1280x720", when its frames
	// are scaled to Options.Width x Height; else "".
	ScaledFrom string
	// Spooled is set when the input was copied to a local file first.
	Spooled bool
	// Desc describes the input for logs, e.g. "h264 1920x1080 yuv420p 25 fps in mov,mp4,...".
	Desc string
	// Skipped is how many of Options.SkipFrames the input skipped itself, by seeking.
	Skipped int
	// Decoder is the decoder of an encoded input: decode.Software, NVDEC or VAAPI; ""
	// for raw and Y4M inputs. DecoderFallback says why a hardware decoder was given up.
	Decoder, DecoderFallback string

	closers []func() error
}

// Close releases the input: stops ffmpeg, closes the fetch, removes a spool file.
func (in *Input) Close() error {
	var errs []error
	for i := len(in.closers) - 1; i >= 0; i-- {
		errs = append(errs, in.closers[i]())
	}
	in.closers = nil
	return errors.Join(errs...)
}

func (in *Input) onClose(f func() error) { in.closers = append(in.closers, f) }

// Open fetches u with f and opens it as Y4M, encoded video or raw YUV, as its
// content says.
func Open(ctx context.Context, f fetch.Fetcher, u *url.URL, o Options) (*Input, error) {
	fctx, cancel := context.WithCancel(ctx)
	obj, err := f.Open(fctx, u)
	if err != nil {
		cancel()
		return nil, err
	}
	in := &Input{Frames: -1}
	in.onClose(func() error { cancel(); return obj.Close() })
	if err := open(ctx, in, obj, cancel, u, o); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

func open(ctx context.Context, in *Input, obj *fetch.Object, stop func(), u *url.URL, o Options) error {
	br := bufio.NewReaderSize(obj, bufferSize)
	// A short input is not an error here: the readers report it.
	head, err := br.Peek(bufferSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return err
	}
	switch container := decode.Sniff(head); {
	case container == decode.ContainerY4M:
		return openY4M(ctx, in, br, obj, head, stop, o)
	case container != decode.ContainerUnknown:
		return openEncoded(ctx, in, br, obj, u, container, stop, o)
	case o.Raw.Width > 0 && o.Raw.Height > 0:
		return openRaw(ctx, in, br, obj, stop, o)
	case o.Tools == nil:
		return ErrNoGeometry
	}
	// No signature and no geometry: an encoded format only ffprobe knows
	// (a raw H.264 stream, say), or raw video given without its geometry.
	err = openEncoded(ctx, in, br, obj, u, decode.ContainerUnknown, stop, o)
	if errors.Is(err, decode.ErrUndecodable) {
		return fmt.Errorf("%w (and ffprobe does not recognise it as a video)", ErrNoGeometry)
	}
	return err
}

// openY4M reads a Y4M input in Go, or through ffmpeg when it must be scaled
// or deinterlaced. br reads obj.
func openY4M(ctx context.Context, in *Input, br *bufio.Reader, obj *fetch.Object, head []byte, stop func(), o Options) error {
	in.Kind = KindY4M
	size := obj.Size
	i := bytes.IndexByte(head, '\n')
	if i >= 0 {
		// A header that does not parse is reported by OpenY4M below.
		if h, err := vmaf.ParseY4MHeader(head[:i]); err == nil {
			in.Rate = decode.Rate{Num: h.FrameRateNum, Den: h.FrameRateDen}
			in.Interlaced = h.Interlace == 't' || h.Interlace == 'b' || h.Interlace == 'm'
			if size >= 0 {
				// Each frame is "FRAME\n" and its samples; frame parameters are
				// rare. A partial last frame leaves the count to the reader,
				// which reports the truncation.
				fb := int64(h.Format.FrameBytes(h.Width, h.Height) + len("FRAME\n"))
				in.Frames = int((size - int64(i+1)) / fb)
				in.FramesExact = (size-int64(i+1))%fb == 0
			}
			if scale(o, h.Width, h.Height) || o.Deinterlace && in.Interlaced {
				vi := vmaf.VideoInfo{Width: h.Width, Height: h.Height, Format: h.Format}
				return pipe(ctx, in, decode.Input{Stream: br, Stop: stop, Index: -1, Y4M: true}, vi, o)
			}
		}
	}
	y, err := vmaf.OpenY4M(frames(br, obj))
	if err != nil {
		return err
	}
	in.FrameSource = y
	in.Desc = describe(KindY4M, y.Info())
	return nil
}

// frames is what the kernel's raw and Y4M readers read obj through: br, which skips the
// chroma planes a luma-only model does not ask for by seeking where obj is a local file
// (vmaf.Skipper), instead of copying a third of every 4:2:0 frame for nothing.
func frames(br *bufio.Reader, obj *fetch.Object) io.Reader {
	return vmaf.SkipThrough(br, obj.ReadCloser)
}

// openRaw reads raw YUV of the given geometry in Go, or through ffmpeg when
// it must be scaled. br reads obj.
func openRaw(ctx context.Context, in *Input, br *bufio.Reader, obj *fetch.Object, stop func(), o Options) error {
	in.Kind = KindRaw
	size := obj.Size
	vi := vmaf.VideoInfo{Width: o.Raw.Width, Height: o.Raw.Height, Format: o.Raw.Format}
	if size >= 0 && vi.Format.Valid() {
		fb := int64(vi.Format.FrameBytes(vi.Width, vi.Height))
		in.Frames, in.FramesExact = int(size/fb), size%fb == 0
	}
	if scale(o, vi.Width, vi.Height) && vi.Format.Valid() {
		return pipe(ctx, in, decode.Input{Stream: br, Stop: stop, Index: -1, Raw: &vi}, vi, o)
	}
	r, err := vmaf.OpenRaw(frames(br, obj), vi.Width, vi.Height, vi.Format)
	if err != nil {
		return err
	}
	in.FrameSource = r
	in.Desc = describe(KindRaw, vi)
	return nil
}

// pipe scales (or deinterlaces) a Y4M or raw input through ffmpeg.
func pipe(ctx context.Context, in *Input, di decode.Input, vi vmaf.VideoInfo, o Options) error {
	in.Desc = describe(in.Kind, vi)
	if o.Tools == nil {
		if scale(o, vi.Width, vi.Height) {
			return fmt.Errorf("%w: %dx%d, reference %dx%d; scaling needs ffmpeg: %w", vmaf.ErrSizeMismatch,
				vi.Width, vi.Height, o.Width, o.Height, o.ToolsErr)
		}
		return fmt.Errorf("deinterlacing needs ffmpeg: %w", o.ToolsErr)
	}
	return startDecoder(ctx, in, di, decode.Options{Format: vi.Format, Deinterlace: o.Deinterlace}, vi.Width, vi.Height, o)
}

// startDecoder starts ffmpeg on di, scaling frames of w x h to the reference's size when
// they differ, and makes it the input's frame source.
func startDecoder(ctx context.Context, in *Input, di decode.Input, do decode.Options, w, h int, o Options) error {
	if scale(o, w, h) {
		in.ScaledFrom = size(w, h)
		do.Width, do.Height = o.Width, o.Height
		in.Desc += " scaled to " + size(o.Width, o.Height)
	}
	d, err := o.Tools.Start(ctx, di, do)
	if err != nil {
		return err
	}
	in.onClose(d.Close)
	in.FrameSource = d
	return nil
}

// openEncoded probes and decodes an encoded input with ffmpeg.
func openEncoded(ctx context.Context, in *Input, br *bufio.Reader, obj *fetch.Object, u *url.URL, container string, stop func(), o Options) error {
	if o.Tools == nil {
		return o.ToolsErr
	}
	in.Kind = KindEncoded
	var (
		di   = decode.Input{Stop: stop}
		info *decode.Info
		err  error
	)
	switch {
	case u.Scheme == "file" && obj.Size >= 0:
		// A regular local file: ffmpeg reads it itself, with seeks.
		di.Path = u.Path
	case container == decode.ContainerMP4 && decode.NeedsSeek(head(br)):
		if di.Path, err = o.Spool.Copy(ctx, br, obj.Size); err != nil {
			return err
		}
		path := di.Path
		in.onClose(func() error { return removeSpool(path) })
		in.Spooled = true
	default:
		h, err := readHead(br)
		if err != nil {
			return err
		}
		if info, err = o.Tools.Probe(ctx, "", h); err != nil {
			return err
		}
		di.Stream = io.MultiReader(bytes.NewReader(h), br)
	}
	if info == nil {
		if info, err = o.Tools.Probe(ctx, di.Path, nil); err != nil {
			return err
		}
	}
	di.Index = info.Stream
	in.Frames, in.Rate, in.Interlaced = info.Frames, info.Rate, info.Interlaced
	if k := o.SkipFrames; k > 0 && di.Path != "" && info.ConstantRate && !o.Deinterlace && seekable[info.Container] {
		// Half a frame early: frame k is the first at or after the seek point whatever
		// the rounding of the timestamps (bwdif is left out: it reads the frame before).
		di.Seek = info.StartOffset + (float64(k)-0.5)*float64(info.Rate.Den)/float64(info.Rate.Num)
		in.Skipped = k
		if in.Frames >= 0 {
			in.Frames = max(in.Frames-k, 0)
		}
	}
	in.Desc = info.String() + " in " + info.Container
	if in.Spooled {
		in.Desc += " (spooled)"
	}
	if err := startDecoder(ctx, in, di, decode.Options{Format: info.Format, Deinterlace: o.Deinterlace, HW: o.HW}, info.Width, info.Height, o); err != nil {
		return err
	}
	if d, ok := in.FrameSource.(*decode.Decoder); ok {
		in.Decoder, in.DecoderFallback = d.Name(), d.Fallback()
	}
	return nil
}

// seekable are the containers (ffprobe's names) with an index of keyframe times, in which
// ffmpeg's seek lands where it is asked. In an MPEG-TS, which has none, it guesses a byte
// position from the bit rate and can land frames off: those inputs are read from the start.
var seekable = map[string]bool{
	"mov,mp4,m4a,3gp,3g2,mj2": true,
	"matroska,webm":           true,
}

// head returns what br has buffered, at most bufferSize bytes.
func head(br *bufio.Reader) []byte {
	h, _ := br.Peek(br.Buffered())
	return h
}

// readHead reads the first probeBytes of br (fewer at the end of input).
func readHead(br *bufio.Reader) ([]byte, error) {
	h := make([]byte, probeBytes)
	n, err := io.ReadFull(br, h)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return h[:n], nil
}

// scale reports whether frames of w x h must be scaled to the size o asks for.
func scale(o Options, w, h int) bool {
	return o.Width > 0 && o.Height > 0 && (w != o.Width || h != o.Height)
}

func size(w, h int) string { return strconv.Itoa(w) + "x" + strconv.Itoa(h) }

func describe(kind string, vi vmaf.VideoInfo) string {
	return fmt.Sprintf("%s %dx%d %v", kind, vi.Width, vi.Height, vi.Format)
}

// String describes the input for logs, e.g. "y4m 1920x1080 yuv420p".
func (in *Input) String() string { return in.Desc }
