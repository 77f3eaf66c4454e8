// Package pictures draws a score's worst frames and its per-frame scores, in pure Go
// (image/png, and SVG as text): for a frame, the reference, the distorted picture and a
// heat map of their difference side by side; for a video, a plot of the per-frame VMAF
// with the worst frames marked. Pictures show luma, which is what VMAF scores. The output
// is deterministic: the same inputs give the same bytes.
package pictures
