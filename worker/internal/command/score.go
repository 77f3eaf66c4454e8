package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/workermemory"
	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/align"
	"github.com/vmafx/vmafx/worker/internal/backend"
	"github.com/vmafx/vmafx/worker/internal/memlimit"
	"github.com/vmafx/vmafx/worker/internal/push"
	"github.com/vmafx/vmafx/worker/internal/report"
	"github.com/vmafx/vmafx/worker/internal/source"
	"github.com/vmafx/vmafx/worker/internal/worstframes"
)

// selectBackend is backend.SelectBeside: a GPU's self-test runs beside what follows
// its open, and backend.Verify waits for its verdict. Tests replace it.
var selectBackend = backend.SelectBeside

// scorer runs one score command.
type scorer struct {
	cfg            *scoreConfig
	env            func(string) string
	stdout, stderr io.Writer
	tty            bool // stderr is a terminal
	log            klog.Logger
	start          time.Time
	prov           report.Provenance

	// probed is the frame count a --probe found.
	probed int

	// What the result says beside the score.
	scaledFrom string
	interlaced []string
	outputErr  error
	// alignment is what the frame offset search found (autoalign.go); nil if nothing to say.
	alignment *vmafxv1.WorkerAlignment
	// recovered is an earlier merge's result, which a merge reports in place of its own.
	recovered *vmafxv1.WorkerResult
	// worst: the worst frames, scenes and report (worst.go).
	worst worstState
	// shared is set for one rendition of a run that scores several distorted videos
	// against one decoded reference (renditions.go).
	shared *renditionShare
}

// newLogger returns a klog text logger on w; quiet discards all but errors'
// exit summary, for the desk form where stdout and stderr are for people.
func newLogger(w io.Writer, verbosity int, quiet bool) klog.Logger {
	if quiet {
		w = io.Discard
	}
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(w), textlogger.Verbosity(verbosity)))
}

// run scores the videos and reports; a panic is reported as an Internal
// error, never as a bare stack trace.
func (s *scorer) run(ctx context.Context) (code int) {
	ctx = klog.NewContext(ctx, s.log)
	defer func() {
		if p := recover(); p != nil {
			s.log.Error(nil, "Panic while scoring", "panic", p, "stack", string(debug.Stack()))
			code = s.fail(fmt.Errorf("internal error: panic: %v", p))
		}
	}()
	var res *vmaf.Result
	var err error
	if s.cfg.mergeParts > 0 {
		res, err = s.merge(ctx)
	} else {
		res, err = s.score(ctx)
	}
	if err != nil {
		return s.fail(cancelled(ctx, err))
	}
	if s.cfg.probe {
		return s.succeedProbe(s.probed)
	}
	if s.recovered != nil {
		return s.succeed(s.recovered)
	}
	return s.succeed(s.result(res))
}

// backendAndModel selects the backend (closed by the caller) and loads the model, and
// records both in the provenance.
func (s *scorer) backendAndModel(ctx context.Context) (backend.Backend, *vmaf.Model, error) {
	b, fellBack, err := s.selectBackend()
	if err == nil {
		if err = backend.Verify(s.cfg.backend, b); err != nil {
			b.Close()
			b = nil
		}
	}
	if s.shared == nil {
		recordSelfTest(s.env, s.log, b, err)
	}
	if err == nil {
		s.logOpened(b)
	}
	if err := s.adoptBackend(b, fellBack, err); err != nil {
		return nil, nil, err
	}
	model, err := s.loadModel(ctx)
	if err != nil {
		b.Close()
		return nil, nil, err
	}
	s.prov.Model, s.prov.ModelSHA256 = model.Name, model.SHA256
	s.splitFeatures(model)
	return b, model, nil
}

