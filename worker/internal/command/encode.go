package command

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/media/encode"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/worker/internal/report"
	"github.com/vmafx/vmafx/worker/internal/source"
)

// encodeConfig is the parsed "encode" command line.
type encodeConfig struct {
	reference, output string
	raw               encode.Raw
	settings          encode.Settings
	store             fetch.StoreOptions
	spool             source.Spool
	terminationLog    string
	terminationSet    bool
	verbosity         int
}

// encodeSummary is the first paragraph of "vmafx-worker encode --help".
const encodeSummary = `encode encodes the reference at one rung of a VmafxLadder with ffmpeg, writes the
encode (Matroska) to --output, and prints, and writes to the termination message, one
JSON line with its size and bitrate.`

// encodeFlags are the "encode" flags; their values land in c.
type encodeFlags struct {
	set *cli.Set
	c   encodeConfig
}

func newEncodeFlags() *encodeFlags {
	f := &encodeFlags{set: newFlags("encode", encodeSummary)}
	s, c := f.set, &f.c
	str := func(p *string, name, def, usage string) { s.String(p, name, envName(name), def, usage) }
	count := func(p *int, name, usage string) { s.Int(p, name, envName(name), 0, 0, cli.NoMax, usage) }
	str(&c.reference, "reference", "", "`URI` of the video to encode")
	str(&c.output, "output", "", "`URI` to write the encode to (Matroska): file://, s3://, gs:// or azure://")
	s.Func("encoder", envName("encoder"), "", "ffmpeg `encoder`: libx264, libx265 or libsvtav1", func(v string) error {
		c.settings.Encoder = vmafxv1.LadderEncoder(v)
		return nil
	})
	s.Func("rate-control", envName("rate-control"), "crf", "crf or qp", func(v string) error {
		c.settings.RateControl = vmafxv1.RateControl(v)
		return nil
	})
	count(&c.settings.Value, "value", "the crf or qp `value`")
	str(&c.settings.Preset, "preset", "", "the encoder's speed `preset`")
	count(&c.settings.Width, "width", "width of the encode in pixels; 0 keeps the aspect ratio")
	count(&c.settings.Height, "height", "height of the encode in pixels")
	count(&c.raw.Width, "raw-width", "width of a raw YUV reference")
	count(&c.raw.Height, "raw-height", "height of a raw YUV reference")
	str(&c.raw.PixelFormat, "pixel-format", "yuv420p", "pixel `format` of a raw YUV reference")
	addStoreFlags(s, &c.store)
	addDefaultCredentialsFlag(s, &c.store)
	addResultFlags(s, &c.terminationLog, &c.verbosity)
	return f
}

// config resolves the parsed flags with their env twins, turns them into a request and
// checks it (fromRequest). The returned config is never nil: on error it says at least
// where to report.
func (f *encodeFlags) config(env func(string) string) (*encodeConfig, error) {
	err := f.set.Resolve(cli.Getenv(env))
	c := f.c
	c.terminationSet = f.set.Given("termination-log")
	switch {
	case err != nil:
		return &c, badRequest("%v", err)
	case c.reference == "":
		return &c, badRequest("--reference (or %s) is required", envName("reference"))
	case c.output == "":
		return &c, badRequest("--output (or %s) is required", envName("output"))
	}
	req := vmafxv1.NewWorkerRequest()
	req.Encode = &vmafxv1.EncodeRequest{Reference: c.reference, Output: c.output,
		Encoder: c.settings.Encoder, RateControl: c.settings.RateControl, Value: c.settings.Value, Preset: c.settings.Preset,
		Width: c.settings.Width, Height: c.settings.Height, RawWidth: c.raw.Width, RawHeight: c.raw.Height, PixelFormat: c.raw.PixelFormat}
	req.Store = requestStore(c.store)
	return &c, c.fromRequest(req)
}

// fromRequest sets what req's encode asks for in c, and checks it.
func (c *encodeConfig) fromRequest(req *vmafxv1.WorkerRequest) error {
	if err := req.Validate(); err != nil {
		return badRequest("%v", err)
	}
	e := req.Encode
	c.reference, c.output = e.Reference, e.Output
	c.settings = encode.Settings{Encoder: e.Encoder, RateControl: cmp.Or(e.RateControl, vmafxv1.RateCRF), Value: e.Value,
		Preset: e.Preset, Width: e.Width, Height: e.Height}
	c.raw = encode.Raw{Width: e.RawWidth, Height: e.RawHeight, PixelFormat: cmp.Or(e.PixelFormat, "yuv420p")}
	c.store = storeOptions(req.Store, c.store.DefaultCredentials)
	if (c.raw.Width > 0) != (c.raw.Height > 0) {
		return badRequest("set --raw-width and --raw-height together")
	}
	if err := c.settings.Validate(); err != nil {
		return badRequest("%v", err)
	}
	return nil
}

func (w *worker) encodeCommand() *cobra.Command {
	f := newEncodeFlags()
	return w.command(f.set, "encode", "encode the reference at one rung of a ladder", encodeSummary,
		[]string{"vmafx-worker encode --reference URI --output URI --encoder E --value N --height H [flags]"},
		func([]string) int { return w.encode(f.config(w.env)) },
		func(err error) int {
			cfg, _ := f.config(w.env) // the settings that parse still say where to report
			return w.encode(cfg, err)
		})
}

