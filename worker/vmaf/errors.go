package vmaf

import "errors"

// Sentinel errors returned (wrapped) by this package. Test them with errors.Is.
var (
	// ErrTruncated reports an input that ended in the middle of a frame.
	ErrTruncated = errors.New("vmaf: truncated frame")
	// ErrUnknownPixelFormat reports a pixel format or Y4M colour space this
	// package does not read.
	ErrUnknownPixelFormat = errors.New("vmaf: unknown pixel format")
	// ErrBadHeader reports a malformed Y4M stream or frame header, or
	// invalid raw geometry.
	ErrBadHeader = errors.New("vmaf: bad header")
	// ErrFrameCountMismatch reports reference and distorted inputs with a
	// different number of frames.
	ErrFrameCountMismatch = errors.New("vmaf: frame count mismatch")
	// ErrSizeMismatch reports reference and distorted inputs whose geometry
	// or bit depth differ.
	ErrSizeMismatch = errors.New("vmaf: size mismatch")
	// ErrNoFrames reports inputs (or a frame range) with no frame to score.
	ErrNoFrames = errors.New("vmaf: no frames")
	// ErrUnknownModel reports a model name that is neither built in nor a
	// readable file.
	ErrUnknownModel = errors.New("vmaf: unknown model")
	// ErrBadModel reports a model file that is not a valid libvmaf model.
	ErrBadModel = errors.New("vmaf: bad model")
	// ErrTooSmall reports frames too small for the ADM feature, which
	// libvmaf rejects below 33x33.
	ErrTooSmall = errors.New("vmaf: frame too small")
)
