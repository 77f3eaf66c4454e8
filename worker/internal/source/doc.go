// Package source opens a video input for scoring: it fetches the URI,
// recognises Y4M (by a .y4m extension or the YUV4MPEG2 magic) or else reads
// raw planar YUV of a given geometry, and estimates the number of frames
// from the input's size for progress reports.
package source
