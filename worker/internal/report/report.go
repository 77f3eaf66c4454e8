package report

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/text"
	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/media/decode"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/backend"
	"github.com/vmafx/vmafx/worker/internal/source"
)

// Exit codes, one per reason.
const (
	ExitOK          = 0
	ExitInternal    = 1
	ExitBadInput    = 2
	ExitFetchFailed = 3
	ExitBadModel    = 4
	// ExitBackendUnavailable: the slot's GPU cannot run the worker's kernels.
	ExitBackendUnavailable = 5
)

// MaxBytes bounds an encoded result: the kubelet keeps at most 4096 bytes of
// a termination message and drops the rest.
const MaxBytes = 4096

// maxMessage bounds an error message, so that a long URI or a wrapped error
// chain leaves room for the rest of the result.
const maxMessage = 1024

// ErrBadRequest marks a request the worker cannot run: bad flags, a bad
// URI, an output it cannot write.
var ErrBadRequest = errors.New("bad request")

// badInput lists the causes that mean the videos or the request are unusable.
var badInput = []error{
	ErrBadRequest,
	source.ErrNoGeometry,
	source.ErrRateMismatch,
	source.ErrSpoolLimit,
	decode.ErrNoFFmpeg,
	decode.ErrUndecodable,
	vmaf.ErrTruncated,
	vmaf.ErrUnknownPixelFormat,
	vmaf.ErrBadHeader,
	vmaf.ErrFrameCountMismatch,
	vmaf.ErrSizeMismatch,
	vmaf.ErrNoFrames,
	vmaf.ErrTooSmall,
	vmaf.ErrTooLarge,
	vmaf.ErrUnknownFeature,
	vmaf.ErrNoChroma,
	vmaf.ErrMemoryLimit,
	vmaf.ErrUnsupportedCPU, // VMAFX_CPU names a path that is unknown or that the processor lacks
}

// Classify returns the reason and exit code for err (nil is success).
// A fetch failure wins over the frame reader's view of it, and a cancelled
// run over both, as the cancellation is what broke the fetch or the read.
func Classify(err error) (reason string, code int) {
	var fe *fetch.Error
	switch {
	case err == nil:
		return "", ExitOK
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return vmafxv1.ReasonInternal, ExitInternal
	case errors.Is(err, fetch.ErrRedirectRefused), errors.Is(err, fetch.ErrNotFound):
		// The input's URL leads where the worker may not go, or names a video that is not
		// there: no retry helps.
		return vmafxv1.ReasonBadInput, ExitBadInput
	case errors.As(err, &fe):
		return vmafxv1.ReasonFetchFailed, ExitFetchFailed
	case errors.Is(err, vmaf.ErrUnknownModel), errors.Is(err, vmaf.ErrBadModel):
		return vmafxv1.ReasonBadModel, ExitBadModel
	case errors.Is(err, backend.ErrUnavailable):
		return vmafxv1.ReasonBackendUnavailable, ExitBackendUnavailable
	}
	for _, target := range badInput {
		if errors.Is(err, target) {
			return vmafxv1.ReasonBadInput, ExitBadInput
		}
	}
	return vmafxv1.ReasonInternal, ExitInternal
}

// Provenance records how a score was made, or was being made when it failed.
type Provenance struct {
	// Backend ran; RequestedBackend was asked for (VMAFX_BACKEND).
	Backend, RequestedBackend string
	// Device is the accelerator the backend scores on; nil for the CPU.
	Device *vmafxv1.WorkerDevice
	// Model is the model's name and ModelSHA256 the checksum of its JSON.
	Model, ModelSHA256 string
	// Decode is which decoder read the encoded inputs; nil when none was encoded.
	Decode *vmafxv1.WorkerDecode
}

func (p Provenance) result(wall time.Duration) *vmafxv1.WorkerResult {
	build := version.Get()
	return &vmafxv1.WorkerResult{
		Version:          vmafxv1.ResultVersion,
		WallSeconds:      round3(wall.Seconds()),
		Backend:          p.Backend,
		RequestedBackend: p.RequestedBackend,
		Device:           p.Device,
		Decode:           p.Decode,
		Model:            p.Model,
		ModelSHA256:      p.ModelSHA256,
		KernelVersion:    vmaf.Version,
		WorkerVersion:    build.Version,
		WorkerCommit:     build.Commit,
	}
}

