package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/backend"
	"github.com/vmafx/vmafx/worker/internal/memlimit"
	"github.com/vmafx/vmafx/worker/internal/report"
	"github.com/vmafx/vmafx/worker/internal/source"
)

// A renditions run scores several distorted videos (--distorted repeated) against one
// decode of the reference: the reference is opened once and read through a
// vmaf.SharedReference, and each distorted video is scored by its own scorer, exactly as
// "score --distorted D" alone would score it (the same wrappers, checks and kernel), all
// at once on a share of the threads. The result has one row per rendition
// (vmafxv1.WorkerRendition); a rendition that fails fails its row only.

// renditionMode is the part of the score command line for several distorted videos.
type renditionMode struct {
	// renditions are the distorted videos when --distorted is given more than once, and
	// outputs their per-frame outputs (--output once per --distorted, or never); nil
	// for one distorted video.
	renditions []*url.URL
	outputs    []string
}

// repeatable makes the flag name of fs keep every value it is given in *all, beside the
// last one that its setting takes.
func repeatable(fs *pflag.FlagSet, name string, all *[]string) {
	f := fs.Lookup(name)
	f.Value = &repeated{Value: f.Value, all: all}
}

type repeated struct {
	pflag.Value
	all *[]string
}

func (r *repeated) Set(v string) error {
	*r.all = append(*r.all, strings.TrimSpace(v))
	return r.Value.Set(v)
}

// repeatedFlags fills r's renditions from the repeated --distorted and --output (their
// first values are r's Distorted and Output), after checking how often each was given.
func repeatedFlags(r *vmafxv1.ScoreRequest, distorted, outputs []string) error {
	if len(distorted) <= 1 {
		if len(outputs) > 1 {
			return badRequest("--output is given %d times: give it once per --distorted", len(outputs))
		}
		return nil
	}
	switch {
	case len(distorted) > vmafxv1.MaxWorkerRenditions:
		return badRequest("--distorted is given %d times, at most %d: each distorted video scored against one decode of the reference holds its own frames and decoder", len(distorted), vmafxv1.MaxWorkerRenditions)
	case len(outputs) != 0 && len(outputs) != len(distorted):
		return badRequest("--output is given %d times for %d --distorted: give one per --distorted, in the same order, or none", len(outputs), len(distorted))
	}
	r.Distorted, r.Output, r.Renditions = distorted[0], "", nil
	if len(outputs) > 0 {
		r.Output = outputs[0]
	}
	for i, d := range distorted[1:] {
		rr := vmafxv1.RequestRendition{Distorted: d}
		if len(outputs) > 0 {
			rr.Output = outputs[i+1]
		}
		r.Renditions = append(r.Renditions, rr)
	}
	return nil
}

// fromRequest sets the renditions of r (a request's, or the flags' through
// repeatedFlags) in m; c is the rest of the run.
func (m *renditionMode) fromRequest(r *vmafxv1.ScoreRequest, c *scoreConfig) error {
	*m = renditionMode{}
	if len(r.Renditions) == 0 {
		return nil
	}
	distorted, outputs := []string{r.Distorted}, []string{r.Output}
	some := r.Output != ""
	for _, rr := range r.Renditions {
		distorted, outputs = append(distorted, rr.Distorted), append(outputs, rr.Output)
		some = some || rr.Output != ""
	}
	if !some {
		outputs = nil
	}
	return m.parse(distorted, outputs, c)
}

// parse reads several distorted videos and their outputs (none, or one each); c is the
// rest of the run.
func (m *renditionMode) parse(distorted, outputs []string, c *scoreConfig) error {
	switch {
	case len(distorted) > vmafxv1.MaxWorkerRenditions:
		return badRequest("%d distorted videos, at most %d: each distorted video scored against one decode of the reference holds its own frames and decoder", len(distorted), vmafxv1.MaxWorkerRenditions)
	case len(outputs) != 0 && len(outputs) != len(distorted):
		return badRequest("%d outputs for %d distorted videos: give one per distorted video, in the same order, or none", len(outputs), len(distorted))
	case c.desk:
		return badRequest("several --distorted need the --reference form, not positional arguments")
	case c.chunk != nil || c.mergeParts > 0 || c.probe:
		return badRequest("several --distorted do not go with --chunk, --merge-parts or --probe: a job split into chunks scores one distorted video")
	case c.autoAlign:
		return badRequest("several --distorted do not go with --auto-align yet: each would search its own offset; give --reference-start and --distorted-start, or score them one at a time")
	case c.pushGateway != "":
		return badRequest("several --distorted do not go with --push-gateway: its metrics are one score's")
	}
	for i, d := range distorted {
		u, err := fetch.ParseURI(d)
		if err != nil {
			if i == 0 {
				return badRequest("--distorted: %v", err)
			}
			return badRequest("score.renditions[%d].distorted (--distorted #%d): %v", i-1, i+1, err)
		}
		m.renditions = append(m.renditions, u)
	}
	m.outputs = outputs
	return nil
}

