package source

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/vmafx/vmafx/worker/fetch"
	"github.com/vmafx/vmafx/worker/vmaf"
)

// ErrNoGeometry reports a raw YUV input without a width and height.
var ErrNoGeometry = errors.New("raw YUV input needs a width and height")

// Kinds of input.
const (
	KindY4M = "y4m"
	KindRaw = "raw"
)

// y4mMagic starts every YUV4MPEG2 stream.
var y4mMagic = []byte("YUV4MPEG2 ")

// bufferSize is the read buffer: the kernel's readers reuse a bufio.Reader of
// at least 64 KiB instead of adding their own.
const bufferSize = 1 << 16

// Raw is the geometry of raw YUV inputs. Y4M inputs carry their own.
type Raw struct {
	Width, Height int
	Format        vmaf.PixelFormat
}

// Input is an opened video.
type Input struct {
	vmaf.FrameSource
	// Kind is KindY4M or KindRaw.
	Kind string
	// Frames is the number of frames estimated from the input's size, or -1
	// when the size is unknown.
	Frames int

	obj *fetch.Object
}

// Close releases the input.
func (in *Input) Close() error { return in.obj.Close() }

// Open fetches u with f and opens it as Y4M or, failing the extension and
// the magic, as raw YUV with geometry raw.
func Open(ctx context.Context, f fetch.Fetcher, u *url.URL, raw Raw) (*Input, error) {
	obj, err := f.Open(ctx, u)
	if err != nil {
		return nil, err
	}
	in, err := open(obj, u, raw)
	if err != nil {
		obj.Close()
		return nil, err
	}
	return in, nil
}

func open(obj *fetch.Object, u *url.URL, raw Raw) (*Input, error) {
	br := bufio.NewReaderSize(obj, bufferSize)
	// A short input is not an error here: the readers report it.
	magic, err := br.Peek(len(y4mMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	in := &Input{obj: obj, Frames: -1}
	if strings.EqualFold(path.Ext(u.Path), ".y4m") || bytes.Equal(magic, y4mMagic) {
		// The header line, for the size estimate; Peek stops at the end of input.
		head, _ := br.Peek(min(br.Size(), 4096))
		y, err := vmaf.OpenY4M(br)
		if err != nil {
			return nil, err
		}
		in.FrameSource, in.Kind = y, KindY4M
		if i := bytes.IndexByte(head, '\n'); i >= 0 && obj.Size >= 0 {
			vi := y.Info()
			// Each frame is "FRAME\n" and its samples; frame parameters are rare.
			in.Frames = int((obj.Size - int64(i+1)) / int64(vi.Format.FrameBytes(vi.Width, vi.Height)+len("FRAME\n")))
		}
		return in, nil
	}
	if raw.Width <= 0 || raw.Height <= 0 {
		return nil, ErrNoGeometry
	}
	r, err := vmaf.OpenRaw(br, raw.Width, raw.Height, raw.Format)
	if err != nil {
		return nil, err
	}
	in.FrameSource, in.Kind = r, KindRaw
	if obj.Size >= 0 {
		in.Frames = int(obj.Size / int64(raw.Format.FrameBytes(raw.Width, raw.Height)))
	}
	return in, nil
}

// String describes the input for logs, e.g. "y4m 1920x1080 yuv420p".
func (in *Input) String() string {
	vi := in.Info()
	return fmt.Sprintf("%s %dx%d %v", in.Kind, vi.Width, vi.Height, vi.Format)
}
