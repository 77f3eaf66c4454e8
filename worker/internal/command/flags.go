package command

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/cli"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/align"
	"github.com/vmafx/vmafx/worker/internal/report"
	"github.com/vmafx/vmafx/worker/internal/source"
)

// defaultTerminationLog is where the kubelet reads a container's termination
// message unless the Pod says otherwise.
const defaultTerminationLog = "/dev/termination-log"

// scoreConfig is the parsed "score" command line.
type scoreConfig struct {
	reference, distorted *url.URL
	// desk is set for the positional form, "score ref dist".
	desk bool
	// command is the command whose --help an error points to: "score" when empty.
	command string

	raw          rawFlags
	model        string
	output       string
	outputFormat string
	threads      int
	// deviceThreads, above 0, is how many of threads score with a GPU's device; the
	// others score on the CPU beside it.
	deviceThreads int
	start         int
	count         int
	subsample     int
	// bitDepth scores at this many bits per sample (0: the inputs' own).
	bitDepth int
	// encode is the distorted video's encode, for CAMBI (zero: the input's own).
	encode  vmaf.Encode
	backend string
	// waitForDevice scores no frame before a GPU backend's device is open and passed
	// its self-test; by default the CPU scores the first frames meanwhile.
	waitForDevice bool

	// align pairs frames by index after skipping refStart and distStart
	// frames, accepting different frame counts and rates.
	align               bool
	refStart, distStart int
	deinterlace         bool
	features            []vmaf.Feature

	// autoAlign finds refStart and distStart (autoalign.go); autoWindow is the offsets
	// it searches either side of zero.
	autoAlign  bool
	autoWindow int
	// decimate, above 1, keeps every decimate-th frame of input decimateSide (0 the
	// reference, 1 the distorted) after its start: found by autoAlign.
	decimate, decimateSide int

	spool source.Spool
	// store configures the object storage fetchers and outputs.
	store fetch.StoreOptions

	terminationLog string
	// terminationSet is set when the path was given explicitly, by flag or
	// env, and so may be created.
	terminationSet bool

	http fetch.HTTPOptions
	// registryPlainHTTP are the registries of oci:// models reached over plain HTTP.
	registryPlainHTTP []string

	verbosity    int
	verbositySet bool

	// pushGateway, when set, receives the result's metrics under the job label pushJob.
	pushGateway, pushJob string

	// chunkMode: the steps of a job split into chunks (see chunk.go).
	chunkMode
	// worstMode: worst frames, scenes and pictures (see worst.go).
	worstMode
	// renditionMode: several distorted videos against one decoded reference (see renditions.go).
	renditionMode
}

type rawFlags struct {
	width, height int
	pixelFormat   vmaf.PixelFormat
}

// envName is the environment twin of a flag: VMAFX_ and the flag's name in
// upper case with dashes as underscores (--pixel-format: VMAFX_PIXEL_FORMAT,
// --backend: VMAFX_BACKEND, which the device plugin sets). -v is VMAFX_VERBOSITY.
func envName(flagName string) string { return cli.EnvName("VMAFX_", flagName) }

// newFlags starts the flags of the command name, each with its twin envName(flag).
func newFlags(name, summary string) *cli.Set { return cli.New("vmafx-worker "+name, summary) }

// addStoreFlags adds the object storage flags of the commands that read or write objects,
// but --default-credentials (addDefaultCredentialsFlag).
func addStoreFlags(s *cli.Set, o *fetch.StoreOptions) {
	s.String(&o.CredentialsDir, "credentials-dir", envName("credentials-dir"), "", "`directory` of object storage credentials, one file per key (AWS_ACCESS_KEY_ID, AZURE_STORAGE_KEY, GOOGLE_APPLICATION_CREDENTIALS_JSON, ...): a mounted Secret")
	s.Func("s3-endpoint", envName("s3-endpoint"), "", "S3 endpoint `URL` of an S3-compatible server (overrides AWS_ENDPOINT_URL of --credentials-dir)", func(v string) error {
		if u, err := url.Parse(v); v != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			return errors.New("want an http:// or https:// URL")
		}
		o.S3Endpoint = v
		return nil
	})
	s.String(&o.S3Region, "s3-region", envName("s3-region"), "", "S3 `region` (overrides AWS_REGION of --credentials-dir)")
	s.OptBool(&o.S3PathStyle, "s3-path-style", envName("s3-path-style"), "address S3 buckets in the path (http://endpoint/bucket/key) rather than the host name (overrides AWS_S3_USE_PATH_STYLE of --credentials-dir)")
}

