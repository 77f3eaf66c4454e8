package v1

import "fmt"

// LabelChunk on a worker Pod of a job split by spec.parallelism names its step: "probe"
// (counts the frames), the chunk's index ("0", "1", ...) or "merge" (assembles the output).
const LabelChunk = "vmafx.dev/chunk"

// The vmafx.dev/chunk values of the probe and merge Pods.
const (
	ChunkProbe = "probe"
	ChunkMerge = "merge"
)

// ChunkRange is the frames one chunk scores: Count frames from Start, counted in the
// frame pairs the job scores (after spec.alignment's starts).
type ChunkRange struct {
	Start, Count int
}

// PlanChunks splits frames into min(parallelism, frames) chunks of consecutive frames,
// the first frames%n of them one frame longer than the rest. The operator plans with it
// and the chunks' ranges are what the worker is given; nothing else depends on the split.
func PlanChunks(frames, parallelism int) []ChunkRange {
	n := min(max(parallelism, 1), frames)
	if n <= 0 {
		return nil
	}
	plan := make([]ChunkRange, n)
	start := 0
	for i := range plan {
		count := frames / n
		if i < frames%n {
			count++
		}
		plan[i] = ChunkRange{Start: start, Count: count}
		start += count
	}
	return plan
}

// ChunkPartURI is where chunk i of a job writes its per-frame scores for the merge: beside
// the job's output, whose scheme and credentials it shares. The merge reads them in chunk
// order and removes them once the output is written.
func ChunkPartURI(output string, i int) string {
	return fmt.Sprintf("%s.chunk-%03d", output, i)
}
