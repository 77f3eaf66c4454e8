// Package workermemory is what a worker plans to hold in memory beside the kernel's own
// estimate (vmaf.MemoryEstimate): the share of its container's limit it plans to use,
// and an ffmpeg decoder's frames. The worker sizes its threads by it, and the operator
// the memory of a Pod that scores several distorted videos against one reference, so
// that both count alike.
package workermemory

import "github.com/vmafx/vmafx/vmaf"

// BudgetPercent is the share of the memory limit the worker plans to use: the rest is
// headroom for what the estimates leave out (goroutine stacks, the HTTP client, the
// result).
const BudgetPercent = 85

// DecoderBytes is what one ffmpeg child decoding frames of info holds, in the same
// container: its code and libraries, and its frame pools (references, threads' frames).
// Measured at 1080p H.264 (docs/benchmarks.md): about 175 MiB each at peak RSS.
func DecoderBytes(info vmaf.VideoInfo) int64 {
	return 96<<20 + 24*int64(info.Format.FrameBytes(info.Width, info.Height))
}

// Default1080p is the geometry a Pod is sized for when the job does not say its own:
// 1080p, 8-bit 4:2:0, most renditions' ladder top.
var Default1080p = vmaf.VideoInfo{Width: 1920, Height: 1080, Format: vmaf.YUV420P}

// Rendition is the memory limit one more distorted video adds to a worker that scores
// several against one decoded reference of info at its geometry: its kernel at one thread
// (the least the worker runs it with) with features under model m (nil: the default
// model), and its decoder (at decoded, the distorted video's own size, or the reference's
// when that is unknown), over BudgetPercent, rounded up to a MiB.
func Rendition(info, decoded vmaf.VideoInfo, features []vmaf.Feature, m *vmaf.Model) int64 {
	need := vmaf.MemoryEstimateFor(info, 1, features, m, 0) + DecoderBytes(decoded)
	limit := (need*100 + BudgetPercent - 1) / BudgetPercent
	return (limit + 1<<20 - 1) &^ (1<<20 - 1)
}