// startBackendAndModel is backendAndModel for a GPU's device that opens beside the
// run (backend.Start): the backend is a *backend.Pending, whose open logs itself and
// records the self-test's verdict as soon as it ends, and whose failure calls stop.
// The caller adopts what opened once the frames are scored (adoptPending).
func (s *scorer) startBackendAndModel(ctx context.Context, stop context.CancelCauseFunc) (backend.Backend, *vmaf.Model, error) {
	p := backend.Start(s.cfg.backend, s.selectBackend, func(b backend.Backend, _ string, err error) {
		recordSelfTest(s.env, s.log, b, err)
		if err != nil {
			stop(err)
			return
		}
		s.logOpened(b)
	})
	model, err := s.loadModel(ctx)
	if err != nil {
		// The device's failure, when it failed too, is the cause (it stops the load).
		if oerr := s.adoptPending(p, nil); oerr != nil {
			err = oerr
		}
		p.Close()
		return nil, nil, err
	}
	s.prov.Model, s.prov.ModelSHA256 = model.Name, model.SHA256
	return p, model, nil
}

// adoptPending waits for a backend that opened beside the run and records it in the
// provenance (what runs where with model, when it loaded); its error, when it failed,
// is the run's.
func (s *scorer) adoptPending(p *backend.Pending, model *vmaf.Model) error {
	b, fellBack, err := p.Wait()
	if err := s.adoptBackend(b, fellBack, err); err != nil {
		return err
	}
	if model != nil {
		s.splitFeatures(model)
	}
	return nil
}

// closeBackend closes b and, for a GPU's, logs how long that took: on a GPU the
// driver's teardown is part of the run's wall time, after the frames.
func (s *scorer) closeBackend(b backend.Backend) {
	start := time.Now()
	b.Close()
	if s.prov.Device != nil {
		s.log.Info("Closed the device", append([]any{"closeSeconds", time.Since(start).Seconds()}, backend.CloseSteps(b)...)...)
	}
}

// logOpened logs how long a GPU backend's device took to open and pass its self-test.
func (s *scorer) logOpened(b backend.Backend) {
	if st, ok := b.(interface {
		Startup() (open, selfTest time.Duration)
	}); ok {
		open, selfTest := st.Startup()
		s.log.Info("Opened the device", append([]any{"backend", b.Name(), "openSeconds", open.Seconds(),
			"selfTestSeconds", selfTest.Seconds()}, backend.OpenSteps(b)...)...)
	}
}

// adoptBackend records the selected backend b in the provenance, or the backend asked
// for when the selection failed with err, which it returns.
func (s *scorer) adoptBackend(b backend.Backend, fellBack string, err error) error {
	cfg := s.cfg
	if err != nil {
		s.prov.RequestedBackend = cfg.backend
		return err
	}
	s.prov.Backend, s.prov.RequestedBackend, s.prov.Device = b.Name(), cfg.backend, b.Device()
	if fellBack != "" {
		s.log.Info("Requested backend is not available, scoring on the CPU", "requested", cfg.backend, "reason", fellBack)
	}
	return nil
}

// splitFeatures records which of model's features the device computes and which the
// CPU beside it: on a device without shaderFloat64, VIF, ADM and SpEED chroma run on
// the CPU.
func (s *scorer) splitFeatures(model *vmaf.Model) {
	d := s.prov.Device
	if d == nil {
		return
	}
	device := *d
	device.Features, device.HostFeatures = model.OffloadSplit(d.Features)
	s.prov.Device = &device
	if len(device.HostFeatures) > 0 {
		s.log.Info("Some features run on the CPU beside the device", "device", device.Name,
			"deviceFeatures", device.Features, "hostFeatures", device.HostFeatures)
	}
}

