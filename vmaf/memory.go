package vmaf

import "errors"

// The kernel allocates only when it starts (frames, per-thread scratch) and nothing per
// frame, so its heap is known from the geometry. The constants come from the allocations
// of Score measured on 640x360 to 1920x1080 frames at 1, 2 and 4 threads (TotalAlloc of
// whole runs, see TestMemoryEstimateBoundsScore): about 13 bytes per pixel for the
// pipeline and 25 per thread with VMAF alone, and up to 11 more per thread for each extra
// feature (SSIM the most); they are rounded up so that the estimate stays above what a run allocates.
const (
	baseBytesPerPixel    = 16
	threadBytesPerPixel  = 28
	featureBytesPerPixel = 12
	runtimeOverheadBytes = 48 << 20 // the Go runtime, the binary, I/O buffers
	readerFramesPerInput = 1        // each reader's one-frame byte buffer
)

// ErrMemoryLimit reports frames too large to score within the memory at hand.
var ErrMemoryLimit = errors.New("vmaf: not enough memory")

// MemoryEstimate returns about how many bytes scoring frames of info takes with threads
// goroutines and the extra features: the two readers' buffers, the pipeline's frames and
// every thread's scratch, plus the Go runtime. It is meant to be compared with a memory
// limit before any frame is read.
func MemoryEstimate(info VideoInfo, threads int, features []Feature) int64 {
	px := int64(info.Width) * int64(info.Height)
	perThread := int64(threadBytesPerPixel + featureBytesPerPixel*len(features))
	readers := 2 * readerFramesPerInput * int64(info.Format.FrameBytes(info.Width, info.Height))
	return runtimeOverheadBytes + readers + px*(baseBytesPerPixel+perThread*int64(max(threads, 1)))
}

// ThreadsWithin returns the most threads, at most maxThreads, whose MemoryEstimate fits in
// budget bytes, and 0 when not even one thread fits.
func ThreadsWithin(info VideoInfo, maxThreads int, features []Feature, budget int64) int {
	for t := max(maxThreads, 1); t >= 1; t-- {
		if MemoryEstimate(info, t, features) <= budget {
			return t
		}
	}
	return 0
}
