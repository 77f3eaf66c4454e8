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
	// ErrTooSmall reports frames too small for a feature: ADM (below
	// 33x33, always computed), MS-SSIM (below 176x176) or CAMBI (below 216
	// in both width and height), the limits where libvmaf refuses them.
	ErrTooSmall = errors.New("vmaf: frame too small")
	// ErrTooLarge reports frames too large for CAMBI, whose window libvmaf
	// 3.2.0 limits to 65x65 (width + height up to about 6000 pixels).
	ErrTooLarge = errors.New("vmaf: frame too large")
	// ErrUnknownFeature reports an extra feature name or value this package
	// does not compute.
	ErrUnknownFeature = errors.New("vmaf: unknown feature")
	// ErrNoChroma reports a FrameSource that did not fill the chroma planes
	// PSNR asked for (Frame.Chroma), or filled planes of the wrong size.
	ErrNoChroma = errors.New("vmaf: source delivers no chroma planes")
)