// renditionShare is what one rendition's scorer takes from its run: the backend, the
// model, and its reader of the decoded reference.
type renditionShare struct {
	b     backend.Backend
	model *vmaf.Model
	// ref is the rendition's view of the shared reference, taken by its first open; the
	// report's pictures open the reference again.
	ref *source.Input
}

// keepOpen is the run's backend, which its renditions do not close.
type keepOpen struct{ backend.Backend }

func (keepOpen) Close() {}

// selectBackend is the run's backend for a rendition, else the one asked for.
func (s *scorer) selectBackend() (backend.Backend, string, error) {
	if sh := s.shared; sh != nil {
		return keepOpen{sh.b}, "", nil
	}
	return selectBackend(s.cfg.backend, s.env(vmafxv1.EnvDevice))
}

// loadModel is the run's model for a rendition, else the one asked for.
func (s *scorer) loadModel(ctx context.Context) (*vmaf.Model, error) {
	if sh := s.shared; sh != nil {
		return sh.model, nil
	}
	return loadModel(ctx, s.cfg)
}

// openReference opens the reference: a rendition's first open is its view of the
// shared decode.
func (s *scorer) openReference(ctx context.Context, mux fetch.Fetcher, o source.Options) (*source.Input, error) {
	if sh := s.shared; sh != nil && sh.ref != nil {
		ref := sh.ref
		sh.ref = nil
		return ref, nil
	}
	return source.Open(ctx, mux, s.cfg.reference, o)
}

// maxRenditionMessage bounds a row's error, so that every row fits the termination
// message.
const maxRenditionMessage = 256

// runRenditions scores every rendition against one decode of the reference and reports
// their rows; a panic is reported as an Internal error.
func (s *scorer) runRenditions(ctx context.Context) (code int) {
	ctx = klog.NewContext(ctx, s.log)
	defer func() {
		if p := recover(); p != nil {
			s.log.Error(nil, "Panic while scoring", "panic", p, "stack", string(debug.Stack()))
			code = s.fail(fmt.Errorf("internal error: panic: %v", p))
		}
	}()
	rows, err := s.renditions(ctx)
	if err != nil {
		return s.fail(cancelled(ctx, err))
	}
	r, code := report.Renditions(rows, s.prov, time.Since(s.start))
	if r.Error != nil {
		s.log.Error(nil, "Every rendition failed", "reason", r.Error.Reason, "message", r.Error.Message, "exitCode", code)
		s.emit(r)
		return code
	}
	s.log.Info("Scored the renditions", "renditions", len(rows), "wallSeconds", r.WallSeconds, "backend", r.Backend)
	s.emit(r)
	return report.ExitOK
}

// cancelled words err, once ctx is done, as the cancellation it comes from: whatever
// broke because of the cancellation, the cancellation is the reason.
func cancelled(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	msg := fmt.Sprintf("scoring cancelled (%v)", context.Cause(ctx))
	if !errors.Is(err, ctx.Err()) {
		msg += ": " + err.Error()
	}
	return fmt.Errorf("%s: %w", msg, ctx.Err())
}

