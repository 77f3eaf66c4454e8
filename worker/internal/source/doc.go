// Package source opens a video input for scoring. It fetches the URI and
// decides the input's format from its content, never from its name: a
// YUV4MPEG2 signature is Y4M, read in Go; a container signature (MP4/MOV,
// Matroska/WebM, MPEG-TS, ...) or, without raw geometry, anything ffprobe
// recognises as video is decoded by ffmpeg (package decode); anything else is
// raw planar YUV of the given geometry.
//
// Encoded inputs reach ffmpeg by path when they are local files, streamed on
// its stdin otherwise, except an MP4/MOV whose index follows its media data:
// ffmpeg needs to seek in it, so it is spooled to a local file first, within
// a size limit. A distorted input of another size than the reference is
// scaled to the reference's size by ffmpeg (bicubic).
package source