// addDefaultCredentialsFlag adds --default-credentials: a setting of the operator's (its
// variable, on every worker Pod where the operator's configuration allows it), not of a
// request.
func addDefaultCredentialsFlag(s *cli.Set, o *fetch.StoreOptions) {
	s.Bool(&o.DefaultCredentials, "default-credentials", envName("default-credentials"), false, "without --credentials-dir, sign object storage requests with the SDKs' default credentials (environment, shared files, workload identity, instance metadata) instead of sending them anonymously; the operator sets it only where its configuration allows")
}

// addResultFlags adds the flags of how a command reports: the termination message's path
// p (created only when its flag or twin names it: Given) and -v.
func addResultFlags(s *cli.Set, p *string, verbosity *int) {
	s.String(p, "termination-log", envName("termination-log"), defaultTerminationLog, "`path` of the termination message; the default is written only if it exists")
	s.IntP(verbosity, "v", "v", envName("v"), 0, 0, cli.NoMax, "log verbosity")
}

// scoreSummary is the first paragraph of "vmafx-worker score --help".
const scoreSummary = `score scores the distorted video against the reference with VMAF. Given two
positional arguments (the desk form) it prints "VMAF score: N"; with --reference and
--distorted (the Pod form) it prints the result as one JSON line and writes it to the
termination message. Flags may come before or after the positional arguments.`

// scoreFlags are the "score" flags. What to score lands in r, the request the flags
// build (request.go), or in v for the flags checked together with others; how this
// process runs lands in c.
type scoreFlags struct {
	set *cli.Set
	r   vmafxv1.ScoreRequest
	v   scoreValues
	c   scoreConfig
}

// scoreValues are the flags that are checked together with the positional arguments
// or another flag before they become the request.
type scoreValues struct {
	reference, distorted string
	chunk                string
	frames               vmafxv1.FrameRange
	encode               vmafxv1.RequestEncode
	align                bool
	alignment            vmafxv1.RequestAlignment
	worstFrames          int
	totalFrames          int
	chunkPart            string
	mergeParts           int
	// distorteds and outputs are every --distorted and --output given (renditions.go).
	distorteds, outputs []string
}

// shorthands add a flag with its twin envName(flag): a string, a count (an int of lo or
// more), a boolean, and one that parse checks.
func shorthands(s *cli.Set) (
	str func(p *string, name, def, usage string),
	count func(p *int, name string, def, lo int, usage string),
	boolean func(p *bool, name, usage string),
	check func(name, def, usage string, parse func(string) error),
) {
	return func(p *string, name, def, usage string) { s.String(p, name, envName(name), def, usage) },
		func(p *int, name string, def, lo int, usage string) {
			s.Int(p, name, envName(name), def, lo, cli.NoMax, usage)
		},
		func(p *bool, name, usage string) { s.Bool(p, name, envName(name), false, usage) },
		func(name, def, usage string, parse func(string) error) {
			s.Func(name, envName(name), def, usage, parse)
		}
}

