package command

import (
	"cmp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/align"
	"github.com/vmafx/vmafx/worker/internal/worstframes"
)

// A worker run is a vmafxv1.WorkerRequest. The operator's Pods give it whole, as JSON
// ("vmafx-worker run --request JSON"); a person's flags (score, encode, ladder-report)
// fill one. Either way fromRequest turns it into the command's config and checks it, so
// a request and the flags that say the same run the same. The checks name flags; a
// request's errors name its fields instead (requestError).

// runSummary is the first paragraph of "vmafx-worker run --help".
const runSummary = `run runs the worker request given as JSON in --request (docs/worker.md, "The worker
request"): a score, a step of a job split into chunks, a ladder's encode or its report,
as the score, encode and ladder-report commands run them. This is what the operator's
worker Pods run. The flags below are how this process runs, not what it does.`

// runFlags are the "run" flags: the request and the runtime settings of every mode.
type runFlags struct {
	set     *cli.Set
	request string
	c       scoreConfig
}

func newRunFlags() *runFlags {
	f := &runFlags{set: newFlags("run", runSummary)}
	f.set.String(&f.request, "request", envName("request"), "", "the worker request, a vmafx.dev/v1 WorkerRequest as `JSON`")
	addRuntimeFlags(f.set, &f.c)
	return f
}

func (w *worker) runCommand() *cobra.Command {
	f := newRunFlags()
	return w.command(f.set, "run", "run a worker request (what the operator's Pods run)", runSummary,
		[]string{"vmafx-worker run --request JSON [flags]"},
		func([]string) int { return w.run(f, nil) },
		func(err error) int { return w.run(f, err) })
}

// run runs the request of the parsed flags f, or reports err. A request that cannot be
// read is reported as a failed score, the operator's most common reader.
func (w *worker) run(f *runFlags, err error) int {
	req, cfg, err := f.config(w.env, err)
	cfg.command = "run"
	switch {
	case err != nil || req.Score != nil:
		return w.score(cfg, err)
	case req.Encode != nil:
		return w.encode(cfg.encodeConfig(req))
	default:
		return w.ladderReport(cfg.ladderReportConfig(req))
	}
}

// encodeConfig is the run of req's encode with c's runtime settings.
func (c *scoreConfig) encodeConfig(req *vmafxv1.WorkerRequest) (*encodeConfig, error) {
	ec := &encodeConfig{spool: c.spool, store: c.store, terminationLog: c.terminationLog, terminationSet: c.terminationSet, verbosity: c.verbosity}
	return ec, requestError(ec.fromRequest(req), encodeFields)
}

// ladderReportConfig is the run of req's ladder report with c's runtime settings.
func (c *scoreConfig) ladderReportConfig(req *vmafxv1.WorkerRequest) (*ladderReportConfig, error) {
	lr := &ladderReportConfig{store: c.store, terminationLog: c.terminationLog, terminationSet: c.terminationSet, verbosity: c.verbosity}
	return lr, requestError(lr.fromRequest(req), ladderReportFields)
}

// config reads the flags and the request; for a score, it is the score's config. The
// config is never nil.
func (f *runFlags) config(env func(string) string, err error) (*vmafxv1.WorkerRequest, *scoreConfig, error) {
	rerr := f.set.Resolve(cli.Getenv(env))
	c := f.c
	c.terminationSet = f.set.Given("termination-log")
	switch {
	case err != nil:
		return nil, &c, err
	case rerr != nil:
		return nil, &c, badRequest("%v", rerr)
	case f.request == "":
		return nil, &c, badRequest("--request (or %s) is required", envName("request"))
	}
	if err := c.runtime(f.set); err != nil {
		return nil, &c, err
	}
	req, err := vmafxv1.ParseWorkerRequest([]byte(f.request))
	if err != nil {
		return nil, &c, badRequest("--request: %v", err)
	}
	if req.Score != nil {
		return req, &c, requestError(c.fromRequest(req), scoreFields)
	}
	return req, &c, nil
}

