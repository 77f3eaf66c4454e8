package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vmafx/vmafx/worker/fetch"
	"github.com/vmafx/vmafx/worker/internal/report"
	"github.com/vmafx/vmafx/worker/internal/source"
	"github.com/vmafx/vmafx/worker/vmaf"
)

// defaultTerminationLog is where the kubelet reads a container's termination
// message unless the Pod says otherwise.
const defaultTerminationLog = "/dev/termination-log"

// scoreConfig is the parsed "score" command line.
type scoreConfig struct {
	reference, distorted *url.URL
	// desk is set for the positional form, "score ref dist".
	desk bool

	raw          rawFlags
	model        string
	output       string
	outputFormat string
	threads      int
	start        int
	count        int
	subsample    int
	backend      string

	// align pairs frames by index after skipping refStart and distStart
	// frames, accepting different frame counts and rates.
	align               bool
	refStart, distStart int
	deinterlace         bool
	features            []vmaf.Feature

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
}

type rawFlags struct {
	width, height int
	pixelFormat   vmaf.PixelFormat
}

// envName is the environment twin of a flag: VMAFX_ and the flag's name in
// upper case with dashes as underscores (--pixel-format: VMAFX_PIXEL_FORMAT,
// --backend: VMAFX_BACKEND, which the device plugin sets). -v is VMAFX_VERBOSITY.
func envName(flagName string) string {
	if flagName == "v" {
		return "VMAFX_VERBOSITY"
	}
	return "VMAFX_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// scoreFlags defines the "score" flags on a new FlagSet. The string and
// numeric values are kept in the returned raw struct for validation.
type scoreValues struct {
	reference, distorted string
	width, height        int
	pixelFormat          string
	model, output        string
	threads, subsample   int
	frames, backend      string
	features             string
	terminationLog       string
	httpTimeout          time.Duration
	httpRetries          int
	maxInputSize         byteSize
	verbosity            int

	outputFormat         string
	align, deinterlace   bool
	refStart, distStart  int
	spoolDir             string
	spoolLimit           byteSize
	credentialsDir       string
	s3Endpoint, s3Region string
	s3PathStyle          bool
	httpAllowPrivate     bool
	httpAllowDowngrade   bool
	httpAllowCIDRs       string
	pushGateway, pushJob string
	registryPlainHTTP    string

	probe       bool
	chunk       string
	totalFrames int
	chunkPart   string
	mergeParts  int
}

func newScoreFlags() (*flag.FlagSet, *scoreValues) {
	v := &scoreValues{maxInputSize: fetch.DefaultMaxBytes, spoolLimit: source.DefaultSpoolLimit}
	fs := flag.NewFlagSet("vmafx-worker score", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	str := func(p *string, name, def, usage string) { fs.StringVar(p, name, def, usage+" (env "+envName(name)+")") }
	num := func(p *int, name string, def int, usage string) {
		fs.IntVar(p, name, def, usage+" (env "+envName(name)+")")
	}
	boolean := func(p *bool, name, usage string) { fs.BoolVar(p, name, false, usage+" (env "+envName(name)+")") }
	str(&v.reference, "reference", "", "reference video `URI`: file:///path, a bare path, http(s)://..., s3://bucket/key, gs://bucket/object, azure://container/blob")
	str(&v.distorted, "distorted", "", "distorted video `URI`")
	num(&v.width, "width", 0, "width of raw YUV inputs in pixels (Y4M inputs carry their own)")
	num(&v.height, "height", 0, "height of raw YUV inputs in pixels")
	str(&v.pixelFormat, "pixel-format", "yuv420p", "pixel `format` of raw YUV inputs: yuv420p, yuv422p, yuv444p and their 10le/12le variants, gray, gray10le, gray12le")
	str(&v.model, "model", vmaf.DefaultModel, "built-in model ("+strings.Join(vmaf.BuiltinModels(), ", ")+"), a libvmaf model JSON `file`, or a trained model version oci://REGISTRY/REPOSITORY:TAG or @sha256:DIGEST")
	str(&v.registryPlainHTTP, "registry-plain-http", "", "comma-separated OCI `registries` (host:port) reached over plain HTTP for oci:// models")
	str(&v.output, "output", "", "write libvmaf-style per-frame scores to this `URI`: a file:// path (not under /data), s3://, gs:// or azure://")
	str(&v.outputFormat, "output-format", "json", "per-frame output `format`: json (libvmaf's JSON log) or csv (libvmaf's CSV)")
	num(&v.threads, "threads", 0, "frames scored in parallel; 0 means one per available CPU")
	str(&v.frames, "frames", "", "score only frames `START:COUNT` (START skipped; COUNT 0 or empty means to the end)")
	num(&v.subsample, "subsample", 1, "score every `N`th frame")
	str(&v.features, "features", "", "extra metrics computed beside VMAF in the same pass, comma-separated: psnr, ssim, ms_ssim, cambi")
	boolean(&v.align, "align", "pair frames by index after --reference-start and --distorted-start, stopping at the shorter input: inputs of different frame counts or rates are accepted")
	num(&v.refStart, "reference-start", 0, "skip the reference's first `N` frames (implies --align)")
	num(&v.distStart, "distorted-start", 0, "skip the distorted's first `N` frames (implies --align)")
	boolean(&v.deinterlace, "deinterlace", "deinterlace frames marked interlaced (ffmpeg bwdif, one frame per frame) before scoring; without it interlaced frames are scored as stored")
	str(&v.spoolDir, "spool-dir", "", "`directory` for encoded inputs that must be copied locally to be decoded (an MP4 with its index at the end); empty means the system's temporary directory")
	fs.Var(&v.spoolLimit, "spool-limit", "largest input spooled to --spool-dir: bytes, or with a k, M, G, T, Ki, Mi, Gi or Ti suffix (env "+envName("spool-limit")+")")
	str(&v.credentialsDir, "credentials-dir", "", "`directory` of object storage credentials, one file per key (AWS_ACCESS_KEY_ID, AZURE_STORAGE_KEY, GOOGLE_APPLICATION_CREDENTIALS_JSON, ...): a mounted Secret")
	str(&v.s3Endpoint, "s3-endpoint", "", "S3 endpoint `URL` of an S3-compatible server (overrides AWS_ENDPOINT_URL of --credentials-dir)")
	str(&v.s3Region, "s3-region", "", "S3 `region` (overrides AWS_REGION of --credentials-dir)")
	boolean(&v.s3PathStyle, "s3-path-style", "address S3 buckets in the path (http://endpoint/bucket/key) rather than the host name (overrides AWS_S3_USE_PATH_STYLE of --credentials-dir)")
	str(&v.backend, "backend", "", "compute backend asked for: cuda, hip, sycl, vulkan, cpu, auto (set by the device plugin); only cpu exists today")
	str(&v.terminationLog, "termination-log", defaultTerminationLog, "`path` of the termination message; the default is written only if it exists")
	fs.DurationVar(&v.httpTimeout, "http-timeout", fetch.DefaultTimeout, "longest wait for an HTTP connection, response or body data (env "+envName("http-timeout")+")")
	num(&v.httpRetries, "http-retries", fetch.DefaultAttempts-1, "HTTP retries of transient failures per input")
	fs.Var(&v.maxInputSize, "max-input-size", "size limit of an HTTP input: bytes, or with a k, M, G, T, Ki, Mi, Gi or Ti suffix; 0 means no limit (env "+envName("max-input-size")+")")
	boolean(&v.httpAllowPrivate, "http-allow-private", "follow HTTP redirects to loopback, link-local and private addresses (refused by default)")
	str(&v.httpAllowCIDRs, "http-allow-cidrs", "", "comma-separated `CIDRs` that HTTP redirects may lead to even though they are private, e.g. 10.1.0.0/16")
	boolean(&v.httpAllowDowngrade, "http-allow-downgrade", "follow HTTP redirects from https:// to http:// (refused by default)")
	str(&v.pushGateway, "push-gateway", "", "Prometheus Pushgateway `URL` to push the result's metrics to (vmafx_batch_score, _frames, _fps, _duration_seconds ...); empty: none")
	str(&v.pushJob, "push-job", "vmafx-worker", "job `label` of the pushed metrics")
	num(&v.verbosity, "v", 0, "log verbosity")
	boolean(&v.probe, "probe", "count the frame pairs the score would score and report the count as the result's frames, without scoring: the first step of a job split into chunks")
	str(&v.chunk, "chunk", "", "score frames `START:COUNT` of --total-frames as one chunk of a split job, counted from the first frame --frames scores: exactly as one run scores them, with one frame of context on each inner border; the per-frame scores go to --chunk-part")
	num(&v.totalFrames, "total-frames", 0, "the number of frame pairs the split job scores, as --probe counted them (with --chunk)")
	str(&v.chunkPart, "chunk-part", "", "`URI` the chunk's per-frame scores are written to for the merge (with --chunk)")
	num(&v.mergeParts, "merge-parts", 0, "merge the `N` chunk parts beside --output (OUTPUT.chunk-000 ...) into --output and report their pooled scores, without scoring: the last step of a job split into chunks")
	return fs, v
}

// parseScore parses the "score" arguments, with env twins for the flags not
// given. Errors wrap report.ErrBadRequest, or flag.ErrHelp for -h. The
// returned config is never nil: on error it holds at least where to write
// the termination message, so that even a bad command line is reported there.
func parseScore(args []string, env func(string) string) (*scoreConfig, error) {
	fs, v := newScoreFlags()
	c, err := parseScoreFlags(fs, v, args, env)
	if c == nil {
		c = &scoreConfig{terminationLog: defaultTerminationLog}
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "termination-log" {
				c.terminationLog, c.terminationSet = v.terminationLog, true
			}
		})
		if p := env(envName("termination-log")); p != "" && !c.terminationSet {
			c.terminationLog, c.terminationSet = p, true
		}
	}
	return c, err
}