func newScoreFlags() *scoreFlags {
	f := &scoreFlags{set: newFlags("score", scoreSummary)}
	s, r, v, c := f.set, &f.r, &f.v, &f.c
	str, count, boolean, check := shorthands(s)
	str(&v.reference, "reference", "", "reference video `URI`: file:///path, a bare path, http(s)://..., s3://bucket/key, gs://bucket/object, azure://container/blob")
	str(&v.distorted, "distorted", "", "distorted video `URI`; given several times (at most 8), the distorted videos are scored against one decode of the reference, each exactly as alone, and the result has one row per video (renditions)")
	count(&r.Width, "width", 0, 0, "width of raw YUV inputs in pixels (Y4M inputs carry their own)")
	count(&r.Height, "height", 0, 0, "height of raw YUV inputs in pixels")
	check("pixel-format", "yuv420p", "pixel `format` of raw YUV inputs: yuv420p, yuv422p, yuv444p and their 10le/12le variants, gray, gray10le, gray12le", func(val string) error {
		_, err := vmaf.ParsePixelFormat(val)
		r.PixelFormat = val
		return err
	})
	str(&r.Model, "model", vmaf.DefaultModel, "built-in model ("+strings.Join(vmaf.BuiltinModels(), ", ")+"), a libvmaf model JSON `file`, or a trained model version oci://REGISTRY/REPOSITORY:TAG or @sha256:DIGEST")
	str(&r.Output, "output", "", "write libvmaf-style per-frame scores to this `URI`: a file:// path (not under /data), s3://, gs:// or azure://; with several --distorted, once per --distorted in their order, or never")
	check("output-format", "json", "per-frame output `format`: json (libvmaf's JSON log) or csv (libvmaf's CSV)", func(val string) error {
		if val != "json" && val != "csv" {
			return errors.New("want json or csv")
		}
		r.OutputFormat = val
		return nil
	})
	check("frames", "", "score only frames `START:COUNT` (START skipped; COUNT 0 or empty means to the end)", func(val string) (err error) {
		v.frames.Start, v.frames.Count, err = parseFrames(val)
		return err
	})
	count(&r.Subsample, "subsample", 1, 1, "score every `N`th frame (motion still looks at every frame)")
	check("scoring-bit-depth", "", "score at `BITS` per sample, 10 or 12: shallower inputs are converted as ffmpeg's format filter converts them (format=yuv420p10le); libvmaf recommends 10 for VMAF v1 even for 8-bit encodes. Empty scores at the inputs' own depth", func(val string) error {
		switch val {
		case "":
			r.ScoringBitDepth = 0
		case "10", "12":
			r.ScoringBitDepth, _ = strconv.Atoi(val)
		default:
			return errors.New("want 10 or 12")
		}
		return nil
	})
	check("features", "", "extra metrics computed beside VMAF in the same pass, comma-separated: psnr, ssim, ms_ssim, cambi", func(val string) error {
		features, err := vmaf.ParseFeatures(val)
		r.Features = nil
		for _, f := range features {
			r.Features = append(r.Features, f.String())
		}
		return err
	})
	count(&v.encode.Width, "encode-width", 0, 0, "width the distorted video was encoded at, when it was scaled for scoring: CAMBI judges banding at the encode's size (libvmaf's enc_width); 0 means the input's")
	count(&v.encode.Height, "encode-height", 0, 0, "height the distorted video was encoded at (libvmaf's enc_height); 0 means the input's")
	count(&v.encode.BitDepth, "encode-bit-depth", 0, 0, "bit depth the distorted video was encoded at: below 10, CAMBI smooths against the encode's dithering (libvmaf's enc_bitdepth); 0 means the input's")
	boolean(&v.align, "align", "pair frames by index after --reference-start and --distorted-start, stopping at the shorter input: inputs of different frame counts or rates are accepted")
	count(&v.alignment.ReferenceStart, "reference-start", 0, 0, "skip the reference's first `N` frames (implies --align)")
	count(&v.alignment.DistortedStart, "distorted-start", 0, 0, "skip the distorted's first `N` frames (implies --align)")
	boolean(&v.alignment.Auto, "auto-align", "find the frame offset between the inputs (leader frames, frames dropped or added at the start) by comparing small luma pictures of their first frames at every offset of --auto-align-window, and score the frames that match, as --reference-start or --distorted-start would (implies --align; not with those two, nor with --chunk or --merge-parts: a chunked job searches in its --probe); the result's alignment says the offset, its confidence and the measure")
	s.Int(&v.alignment.Window, "auto-align-window", envName("auto-align-window"), 0, 0, align.MaxWindow, "offsets `N` frames either side of zero that --auto-align searches; 0 means "+strconv.Itoa(align.DefaultWindow))
	boolean(&r.Deinterlace, "deinterlace", "deinterlace frames marked interlaced (ffmpeg bwdif, one frame per frame) before scoring; without it interlaced frames are scored as stored")
	addStoreFlags(s, &c.store)
	addWorstFlags(s, &v.worstFrames, r)
	boolean(&r.Probe, "probe", "count the frame pairs the score would score (after --frames and the alignment) and report the count as the result's frames, without scoring: the first step of a job split into chunks")
	str(&v.chunk, "chunk", "", "score frames `START:COUNT` of --total-frames as one chunk of a split job, counted from the first frame --frames scores: exactly as one run scores them, with one frame of context on each inner border; the per-frame scores go to --chunk-part")
	count(&v.totalFrames, "total-frames", 0, 0, "the number of frame pairs the split job scores, as --probe counted them (with --chunk)")
	str(&v.chunkPart, "chunk-part", "", "`URI` the chunk's per-frame scores are written to for the merge (with --chunk)")
	count(&v.mergeParts, "merge-parts", 0, 0, "merge the `N` chunk parts beside --output (OUTPUT.chunk-000 ...) into --output and report their pooled scores, without scoring: the last step of a job split into chunks")
	addRuntimeFlags(s, c)
	repeatable(s.FlagSet(), "distorted", &v.distorteds)
	repeatable(s.FlagSet(), "output", &v.outputs)
	return f
}

