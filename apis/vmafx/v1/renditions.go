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
	// Percentiles, WorstFrames (without their features) and Scenes are as in
	// WorkerResult, their scores rounded to six decimals, as the status shows them: a
	// rendition's report.json keeps them whole. WorstFrames are halved, in every row
	// alike, while the rows do not fit the termination message.
	Percentiles *WorkerPercentiles `json:"percentiles,omitempty"`
	WorstFrames []WorkerFrame      `json:"worstFrames,omitempty"`
	Scenes      *WorkerScenes      `json:"scenes,omitempty"`
	// Report is set when the rendition's report (report.json, and its pictures when
	// asked for) was written beside its output, under the output's URI followed by
	// ReportSuffix: the URI is the job's to know, and left out to save the message's room.
	Report bool `json:"report,omitempty"`
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

// JobVideo is one distorted video of a job, in spec order (spec.distorted, then
// spec.renditions), and what its status says of it.
//
// +kubebuilder:object:generate=false
type JobVideo struct {
	// Distorted is the video's URI; Output its per-frame output's, "" without one.
	Distorted, Output string
	// Phase is its row's phase (Succeeded or Failed) once it has one, else the job's.
	Phase JobPhase
	// Score is its pooled VMAF, once it succeeded.
	Score string
	// Worst is where its score is made, once it succeeded; nil otherwise.
	Worst *JobWorst
	// Message says why it failed.
	Message string
}

// Videos lists the distorted videos of j, each with its own result: a job of one video
// lists it with status.result, a job with spec.renditions each video with its row of
// status.results.
func (j *VmafxJob) Videos() []JobVideo {
	phase := j.Status.Phase
	if phase == "" {
		phase = JobPending
	}
	first := JobVideo{Distorted: string(j.Spec.Distorted), Phase: phase}
	if j.Spec.Output != nil {
		first.Output = string(*j.Spec.Output)
	}
	out := []JobVideo{first}
	for _, r := range j.Spec.Renditions {
		v := JobVideo{Distorted: string(r.Distorted), Phase: phase}
		if r.Output != nil {
			v.Output = string(*r.Output)
		}
		out = append(out, v)
	}
	if len(j.Spec.Renditions) == 0 {
		if res := j.Status.Result; phase == JobSucceeded && res != nil {
			out[0].Score, out[0].Worst = res.Mean, &res.JobWorst
		} else if phase == JobFailed {
			out[0].Message = j.Status.Message
		}
		return out
	}
	for k, row := range j.RenditionRows() {
		v := &out[k]
		switch {
		case row == nil && phase == JobSucceeded:
			// A job ends once every video has a row: one without finished as a whole.
			v.Phase, v.Message = JobFailed, "the job finished without a row for this video"
		case row == nil:
			if phase == JobFailed {
				v.Message = j.Status.Message
			}
		case row.Phase == JobSucceeded:
			v.Phase, v.Score, v.Worst = row.Phase, row.Mean, &row.JobWorst
		default:
			v.Phase, v.Message = row.Phase, row.Reason+": "+row.Message
		}
	}
	return out
}
