package command

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/vmafx/vmafx/vmaf"
)

// Progress line timing: nothing for the first second, so short clips print
// only their score; then four refreshes a second.
const (
	progressDelay  = time.Second
	progressPeriod = 250 * time.Millisecond
)

// countingSource counts the frames read from a FrameSource. The kernel reads
// at most a few frames ahead of scoring, so the count tracks progress.
type countingSource struct {
	vmaf.FrameSource
	n atomic.Int64
}

func (c *countingSource) ReadFrame(f *vmaf.Frame) error {
	err := c.FrameSource.ReadFrame(f)
	if err == nil {
		c.n.Add(1)
	}
	return err
}

// isTerminal reports whether w is a terminal that can redraw a line.
func isTerminal(w io.Writer, env func(string) string) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && env("TERM") != "dumb"
}

// showProgress redraws a progress line on w until stop is called; total is
// the expected number of frames, or -1. stop erases the line.
func showProgress(w io.Writer, frames *countingSource, total int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		delay := time.NewTimer(progressDelay)
		defer delay.Stop()
		select {
		case <-done:
			return
		case <-delay.C:
		}
		tick := time.NewTicker(progressPeriod)
		defer tick.Stop()
		for {
			fmt.Fprint(w, "\r"+progressLine(frames.n.Load(), total, time.Since(start))+"\033[K")
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// progressLine is e.g. "frame 120/480 (25%), 23.5 fps, 15s left".
func progressLine(n int64, total int, elapsed time.Duration) string {
	fps := float64(n) / elapsed.Seconds()
	if total <= 0 || int(n) > total {
		return fmt.Sprintf("frame %d, %.1f fps", n, fps)
	}
	s := fmt.Sprintf("frame %d/%d (%d%%), %.1f fps", n, total, int(100*n)/total, fps)
	if fps > 0 {
		left := time.Duration(float64(int64(total)-n) / fps * float64(time.Second))
		s += fmt.Sprintf(", %v left", left.Round(time.Second))
	}
	return s
}