// renditions opens the backend, the model and the reference once and scores every
// rendition against them at once; an error is one the renditions share.
func (s *scorer) renditions(ctx context.Context) ([]vmafxv1.WorkerRendition, error) {
	cfg := s.cfg
	b, model, err := s.backendAndModel(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	stores, mux, opts := s.inputs()
	defer stores.Close()
	refSkip, _, _, _, _ := cfg.chunkSkips(model) // no chunks here: the reference's start
	opts.SkipFrames = refSkip
	ref, err := source.Open(ctx, mux, cfg.reference, opts)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	defer ref.Close()
	n := len(cfg.renditions)
	threads, err := s.renditionThreads(ref, n, needsOf(b, model, ref.Info(), cfg.encode))
	if err != nil {
		return nil, err
	}
	shared, err := vmaf.NewSharedReference(ctx, ref, n, vmaf.DefaultSharedWindow)
	if err != nil {
		return nil, err
	}
	split := vmaf.SplitThreads(threads, n)
	s.log.Info("Scoring renditions against one decode of the reference", "reference", fetch.Redact(cfg.reference),
		"referenceFormat", ref.String(), "renditions", n, "threads", split, "model", model.Name)
	rows := make([]vmafxv1.WorkerRendition, n)
	var wg sync.WaitGroup
	for i, d := range cfg.renditions {
		c := *cfg
		c.renditionMode = renditionMode{}
		c.distorted, c.output, c.threads = d, "", split[i]
		if len(cfg.outputs) > 0 {
			c.output = cfg.outputs[i]
		}
		reader := shared.Reader(i)
		rs := &scorer{cfg: &c, env: s.env, stdout: io.Discard, stderr: s.stderr, log: s.log.WithValues("rendition", i),
			start: s.start, shared: &renditionShare{b: b, model: model, ref: ref.View(reader, reader.Close)}}
		wg.Go(func() {
			// However it ends, the rendition stops holding the others back.
			defer reader.Close()
			rows[i] = rs.rendition(ctx)
		})
	}
	wg.Wait()
	s.log.V(1).Info("Decoded the reference once", "frames", shared.Frames())
	return rows, nil
}

// rendition scores one rendition and returns its row.
func (s *scorer) rendition(ctx context.Context) (row vmafxv1.WorkerRendition) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error(nil, "Panic while scoring a rendition", "panic", p, "stack", string(debug.Stack()))
			row = vmafxv1.WorkerRendition{Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonInternal,
				Message: oneLine(fmt.Sprintf("internal error: panic: %v", p), maxRenditionMessage)}}
		}
	}()
	res, err := s.score(ctx)
	if err != nil {
		err = cancelled(ctx, err)
		reason, _ := report.Classify(err)
		s.log.Error(nil, "Rendition failed", "distorted", fetch.Redact(s.cfg.distorted), "reason", reason, "message", err.Error())
		return vmafxv1.WorkerRendition{Error: &vmafxv1.WorkerError{Reason: reason, Message: oneLine(err.Error(), maxRenditionMessage)}}
	}
	r := s.result(res)
	s.log.Info("Scored", "distorted", fetch.Redact(s.cfg.distorted), "score", r.Score, "harmonicMean", r.HarmonicMean,
		"min", r.Min, "frames", r.Frames, "fps", r.FPS, "worst", worstSummary(r))
	return report.Row(r)
}

// renditionThreads is threads for a renditions run: --threads (else one per CPU, fewer
// on a GPU backend), shared
// by the renditions, and no more than the container's memory limit holds for all of
// them, their decoders and the shared reference's frames; at least one per rendition.
func (s *scorer) renditionThreads(ref *source.Input, n int, needs kernelNeeds) (int, error) {
	threads := s.cfg.threads
	if threads == 0 {
		threads = needs.threads()
	}
	info := ref.Info()
	limit := memlimit.Detect(s.env)
	if limit <= 0 {
		return threads, nil
	}
	if s.env("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit * 9 / 10)
	}
	budget := limit * memoryBudgetPercent / 100
	if ref.Kind == source.KindEncoded {
		// The distorted videos of a reference that is decoded are most likely encoded too.
		budget -= int64(n+1) * decoderBytes(info)
	}
	// Each thread of each rendition maps the backend's staging beside the heap.
	estimate := func(t int) int64 {
		return vmaf.MemoryEstimateShared(info, vmaf.SplitThreads(t, n), s.cfg.features, vmaf.DefaultSharedWindow, needs.model, needs.inFlight) +
			int64(t)*needs.hostPerThread
	}
	for t := max(threads, n); t >= n; t-- {
		if estimate(t) <= budget {
			if t < threads {
				s.log.Info("Fewer threads than CPUs: the memory limit holds no more", "threads", t, "wanted", threads, "memoryLimit", mebibytes(limit))
			}
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: scoring %d renditions of %dx%d %v against one decode of the reference needs about %s with one thread each, more than %d%% of the container's memory limit of %s: score fewer renditions per Pod (spec.sharedReference.maxRenditionsPerPod) or raise the worker's memory limit",
		vmaf.ErrMemoryLimit, n, info.Width, info.Height, info.Format,
		mebibytes(estimate(n)), memoryBudgetPercent, mebibytes(limit))
}
