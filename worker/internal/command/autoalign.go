package command

import (
	"errors"
	"fmt"
	"io"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/align"
	"github.com/vmafx/vmafx/worker/internal/source"
)

// Frame offsets (package align) in the score command:
//
//   - --auto-align opens both inputs, reads their first frames into thumbnails, searches
//     the window, closes them, and opens them again skipping the frames the offset says
//     (as --reference-start or --distorted-start would): a second decode of the first
//     frames only, and no frame held at full size.
//   - A plain score (no alignment, or given starts) records thumbnails of the first
//     frames as the kernel reads them and searches them once scored: no extra read. An
//     offset clearly better than the pairing scored is reported as a likely misalignment
//     beside the score, which is kept.
//   - A score refused for its frame counts searches the first frames before failing, and
//     names the offset that fits in the message.
//
// A chunked job searches in its probe (--probe --auto-align): the probe reports the offset
// beside the frame count, and the operator gives every chunk and the merge the starts it
// found. A chunk or a merge sees only its frames, so --auto-align is refused with them,
// and they make no misalignment check.

// checkAutoAlign refuses --auto-align where it cannot run and --auto-align-window without it.
func (c *scoreConfig) checkAutoAlign() error {
	switch {
	case c.autoWindow != 0 && !c.autoAlign:
		return badRequest("--auto-align-window is the offsets --auto-align searches: give --auto-align too")
	case !c.autoAlign:
		return nil
	case c.refStart != 0 || c.distStart != 0:
		return badRequest("--auto-align finds the starts itself: give either --auto-align or --reference-start and --distorted-start")
	case c.chunk != nil || c.mergeParts != 0:
		return badRequest("--auto-align does not go with --chunk or --merge-parts: a chunk sees only its frames; the probe (--probe --auto-align) finds the offset, and the chunks are given its starts")
	}
	if c.autoWindow == 0 {
		c.autoWindow = align.DefaultWindow
	}
	return nil
}

// opener opens both inputs, each skipping its first frames.
type opener func(refSkip, distSkip int) (ref, dist *source.Input, err error)

// autoAlign finds the offset between the inputs and sets the starts that score it.
func (s *scorer) autoAlign(open opener) error {
	cfg := s.cfg
	ref, dist, err := open(0, 0)
	if err != nil {
		return err
	}
	defer ref.Close()
	defer dist.Close()
	a := &vmafxv1.WorkerAlignment{Auto: true, Measure: align.Measure}
	n, faster := 1, 0
	switch align.CompareRates(ref.Rate, dist.Rate) {
	case align.RateSame:
	case align.RateNTSC:
		a.Rate = align.RateMessage(ref.Rate, dist.Rate) + ", paired by index"
		s.log.Info("Frame rates differ by 1000/1001: the same pictures retimed; pairing them by index", "reference", ref.Rate.String(), "distorted", dist.Rate.String())
	case align.RateMultiple:
		if cfg.probe {
			return fmt.Errorf("%w: %s; a chunked job cannot decimate (its chunks count frames of both inputs alike): score it in one Pod (parallelism 1), or convert the input first",
				source.ErrRateMismatch, align.RateMessage(ref.Rate, dist.Rate))
		}
		n, faster = align.Factor(ref.Rate, dist.Rate)
	default:
		return fmt.Errorf("%w: %s; --auto-align aligns only rates that differ by 1000/1001 (24 and 24000/1001) or by a whole factor (25 and 50)",
			source.ErrRateMismatch, align.RateMessage(ref.Rate, dist.Rate))
	}
	rec := align.NewRecorder(ref.Info(), cfg.autoWindow)
	rec.Decimate(n, faster)
	if err := rec.Read(ref, dist); err != nil {
		return err
	}
	res, phase := rec.SearchPhases(n, faster)
	offset := 0
	if res.Clear() {
		offset = res.Best
	}
	// The starts count each input's own frames: the faster one's decimated frames are n
	// of its own, from its phase.
	starts := [2]int{max(0, -offset), max(0, offset)}
	if n > 1 {
		starts[faster] = starts[faster]*n + phase
		cfg.decimate, cfg.decimateSide = n, faster
		side := [2]string{"reference", "distorted"}[faster]
		a.Rate = fmt.Sprintf("reference %s fps, distorted %s fps: every %d frames of the %s from its frame %d paired with the other's (the offset counts pairs)",
			ref.Rate, dist.Rate, n, side, starts[faster])
		s.log.Info("Frame rates differ by a whole factor: decimating the faster input", "input", side, "factor", n, "phase", phase)
	}
	cfg.refStart, cfg.distStart = starts[0], starts[1]
	fill(a, res, offset)
	a.ReferenceStart, a.DistortedStart = cfg.refStart, cfg.distStart
	s.alignment = a
	s.log.Info("Aligned", "offset", offset, "best", res.Best, "clear", res.Clear(), "confidence", res.Confidence,
		"confirmed", res.Confirmed, "bestPSNR", res.BestPSNR, "zeroPSNR", res.ZeroPSNR, "window", res.Window, "pairs", res.Pairs,
		"referenceStart", cfg.refStart, "distortedStart", cfg.distStart)
	if res.Pairs == 0 {
		s.log.Info("Too few frames to search for an offset; scoring from the first frames", "frames", align.Frames(cfg.autoWindow))
	}
	return nil
}

