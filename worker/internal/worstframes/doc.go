// Package worstframes finds where a score is made: the K lowest-scoring frames with their
// features, percentiles of the per-frame scores, and the scenes of the reference (cut on
// luma histograms) with each scene's pooled score. It reads a finished vmaf.Result and,
// for the scenes, the reference's frames as the kernel reads them; it never changes a
// score.
package worstframes
