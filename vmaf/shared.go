package vmaf

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// DefaultSharedWindow is the number of reference frames a SharedReference holds when
// its caller gives none: how far the fastest reader may run ahead of the slowest. Each
// Score pipeline buffers frames of its own (Threads+2 or 3), so a few are enough to keep
// readers of about the same pace from waiting on each other.
const DefaultSharedWindow = 4

// MaxRenditions bounds the readers of one SharedReference and the renditions of one
// ScoreMany: each holds its own pipeline's frames and scratch, so the memory of a run
// grows with them.
const MaxRenditions = 64

// ErrReaderClosed is returned by a SharedReader read after its Close.
var ErrReaderClosed = errors.New("vmaf: shared reference reader closed")

// SharedReference reads one FrameSource once for several readers: every reader sees
// every frame, in order, exactly as it would reading the source alone, but the source
// (a decoder, a file) is read one time. The frames live in a ring of window slots: a
// slot is read again from the source only once every open reader has taken its frame, so
// the slowest reader sets the pace and memory stays at window frames however long the
// video. Whichever reader first asks for a frame not read yet reads it from the source,
// on its own goroutine; the others wait for it.
//
// Every reader must be read to its end or closed: an open reader that is never read
// holds the others back once they are window frames ahead of it. Score's callers close
// a reader when Score returns (ScoreMany does), whether it succeeded or not, so one
// rendition that fails (a shorter video) lets the others go on.
type SharedReference struct {
	src  FrameSource
	info VideoInfo
	ctx  context.Context
	stop func() bool // undoes the context's wake-up

	mu   sync.Mutex
	cond sync.Cond
	ring []Frame
	// read is the number of frames read from src; end is src's error after them
	// (io.EOF at its end), nil while it has more.
	read int
	end  error
	// reading is set while a reader reads frame read from src, outside mu.
	reading bool
	// pos is each reader's next frame; -1 once it is closed.
	pos []int
}

// NewSharedReference shares src among readers readers (1 to MaxRenditions) with a ring of
// window frames (DefaultSharedWindow when 0 or less). The frames are read with their
// chroma planes when the format has them, so that readers that ask for chroma (PSNR,
// VMAF v1's SpEED) get it; readers that do not are given luma alone. Reads fail with
// ctx's error once ctx is done.
func NewSharedReference(ctx context.Context, src FrameSource, readers, window int) (*SharedReference, error) {
	if readers < 1 || readers > MaxRenditions {
		return nil, fmt.Errorf("vmaf: %d readers of a shared reference, want 1 to %d", readers, MaxRenditions)
	}
	if window <= 0 {
		window = DefaultSharedWindow
	}
	s := &SharedReference{src: src, info: src.Info(), ctx: ctx, ring: make([]Frame, window), pos: make([]int, readers)}
	s.cond.L = &s.mu
	for i := range s.ring {
		// An 8-bit source's luma is kept as its bytes: each reader takes them as
		// bytes (a GPU backend's run) or widens them as it copies them.
		s.ring[i].Chroma, s.ring[i].Packed = true, true
	}
	s.stop = context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	return s, nil
}

// Reader returns reader i (0 to readers-1); each index is one reader, to be used by one
// goroutine at a time, as any FrameSource.
func (s *SharedReference) Reader(i int) *SharedReader { return &SharedReader{s: s, i: i} }

// Frames returns the number of frames read from the source so far.
func (s *SharedReference) Frames() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read
}

// minPos is the frame the slowest open reader reads next; read when all are closed.
// Called with mu held.
func (s *SharedReference) minPos() int {
	m := s.read
	for _, p := range s.pos {
		if p >= 0 && p < m {
			m = p
		}
	}
	return m
}

// SharedReader is one reader of a SharedReference: a FrameSource.
type SharedReader struct {
	s *SharedReference
	i int
}

// Info returns the source's geometry and format.
func (r *SharedReader) Info() VideoInfo { return r.s.info }

// ReadFrame copies the reader's next frame into f (its chroma only when f.Chroma is
// set), reading it from the source first when no reader has yet.
func (r *SharedReader) ReadFrame(f *Frame) error {
	s := r.s
	s.mu.Lock()
	for {
		p := s.pos[r.i]
		switch {
		case p < 0:
			s.mu.Unlock()
			return ErrReaderClosed
		case p < s.read:
			// The slot is not rewritten while this reader has not moved past it:
			// the source is read only window frames past the slowest reader.
			slot := &s.ring[p%len(s.ring)]
			s.mu.Unlock()
			copyFrame(f, slot)
			s.mu.Lock()
			s.pos[r.i]++
			s.cond.Broadcast()
			s.mu.Unlock()
			return nil
		case s.end != nil:
			s.mu.Unlock()
			return s.end
		case s.ctx.Err() != nil:
			s.mu.Unlock()
			return s.ctx.Err()
		case !s.reading && s.read-s.minPos() < len(s.ring):
			s.reading = true
			slot := &s.ring[s.read%len(s.ring)]
			s.mu.Unlock()
			err := s.src.ReadFrame(slot)
			s.mu.Lock()
			s.reading = false
			if err != nil {
				s.end = err
			} else {
				s.read++
			}
			s.cond.Broadcast()
		default:
			s.cond.Wait()
		}
	}
}

