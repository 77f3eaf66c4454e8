package command

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/worker/decode"
	"github.com/vmafx/vmafx/worker/encode"
	"github.com/vmafx/vmafx/worker/fetch"
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

// parseEncode parses the "encode" flags; each has an environment twin.
func parseEncode(args []string, env func(string) string, out io.Writer) (*encodeConfig, error) {
	fs := flag.NewFlagSet("vmafx-worker encode", flag.ContinueOnError)
	fs.SetOutput(out)
	str := func(name, def, usage string) *string {
		if v := env(envName(name)); v != "" {
			def = v
		}
		return fs.String(name, def, usage+" (env "+envName(name)+")")
	}
	num := func(name string, usage string) *int { return fs.Int(name, 0, usage+" (env "+envName(name)+")") }
	c := &encodeConfig{}
	ref := str("reference", "", "`URI` of the video to encode")
	output := str("output", "", "`URI` to write the encode to (Matroska): file://, s3://, gs:// or azure://")
	encoder := str("encoder", "", "ffmpeg `encoder`: libx264, libx265 or libsvtav1")
	rc := str("rate-control", "crf", "crf or qp")
	value := num("value", "the crf or qp `value`")
	preset := str("preset", "", "the encoder's speed `preset`")
	width := num("width", "width of the encode in pixels; 0 keeps the aspect ratio")
	height := num("height", "height of the encode in pixels")
	rawWidth := num("raw-width", "width of a raw YUV reference")
	rawHeight := num("raw-height", "height of a raw YUV reference")
	pixfmt := str("pixel-format", "yuv420p", "pixel format of a raw YUV reference")
	creds := str("credentials-dir", "", "`directory` of the object store's keys, one file per key")
	s3Endpoint := str("s3-endpoint", "", "S3 endpoint `URL`")
	s3Region := str("s3-region", "", "S3 `region`")
	s3PathStyle := fs.Bool("s3-path-style", env(envName("s3-path-style")) == "true", "address S3 buckets path-style")
	term := str("termination-log", "", "`file` for the result (default "+defaultTerminationLog+")")
	fs.IntVar(&c.verbosity, "v", 0, "log verbosity")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for name, p := range map[string]*int{"value": value, "width": width, "height": height, "raw-width": rawWidth, "raw-height": rawHeight} {
		if v := env(envName(name)); v != "" && !flagSet(fs, name) {
			if _, err := fmt.Sscan(v, p); err != nil {
				return c, badRequest("%s=%q is not a number", envName(name), v)
			}
		}
	}
	c.terminationLog, c.terminationSet = defaultTerminationLog, *term != ""
	if c.terminationSet {
		c.terminationLog = *term
	}
	c.reference, c.output = *ref, *output
	c.raw = encode.Raw{Width: *rawWidth, Height: *rawHeight, PixelFormat: *pixfmt}
	c.settings = encode.Settings{Encoder: vmafxv1.LadderEncoder(*encoder), RateControl: vmafxv1.RateControl(*rc),
		Value: *value, Preset: *preset, Width: *width, Height: *height}
	c.store = fetch.StoreOptions{CredentialsDir: *creds, S3Endpoint: *s3Endpoint, S3Region: *s3Region}
	if flagSet(fs, "s3-path-style") || env(envName("s3-path-style")) != "" {
		c.store.S3PathStyle = s3PathStyle
	}
	switch {
	case c.reference == "":
		return c, badRequest("--reference is required")
	case c.output == "":
		return c, badRequest("--output is required")
	case (c.raw.Width > 0) != (c.raw.Height > 0):
		return c, badRequest("set --raw-width and --raw-height together")
	}
	if err := c.settings.Validate(); err != nil {
		return c, badRequest("%v", err)
	}
	return c, nil
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// runEncode runs the encode command: fetch the reference, encode it, write the encode
// to --output, and report its size and bitrate as an EncodeResult.
func runEncode(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	start := time.Now()
	cfg, err := parseEncode(args, env, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return report.ExitOK
	}
	log := newLogger(stderr, cfg.verbosity, false)
	var res *encode.Result
	var output string
	if err == nil {
		res, output, err = encodeReference(ctx, cfg, env)
	}
	r := &vmafxv1.EncodeResult{Version: vmafxv1.EncodeResultVersion, Encoder: string(cfg.settings.Encoder), WallSeconds: round3(time.Since(start).Seconds())}
	code := report.ExitOK
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%s: %w", fmt.Sprintf("encoding cancelled (%v)", context.Cause(ctx)), err)
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
	line, _ := json.Marshal(r)
	line = append(line, '\n')
	if werr := report.WriteTermination(cfg.terminationLog, cfg.terminationSet, line); werr != nil && cfg.terminationSet {
		log.Error(werr, "Cannot write the termination message", "path", cfg.terminationLog)
	}
	_, _ = stdout.Write(line)
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
