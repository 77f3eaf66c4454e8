package vmaf

import (
	"errors"
	"fmt"
	"slices"
)

// ErrBadPart marks a chunk's part that cannot be merged: unreadable, or not the next
// frames of the same scoring.
var ErrBadPart = errors.New("bad chunk part")

// Part is the portable form of a Result, written by one chunk of a split scoring and read
// back by the merge. Its fields are exported so that it can be encoded as it is: with an
// encoding that keeps every bit of a float64 (gob does, NaN and infinities included), the
// merge pools exactly what one run would have.
type Part struct {
	Model                   string
	Width, Height, BitDepth int
	Features                []Feature
	Layout                  MetricLayout
	// VIFSuffix and ADMSuffix are what parts written before MetricLayout carried (their
	// models always had VIF): Merge reads them into the layout of such a part, so a job
	// whose chunks straddle an upgrade still merges with the metrics' right names.
	VIFSuffix, ADMSuffix string
	Chroma               bool
	Frames               []FrameScore
}

// Part returns r's portable form.
func (r *Result) Part() *Part {
	return &Part{
		Model: r.Model, Width: r.Width, Height: r.Height, BitDepth: r.BitDepth, Features: r.Features,
		Layout: r.layout, Chroma: r.chroma, Frames: r.Frames,
	}
}

// Trim drops the first lead and the last trail of r's frames and pools the rest again.
// A chunk scores frames of context on each side that borders another chunk (motion
// compares a frame with its neighbours) and drops them with Trim: one frame each side
// with libvmaf's default motion; with the five-frame window (vmaf_v1.0.16_hfr_*) up to
// four before and one after, and frame 2 for a chunk that holds frames 0 or 1
// (motionOptions.chunkContext says how many).
func (r *Result) Trim(lead, trail int) error {
	if lead < 0 || trail < 0 || lead+trail >= len(r.Frames) {
		return fmt.Errorf("%w: %d frames scored, %d of them context", ErrNoFrames, len(r.Frames), lead+trail)
	}
	r.Frames = r.Frames[lead : len(r.Frames)-trail]
	r.pool()
	return nil
}

// Merge joins the parts of a split scoring, in order, into one Result and pools it as
// Score pools one run: over every frame, in frame order. The parts must be of the same
// model, size and features, and each must start where the previous one ended.
func Merge(parts []*Part) (*Result, error) {
	if len(parts) == 0 {
		return nil, ErrNoFrames
	}
	for _, p := range parts {
		if p != nil && p.Layout == (MetricLayout{}) {
			p.Layout = MetricLayout{VIF: true, VIFSuffix: p.VIFSuffix, ADMSuffix: p.ADMSuffix}
		}
	}
	first := parts[0]
	res := &Result{
		Model: first.Model, Width: first.Width, Height: first.Height, BitDepth: first.BitDepth,
		Features: first.Features, layout: first.Layout, chroma: first.Chroma,
	}
	n := 0
	for _, p := range parts {
		n += len(p.Frames)
	}
	res.Frames = make([]FrameScore, 0, n)
	for i, p := range parts {
		if p.Model != first.Model || p.Width != first.Width || p.Height != first.Height || p.BitDepth != first.BitDepth ||
			!slices.Equal(p.Features, first.Features) || p.Layout != first.Layout || p.Chroma != first.Chroma {
			return nil, fmt.Errorf("%w: part %d is %s %dx%d %d-bit %v, part 0 %s %dx%d %d-bit %v", ErrBadPart, i,
				p.Model, p.Width, p.Height, p.BitDepth, p.Features, first.Model, first.Width, first.Height, first.BitDepth, first.Features)
		}
		if len(p.Frames) == 0 {
			return nil, fmt.Errorf("%w: part %d has no frames", ErrBadPart, i)
		}
		if len(res.Frames) > 0 {
			if want := res.Frames[len(res.Frames)-1].Index + 1; p.Frames[0].Index != want {
				return nil, fmt.Errorf("%w: part %d starts at frame %d, want %d", ErrBadPart, i, p.Frames[0].Index, want)
			}
		}
		res.Frames = append(res.Frames, p.Frames...)
	}
	res.pool()
	return res, nil
}