// Close detaches the reader: the others no longer wait for it. Closing twice is a no-op.
func (r *SharedReader) Close() {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pos[r.i] >= 0 {
		s.pos[r.i] = -1
		s.cond.Broadcast()
	}
	for _, p := range s.pos {
		if p >= 0 {
			return
		}
	}
	s.stop() // the last reader is gone: nothing to wake any more
}

// copyFrame copies src into dst, reusing dst's storage; chroma only when dst asks for it.
// A Packed src's luma goes to dst as bytes when dst asks for them (Frame.Packed), else
// widened.
func copyFrame(dst, src *Frame) {
	dst.Width, dst.Height, dst.BitDepth = src.Width, src.Height, src.BitDepth
	switch b := src.Packed8(); {
	case b != nil && dst.Packed:
		dst.Y8, dst.Y = append(dst.Y8[:0], b...), dst.Y[:0]
	case b != nil:
		dst.Y = toSamples(dst.Y, b, len(b), 8)
	default:
		dst.Y = append(dst.Y[:0], src.Y...)
	}
	dst.ChromaWidth, dst.ChromaHeight = 0, 0
	dst.U, dst.V = dst.U[:0], dst.V[:0]
	if dst.Chroma && src.ChromaWidth > 0 {
		dst.ChromaWidth, dst.ChromaHeight = src.ChromaWidth, src.ChromaHeight
		dst.U = append(dst.U, src.U...)
		dst.V = append(dst.V, src.V...)
	}
}

// Rendition is one distorted video of ScoreMany with the options to score it with.
// Options.Threads is ignored: ScoreMany shares its threads among the renditions.
type Rendition struct {
	Distorted FrameSource
	Options   Options
}

// RenditionResult is one rendition's outcome: its Result, or the error that failed it.
type RenditionResult struct {
	Result *Result
	Err    error
}

// SplitThreads shares threads (GOMAXPROCS when 0 or less) among n runs as evenly as it
// goes, the first ones taking the remainder, and at least one each.
func SplitThreads(threads, n int) []int {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	out := make([]int, n)
	for i := range out {
		out[i] = max(threads/n, 1)
		if i < threads%n && threads >= n {
			out[i]++
		}
	}
	return out
}

// ScoreMany scores several distorted videos against one reference in one pass: the
// reference is read once (SharedReference, window frames, DefaultSharedWindow when 0)
// and each rendition runs its own Score at once, on its share of threads (SplitThreads).
// Each rendition's Result is exactly the one Score gives for that pair alone, frame for
// frame and pooled, except FPS; renditions may use different models, features and
// ranges. A rendition that fails (another size, a different frame count) fails alone
// with the error Score would give, and the others go on; a reference that cannot be read
// fails every rendition still reading it.
func ScoreMany(ctx context.Context, ref FrameSource, renditions []Rendition, threads, window int) ([]RenditionResult, error) {
	if len(renditions) == 0 {
		return nil, errors.New("vmaf: ScoreMany needs at least one rendition")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	shared, err := NewSharedReference(ctx, ref, len(renditions), window)
	if err != nil {
		return nil, err
	}
	split := SplitThreads(threads, len(renditions))
	out := make([]RenditionResult, len(renditions))
	var wg sync.WaitGroup
	for i, r := range renditions {
		wg.Go(func() {
			rd := shared.Reader(i)
			defer rd.Close()
			o := r.Options
			o.Threads = split[i]
			out[i].Result, out[i].Err = Score(ctx, rd, r.Distorted, o)
		})
	}
	wg.Wait()
	return out, nil
}

// MemoryEstimateShared is MemoryEstimateFor for ScoreMany: each rendition's run on its
// threads under model m (nil: the default model) with framesInFlight frames on a device
// (MemoryEstimateFor of each, which counts a reference reader and the runtime once per
// rendition: room to spare) and the shared reference's window of frames (16-bit samples,
// chroma included; DefaultSharedWindow when window is 0 or less).
func MemoryEstimateShared(info VideoInfo, threads []int, features []Feature, window int, m *Model, framesInFlight int) int64 {
	var total int64
	for _, t := range threads {
		total += MemoryEstimateFor(info, t, features, m, framesInFlight)
	}
	if window <= 0 {
		window = DefaultSharedWindow
	}
	cw, ch := info.Format.chromaSize(info.Width, info.Height)
	px := int64(info.Width)*int64(info.Height) + 2*int64(cw)*int64(ch)
	return total + int64(window)*2*px
}