// encode runs the encode command with the parsed command line cfg, or reports err: fetch
// the reference, encode it, write the encode to --output, and report its size and bitrate
// as an EncodeResult.
func (w *worker) encode(cfg *encodeConfig, err error) int {
	start := time.Now()
	log := newLogger(w.stderr, cfg.verbosity, false)
	var res *encode.Result
	var output string
	if err == nil {
		res, output, err = encodeReference(w.ctx, cfg, w.env)
	}
	r := &vmafxv1.EncodeResult{Version: vmafxv1.EncodeResultVersion, Encoder: string(cfg.settings.Encoder), WallSeconds: round3(time.Since(start).Seconds())}
	code := report.ExitOK
	if err != nil {
		if w.ctx.Err() != nil {
			err = fmt.Errorf("%s: %w", fmt.Sprintf("encoding cancelled (%v)", context.Cause(w.ctx)), err)
		}
		var reason string
		reason, code = report.Classify(err)
		r.Error = &vmafxv1.WorkerError{Reason: reason, Message: oneLine(err.Error(), 1024)}
		log.Error(nil, "Encoding failed", "reason", reason, "message", r.Error.Message, "exitCode", code)
	} else {
		r.Output, r.Width, r.Height, r.Frames = output, res.Width, res.Height, res.Frames
		r.Seconds, r.Bytes, r.Bitrate = round3(res.Seconds), res.Bytes, res.Bitrate
		log.Info("Encoded", "output", output, "size", fmt.Sprintf("%dx%d", res.Width, res.Height), "frames", res.Frames,
			"bytes", res.Bytes, "bitrate", res.Bitrate, "wallSeconds", r.WallSeconds)
	}
	w.emitResult(log, cfg.terminationLog, cfg.terminationSet, r)
	return code
}

// encodeReference does the work and returns the result and the output's redacted URI.
func encodeReference(ctx context.Context, cfg *encodeConfig, env func(string) string) (*encode.Result, string, error) {
	tools, err := decode.Find(env)
	if err != nil {
		return nil, "", err
	}
	stores := fetch.NewStores(cfg.store)
	defer stores.Close()
	ou, err := fetch.ParseURI(cfg.output)
	if err != nil {
		return nil, "", badRequest("--output: %v", err)
	}
	in, cleanup, err := localReference(ctx, cfg, stores)
	if err != nil {
		return nil, "", fmt.Errorf("reference: %w", err)
	}
	defer cleanup()
	tmp, err := os.CreateTemp("", "vmafx-encode-*.mkv")
	if err != nil {
		return nil, "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	res, err := encode.Run(ctx, tools, in, tmp.Name(), cfg.raw, cfg.settings)
	if err != nil {
		return nil, "", err
	}
	if err := store(ctx, tmp.Name(), ou, stores, "video/x-matroska"); err != nil {
		return nil, "", err
	}
	return res, fetch.Redact(ou), nil
}

// localReference returns a local path of the reference: its own for a file:// URI,
// else a spooled copy that cleanup removes.
func localReference(ctx context.Context, cfg *encodeConfig, stores *fetch.Stores) (string, func(), error) {
	u, err := fetch.ParseURI(cfg.reference)
	if err != nil {
		return "", nil, badRequest("--reference: %v", err)
	}
	if u.Scheme == "file" {
		if _, err := os.Stat(u.Path); err != nil {
			return "", nil, &fetch.Error{Op: "open", URI: fetch.Redact(u), Err: fmt.Errorf("%w: %w", fetch.ErrNotFound, pathCause(err))}
		}
		return u.Path, func() {}, nil
	}
	obj, err := fetch.NewMux(fetch.NewHTTP(fetch.HTTPOptions{UserAgent: "vmafx-worker/" + buildVersion()}), stores).Open(ctx, u)
	if err != nil {
		return "", nil, err
	}
	defer obj.Close()
	p, err := cfg.spool.Copy(ctx, obj, obj.Size)
	if err != nil {
		return "", nil, err
	}
	return p, func() { os.Remove(p) }, nil
}

// store writes the local file at path to u: a file:// URI through a temporary file
// renamed into place, object storage in one upload, so no reader sees half an encode.
func store(ctx context.Context, path string, u *url.URL, stores *fetch.Stores, contentType string) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	name := fetch.Redact(u)
	if u.Scheme == "file" {
		dir := filepath.Dir(u.Path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return badRequest("--output %s: %v", name, pathCause(err))
		}
		tmp, err := os.CreateTemp(dir, "."+filepath.Base(u.Path)+".*.tmp")
		if err != nil {
			return badRequest("--output %s: %v", name, pathCause(err))
		}
		_, err = io.Copy(tmp, src)
		if err == nil {
			err = tmp.Chmod(0o644)
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), u.Path)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("output %s: %w", name, pathCause(err))
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := stores.Create(ctx, u, contentType)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, src); err != nil {
		cancel() // abandons the upload: no partial object
		w.Close()
		return &fetch.Error{Op: "store", URI: name, Err: err}
	}
	return w.Close()
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
