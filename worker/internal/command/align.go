package command

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/vmafx/vmafx/vmaf"
	"github.com/vmafx/vmafx/worker/internal/source"
)

// skipped drops the first n frames of its source before the first read:
// --reference-start and --distorted-start.
type skipped struct {
	vmaf.FrameSource
	n    int
	flag string
}

func (s *skipped) ReadFrame(f *vmaf.Frame) error {
	for ; s.n > 0; s.n-- {
		if err := s.FrameSource.ReadFrame(f); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: fewer frames than %s skips", vmaf.ErrNoFrames, s.flag)
			}
			return err
		}
	}
	return s.FrameSource.ReadFrame(f)
}

// shortest pairs two sources frame by frame and ends both when either ends,
// so that inputs of different lengths are scored over their common frames.
// Whichever side is read first reads a frame of the other side ahead. The
// kernel reads the two sides at once, one frame each: mu makes them take
// turns, as the two sides share everything here.
type shortest struct {
	mu      sync.Mutex
	src     [2]vmaf.FrameSource
	ahead   [2]vmaf.Frame
	have    [2]bool
	pending [2]error // a read error of the side read ahead, for its turn
	ended   bool
}

// pairShortest returns the two sides of a shortest pairing of ref and dist.
func pairShortest(ref, dist vmaf.FrameSource) (vmaf.FrameSource, vmaf.FrameSource) {
	p := &shortest{src: [2]vmaf.FrameSource{ref, dist}}
	return side{p, 0}, side{p, 1}
}

type side struct {
	p *shortest
	i int
}

func (s side) Info() vmaf.VideoInfo { return s.p.src[s.i].Info() }

func (s side) ReadFrame(f *vmaf.Frame) error {
	p, i, o := s.p, s.i, 1-s.i
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.pending[i]; err != nil {
		return err
	}
	if p.have[i] {
		// Swap storage rather than copy: the reader reuses f.Y next time.
		*f, p.ahead[i] = p.ahead[i], *f
		p.have[i] = false
		return nil
	}
	if p.ended {
		return io.EOF
	}
	if err := p.src[i].ReadFrame(f); err != nil {
		if errors.Is(err, io.EOF) {
			p.ended = true
		}
		return err
	}
	// The frame read ahead is handed to the other side's caller as it is: it
	// must be read with what that caller asks (chroma, 8-bit luma as bytes),
	// and the two sides' callers ask alike.
	p.ahead[o].Chroma, p.ahead[o].Packed = f.Chroma, f.Packed
	switch err := p.src[o].ReadFrame(&p.ahead[o]); {
	case err == nil:
		p.have[o] = true
	case errors.Is(err, io.EOF):
		p.ended = true
		return io.EOF
	default:
		p.pending[o] = err
	}
	return nil
}

// counted counts the frames read from a source, for messages.
type counted struct {
	vmaf.FrameSource
	n int
}

func (c *counted) ReadFrame(f *vmaf.Frame) error {
	err := c.FrameSource.ReadFrame(f)
	if err == nil {
		c.n++
	}
	return err
}

// countMismatch rewrites the kernel's frame count mismatch to name both
// counts: the input that ended has n frames, the other at least n+1 (and,
// when its container declares it, how many).
func countMismatch(err error, ref, dist *counted, refIn, distIn *source.Input) error {
	var refEnded bool
	switch {
	case ref.n < dist.n:
		refEnded = true
	case ref.n == dist.n:
		return err // both read as far: the kernel's message says which ended
	}
	ended, longer, other := "distorted", "reference", refIn
	n := dist.n
	if refEnded {
		ended, longer, other, n = "reference", "distorted", distIn, ref.n
	}
	more := "at least " + strconv.Itoa(n+1)
	if other.Frames > n {
		more = strconv.Itoa(other.Frames) + " declared"
	}
	return fmt.Errorf("%w: %s has %d frames, %s %s (give an alignment to score the frames they share)",
		vmaf.ErrFrameCountMismatch, ended, n, longer, more)
}
