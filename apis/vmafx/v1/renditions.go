package v1

import "fmt"

// MaxWorkerRenditions is the most distorted videos one worker scores against one decoded
// reference (vmafx-worker score with --distorted repeated): each holds its own frames
// and decoder, and their rows must fit the 4 KiB termination message beside the
// provenance.
const MaxWorkerRenditions = 8

// WorkerRendition is one distorted video's row in the result of a worker that scored
// several against one decoded reference (WorkerResult.Renditions), in the order they were
// given. Exactly one of the score fields or Error is meaningful: a rendition that could
// not be scored (another length, not a video) fails its row only.
//
// +kubebuilder:object:generate=false
type WorkerRendition struct {
	Score        float64 `json:"score"`
	HarmonicMean float64 `json:"harmonicMean"`
	Min          float64 `json:"min"`
	Max          float64 `json:"max"`
	Frames       int     `json:"frames"`
	FPS          float64 `json:"fps"`
	// P5 is the 5th percentile of the per-frame scores; WorstFrame the lowest-scoring
	// frame, without its features.
	P5         float64      `json:"p5,omitempty"`
	WorstFrame *WorkerFrame `json:"worstFrame,omitempty"`
	// Features are the pooled means of the extra metrics asked for.
	Features map[string]float64 `json:"features,omitempty"`
	// DistortedScaledFrom, Alignment and OutputError are as in WorkerResult.
	DistortedScaledFrom string           `json:"distortedScaledFrom,omitempty"`
	Alignment           *WorkerAlignment `json:"alignment,omitempty"`
	OutputError         string           `json:"outputError,omitempty"`
	// Error says why this rendition was not scored.
	Error *WorkerError `json:"error,omitempty"`
}

// checkRenditions checks the rows of a renditions result as ParseWorkerResult checks a
// single score.
func checkRenditions(rows []WorkerRendition) error {
	if len(rows) > MaxWorkerRenditions {
		return fmt.Errorf("worker result has %d renditions, at most %d", len(rows), MaxWorkerRenditions)
	}
	for i, r := range rows {
		if r.Error != nil {
			continue
		}
		if r.Frames <= 0 {
			return fmt.Errorf("worker result's rendition %d has no frames", i)
		}
		if r.Score < 0 || r.Score > 100 || r.Min > r.Score || r.Max < r.Score {
			return fmt.Errorf("worker result's rendition %d score %g (min %g, max %g) is out of range", i, r.Score, r.Min, r.Max)
		}
	}
	return nil
}

// RenditionRows are the rows of status.results by the index of their distorted video in
// spec order (0: spec.distorted, then spec.renditions), nil where a video has no row yet.
// Rows are kept in spec order, so a URI given twice matches its rows in turn; a row that
// matches no video is left out.
func (j *VmafxJob) RenditionRows() []*JobRenditionResult {
	uris := []VideoURI{j.Spec.Distorted}
	for _, r := range j.Spec.Renditions {
		uris = append(uris, r.Distorted)
	}
	out := make([]*JobRenditionResult, len(uris))
	next := 0
	for i := range j.Status.Results {
		row := &j.Status.Results[i]
		for k := next; k < len(uris); k++ {
			if string(uris[k]) == row.Distorted {
				out[k], next = row, k+1
				break
			}
		}
	}
	return out
}