// addRuntimeFlags adds the flags of how a scoring process runs here, rather than what it
// scores: they stay flags (and their variables, which the operator and the device plugin
// set) beside a request (run --request), and are the same for a score on the command line.
func addRuntimeFlags(s *cli.Set, c *scoreConfig) {
	str, count, boolean, check := shorthands(s)
	s.List(&c.registryPlainHTTP, "registry-plain-http", envName("registry-plain-http"), "OCI `registries` (host:port) reached over plain HTTP for oci:// models; the operator sets the variable from VMAFX_OPERATOR_PLAIN_HTTP_REGISTRIES")
	count(&c.threads, "threads", 0, 0, "frames scored in parallel; 0 means one per available CPU (GOMAXPROCS, which follows the container's CPU limit), at most 4 on a GPU backend")
	count(&c.deviceThreads, "device-threads", 0, 0, "on a GPU backend, how many of the --threads score with the device; the others score on the CPU kernel beside it all the run long (the result's device.cpuFrames counts the frames they score); 0 means all of them")
	str(&c.spool.Dir, "spool-dir", "", "`directory` for encoded inputs that must be copied locally to be decoded (an MP4 with its index at the end); empty means the system's temporary directory")
	s.Size(&c.spool.Limit, "spool-limit", envName("spool-limit"), source.DefaultSpoolLimit, "largest input spooled to --spool-dir: bytes, or with a k, M, G, T, Ki, Mi, Gi or Ti suffix; 0 turns spooling off")
	addDefaultCredentialsFlag(s, &c.store)
	str(&c.backend, "backend", "", "compute backend asked for: cuda, hip, sycl, vulkan, cpu or auto; the device plugin sets the variable")
	boolean(&c.waitForDevice, "wait-for-device", "on a GPU backend (cuda, hip, sycl, vulkan), score no frame before its device is open and has passed its self-test, so that the device scores every frame; by default the CPU scores the first frames while it opens, and the device goes on from there (the result's device.cpuFrames counts them)")
	s.Duration(&c.http.Timeout, "http-timeout", envName("http-timeout"), fetch.DefaultTimeout, "longest single wait on an HTTP or object storage server: connecting, the response, any one wait for body data")
	check("http-retries", strconv.Itoa(fetch.DefaultAttempts-1), "retries (and resumes) of transient failures per HTTP or object storage input", func(val string) error {
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return errors.New("must be a whole number, 0 or more")
		}
		c.http.Attempts = n + 1
		return nil
	})
	s.Size(&c.http.MaxBytes, "max-input-size", envName("max-input-size"), fetch.DefaultMaxBytes, "size limit of an HTTP or object storage input: bytes, or with a k, M, G, T, Ki, Mi, Gi or Ti suffix; 0 means no limit")
	boolean(&c.http.Redirects.AllowPrivate, "http-allow-private", "follow HTTP redirects to loopback, link-local and private addresses (refused by default)")
	check("http-allow-cidrs", "", "comma-separated `CIDRs` that HTTP redirects may lead to even though they are private, e.g. 10.1.0.0/16", func(val string) (err error) {
		c.http.Redirects.AllowCIDRs, err = fetch.ParseCIDRs(val)
		return err
	})
	boolean(&c.http.Redirects.AllowDowngrade, "http-allow-downgrade", "follow HTTP redirects from https:// to http:// (refused by default)")
	check("push-gateway", "", "Prometheus Pushgateway `URL` to push the result's metrics to once scored (vmafx_batch_score, _frames, _fps, _duration_seconds ...); a failed push is logged and the score still succeeds; empty: none", func(val string) error {
		if u, err := url.Parse(val); val != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			return errors.New("want an http:// or https:// URL")
		}
		c.pushGateway = val
		return nil
	})
	str(&c.pushJob, "push-job", "vmafx-worker", "job `label` of the pushed metrics")
	addResultFlags(s, &c.terminationLog, &c.verbosity)
}

// parseScore parses the "score" arguments as the score command does, for a run that
// is reported without being run (ReportCrash).
func parseScore(args []string, env func(string) string) (*scoreConfig, error) {
	f := newScoreFlags()
	if err := f.set.FlagSet().Parse(args); err != nil {
		return f.failed(env, false), flagError(err)
	}
	return f.config(f.set.FlagSet().Args(), env)
}

