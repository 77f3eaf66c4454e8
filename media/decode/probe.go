package decode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"

	"github.com/vmafx/vmafx/vmaf"
)

// Info describes the video stream of an input, as ffprobe sees it.
type Info struct {
	// Container is ffprobe's format name, e.g. "matroska,webm".
	Container string
	// Codec is the video codec, e.g. "h264".
	Codec string
	// Stream is the index of the video stream decoded: the first that is
	// not an attached picture (cover art).
	Stream int
	// Width and Height are the frame size as displayed: after the rotation
	// that ffmpeg applies (a stream stored 1920x1080 with a 90° display
	// matrix is 1080x1920).
	Width, Height int
	// PixFmt is the decoder's pixel format and Format the one the kernel
	// reads it in (see OutputFormat).
	PixFmt string
	Format vmaf.PixelFormat
	// Rotation is the display rotation in degrees, counter-clockwise
	// (0, 90, 180, 270).
	Rotation int
	// Interlaced is set when the stream says its frames are interlaced
	// (field order tt, bb, tb or bt).
	Interlaced bool
	// Rate is the frame rate; zero when unknown.
	Rate Rate
	// Frames is the number of frames the container declares, or -1. It is
	// a declaration, not a count: edit lists and damage can change what
	// decodes.
	Frames int
	// StartOffset is how many seconds after the container's start the video
	// stream starts (an MPEG-TS whose audio starts first); Input.Seek counts
	// from the container's start.
	StartOffset float64
	// ConstantRate is set when the stream's average frame rate is its base
	// rate (r_frame_rate): frame k is then shown at StartOffset + k/Rate,
	// which a seek by frame number relies on.
	ConstantRate bool
}

// Rate is a frame rate as a fraction; the zero Rate is unknown.
type Rate struct{ Num, Den int }

// Known reports whether r is a frame rate.
func (r Rate) Known() bool { return r.Num > 0 && r.Den > 0 }

// Equal reports whether r and o are the same rate (25/1 equals 50/2).
func (r Rate) Equal(o Rate) bool { return int64(r.Num)*int64(o.Den) == int64(o.Num)*int64(r.Den) }

// String is "25", "30000/1001" or "unknown".
func (r Rate) String() string {
	switch {
	case !r.Known():
		return "unknown"
	case r.Den == 1:
		return strconv.Itoa(r.Num)
	}
	return strconv.Itoa(r.Num) + "/" + strconv.Itoa(r.Den)
}

// ParseRate parses "25/1" or "30000/1001"; anything else is the zero Rate.
func ParseRate(s string) Rate {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		b = "1"
	}
	n, err1 := strconv.Atoi(a)
	d, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || n <= 0 || d <= 0 {
		return Rate{}
	}
	return Rate{n, d}
}

// ffprobe's JSON (-show_format -show_streams), the fields used.
type probeJSON struct {
	Streams []struct {
		Index       int    `json:"index"`
		CodecName   string `json:"codec_name"`
		CodecType   string `json:"codec_type"`
		CodecTag    string `json:"codec_tag_string"`
		Width       int    `json:"width"`
		Height      int    `json:"height"`
		PixFmt      string `json:"pix_fmt"`
		FieldOrder  string `json:"field_order"`
		RFrameRate  string `json:"r_frame_rate"`
		AvgRate     string `json:"avg_frame_rate"`
		NbFrames    string `json:"nb_frames"`
		StartTime   string `json:"start_time"`
		Disposition struct {
			AttachedPic int `json:"attached_pic"`
		} `json:"disposition"`
		Tags struct {
			Rotate string `json:"rotate"`
		} `json:"tags"`
		SideData []struct {
			Type     string   `json:"side_data_type"`
			Rotation *float64 `json:"rotation"`
		} `json:"side_data_list"`
	} `json:"streams"`
	Format struct {
		Name      string `json:"format_name"`
		StartTime string `json:"start_time"`
	} `json:"format"`
}