// fromRequest sets what req's score asks for in c, and checks it.
func (c *scoreConfig) fromRequest(req *vmafxv1.WorkerRequest) error {
	if err := req.Validate(); err != nil {
		return badRequest("%v", err)
	}
	r := req.Score
	var err error
	if c.reference, err = fetch.ParseURI(r.Reference); err != nil {
		return badRequest("--reference: %v", err)
	}
	if c.distorted, err = fetch.ParseURI(r.Distorted); err != nil {
		return badRequest("--distorted: %v", err)
	}
	c.raw = rawFlags{width: r.Width, height: r.Height}
	if c.raw.pixelFormat, err = vmaf.ParsePixelFormat(cmp.Or(r.PixelFormat, "yuv420p")); err != nil {
		return badRequest("--pixel-format: %v", err)
	}
	if c.features, err = parseFeatureNames(r.Features); err != nil {
		return badRequest("--features: %v", err)
	}
	c.model = cmp.Or(r.Model, vmaf.DefaultModel)
	c.output, c.outputFormat = r.Output, cmp.Or(r.OutputFormat, "json")
	c.start, c.count = 0, 0
	if fr := r.Frames; fr != nil {
		c.start, c.count = fr.Start, fr.Count
	}
	c.subsample, c.bitDepth, c.deinterlace = max(r.Subsample, 1), r.ScoringBitDepth, r.Deinterlace
	c.encode = vmaf.Encode{}
	if e := r.Encode; e != nil {
		c.encode = vmaf.Encode{Width: e.Width, Height: e.Height, BitDepth: e.BitDepth}
	}
	c.align, c.refStart, c.distStart, c.autoAlign, c.autoWindow = false, 0, 0, false, 0
	if a := r.Alignment; a != nil {
		c.align, c.refStart, c.distStart, c.autoAlign, c.autoWindow = true, a.ReferenceStart, a.DistortedStart, a.Auto, a.Window
		if a.Window > align.MaxWindow { // the flag's own bound
			return badRequest("--auto-align-window %d: at most %d", a.Window, align.MaxWindow)
		}
	}
	c.worstMode = worstMode{worstFrames: vmafxv1.DefaultWorstFrames, pictures: r.Pictures,
		sceneThreshold: cmp.Or(r.SceneThreshold, worstframes.DefaultSceneThreshold)}
	if r.WorstFrames != nil {
		c.worstFrames = *r.WorstFrames
	}
	c.chunkMode = chunkMode{probe: r.Probe}
	if ch := r.Chunk; ch != nil {
		c.chunk = &vmafxv1.ChunkRange{Start: ch.Start, Count: ch.Count}
		c.totalFrames, c.chunkPart = ch.TotalFrames, ch.Part
	}
	if m := r.Merge; m != nil {
		c.mergeParts = m.Parts
	}
	c.store = storeOptions(req.Store, c.store.DefaultCredentials)
	if err := c.renditionMode.fromRequest(r, c); err != nil {
		return err
	}
	if err := c.chunkMode.check(c.output); err != nil {
		return err
	}
	if err := c.worstMode.check(c.output, c.chunk != nil || c.mergeParts > 0 || c.probe); err != nil {
		return err
	}
	return c.checkAutoAlign()
}

// parseFeatureNames parses each name as ParseFeatures parses a list: in output order,
// without repeats.
func parseFeatureNames(names []string) ([]vmaf.Feature, error) {
	var asked []vmaf.Feature
	for _, n := range names {
		f, err := vmaf.ParseFeature(n)
		if err != nil {
			return nil, err
		}
		asked = append(asked, f)
	}
	var out []vmaf.Feature
	for _, f := range vmaf.AllFeatures {
		if slices.Contains(asked, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// requestStore is the request's store of the store flags o; nil for none.
func requestStore(o fetch.StoreOptions) *vmafxv1.RequestStore {
	st := &vmafxv1.RequestStore{CredentialsDir: o.CredentialsDir, S3Endpoint: o.S3Endpoint, S3Region: o.S3Region, S3PathStyle: o.S3PathStyle}
	if st.CredentialsDir == "" && st.S3Endpoint == "" && st.S3Region == "" && st.S3PathStyle == nil {
		return nil
	}
	return st
}

// storeOptions are the object storage options of a request's store, with the operator's
// --default-credentials.
func storeOptions(st *vmafxv1.RequestStore, defaultCredentials bool) fetch.StoreOptions {
	o := fetch.StoreOptions{DefaultCredentials: defaultCredentials}
	if st != nil {
		o.CredentialsDir, o.S3Endpoint, o.S3Region, o.S3PathStyle = st.CredentialsDir, st.S3Endpoint, st.S3Region, st.S3PathStyle
	}
	return o
}

// The request's field for each flag that a check names, per mode; a longer flag comes
// before one it starts with (strings.Replacer tries them in order).
var (
	scoreFields = strings.NewReplacer(
		"--reference-start", "score.alignment.referenceStart", "--distorted-start", "score.alignment.distortedStart",
		"--reference", "score.reference", "--distorted", "score.distorted",
		"--pixel-format", "score.pixelFormat", "--features", "score.features",
		"--output-format", "score.outputFormat", "--output", "score.output",
		"--probe", "score.probe", "--chunk-part", "score.chunk.part", "--chunk", "score.chunk",
		"--total-frames", "score.chunk.totalFrames", "--merge-parts", "score.merge.parts",
		"--pictures", "score.pictures", "--auto-align-window", "score.alignment.window",
		"--auto-align", "score.alignment.auto", "--frames", "score.frames",
		"several --distorted", "score.renditions")
	encodeFields = strings.NewReplacer(
		"--raw-width", "encode.rawWidth", "--raw-height", "encode.rawHeight")
	ladderReportFields = strings.NewReplacer("--output", "ladderReport.output")
)

// requestError is err with the flags it names replaced by the request's fields.
func requestError(err error, fields *strings.Replacer) error {
	if err == nil {
		return nil
	}
	return &renamed{err: err, msg: fields.Replace(err.Error())}
}

// renamed is an error said in a request's terms; it is still the error it was (Unwrap),
// so its exit code stays.
type renamed struct {
	err error
	msg string
}

func (r *renamed) Error() string { return r.msg }
func (r *renamed) Unwrap() error { return r.err }