// inputs returns the object stores (closed by the caller), the fetcher of inputs and the
// options to open them with.
func (s *scorer) inputs() (*fetch.Stores, *fetch.Mux, source.Options) {
	cfg := s.cfg
	http := cfg.http
	http.UserAgent = "vmafx-worker/" + buildVersion()
	store := cfg.store
	store.Limits = http
	stores := fetch.NewStores(store)
	tools, toolsErr := decode.Find(s.env)
	return stores, fetch.NewMux(fetch.NewHTTP(http), stores), source.Options{
		Raw:   source.Raw{Width: cfg.raw.width, Height: cfg.raw.height, Format: cfg.raw.pixelFormat},
		Tools: tools, ToolsErr: toolsErr, Deinterlace: cfg.deinterlace, Spool: cfg.spool,
		HW: s.hardwareDecoder(tools),
	}
}

// score does the work: backend, model, output, inputs, kernel, output.
func (s *scorer) score(ctx context.Context) (res *vmaf.Result, err error) {
	cfg := s.cfg
	var b backend.Backend
	var model *vmaf.Model
	var pending *backend.Pending // adopted after the frames, or on an early return
	if s.shared == nil && !cfg.waitForDevice && backend.Overlaps(cfg.backend) {
		// The GPU's device opens while the model loads, the inputs open and the CPU
		// scores the first frames; a device that fails stops all of that, and its
		// error is the run's.
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		if b, model, err = s.startBackendAndModel(ctx, stop); err != nil {
			return nil, err
		}
		pending = b.(*backend.Pending)
		defer s.closeBackend(b)
		defer func() { // before Close
			if pending != nil {
				if oerr := s.adoptPending(pending, model); oerr != nil {
					res, err = nil, oerr
				}
			}
		}()
	} else {
		if b, model, err = s.backendAndModel(ctx); err != nil {
			return nil, err
		}
		defer s.closeBackend(b)
	}

	stores, mux, opts := s.inputs()
	defer stores.Close()

	var out *output
	if cfg.chunk != nil {
		// A chunk writes a part for the merge, not the output.
		if out, err = openOutput(cfg.chunkPart, partFormat, stores); err != nil {
			return nil, err
		}
		out.part = s.writePart
		defer out.abort()
	} else if cfg.output != "" && !cfg.probe {
		if out, err = openOutput(cfg.output, cfg.outputFormat, stores); err != nil {
			return nil, err
		}
		defer out.abort()
	}

	// open opens both inputs, each skipping its first frames; --auto-align opens them
	// once more before scoring, to search their first frames (autoalign.go).
	open := func(refSkip, distSkip int) (*source.Input, *source.Input, error) {
		o := opts
		o.SkipFrames = refSkip
		ref, err := s.openReference(ctx, mux, o)
		if err != nil {
			return nil, nil, fmt.Errorf("reference: %w", err)
		}
		// The distorted video is scaled to the reference's size.
		ri := ref.Info()
		o.Width, o.Height = ri.Width, ri.Height
		o.SkipFrames = distSkip
		dist, err := source.Open(ctx, mux, cfg.distorted, o)
		if err != nil {
			ref.Close()
			return nil, nil, fmt.Errorf("distorted: %w", err)
		}
		return ref, dist, nil
	}
	if cfg.autoAlign {
		if err := s.autoAlign(open); err != nil {
			return nil, err
		}
	}
	// A chunk skips the frames before its window in each input: an encoded input seeks
	// there, the others are read and dropped (see chunkSkips).
	refSkip, distSkip, start, count, first := cfg.chunkSkips(model)
	ref, dist, err := open(refSkip, distSkip)
	if err != nil {
		return nil, err
	}
	defer ref.Close()
	defer dist.Close()
	ri := ref.Info()
	s.scaledFrom = dist.ScaledFrom
	s.recordDecoders(ref, dist)
	for _, in := range []struct {
		name string
		in   *source.Input
	}{{"reference", ref}, {"distorted", dist}} {
		if in.in.Interlaced {
			s.interlaced = append(s.interlaced, in.name)
		}
	}

	threads, err := s.threads(ri, []*source.Input{ref, dist}, needsOf(b, model, ri, cfg.encode))
	if err != nil {
		return nil, err
	}
	s.log.Info("Scoring",
		"reference", fetch.Redact(cfg.reference), "distorted", fetch.Redact(cfg.distorted),
		"referenceFormat", ref.String(), "distortedFormat", dist.String(), "model", model.Name, "modelSHA256", model.SHA256,
		"backend", b.Name(), "requestedBackend", cfg.backend, "device", s.env(vmafxv1.EnvDevice), "accelerator", s.prov.Device,
		"threads", threads, "deviceThreads", cfg.deviceThreads, "start", cfg.start, "count", cfg.count, "subsample", cfg.subsample, "scoringBitDepth", cfg.bitDepth,
		"align", cfg.align, "referenceStart", cfg.refStart, "distortedStart", cfg.distStart,
		"kernel", vmaf.Version, "cpuPath", cpuPath(), "referenceSeekedFrames", ref.Skipped, "distortedSeekedFrames", dist.Skipped)
	if dist.ScaledFrom != "" {
		s.log.Info("Scaling the distorted video to the reference's size (bicubic)", "from", dist.ScaledFrom, "to", fmt.Sprintf("%dx%d", ri.Width, ri.Height))
	}
	if len(s.interlaced) > 0 {
		s.log.Info("Interlaced input", "inputs", s.interlaced, "deinterlace", cfg.deinterlace,
			"note", "without --deinterlace, interlaced frames are scored as stored (both fields woven)")
	}
	if err := s.checkAlignment(ref, dist); err != nil {
		return nil, s.hintCount(err, nil, ref, dist)
	}

	refCount, distCount := &counted{FrameSource: ref}, &counted{FrameSource: dist}
	var refSrc, distSrc vmaf.FrameSource = refCount, distCount
	if n := refSkip - ref.Skipped; n > 0 {
		refSrc = &skipped{FrameSource: refSrc, n: n, flag: "--reference-start"}
	}
	if n := distSkip - dist.Skipped; n > 0 {
		distSrc = &skipped{FrameSource: distSrc, n: n, flag: "--distorted-start"}
	}
	if cfg.decimate > 1 {
		if cfg.decimateSide == 0 {
			refSrc = &decimated{FrameSource: refSrc, n: cfg.decimate}
		} else {
			distSrc = &decimated{FrameSource: distSrc, n: cfg.decimate}
		}
	}
	// Upconverting shifts a frame's samples where they are, after its source has read
	// them: it goes before every wrapper that reads a frame on another goroutine once its
	// read returns (the alignment check's thumbnails, the scene cuts' histograms), which
	// would race with the shift. The thumbnails are on the 8-bit scale at any depth, so
	// they are the same either way.
	if cfg.bitDepth > 0 {
		if refSrc, err = vmaf.Upconvert(refSrc, cfg.bitDepth); err != nil {
			return nil, fmt.Errorf("reference: --scoring-bit-depth: %w", err)
		}
		if distSrc, err = vmaf.Upconvert(distSrc, cfg.bitDepth); err != nil {
			return nil, fmt.Errorf("distorted: --scoring-bit-depth: %w", err)
		}
	}
	// A plain score checks the pairing on its first frames as it reads them (autoalign.go).
	var rec *align.Recorder
	if !cfg.autoAlign && cfg.chunk == nil && !cfg.probe {
		rec = align.NewRecorder(ri, align.DefaultWindow)
		refSrc, distSrc = rec.Wrap(0, refSrc), rec.Wrap(1, distSrc)
	}
	if cfg.align {
		refSrc, distSrc = pairShortest(refSrc, distSrc)
	}
	if cfg.probe {
		exact := ref.FramesExact && dist.FramesExact && ref.Frames >= 0 && dist.Frames >= 0
		s.probed, err = s.countFrames(exact, ref.Frames, dist.Frames, refSrc, distSrc)
		return nil, err
	}
	if cfg.chunk == nil {
		// Scene cuts are found on the reference as the kernel reads it.
		s.worst.cuts, s.worst.first = worstframes.NewCuts(refSrc), first
		refSrc = s.worst.cuts
	}
	counter := &countingSource{FrameSource: distSrc}
	if s.tty {
		total := dist.Frames
		if total >= 0 && cfg.align {
			total -= cfg.distStart
		}
		if cfg.count > 0 {
			total = cfg.start + cfg.count
			if dist.Frames >= 0 {
				total = min(total, dist.Frames)
			}
		}
		stop := showProgress(s.stderr, counter, total)
		defer stop() // also on a panic, so the terminal line is cleaned up
	}
	res, err = b.Score(ctx, refSrc, counter, vmaf.Options{
		LoadedModel: model, Threads: threads, OffloadThreads: cfg.deviceThreads, Start: start, Count: count, FirstIndex: first,
		Subsample: cfg.subsample, Features: cfg.features, Encode: cfg.encode,
	})
	if p := pending; p != nil {
		// The device's provenance before anything records it (a chunk's part).
		pending = nil
		if oerr := s.adoptPending(p, model); oerr != nil {
			return nil, oerr
		}
	}
	if d := s.prov.Device; d != nil && res != nil {
		device := *d
		device.CPUFrames = len(res.Frames) - res.Offloaded
		s.prov.Device = &device
	}
	if errors.Is(err, vmaf.ErrFrameCountMismatch) && !cfg.align {
		err = s.hintCount(countMismatch(err, refCount, distCount, ref, dist), rec, nil, nil)
	}
	if err != nil {
		return nil, err
	}
	if rec != nil {
		s.checkRecorded(rec)
	}
	if cfg.chunk != nil {
		if err := s.trimChunk(res, model); err != nil {
			return nil, err
		}
		// The part is the chunk's whole product: failing to write it fails the chunk.
		if err := out.commit(ctx, res); err != nil {
			return nil, err
		}
		s.log.Info("Wrote the chunk's part", "part", out.name, "start", cfg.chunk.Start, "count", cfg.chunk.Count)
		return res, nil
	}
	if out != nil {
		// The score is made: a failure to write the frames is reported
		// beside it, never instead of it.
		if err := out.commit(ctx, res); err != nil {
			s.outputErr = err
			s.log.Error(err, "Per-frame scores not written; the score is kept", "output", out.name)
		} else {
			s.log.Info("Wrote per-frame scores", "output", out.name, "format", cfg.outputFormat)
			if err := s.writeReport(ctx, res, stores, s.reopen(open, refSkip, distSkip)); err != nil {
				s.outputErr = err
				s.log.Error(err, "Report not written; the score is kept", "output", out.name)
			} else {
				s.log.Info("Wrote the report", "report", s.worst.report, "pictures", cfg.pictures)
			}
		}
	}
	return res, nil
}