// Success returns the result of a finished run: the pooled VMAF statistics
// of res and the kernel's speed.
func Success(res *vmaf.Result, p Provenance, wall time.Duration) *vmafxv1.WorkerResult {
	r := p.result(wall)
	s := res.Pooled["vmaf"]
	r.Score, r.HarmonicMean, r.Min, r.Max = s.Mean, s.HarmonicMean, s.Min, s.Max
	r.Frames = len(res.Frames)
	r.FPS = round3(res.FPS)
	if res.Layout().Bootstrap > 0 {
		r.Interval = &vmafxv1.WorkerInterval{
			Low: res.Pooled[vmaf.MetricCILow].Mean, High: res.Pooled[vmaf.MetricCIHigh].Mean,
			Bagging: res.Pooled[vmaf.MetricBagging].Mean, StdDev: res.Pooled[vmaf.MetricStdDev].Mean,
		}
	}
	// The extra metrics' pooled means, by libvmaf's names; a value that is not a finite
	// number is left out rather than breaking the JSON of the whole result.
	for _, name := range res.ExtraMetrics() {
		if v := res.Pooled[name].Mean; !math.IsNaN(v) && !math.IsInf(v, 0) {
			if r.Features == nil {
				r.Features = map[string]float64{}
			}
			r.Features[name] = v
		}
	}
	return r
}

// Failure returns the result and exit code of a run that failed with err.
func Failure(err error, p Provenance, wall time.Duration) (*vmafxv1.WorkerResult, int) {
	reason, code := Classify(err)
	r := p.result(wall)
	r.Error = &vmafxv1.WorkerError{Reason: reason, Message: oneLine(err.Error(), maxMessage)}
	return r, code
}

// Encode returns r as one JSON line, newline included, of at most MaxBytes.
// Long strings are cut to fit; a result that cannot be encoded (a score that
// is not a number) becomes an Internal error.
func Encode(r *vmafxv1.WorkerResult) []byte {
	c := *r
	if c.Error != nil {
		e := *c.Error
		c.Error = &e
	}
	if c.Device != nil {
		d := *c.Device
		c.Device = &d
	}
	for _, v := range []float64{c.Score, c.HarmonicMean, c.Min, c.Max, c.FPS, c.WallSeconds} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			c = vmafxv1.WorkerResult{Version: c.Version, Backend: c.Backend, RequestedBackend: c.RequestedBackend, Device: c.Device,
				Model: c.Model, ModelSHA256: c.ModelSHA256, KernelVersion: c.KernelVersion,
				Error: &vmafxv1.WorkerError{Reason: vmafxv1.ReasonInternal, Message: "the score is not a finite number"}}
			break
		}
	}
	limit := maxMessage
	for {
		b, err := json.Marshal(&c)
		if err == nil && len(b) < MaxBytes {
			return append(b, '\n')
		}
		if len(c.WorstFrames) > 0 && err == nil {
			// The worst frames are what a long result gives up first: their features, then
			// half of them at a time (the report beside the output keeps them all).
			c.WorstFrames = shrinkWorst(c.WorstFrames)
			continue
		}
		if len(c.Renditions) > 0 && err == nil {
			var ok bool
			if c.Renditions, ok = shrinkRenditions(c.Renditions); ok {
				continue
			}
		}
		if limit < 8 {
			return []byte(`{"version":"` + vmafxv1.ResultVersion + `","score":0,"harmonicMean":0,"min":0,"max":0,"frames":0,"fps":0,"wallSeconds":0,"backend":"","model":"","error":{"reason":"Internal","message":"the result cannot be encoded"}}` + "\n")
		}
		// Only strings can make a result this long: halve them until it fits.
		limit /= 2
		c.Backend, c.RequestedBackend = oneLine(c.Backend, limit), oneLine(c.RequestedBackend, limit)
		c.Model, c.ModelSHA256 = oneLine(c.Model, limit), oneLine(c.ModelSHA256, limit)
		if c.Error != nil {
			c.Error.Reason, c.Error.Message = oneLine(c.Error.Reason, limit), oneLine(c.Error.Message, limit)
		}
		if c.Device != nil {
			c.Device.Name, c.Device.Driver, c.Device.API = oneLine(c.Device.Name, limit), oneLine(c.Device.Driver, limit), oneLine(c.Device.API, limit)
		}
	}
}

// shrinkWorst drops the worst frames' features, or once none has any, the second half of
// the frames.
func shrinkWorst(frames []vmafxv1.WorkerFrame) []vmafxv1.WorkerFrame {
	out := make([]vmafxv1.WorkerFrame, len(frames))
	dropped := false
	for i, f := range frames {
		if f.Features != nil {
			f.Features, dropped = nil, true
		}
		out[i] = f
	}
	if dropped {
		return out
	}
	return out[:len(out)/2]
}

// oneLine folds s to one line of at most limit bytes (text.OneLine).
func oneLine(s string, limit int) string { return text.OneLine(s, limit) }

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// WriteTermination writes line to the termination message file at path. The
// kubelet creates that file in a Pod; elsewhere (at a desk) the default path
// does not exist, so the file is created only when create is set, because
// the path was asked for explicitly.
func WriteTermination(path string, create bool, line []byte) error {
	flags := os.O_WRONLY | os.O_TRUNC
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(line)
	return errors.Join(err, f.Close())
}