// Probe describes the input at path, a local file, or, when path is "", the
// input whose first bytes are head (ffprobe reads them on its stdin; enough
// for the stream headers, not for the length of a stream without an index).
func (t *Tools) Probe(ctx context.Context, path string, head []byte) (*Info, error) {
	args := []string{"-hide_banner", "-loglevel", "error", "-protocol_whitelist", ProtocolWhitelist,
		"-print_format", "json", "-show_format", "-show_streams"}
	cmd := exec.CommandContext(ctx, t.FFprobe)
	if path != "" {
		args = append(args, "-i", "file:"+path)
	} else {
		args = append(args, "-i", "pipe:0")
		cmd.Stdin = bytes.NewReader(head)
	}
	cmd.Args = append(cmd.Args, args...)
	setProcAttr(cmd)
	var stdout bytes.Buffer
	stderr := newTail()
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, fmt.Errorf("running ffprobe: %w", err)
	}
	if err != nil {
		return nil, stderr.failure("ffprobe", err)
	}
	var j probeJSON
	if err := json.Unmarshal(stdout.Bytes(), &j); err != nil {
		return nil, fmt.Errorf("%w: ffprobe's output: %w", ErrUndecodable, err)
	}
	return j.info()
}

func (j *probeJSON) info() (*Info, error) {
	var others []string
	for _, s := range j.Streams {
		if s.CodecType != "video" || s.Disposition.AttachedPic != 0 {
			others = append(others, strings.TrimSpace(s.CodecType+" "+s.CodecName))
			continue
		}
		if s.CodecName == "" || s.CodecName == "none" {
			return nil, fmt.Errorf("%w: unsupported video codec (tag %q): this ffmpeg has no decoder for it", ErrUndecodable, s.CodecTag)
		}
		if s.Width <= 0 || s.Height <= 0 || s.PixFmt == "" {
			return nil, fmt.Errorf("%w: the %s stream has no frame size or pixel format (truncated or corrupt?)", ErrUndecodable, s.CodecName)
		}
		f, err := OutputFormat(s.PixFmt)
		if err != nil {
			return nil, err
		}
		in := &Info{
			Container: j.Format.Name, Codec: s.CodecName, Stream: s.Index,
			Width: s.Width, Height: s.Height, PixFmt: s.PixFmt, Format: f, Frames: -1,
			Interlaced: s.FieldOrder == "tt" || s.FieldOrder == "bb" || s.FieldOrder == "tb" || s.FieldOrder == "bt",
		}
		if in.Rate = ParseRate(s.AvgRate); !in.Rate.Known() {
			in.Rate = ParseRate(s.RFrameRate)
		}
		base := ParseRate(s.RFrameRate)
		in.ConstantRate = in.Rate.Known() && base.Known() && in.Rate.Equal(base)
		if n, err := strconv.Atoi(s.NbFrames); err == nil && n > 0 {
			in.Frames = n
		}
		stream, errS := strconv.ParseFloat(s.StartTime, 64)
		format, errF := strconv.ParseFloat(j.Format.StartTime, 64)
		if errS == nil && errF == nil && stream > format {
			in.StartOffset = stream - format
		}
		rot := 0.0
		if r, err := strconv.ParseFloat(s.Tags.Rotate, 64); err == nil {
			rot = -r // the tag is clockwise, the display matrix counter-clockwise
		}
		for _, sd := range s.SideData {
			if sd.Type == "Display Matrix" && sd.Rotation != nil {
				rot = *sd.Rotation
			}
		}
		in.Rotation = ((int(math.Round(rot/90))*90)%360 + 360) % 360
		if in.Rotation == 90 || in.Rotation == 270 {
			in.Width, in.Height = in.Height, in.Width
		}
		return in, nil
	}
	if len(others) == 0 {
		return nil, fmt.Errorf("%w: no streams (%s)", ErrUndecodable, j.Format.Name)
	}
	return nil, fmt.Errorf("%w: no video stream, only %s", ErrUndecodable, strings.Join(others, ", "))
}

// String describes the stream for logs, e.g. "h264 1920x1080 yuv420p 25 fps".
func (in *Info) String() string {
	s := fmt.Sprintf("%s %dx%d %s %s fps", in.Codec, in.Width, in.Height, in.PixFmt, in.Rate)
	if in.Rotation != 0 {
		s += fmt.Sprintf(" rotated %d°", in.Rotation)
	}
	if in.Interlaced {
		s += " interlaced"
	}
	return s
}