// checkAlignment fails, before scoring, inputs whose frame rates differ or
// whose exact frame counts differ over the frames to score, unless the run
// aligns them.
func (s *scorer) checkAlignment(ref, dist *source.Input) error {
	cfg := s.cfg
	if cfg.align {
		if ref.Rate.Known() && dist.Rate.Known() && !ref.Rate.Equal(dist.Rate) {
			s.log.Info("Frame rates differ; frames are paired by index as asked", "reference", ref.Rate.String(), "distorted", dist.Rate.String())
		}
		return nil
	}
	if ref.Rate.Known() && dist.Rate.Known() && !ref.Rate.Equal(dist.Rate) {
		msg := align.RateMessage(ref.Rate, dist.Rate)
		if align.CompareRates(ref.Rate, dist.Rate) == align.RateNTSC {
			msg += "; give an alignment (--align or --auto-align, spec.alignment) to pair their frames by index"
		}
		return fmt.Errorf("%w: %s", source.ErrRateMismatch, msg)
	}
	if !ref.FramesExact || !dist.FramesExact || ref.Frames < 0 || dist.Frames < 0 {
		return nil
	}
	r, d := ref.Frames, dist.Frames
	if cfg.count > 0 {
		r, d = min(r, cfg.start+cfg.count), min(d, cfg.start+cfg.count)
	}
	if r != d {
		return fmt.Errorf("%w: reference has %d frames, distorted %d (give an alignment to score the frames they share)",
			vmaf.ErrFrameCountMismatch, ref.Frames, dist.Frames)
	}
	return nil
}

