// Package encode encodes a reference video with ffmpeg at one rung of an encoding
// ladder (a size, an encoder, a quality setting) and measures the encode: its size,
// frames, duration and bitrate. It is what "vmafx-worker encode" runs for a VmafxLadder.
//
// The reference is read from a local path (a fetched input is spooled first: ffmpeg
// seeks in MP4s); the encode is written to a local Matroska file, which the caller
// uploads to the ladder's output.
package encode
