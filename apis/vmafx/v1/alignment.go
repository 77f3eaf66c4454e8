package v1

import (
	"fmt"
	"strconv"
)

// The frame offset search (spec.alignment.auto, the worker's --auto-align, and the check
// of every plain score): what the worker reports and what the job's status shows.

// JobAligned is the condition on the inputs' frame offset: True when spec.alignment.auto
// found and scored it, False when the pairing scored is likely misaligned (another
// offset fits the frames clearly better; the score is kept). Absent when not checked.
const JobAligned = "Aligned"

// WorkerAlignment is what the worker's frame offset search found. An offset is the
// distorted's frame index minus the reference's for the same picture: +2 when the
// distorted has two leader frames, -3 when it lacks the reference's first three.
//
// +kubebuilder:object:generate=false
type WorkerAlignment struct {
	// Auto is set when the offset was searched for and scored (--auto-align).
	Auto bool `json:"auto,omitempty"`
	// Offset is the offset that fits the frames best; with Auto, the one scored (or 0
	// when none fits clearly better than 0).
	Offset int `json:"offset"`
	// ReferenceStart and DistortedStart are the frames each input skipped for scoring.
	ReferenceStart int `json:"referenceStart,omitempty"`
	DistortedStart int `json:"distortedStart,omitempty"`
	// Misaligned is set when Offset fits the frames clearly better than the pairing
	// scored: the score is likely wrong.
	Misaligned bool `json:"misaligned,omitempty"`
	// Confidence, 0 to 1, is the share of the runner-up offset's error that Offset
	// removes; below 0.2 an offset other than 0 is not trusted.
	Confidence float64 `json:"confidence"`
	// Confirmed is set when the second measure (the mean absolute difference) picks the
	// same offset.
	Confirmed bool `json:"confirmed,omitempty"`
	// Measure names the measure; BestPSNR is it at Offset and BasePSNR at the pairing
	// the starts given make (frame 0 with frame 0 without them), in dB.
	Measure  string  `json:"measure"`
	BestPSNR float64 `json:"bestPSNR"`
	BasePSNR float64 `json:"basePSNR"`
	// Window is the offsets searched either side of 0; Pairs the frame pairs compared
	// at each.
	Window int `json:"window"`
	Pairs  int `json:"pairs"`
	// Rate says how the inputs' frame rates differ, when they do and were paired anyway.
	Rate string `json:"rate,omitempty"`
}

// JobAlignment is status.result.alignment: the frame offset search's findings.
type JobAlignment struct {
	// auto is set when spec.alignment.auto searched and scored the offset.
	// +optional
	Auto bool `json:"auto,omitempty"`
	// offset is the distorted's frame index minus the reference's for the same picture
	// that fits the frames best: +2 for two leader frames in the distorted.
	Offset int32 `json:"offset"`
	// referenceStart is the number of reference frames skipped for scoring.
	// +optional
	ReferenceStart int32 `json:"referenceStart,omitempty"`
	// distortedStart is the number of distorted frames skipped for scoring.
	// +optional
	DistortedStart int32 `json:"distortedStart,omitempty"`
	// misaligned is set when offset fits the frames clearly better than the pairing
	// scored: the score is likely wrong (see the Aligned condition).
	// +optional
	Misaligned bool `json:"misaligned,omitempty"`
	// confidence, from 0 to 1, as a decimal string with two decimals: the share of the
	// runner-up offset's error that offset removes.
	// +optional
	Confidence string `json:"confidence,omitempty"`
	// measure names the search's measure and its values at offset and without it, e.g.
	// "luma-psnr-thumbnail: 38.21 dB at offset +2, 12.40 dB at 0".
	// +optional
	Measure string `json:"measure,omitempty"`
	// rate says how the inputs' frame rates differ, when they were paired anyway.
	// +optional
	Rate string `json:"rate,omitempty"`
}

// DescribeOffset says, for people, what a frame offset means for the inputs.
func DescribeOffset(offset int) string {
	switch {
	case offset > 0:
		return fmt.Sprintf("the distorted's frame %d shows the reference's first (%s, e.g. leader frames)", offset, framesOf(offset, "extra frame"))
	case offset < 0:
		return fmt.Sprintf("the distorted's first frame shows the reference's frame %d (the distorted lacks %s)", -offset, framesOf(-offset, "frame"))
	}
	return "they start together"
}

// SignedOffset writes an offset with its sign: "+2", "-3", "0".
func SignedOffset(offset int) string {
	if offset > 0 {
		return "+" + strconv.Itoa(offset)
	}
	return strconv.Itoa(offset)
}

// MisalignedMessage says, for people, what a likely misalignment a is and what to do.
func MisalignedMessage(a *WorkerAlignment) string {
	return fmt.Sprintf("the inputs look misaligned: %s (offset %s, confidence %.2f; %s %.2f dB against %.2f dB as scored); the score is kept: give --auto-align (spec.alignment.auto: true) to score the frames that match",
		DescribeOffset(a.Offset), SignedOffset(a.Offset), a.Confidence, a.Measure, a.BestPSNR, a.BasePSNR)
}

func framesOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