// result is the worker result that reports res.
func (s *scorer) result(res *vmaf.Result) *vmafxv1.WorkerResult {
	r := report.Success(res, s.prov, time.Since(s.start))
	s.addWorst(r, res)
	r.DistortedScaledFrom, r.Interlaced, r.Deinterlaced = s.scaledFrom, s.interlaced, s.cfg.deinterlace && len(s.interlaced) > 0
	r.Alignment = s.alignment
	if s.outputErr != nil {
		r.OutputError = oneLine(s.outputErr.Error(), maxOutputError)
	}
	return r
}

// succeed reports r and returns exit code 0.
func (s *scorer) succeed(r *vmafxv1.WorkerResult) int {
	s.log.Info("Scored", "score", r.Score, "harmonicMean", r.HarmonicMean, "min", r.Min, "max", r.Max,
		"frames", r.Frames, "fps", r.FPS, "wallSeconds", r.WallSeconds, "backend", r.Backend, "worst", worstSummary(r))
	s.emit(r)
	if s.cfg.pushGateway != "" {
		// The score is already in the termination message: a gateway that is down costs
		// the metrics, not the result, so the worker logs it and still succeeds.
		if err := push.Result(context.Background(), s.cfg.pushGateway, s.cfg.pushJob, r); err != nil {
			s.log.Error(err, "Cannot push the result's metrics")
		} else {
			s.log.V(2).Info("Pushed the result's metrics", "gateway", s.cfg.pushGateway, "job", s.cfg.pushJob)
		}
	}
	if s.cfg.desk {
		// libvmaf's tools print six decimals.
		fmt.Fprintf(s.stdout, "VMAF score: %.6f\n", r.Score)
	}
	return report.ExitOK
}

