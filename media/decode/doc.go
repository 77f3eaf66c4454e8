// Package decode turns encoded videos (H.264, HEVC, AV1, VP9, FFV1 and the
// other codecs of Debian's ffmpeg, in MP4, MOV, Matroska, WebM, MPEG-TS and
// the other containers it reads) into frames for the kernel.
//
// The worker stays a static Go binary: it runs ffprobe to describe an input
// and ffmpeg as a child process that decodes it (and, when asked, scales it)
// to YUV4MPEG2 on a pipe, which vmaf.OpenY4M reads. Nothing decoded touches
// the disk: the pipe holds a few frames, the kernel's slots the rest.
//
// Inputs reach ffmpeg as a local seekable file (file:// inputs, spooled
// objects) or streamed on its stdin (HTTP and object storage, through the
// worker's own fetchers: ffmpeg is allowed only the file and pipe protocols,
// so it never opens a network connection of its own).
//
// Every failure of ffmpeg or ffprobe, including a decode error half-way
// through (ffmpeg runs with -xerror), is an error wrapping ErrUndecodable
// that quotes ffmpeg's last error lines on one line; a missing ffmpeg is
// ErrNoFFmpeg.
package decode
