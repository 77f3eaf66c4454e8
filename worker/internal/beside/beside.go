// Package beside runs work on each frame a reader reads on a goroutine of its own,
// beside the reading, and hands the results back in read order.
//
// The wrappers that look at every frame of an input (the scene detector's histograms,
// the alignment check's thumbnails) sit on its reader, the one step every frame passes
// through in turn; at 1080p each costs about as much as reading the frame
// (docs/benchmarks.md). With a Queue a read waits only for the work still reading the
// plane it is about to overwrite: the kernel's frame slots rotate, so that is rarely
// the work just started.
package beside

import (
	"unsafe"

	"github.com/vmafx/vmafx/vmaf"
)

// MaxPending bounds the jobs of a Queue running at once, and so the planes they keep.
// A read into a frame waits for the jobs reading the plane it overwrites, so Score's
// frame slots bound them already; a caller that reads into a new Frame each time would
// not.
const MaxPending = 64

// Queue is the work on an input's frames, in read order. Its methods are called by the
// input's reader, one goroutine at a time.
type Queue[T any] struct {
	pending []*job[T]
	// Start starts a job's run; nil starts it on a goroutine of its own. Tests set it
	// to hold jobs back.
	Start func(run func())
}

type job[T any] struct {
	y, y8 unsafe.Pointer // the storage of the planes the job reads
	out   T
	done  chan struct{}
}

// BeforeRead waits for the jobs that read the planes f is about to be read into, and
// for the oldest while MaxPending run, and hands the results at the head that are
// done to use, in order (Fold).
func (q *Queue[T]) BeforeRead(f *vmaf.Frame, use func(T)) {
	for _, p := range []unsafe.Pointer{planeData(f.Y), planeData(f.Y8)} {
		if p == nil {
			continue
		}
		for _, j := range q.pending {
			if j.y == p || j.y8 == p {
				<-j.done
			}
		}
	}
	q.Fold(false, use)
	for len(q.pending) >= MaxPending {
		<-q.pending[0].done
		q.Fold(false, use)
	}
}

// Go starts work on the frame just read into f. work reads f's luma (Y, or Y8 for a
// frame read as bytes), through slices it took before Go returned: the reader changes
// f's fields with its next read, and the planes' storage only after BeforeRead.
func (q *Queue[T]) Go(f *vmaf.Frame, work func() T) {
	j := &job[T]{y: planeData(f.Y), y8: planeData(f.Y8), done: make(chan struct{})}
	q.pending = append(q.pending, j)
	run := func() {
		j.out = work()
		close(j.done)
	}
	if q.Start != nil {
		q.Start(run)
	} else {
		go run()
	}
}

// Fold hands the results of the jobs at the head that are done to use, in read order;
// with wait it waits for every job.
func (q *Queue[T]) Fold(wait bool, use func(T)) {
	for len(q.pending) > 0 {
		j := q.pending[0]
		if wait {
			<-j.done
		} else {
			select {
			case <-j.done:
			default:
				return
			}
		}
		use(j.out)
		q.pending[0] = nil
		q.pending = q.pending[1:]
	}
}

// Pending is how many jobs have not been folded yet.
func (q *Queue[T]) Pending() int { return len(q.pending) }

// planeData is the start of a plane's storage; nil when it has none.
func planeData[S uint8 | uint16](p []S) unsafe.Pointer {
	if cap(p) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(p))
}