// fail reports err and returns its exit code.
func (s *scorer) fail(err error) int {
	r, code := report.Failure(err, s.prov, time.Since(s.start))
	s.log.Error(nil, "Scoring failed", "reason", r.Error.Reason, "message", r.Error.Message, "exitCode", code)
	s.emit(r)
	if s.cfg.desk {
		fmt.Fprintf(s.stderr, "vmafx-worker: %s: %s\n", r.Error.Reason, r.Error.Message)
	}
	return code
}

// emit writes r to the termination message and, in the Pod form, to stdout.
func (s *scorer) emit(r *vmafxv1.WorkerResult) {
	line := report.Encode(r)
	if err := report.WriteTermination(s.cfg.terminationLog, s.cfg.terminationSet, line); err != nil {
		if s.cfg.terminationSet {
			s.log.Error(err, "Cannot write the termination message", "path", s.cfg.terminationLog)
		} else {
			s.log.V(2).Info("No termination message file, skipping it", "path", s.cfg.terminationLog, "err", err.Error())
		}
	}
	if !s.cfg.desk {
		_, _ = s.stdout.Write(line) // the termination message above is the record
	}
}

// The share of the memory limit the worker plans to use (package workermemory).
const memoryBudgetPercent = workermemory.BudgetPercent

// decoderBytes is what one ffmpeg child decoding frames of info holds (package
// workermemory).
func decoderBytes(info vmaf.VideoInfo) int64 { return workermemory.DecoderBytes(info) }

