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
	"github.com/vmafx/vmafx/worker/fetch"
	"github.com/vmafx/vmafx/worker/internal/backend"
	"github.com/vmafx/vmafx/worker/internal/report"
	"github.com/vmafx/vmafx/worker/internal/source"
	"github.com/vmafx/vmafx/worker/vmaf"
)

// selectBackend is backend.Select; tests replace it.
var selectBackend = backend.Select

// scorer runs one score command.
type scorer struct {
	cfg            *scoreConfig
	env            func(string) string
	stdout, stderr io.Writer
	tty            bool // stderr is a terminal
	log            klog.Logger
	start          time.Time
	prov           report.Provenance
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
	res, err := s.score(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// Whatever broke because of the cancellation, the cancellation is the reason.
			msg := fmt.Sprintf("scoring cancelled (%v)", context.Cause(ctx))
			if !errors.Is(err, ctx.Err()) {
				msg += ": " + err.Error()
			}
			err = fmt.Errorf("%s: %w", msg, ctx.Err())
		}
		return s.fail(err)
	}
	return s.succeed(res)
}

// score does the work: backend, model, output, inputs, kernel.
func (s *scorer) score(ctx context.Context) (*vmaf.Result, error) {
	cfg := s.cfg
	b, fellBack := selectBackend(cfg.backend)
	s.prov.Backend, s.prov.RequestedBackend = b.Name(), cfg.backend
	if fellBack != "" {
		s.log.Info("Requested backend is not available, scoring on the CPU", "requested", cfg.backend, "reason", fellBack)
	}
	model, err := vmaf.LoadModel(cfg.model)
	if err != nil {
		return nil, err
	}
	s.prov.Model, s.prov.ModelSHA256 = model.Name, model.SHA256

	var out *output
	if cfg.output != "" {
		if out, err = openOutput(cfg.output); err != nil {
			return nil, err
		}
		defer out.abort()
	}

	http := cfg.http
	http.UserAgent = "vmafx-worker/" + buildVersion()
	mux := fetch.NewMux(fetch.NewHTTP(http))
	raw := source.Raw{Width: cfg.raw.width, Height: cfg.raw.height, Format: cfg.raw.pixelFormat}
	ref, err := source.Open(ctx, mux, cfg.reference, raw)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	defer ref.Close()
	dist, err := source.Open(ctx, mux, cfg.distorted, raw)
	if err != nil {
		return nil, fmt.Errorf("distorted: %w", err)
	}
	defer dist.Close()

	threads := cfg.threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	s.log.Info("Scoring",
		"reference", fetch.Redact(cfg.reference), "distorted", fetch.Redact(cfg.distorted),
		"referenceFormat", ref.String(), "distortedFormat", dist.String(), "model", model.Name, "modelSHA256", model.SHA256,
		"backend", b.Name(), "requestedBackend", cfg.backend, "device", s.env(vmafxv1.EnvDevice),
		"threads", threads, "start", cfg.start, "count", cfg.count, "subsample", cfg.subsample,
		"kernel", vmaf.Version)

	counted := &countingSource{FrameSource: dist}
	if s.tty {
		total := dist.Frames
		if cfg.count > 0 {
			total = cfg.start + cfg.count
			if dist.Frames >= 0 {
				total = min(total, dist.Frames)
			}
		}
		stop := showProgress(s.stderr, counted, total)
		defer stop() // also on a panic, so the terminal line is cleaned up
	}
	res, err := b.Score(ctx, ref, counted, vmaf.Options{
		LoadedModel: model, Threads: threads, Start: cfg.start, Count: cfg.count, Subsample: cfg.subsample,
	})
	if err != nil {
		return nil, err
	}
	if out != nil {
		if err := out.commit(res); err != nil {
			return nil, err
		}
		s.log.Info("Wrote per-frame scores", "output", cfg.output)
	}
	return res, nil
}

// succeed reports res and returns exit code 0.
func (s *scorer) succeed(res *vmaf.Result) int {
	r := report.Success(res, s.prov, time.Since(s.start))
	s.log.Info("Scored", "score", r.Score, "harmonicMean", r.HarmonicMean, "min", r.Min, "max", r.Max,
		"frames", r.Frames, "fps", r.FPS, "wallSeconds", r.WallSeconds, "backend", r.Backend)
	s.emit(r)
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
		s.stdout.Write(line)
	}
}
