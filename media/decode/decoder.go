package decode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/vmafx/vmafx/vmaf"
)

// Input is what ffmpeg decodes: a local file by path, or a stream.
type Input struct {
	// Path is a local file; ffmpeg may seek in it.
	Path string
	// Stream, when Path is empty, is the whole input, read once from the
	// start and fed to ffmpeg's stdin. Its reads must fail, not block, once
	// Stop has been called.
	Stream io.Reader
	// Stop, if set, stops Stream when the decoder is closed early (it
	// cancels the fetch's context).
	Stop func()
	// Stream index to decode (Info.Stream); -1 means the first video stream.
	Index int
	// Raw, when set, says that the input is raw planar video of this
	// geometry, which ffmpeg cannot probe; Y4M says it is YUV4MPEG2.
	Raw *vmaf.VideoInfo
	Y4M bool
	// Seek, when positive, starts decoding at this many seconds after the
	// input's start (ffmpeg's input -ss: the demuxer seeks to the keyframe at
	// or before it, and the frames before it are decoded and dropped). Only
	// for a local file (Path).
	Seek float64
}

// Options say what the decoder writes.
type Options struct {
	// Format is the output pixel format, normally Info.Format.
	Format vmaf.PixelFormat
	// Width and Height, when set, scale every frame to this size with
	// bicubic interpolation (scale=W:H:flags=bicubic, the convention of
	// libvmaf users for a distorted video of another size).
	Width, Height int
	// Deinterlace applies bwdif to frames marked interlaced, one frame out
	// per frame in; progressive frames pass untouched.
	Deinterlace bool
	// HW is the hardware decoder to try (Tools.ChooseHW), for an encoded local file
	// (Input.Path) only: a stream cannot be read again if the hardware decoder fails to
	// start, so it decodes in software.
	HW HW
}

// Decoder is a running ffmpeg whose frames are read as a vmaf.FrameSource.
// Close it, also after an error: that kills ffmpeg and waits for it.
type Decoder struct {
	cmd    *exec.Cmd
	y4m    *vmaf.Y4MReader
	out    *endReader // ffmpeg's stdout
	stderr *tail
	ctx    context.Context
	stop   func()

	feedDone chan struct{}
	feedErr  error // a failure to read the input stream; set before feedDone closes

	waitOnce sync.Once
	waitErr  error

	frames int
	err    error // sticky, once the frames ended

	decoder  string // Software, NVDEC or VAAPI
	fallback string // why the hardware decoder was given up; "" if it was not
}

// ProtocolWhitelist is the protocols every ffmpeg and ffprobe the worker runs may open:
// the local file it was given and its pipes. An input is a file the worker fetched
// itself, through its own checks; a playlist or concat file inside it that names
// http://, tcp:// or another file would let the video reach what the worker may not.
const ProtocolWhitelist = "file,pipe"

// Args returns ffmpeg's arguments for in and o (without the program name).
func Args(in Input, o Options) []string {
	args := []string{"-hide_banner", "-nostats", "-loglevel", "error", "-xerror",
		"-protocol_whitelist", ProtocolWhitelist}
	switch {
	case in.Raw != nil:
		args = append(args, "-f", "rawvideo", "-pix_fmt", in.Raw.Format.String(),
			"-video_size", strconv.Itoa(in.Raw.Width)+"x"+strconv.Itoa(in.Raw.Height))
	case in.Y4M:
		args = append(args, "-f", "yuv4mpegpipe")
	}
	if in.Raw == nil && !in.Y4M && in.Path != "" {
		args = append(args, hwArgs(o.HW)...)
	}
	if in.Path != "" {
		if in.Seek > 0 {
			args = append(args, "-ss", strconv.FormatFloat(in.Seek, 'f', 6, 64))
		}
		args = append(args, "-nostdin", "-i", "file:"+in.Path)
	} else {
		args = append(args, "-i", "pipe:0")
	}
	stream := "0:v:0"
	if in.Index >= 0 && in.Raw == nil && !in.Y4M {
		stream = "0:" + strconv.Itoa(in.Index)
	}
	args = append(args, "-map", stream)
	var filters string
	if o.Deinterlace {
		filters = "bwdif=mode=send_frame:parity=auto:deint=interlaced"
	}
	if o.Width > 0 && o.Height > 0 {
		if filters != "" {
			filters += ","
		}
		filters += fmt.Sprintf("scale=%d:%d:flags=bicubic", o.Width, o.Height)
	}
	if filters != "" {
		args = append(args, "-vf", filters)
	}
	// passthrough: every decoded frame once, whatever the timestamps say (a
	// constant-rate output would duplicate or drop frames to fill gaps).
	// -strict -1: the high bit depth Y4M colour spaces are not "official".
	return append(args, "-pix_fmt", o.Format.String(), "-fps_mode", "passthrough",
		"-strict", "-1", "-f", "yuv4mpegpipe", "pipe:1")
}