// fill sets a's measures from res, for the offset reported.
func fill(a *vmafxv1.WorkerAlignment, res align.Result, offset int) {
	a.Offset, a.Window, a.Pairs, a.Confirmed = offset, res.Window, res.Pairs, res.Confirmed
	a.Confidence = round2(res.Confidence)
	a.BestPSNR, a.BasePSNR = round2(res.BestPSNR), round2(res.ZeroPSNR)
	if offset != res.Best {
		a.BestPSNR = a.BasePSNR
	}
}

func round2(v float64) float64 {
	return float64(int64(v*100+0.5)) / 100
}

// checkRecorded searches the thumbnails a plain score recorded and reports an offset
// that fits clearly better than the pairing scored.
func (s *scorer) checkRecorded(rec *align.Recorder) {
	res := rec.Result()
	if !res.Clear() {
		s.log.V(1).Info("Alignment check", "best", res.Best, "confidence", res.Confidence, "pairs", res.Pairs)
		return
	}
	cfg := s.cfg
	a := &vmafxv1.WorkerAlignment{Misaligned: true, Measure: align.Measure, ReferenceStart: cfg.refStart, DistortedStart: cfg.distStart}
	fill(a, res, res.Best)
	// The search compared the frames after the starts: the offset counts from the inputs' first.
	a.Offset += cfg.distStart - cfg.refStart
	s.alignment = a
	msg := vmafxv1.MisalignedMessage(a)
	s.log.Info("Likely misaligned inputs; the score is kept", "offset", a.Offset, "confidence", a.Confidence,
		"bestPSNR", a.BestPSNR, "basePSNR", a.BasePSNR, "message", msg)
	if cfg.desk {
		fmt.Fprintf(s.stderr, "vmafx-worker: warning: %s\n", msg)
	}
}

// hintCount adds to a frame count mismatch the offset that fits the frames, when the
// first frames show one clearly: from rec when the score recorded them, else read from
// ref and dist now (unread yet); neither: err as it is.
func (s *scorer) hintCount(err error, rec *align.Recorder, ref, dist *source.Input) error {
	if !errors.Is(err, vmaf.ErrFrameCountMismatch) || rec == nil && ref == nil {
		return err
	}
	var res align.Result
	if rec == nil {
		rec = align.NewRecorder(ref.Info(), align.DefaultWindow)
		if rec.Read(ref, dist) != nil {
			return err // the count is the error; a read error would hide it
		}
		res = rec.Search()
	} else {
		res = rec.Result()
	}
	if !res.Clear() {
		return err
	}
	offset := res.Best + s.cfg.distStart - s.cfg.refStart
	return fmt.Errorf("%w; the first frames suggest an offset of %s: %s (--auto-align, spec.alignment.auto, scores the frames that match)",
		err, vmafxv1.SignedOffset(offset), vmafxv1.DescribeOffset(offset))
}

// decimated keeps every n-th frame of its source, from the first: the faster input of a
// pair whose frame rates differ by a whole factor (--auto-align), after its start.
type decimated struct {
	vmaf.FrameSource
	n       int
	scratch vmaf.Frame
}

func (d *decimated) ReadFrame(f *vmaf.Frame) error {
	if err := d.FrameSource.ReadFrame(f); err != nil {
		return err
	}
	for range d.n - 1 {
		// The frames between are dropped: an 8-bit one's luma is not widened,
		// as Score does with those before its Start.
		d.scratch.Chroma, d.scratch.Packed = f.Chroma, true
		if err := d.FrameSource.ReadFrame(&d.scratch); err != nil {
			if errors.Is(err, io.EOF) {
				return nil // the last frame stands alone; the next read ends
			}
			return err
		}
	}
	return nil
}