// failed is the config of a command line that cannot run: enough to report why, where
// the termination message goes, and in which form (desk).
func (f *scoreFlags) failed(env func(string) string, desk bool) *scoreConfig {
	_ = f.set.Resolve(cli.Getenv(env)) // the error is being reported; the settings that parse still say where
	return &scoreConfig{desk: desk, terminationLog: f.c.terminationLog, terminationSet: f.set.Given("termination-log")}
}

// config resolves the parsed flags (positional are the arguments that are not flags)
// with their env twins, turns them into a request and the runtime settings, and checks
// them as a request is checked (fromRequest). Errors wrap report.ErrBadRequest. The
// returned config is never nil: on error it says at least where and how to report.
func (f *scoreFlags) config(positional []string, env func(string) string) (*scoreConfig, error) {
	fs := f.set.FlagSet()
	desk := len(positional) == 2 && !fs.Changed("reference") && !fs.Changed("distorted")
	if err := f.set.Resolve(cli.Getenv(env)); err != nil {
		return f.failed(env, desk), badRequest("%v", err)
	}
	v, c := &f.v, f.c
	c.desk = desk
	if err := c.runtime(f.set); err != nil {
		return &c, err
	}
	switch {
	case desk:
		v.reference, v.distorted = positional[0], positional[1]
	case len(positional) != 0:
		return &c, badRequest("want either --reference and --distorted or two positional arguments (reference, distorted), got %d positional: %q", len(positional), positional)
	case v.reference == "" || v.distorted == "":
		return &c, badRequest("--reference and --distorted (or %s and %s) are required, or two positional arguments", envName("reference"), envName("distorted"))
	}
	r, err := f.request()
	if err != nil {
		return &c, err
	}
	req := vmafxv1.NewWorkerRequest()
	req.Score, req.Store = r, requestStore(c.store)
	if err := c.fromRequest(req); err != nil {
		return &c, err
	}
	return &c, nil
}

// runtime settles the settings of how the process runs, read from set.
func (c *scoreConfig) runtime(set *cli.Set) error {
	c.terminationSet = set.Given("termination-log")
	c.verbositySet = set.Given("v")
	if c.http.MaxBytes == 0 {
		c.http.MaxBytes = -1 // no limit
	}
	if c.spool.Limit == 0 {
		c.spool.Limit = -1 // no spooling
	}
	if c.pushGateway != "" && c.pushJob == "" {
		return badRequest("--push-job must not be empty")
	}
	return nil
}

// request is the score the flags ask for.
func (f *scoreFlags) request() (*vmafxv1.ScoreRequest, error) {
	v, r := &f.v, f.r
	r.Reference, r.Distorted = v.reference, v.distorted
	// Several --distorted (and their --output) are the request's renditions.
	if err := repeatedFlags(&r, v.distorteds, v.outputs); err != nil {
		return nil, err
	}
	if v.frames != (vmafxv1.FrameRange{}) {
		r.Frames = &v.frames
	}
	if v.encode != (vmafxv1.RequestEncode{}) {
		r.Encode = &v.encode
	}
	// --auto-align-window alone is kept, for fromRequest to refuse with a reason.
	if v.align || v.alignment != (vmafxv1.RequestAlignment{}) {
		r.Alignment = &v.alignment
	}
	r.WorstFrames = &v.worstFrames
	switch {
	case v.chunk != "":
		start, count, err := parseFrames(v.chunk)
		if err != nil || count == 0 {
			return nil, badRequest("--chunk %q: want START:COUNT with COUNT above 0", v.chunk)
		}
		r.Chunk = &vmafxv1.RequestChunk{Start: start, Count: count, TotalFrames: v.totalFrames, Part: v.chunkPart}
	case v.totalFrames != 0 || v.chunkPart != "":
		return nil, badRequest("--total-frames and --chunk-part go with --chunk")
	}
	if v.mergeParts != 0 {
		r.Merge = &vmafxv1.RequestMerge{Parts: v.mergeParts}
	}
	return &r, nil
}

// parseFrames parses START:COUNT; either part may be empty, and "" is all frames.
func parseFrames(s string) (start, count int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, errors.New("want START:COUNT")
	}
	if a != "" {
		if start, err = strconv.Atoi(a); err != nil || start < 0 {
			return 0, 0, errors.New("START must be a frame number")
		}
	}
	if b != "" {
		if count, err = strconv.Atoi(b); err != nil || count < 0 {
			return 0, 0, errors.New("COUNT must be a number of frames")
		}
	}
	return start, count, nil
}

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", report.ErrBadRequest, fmt.Sprintf(format, args...))
}