// threads picks how many frames to score in parallel: --threads, else one per CPU
// (GOMAXPROCS follows the container's CPU limit; at most backend.DefaultGPUThreads on a
// GPU backend), and no more than the container's memory
// limit holds by the kernel's estimate. It also sets the Go memory limit (GOMEMLIMIT) below
// the container's, unless GOMEMLIMIT is set, so the collector works before the kernel's
// OOM killer would. Geometry that does not fit even one thread fails now, with the
// estimate, instead of being OOM-killed later.
func (s *scorer) threads(info vmaf.VideoInfo, inputs []*source.Input, needs kernelNeeds) (int, error) {
	threads := s.cfg.threads
	if threads == 0 {
		threads = needs.threads()
	}
	limit := memlimit.Detect(s.env)
	if limit <= 0 {
		return threads, nil
	}
	if s.env("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit * 9 / 10)
	}
	budget := limit * memoryBudgetPercent / 100
	for _, in := range inputs {
		if in.Kind == source.KindEncoded {
			budget -= decoderBytes(info)
		}
	}
	// A GPU backend's threads each map staging beside the heap (the vulkan backend's
	// frames in flight: about 133 MB at 1080p).
	hostPerThread := needs.hostPerThread
	estimate := func(t int) int64 {
		return vmaf.MemoryEstimateFor(info, t, s.cfg.features, needs.model, needs.inFlight) + int64(t)*hostPerThread
	}
	fit := 0
	for t := threads; t >= 1; t-- {
		if estimate(t) <= budget {
			fit = t
			break
		}
	}
	if fit == 0 {
		return 0, fmt.Errorf("%w: scoring %dx%d %v needs about %s with one thread (%s of it the GPU backend's staging, and %s for the decoders), more than %d%% of the container's memory limit of %s: raise the worker's memory limit (the operator's VMAFX_OPERATOR_WORKER_MEMORY_LIMIT)",
			vmaf.ErrMemoryLimit, info.Width, info.Height, info.Format, mebibytes(estimate(1)), mebibytes(hostPerThread),
			mebibytes(limit*memoryBudgetPercent/100-budget), memoryBudgetPercent, mebibytes(limit))
	}
	if fit < threads {
		s.log.Info("Fewer threads than CPUs: the memory limit holds no more", "threads", fit, "wanted", threads,
			"memoryLimit", mebibytes(limit), "estimatePerRun", mebibytes(estimate(fit)), "stagingPerThread", mebibytes(hostPerThread))
	}
	return fit, nil
}

// kernelNeeds is what the kernel's memory depends on beside the frames' geometry, the
// threads and the features: the model (a VMAF v1 model's SpEED chroma and CAMBI take more
// than VIF), and the backend's staging per thread and frames kept on its device
// (backend.Staging).
type kernelNeeds struct {
	model         *vmaf.Model // nil: the default model
	hostPerThread int64
	inFlight      int
	// defaultThreads is the threads without --threads: one per CPU, fewer on a GPU
	// backend (backend.DefaultThreads).
	defaultThreads int
}

// needsOf is what scoring model m (the distorted video's encode enc) on b takes beside
// frames of info.
func needsOf(b backend.Backend, m *vmaf.Model, info vmaf.VideoInfo, enc vmaf.Encode) kernelNeeds {
	n := kernelNeeds{model: m, defaultThreads: backend.DefaultThreads(b, runtime.GOMAXPROCS(0))}
	n.hostPerThread, n.inFlight = backend.Staging(b, m, info, enc)
	return n
}

// threads is the threads to score on without --threads: defaultThreads, or one per CPU
// where needs were made without a backend.
func (n kernelNeeds) threads() int {
	if n.defaultThreads > 0 {
		return n.defaultThreads
	}
	return runtime.GOMAXPROCS(0)
}

func mebibytes(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

// cpuPath names the kernel's instruction-set path for the log ("avx2"), or why it has
// none; a bad VMAFX_CPU fails the score itself with the same words.
func cpuPath() string {
	c, err := vmaf.EffectiveCPU()
	if err != nil {
		return err.Error()
	}
	return c.String()
}
