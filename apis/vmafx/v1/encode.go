package v1

import (
	"encoding/json"
	"fmt"
)

// EncodeResultVersion is the version of the EncodeResult layout.
const EncodeResultVersion = "vmafx.dev/encode/v1"

// EncodeResult is what "vmafx-worker encode" writes to its termination message and
// stdout: where the encode went and what it weighs. Exactly one of the size fields or
// Error is meaningful.
//
// +kubebuilder:object:generate=false
type EncodeResult struct {
	// Version is EncodeResultVersion.
	Version string `json:"version"`
	// Output is the URI the encode was written to (without credentials).
	Output string `json:"output,omitempty"`
	// Encoder is the ffmpeg encoder that ran.
	Encoder string `json:"encoder,omitempty"`
	// Width and Height are the encode's size in pixels.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Frames is the number of frames encoded.
	Frames int `json:"frames,omitempty"`
	// Seconds is the encode's duration (frames over frame rate).
	Seconds float64 `json:"seconds,omitempty"`
	// Bytes is the encode's size; Bitrate is Bytes*8/Seconds in bits per second.
	Bytes   int64 `json:"bytes,omitempty"`
	Bitrate int64 `json:"bitrate,omitempty"`
	// WallSeconds is how long the encode and upload took.
	WallSeconds float64 `json:"wallSeconds,omitempty"`
	// Error is set when the encode failed.
	Error *WorkerError `json:"error,omitempty"`
}

// ParseEncodeResult decodes an encode Pod's termination message.
func ParseEncodeResult(msg []byte) (*EncodeResult, error) {
	var r EncodeResult
	if err := json.Unmarshal(msg, &r); err != nil {
		return nil, fmt.Errorf("termination message is not an encode result: %w", err)
	}
	if r.Version != EncodeResultVersion {
		return nil, fmt.Errorf("encode result version %q, want %q", r.Version, EncodeResultVersion)
	}
	if r.Error != nil {
		return &r, nil
	}
	if r.Frames <= 0 || r.Bytes <= 0 || r.Bitrate <= 0 || r.Output == "" {
		return nil, fmt.Errorf("encode result has no frames, size, bitrate or output")
	}
	return &r, nil
}

// ReportResultVersion is the version of the ReportResult layout.
const ReportResultVersion = "vmafx.dev/ladder-report/v1"

// ReasonReportWritten: a ladder's report (ladder.json, ladder.csv, ladder.svg) is written.
const ReasonReportWritten = "ReportWritten"

// ReportResult is what "vmafx-worker ladder-report" writes to its termination message.
//
// +kubebuilder:object:generate=false
type ReportResult struct {
	// Version is ReportResultVersion.
	Version string `json:"version"`
	// Files are the URIs written.
	Files []string `json:"files,omitempty"`
	// Error is set when the report could not be written.
	Error *WorkerError `json:"error,omitempty"`
}

// ParseReportResult decodes a report Pod's termination message.
func ParseReportResult(msg []byte) (*ReportResult, error) {
	var r ReportResult
	if err := json.Unmarshal(msg, &r); err != nil {
		return nil, fmt.Errorf("termination message is not a report result: %w", err)
	}
	if r.Version != ReportResultVersion {
		return nil, fmt.Errorf("report result version %q, want %q", r.Version, ReportResultVersion)
	}
	if r.Error == nil && len(r.Files) == 0 {
		return nil, fmt.Errorf("report result names no files")
	}
	return &r, nil
}
