package encode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/media/decode"
)

// Settings are one rung's encode settings.
type Settings struct {
	Encoder     vmafxv1.LadderEncoder
	RateControl vmafxv1.RateControl
	Value       int
	Preset      string
	// Height of the encode; Width 0 keeps the input's aspect ratio (an even width).
	Width, Height int
}

// Raw is the geometry of a raw YUV input; zero for self-describing inputs.
type Raw struct {
	Width, Height int
	PixelFormat   string
}

// Result measures an encode.
type Result struct {
	Width, Height int
	Frames        int
	Seconds       float64
	Bytes         int64
	Bitrate       int64
}

// ErrBadSettings marks settings that no encode can use.
var ErrBadSettings = errors.New("bad encode settings")

// Validate checks s.
func (s Settings) Validate() error {
	maxValue := 51
	switch s.Encoder {
	case vmafxv1.EncoderX264, vmafxv1.EncoderX265:
	case vmafxv1.EncoderSVTAV1:
		maxValue = 63
		if s.RateControl == vmafxv1.RateQP {
			return fmt.Errorf("%w: libsvtav1 encodes with crf only", ErrBadSettings)
		}
	default:
		return fmt.Errorf("%w: unknown encoder %q (libx264, libx265, libsvtav1)", ErrBadSettings, s.Encoder)
	}
	if s.RateControl != vmafxv1.RateCRF && s.RateControl != vmafxv1.RateQP {
		return fmt.Errorf("%w: rate control %q (crf, qp)", ErrBadSettings, s.RateControl)
	}
	if s.Value < 0 || s.Value > maxValue {
		return fmt.Errorf("%w: %s %d is out of 0..%d for %s", ErrBadSettings, s.RateControl, s.Value, maxValue, s.Encoder)
	}
	if s.Height < 16 || s.Height%2 != 0 || s.Width < 0 || s.Width%2 != 0 || (s.Width > 0 && s.Width < 16) {
		return fmt.Errorf("%w: size %dx%d: want an even height of 16 or more and an even width (0: keep the aspect ratio)", ErrBadSettings, s.Width, s.Height)
	}
	return nil
}

// Args returns ffmpeg's arguments to encode in to out with s; ffmpeg reports its
// progress (frame=N lines) on stdout.
func Args(in, out string, raw Raw, s Settings) []string {
	// -xerror: a reference that does not decode cleanly (a truncated file) fails the
	// encode rather than giving a shorter rung that would not pair with the reference.
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-nostats", "-xerror", "-progress", "pipe:1"}
	if raw.Width > 0 {
		args = append(args, "-f", "rawvideo", "-pixel_format", raw.PixelFormat, "-video_size", fmt.Sprintf("%dx%d", raw.Width, raw.Height))
	}
	width := "-2" // the aspect ratio kept, rounded to an even width
	if s.Width > 0 {
		width = strconv.Itoa(s.Width)
	}
	// The same protocols as decoding (decode.ProtocolWhitelist): the reference is a
	// fetched file, and a playlist in it must not open anything else.
	args = append(args, "-protocol_whitelist", decode.ProtocolWhitelist, "-i", "file:"+in, "-map", "0:v:0", "-an", "-sn", "-dn",
		"-vf", "scale="+width+":"+strconv.Itoa(s.Height)+":flags=bicubic", "-c:v", string(s.Encoder))
	v := strconv.Itoa(s.Value)
	switch {
	case s.Encoder == vmafxv1.EncoderX265 && s.RateControl == vmafxv1.RateQP:
		args = append(args, "-x265-params", "qp="+v+":log-level=error")
	case s.Encoder == vmafxv1.EncoderX265:
		args = append(args, "-crf", v, "-x265-params", "log-level=error")
	default:
		args = append(args, "-"+string(s.RateControl), v)
	}
	if s.Preset != "" {
		args = append(args, "-preset", s.Preset)
	}
	return append(args, "-f", "matroska", "-y", "file:"+out)
}

// Run encodes the video at in into out (a local file) with s and measures the encode.
func Run(ctx context.Context, tools *decode.Tools, in, out string, raw Raw, s Settings) (*Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, tools.FFmpeg, Args(in, out, raw, s)...)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{buf: &stderr, limit: 4096}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting ffmpeg: %w", decode.ErrNoFFmpeg, err)
	}
	frames := progressFrames(stdout)
	err = cmd.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: ffmpeg could not encode the reference with %s: %w: %s", decode.ErrUndecodable, s.Encoder, err, lastLines(stderr.String()))
	}
	if frames <= 0 {
		return nil, fmt.Errorf("%w: the reference has no video frames", decode.ErrUndecodable)
	}
	info, err := tools.Probe(ctx, out, nil)
	if err != nil {
		return nil, fmt.Errorf("probing the encode: %w", err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return nil, err
	}
	if !info.Rate.Known() {
		return nil, fmt.Errorf("%w: the encode has no frame rate", decode.ErrUndecodable)
	}
	r := &Result{Width: info.Width, Height: info.Height, Frames: frames, Bytes: fi.Size()}
	r.Seconds = float64(frames) * float64(info.Rate.Den) / float64(info.Rate.Num)
	r.Bitrate = int64(float64(r.Bytes*8)/r.Seconds + 0.5)
	return r, nil
}

// progressFrames reads ffmpeg's -progress output to its end and returns the last
// frame count it reported.
func progressFrames(r io.Reader) int {
	frames := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "frame="); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				frames = n
			}
		}
	}
	_, _ = io.Copy(io.Discard, r)
	return frames
}

// limitedBuffer keeps the last limit bytes written to it, or so.
type limitedBuffer struct {
	buf   *bytes.Buffer
	limit int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.buf.Write(p)
	if l.buf.Len() > 2*l.limit {
		tail := append([]byte(nil), l.buf.Bytes()[l.buf.Len()-l.limit:]...)
		l.buf.Reset()
		l.buf.Write(tail)
	}
	return len(p), nil
}

// lastLines returns the last few lines of ffmpeg's error output, on one line.
func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	out := strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
	if out == "" {
		return "(no message)"
	}
	return out
}
