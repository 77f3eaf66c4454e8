package vmaf

import "errors"

// The kernel allocates only when it starts (frames, per-thread scratch) and nothing per
// frame, so its heap is known from the geometry. The constants come from the allocations
// of Score measured on 640x360 to 1920x1080 frames at 1, 2 and 4 threads (TotalAlloc of
// whole runs, see TestMemoryEstimateBoundsScore): about 16 bytes per pixel for the
// pipeline and 6 per thread with VMAF alone (the frame pair a thread keeps in flight, and
// ADM's a bands: its other bands are rings of rows), and up to 11 more per thread for each
// extra feature (SSIM the most); they are rounded up so that the estimate stays above what
// a run allocates.
const (
	baseBytesPerPixel    = 18
	threadBytesPerPixel  = 8
	featureBytesPerPixel = 12
	runtimeOverheadBytes = 48 << 20 // the Go runtime, the binary, I/O buffers
	readerFramesPerInput = 1        // each reader's one-frame byte buffer
)

// ErrMemoryLimit reports frames too large to score within the memory at hand.
var ErrMemoryLimit = errors.New("vmaf: not enough memory")

// MemoryEstimate returns about how many bytes scoring frames of info takes with threads
// goroutines and the extra features under the default model on the CPU: the two readers'
// buffers, the pipeline's frames and every thread's scratch, plus the Go runtime. It is
// meant to be compared with a memory limit before any frame is read; MemoryEstimateFor
// counts another model and a device's frames in flight.
func MemoryEstimate(info VideoInfo, threads int, features []Feature) int64 {
	return MemoryEstimateFor(info, threads, features, nil, 0)
}

// Beyond the default model (measured as above, 1280x720 at 1 and 3 threads): a VMAF v1
// model's per-thread scratch (SpEED chroma, CAMBI, ADM without VIF) takes about 9 bytes a
// pixel more than VIF's and ADM's, in 4:2:0 and 4:4:4 alike (rounded up, as above), and
// its frames carry their chroma planes (SpEED reads them), 16 bits a sample; a five-frame
// motion window keeps one frame pair more.
const v1ThreadBytesPerPixel = 12

// MemoryEstimateFor is MemoryEstimate under model m (nil: the default model), with
// framesInFlight frames queued on a device (what Score keeps for a FrameOffload: its
// FramesInFlight, at most 32; 0 on the CPU): each is a frame pair the pipeline holds
// beside the threads' own, and 8-bit frames are read as bytes and widened by the
// threads that score them on the CPU. A device's own host memory (its staging) is the backend's to
// count.
func MemoryEstimateFor(info VideoInfo, threads int, features []Feature, m *Model, framesInFlight int) int64 {
	px := int64(info.Width) * int64(info.Height)
	threads = max(threads, 1)
	perThread := int64(threadBytesPerPixel + featureBytesPerPixel*len(features))
	readers := 2 * readerFramesPerInput * int64(info.Format.FrameBytes(info.Width, info.Height))
	est := runtimeOverheadBytes + readers + px*(baseBytesPerPixel+perThread*int64(threads))
	// The constants hold the frame pairs of the default model: threads + 3 of them, luma
	// only, 4 bytes a pixel. Count the rest: the frames' chroma, a longer motion window,
	// a device's frames in flight.
	slots := int64(threads + 3)
	pair := 4 * px // both pictures' luma, 16 bits a sample
	if m != nil {
		if m.speed != nil || m.cambi != nil {
			est += int64(threads) * v1ThreadBytesPerPixel * px
		}
		if m.speed != nil {
			cw, ch := info.Format.chromaSize(info.Width, info.Height)
			chroma := 8 * int64(cw) * int64(ch) // both pictures' two planes, 16 bits a sample
			pair += chroma
			est += slots * chroma
		}
		if lag := m.motion.minIndex(); lag > 1 {
			est += int64(lag-1) * pair
		}
	}
	if framesInFlight > 1 {
		// Score keeps threads + 2 + lag + framesInFlight - 1 frame pairs.
		est += int64(min(framesInFlight, maxFramesInFlight)-1) * pair
	}
	if framesInFlight > 0 && info.Format.BitDepth() == 8 {
		// A device's run reads 8-bit luma as bytes (Frame.Packed), and each thread widens
		// the reference, the distorted and the previous reference into buffers of its own
		// for the frames the CPU scores: three 16-bit planes a thread. The slots keep their
		// 16-bit count: a source that does not keep bytes (a shared reference) fills them.
		est += int64(threads) * 3 * 2 * px
	}
	return est
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