// parseScoreFlags does parseScore's work; it returns a nil config on error
// before the termination log flag and its twin are resolved.
func parseScoreFlags(fs *flag.FlagSet, v *scoreValues, args []string, env func(string) string) (*scoreConfig, error) {
	// Flags may follow the positional arguments: "score ref dist --model x".
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, badRequest("%v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	set, onCommandLine := map[string]bool{}, map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name], onCommandLine[f.Name] = true, true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		val := env(name)
		if set[f.Name] || val == "" || envErr != nil {
			return
		}
		if err := fs.Set(f.Name, val); err != nil {
			envErr = badRequest("%s=%q: %v", name, val, err)
		}
		set[f.Name] = true
	})
	if envErr != nil {
		return nil, envErr
	}

	c := &scoreConfig{
		model: v.model, output: v.output, outputFormat: v.outputFormat, threads: v.threads, subsample: v.subsample, backend: v.backend,
		align: v.align || v.refStart != 0 || v.distStart != 0, refStart: v.refStart, distStart: v.distStart,
		deinterlace: v.deinterlace,
		spool:       source.Spool{Dir: v.spoolDir, Limit: int64(v.spoolLimit)},
		store: fetch.StoreOptions{
			CredentialsDir: v.credentialsDir, S3Endpoint: v.s3Endpoint, S3Region: v.s3Region,
		},
		terminationLog: v.terminationLog, terminationSet: set["termination-log"],
		registryPlainHTTP: strings.FieldsFunc(v.registryPlainHTTP, func(r rune) bool { return r == ',' || r == ' ' }),
		verbosity:         v.verbosity, verbositySet: set["v"],
		http: fetch.HTTPOptions{Timeout: v.httpTimeout, Attempts: v.httpRetries + 1, MaxBytes: int64(v.maxInputSize)},
	}
	// From here on, errors return c: it knows where to report them.
	var err error
	if c.http.MaxBytes == 0 {
		c.http.MaxBytes = -1 // no limit
	}
	if set["s3-path-style"] {
		c.store.S3PathStyle = &v.s3PathStyle
	}
	if c.spool.Limit == 0 {
		c.spool.Limit = -1 // no spooling
	}
	if c.features, err = vmaf.ParseFeatures(v.features); err != nil {
		return c, badRequest("--features: %v", err)
	}
	c.http.Redirects = fetch.RedirectPolicy{AllowPrivate: v.httpAllowPrivate, AllowDowngrade: v.httpAllowDowngrade}
	switch {
	case len(positional) == 2 && !onCommandLine["reference"] && !onCommandLine["distorted"]:
		v.reference, v.distorted, c.desk = positional[0], positional[1], true
	case len(positional) != 0:
		return c, badRequest("want either --reference and --distorted or two positional arguments (reference, distorted), got %d positional: %q", len(positional), positional)
	case v.reference == "" || v.distorted == "":
		return c, badRequest("--reference and --distorted are required")
	}
	if c.reference, err = fetch.ParseURI(v.reference); err != nil {
		return c, badRequest("--reference: %v", err)
	}
	if c.distorted, err = fetch.ParseURI(v.distorted); err != nil {
		return c, badRequest("--distorted: %v", err)
	}
	if c.raw.pixelFormat, err = vmaf.ParsePixelFormat(v.pixelFormat); err != nil {
		return c, fmt.Errorf("--pixel-format: %w", err)
	}
	if v.width < 0 || v.height < 0 {
		return c, badRequest("--width and --height must be positive, got %dx%d", v.width, v.height)
	}
	c.raw.width, c.raw.height = v.width, v.height
	if c.threads < 0 {
		return c, badRequest("--threads must be 0 or more, got %d", c.threads)
	}
	if c.subsample < 1 {
		return c, badRequest("--subsample must be 1 or more, got %d", c.subsample)
	}
	if c.start, c.count, err = parseFrames(v.frames); err != nil {
		return c, badRequest("--frames %q: %v", v.frames, err)
	}
	if v.httpRetries < 0 || v.httpTimeout <= 0 {
		return c, badRequest("--http-retries must be 0 or more and --http-timeout positive")
	}
	if c.refStart < 0 || c.distStart < 0 {
		return c, badRequest("--reference-start and --distorted-start must be 0 or more, got %d and %d", c.refStart, c.distStart)
	}
	if c.outputFormat != "json" && c.outputFormat != "csv" {
		return c, badRequest("--output-format %q: want json or csv", c.outputFormat)
	}
	if c.http.Redirects.AllowCIDRs, err = fetch.ParseCIDRs(v.httpAllowCIDRs); err != nil {
		return c, badRequest("--http-allow-cidrs: %v", err)
	}
	c.pushGateway, c.pushJob = v.pushGateway, v.pushJob
	if c.pushGateway != "" {
		if u, err := url.Parse(c.pushGateway); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, badRequest("--push-gateway %q: want an http:// or https:// URL", c.pushGateway)
		}
		if c.pushJob == "" {
			return c, badRequest("--push-job must not be empty")
		}
	}
	if c.store.S3Endpoint != "" {
		if u, err := url.Parse(c.store.S3Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, badRequest("--s3-endpoint %q: want an http:// or https:// URL", c.store.S3Endpoint)
		}
	}
	if c.chunkMode, err = parseChunkMode(v, c.output); err != nil {
		return c, err
	}
	return c, nil
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

// byteSize is a flag.Value for sizes such as 512Mi or 2G.
type byteSize int64

var sizeSuffixes = []struct {
	suffix string
	mult   int64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
}

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	mult := int64(1)
	for _, sf := range sizeSuffixes {
		if n, ok := strings.CutSuffix(s, sf.suffix); ok {
			s, mult = n, sf.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return errors.New("want a size such as 1000000, 500M or 64Gi")
	}
	*b = byteSize(n * mult)
	return nil
}