// Start runs ffmpeg on in and reads the stream header of its output. The
// process is killed when ctx ends or the decoder is closed. When o.HW names a
// hardware decoder and ffmpeg fails before its first output (no CUDA, no VA-API
// driver, a codec the hardware lacks), Start tries once more in software;
// Decoder.Fallback says why.
func (t *Tools) Start(ctx context.Context, in Input, o Options) (*Decoder, error) {
	if !o.Format.Valid() {
		return nil, fmt.Errorf("%w: no output pixel format", vmaf.ErrUnknownPixelFormat)
	}
	if o.HW.Name == "" || in.Path == "" || in.Raw != nil || in.Y4M {
		o.HW = HW{Name: Software}
	}
	if o.HW.Name == Software {
		return t.start(ctx, in, o)
	}
	// The hardware try must not stop the input: the software one may need it.
	try := in
	try.Stop = nil
	d, err := t.start(ctx, try, o)
	if err == nil {
		d.stop = in.Stop
		return d, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	hw := o.HW.Name
	o.HW = HW{Name: Software}
	d, err2 := t.start(ctx, in, o)
	if err2 != nil {
		return nil, err2
	}
	d.fallback = fmt.Sprintf("%s decoding failed to start, decoded in software: %v", hw, err)
	return d, nil
}

// start is Start with one decoder, o.HW.
func (t *Tools) start(ctx context.Context, in Input, o Options) (*Decoder, error) {
	cmd := exec.CommandContext(ctx, t.FFmpeg, Args(in, o)...)
	setProcAttr(cmd)
	d := &Decoder{cmd: cmd, stderr: newTail(), ctx: ctx, stop: in.Stop, feedDone: make(chan struct{}), decoder: o.HW.Name}
	cmd.Stderr = d.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stdinW *os.File
	if in.Path == "" {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdin, stdinW = r, w
		defer r.Close() // the child has its copy
	}
	if err := cmd.Start(); err != nil {
		if stdinW != nil {
			stdinW.Close()
		}
		return nil, fmt.Errorf("starting ffmpeg: %w", err)
	}
	if stdinW != nil {
		go d.feed(in.Stream, stdinW)
	} else {
		close(d.feedDone)
	}
	d.out = &endReader{r: stdout}
	y, err := vmaf.OpenY4M(d.out)
	if err != nil {
		err = d.finish(err)
		d.Close()
		return nil, err
	}
	d.y4m = y
	return d, nil
}

// feed copies the input to ffmpeg's stdin and closes it. A failure to read
// the input kills ffmpeg, so that a lost connection is not taken for the end
// of the video; a failure to write means ffmpeg has exited, which its exit
// status explains.
func (d *Decoder) feed(src io.Reader, w *os.File) {
	defer close(d.feedDone)
	defer w.Close()
	buf := make([]byte, 1<<16)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			d.feedErr = err
			d.cmd.Process.Kill()
			return
		}
	}
}

// wait waits for ffmpeg to exit, once.
func (d *Decoder) wait() error {
	d.waitOnce.Do(func() { d.waitErr = d.cmd.Wait() })
	return d.waitErr
}

// finish ends the decoder after its output ended with readErr and returns
// the error that explains the end: the input stream's failure, ffmpeg's, a
// video without frames, or readErr itself (io.EOF at a normal end).
func (d *Decoder) finish(readErr error) error {
	ended := d.out.ended()
	if !ended {
		// ffmpeg still writes, or would: stop it, it may be blocked on the pipe.
		d.cmd.Process.Kill()
	}
	waitErr := d.wait()
	<-d.feedDone
	switch {
	case d.ctx.Err() != nil:
		return d.ctx.Err()
	case d.feedErr != nil:
		return d.feedErr
	case !ended:
		return readErr
	case waitErr != nil:
		return d.stderr.failure("ffmpeg", waitErr)
	case d.frames == 0:
		return fmt.Errorf("%w: ffmpeg decoded no frames", vmaf.ErrNoFrames)
	}
	return readErr
}

// endReader notes whether its reader reached the end.
type endReader struct {
	r   io.Reader
	end atomic.Bool
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.end.Store(true)
	}
	return n, err
}

func (e *endReader) ended() bool { return e.end.Load() }

// Name says which decoder runs: Software, NVDEC or VAAPI.
func (d *Decoder) Name() string { return d.decoder }

// Fallback is why the hardware decoder asked for was given up for software, on one
// line; empty when it was not.
func (d *Decoder) Fallback() string { return d.fallback }

// Info returns the geometry and pixel format of the decoded frames.
func (d *Decoder) Info() vmaf.VideoInfo { return d.y4m.Info() }

// Header returns the YUV4MPEG2 stream header ffmpeg wrote.
func (d *Decoder) Header() vmaf.Y4MHeader { return d.y4m.Header() }

// ReadFrame reads the next decoded frame. See vmaf.FrameSource; after the
// last frame it returns io.EOF only if ffmpeg exited cleanly.
func (d *Decoder) ReadFrame(f *vmaf.Frame) error {
	if d.err != nil {
		return d.err
	}
	err := d.y4m.ReadFrame(f)
	if err == nil {
		d.frames++
		return nil
	}
	d.err = d.finish(err)
	return d.err
}

// Close kills ffmpeg if it still runs, stops the input stream and waits for
// both. It is safe to call more than once.
func (d *Decoder) Close() error {
	d.cmd.Process.Kill() // by PID; a no-op once ffmpeg has exited and been waited for
	if d.stop != nil {
		d.stop()
	}
	_ = d.wait() // Close reports nothing: Next already returned the decode error
	<-d.feedDone
	return nil
}

// MaxRSS is ffmpeg's peak resident memory in bytes, once it has exited
// (after Close); 0 before, or where the system does not say.
func (d *Decoder) MaxRSS() int64 {
	if d.cmd.ProcessState == nil {
		return 0
	}
	return maxRSS(d.cmd.ProcessState)
}

// PID is ffmpeg's process ID.
func (d *Decoder) PID() int { return d.cmd.Process.Pid }
