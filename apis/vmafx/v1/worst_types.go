package v1

import "fmt"

// Worst frames, percentiles and scenes: where a score is made, beside the pooled mean that
// hides short bad stretches. The worker result carries them compactly (it shares the 4 KiB
// termination message); the job's status a smaller summary; the full report, with every
// feature of each worst frame and every scene, lies beside spec.output.

// Bounds on what a result and a status carry.
const (
	// DefaultWorstFrames is how many worst frames a score lists unless told.
	DefaultWorstFrames = 5
	// MaxWorstFrames bounds the worst frames a result and a status list.
	MaxWorstFrames = 20
	// MaxWorstFrameFeatures bounds the features listed beside each worst frame in a result.
	MaxWorstFrameFeatures = 4
)

// WorkerPercentiles are percentiles of the per-frame VMAF scores over the whole video
// (linear interpolation between the closest ranks, numpy's default).
//
// +kubebuilder:object:generate=false
type WorkerPercentiles struct {
	P1  float64 `json:"p1"`
	P5  float64 `json:"p5"`
	P50 float64 `json:"p50"`
}

// WorkerFrame is one of the worst frames: its index in the inputs (as in the per-frame
// output), its VMAF score and a few of the model's features (libvmaf's names), those
// furthest from a clean picture.
//
// +kubebuilder:object:generate=false
type WorkerFrame struct {
	Index    int                `json:"index"`
	VMAF     float64            `json:"vmaf"`
	Features map[string]float64 `json:"features,omitempty"`
}

// WorkerScene is one scene's pooled VMAF: the frames from Start (an index in the inputs)
// up to the next scene cut.
//
// +kubebuilder:object:generate=false
type WorkerScene struct {
	Start  int     `json:"start"`
	Frames int     `json:"frames"`
	Mean   float64 `json:"mean"`
	// HarmonicMean is left out of a rendition's row (WorkerRendition), which the
	// status does not show it from.
	HarmonicMean float64 `json:"harmonicMean,omitempty"`
	Min          float64 `json:"min"`
	P5           float64 `json:"p5"`
}

// WorkerScenes summarises the scenes: how many, and the one with the lowest mean.
//
// +kubebuilder:object:generate=false
type WorkerScenes struct {
	Count int          `json:"count"`
	Worst *WorkerScene `json:"worst,omitempty"`
}

// WorstFrames asks for the worst frames of a score and their pictures.
type WorstFrames struct {
	// count is how many of the lowest-scoring frames the status lists, 0 to 20 (0 lists
	// none). Unset, 5.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	// +optional
	Count *int32 `json:"count,omitempty"`
	// pictures writes, beside spec.output (which it needs), a PNG of each worst frame
	// (reference, distorted and a difference heat map side by side) and a plot of the
	// per-frame scores (SVG and PNG) with the worst frames marked, under the output's URI
	// followed by ".report/". It costs a second decode of the inputs up to the last
	// worst frame.
	// +optional
	Pictures bool `json:"pictures,omitempty"`
}

// JobPercentiles are percentiles of the per-frame VMAF scores, as decimal strings with six
// decimals.
type JobPercentiles struct {
	// p1 is the 1st percentile.
	P1 string `json:"p1"`
	// p5 is the 5th percentile.
	P5 string `json:"p5"`
	// p50 is the median.
	P50 string `json:"p50"`
}

// JobWorst is where a score is made, in a job's status.result and in each row of its
// status.results.
type JobWorst struct {
	// percentiles are the 1st, 5th and 50th percentiles of the per-frame scores.
	// +optional
	Percentiles *JobPercentiles `json:"percentiles,omitempty"`
	// worstFrames are the lowest-scoring frames, lowest first (spec.worstFrames.count).
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	WorstFrames []JobFrame `json:"worstFrames,omitempty"`
	// scenes summarises the scenes found in the reference: their count and the worst.
	// +optional
	Scenes *JobScenes `json:"scenes,omitempty"`
	// report is where the full report lies (report.json, and the pictures when
	// spec.worstFrames.pictures is set): the output's URI followed by ".report/".
	// +optional
	Report string `json:"report,omitempty"`
}

// JobFrame is one of the worst frames in a job's status.
type JobFrame struct {
	// index is the frame's index in the inputs, as in the per-frame output.
	Index int32 `json:"index"`
	// vmaf is its score, a decimal string with six decimals.
	VMAF string `json:"vmaf"`
}

// JobScene is one scene's pooled VMAF in a job's status, as decimal strings with six
// decimals.
type JobScene struct {
	// start is the index of the scene's first frame.
	Start int32 `json:"start"`
	// frames is the number of scored frames in the scene.
	Frames int32 `json:"frames"`
	// mean is the scene's pooled (mean) VMAF.
	Mean string `json:"mean"`
	// min is the scene's lowest per-frame score.
	// +optional
	Min string `json:"min,omitempty"`
	// p5 is the scene's 5th percentile.
	// +optional
	P5 string `json:"p5,omitempty"`
}

// JobScenes summarises the scenes the worker found in the reference.
type JobScenes struct {
	// count is the number of scenes (scene cuts plus one).
	Count int32 `json:"count"`
	// worst is the scene with the lowest mean.
	// +optional
	Worst *JobScene `json:"worst,omitempty"`
}

// The report's layout: what the worker writes under the output's URI followed by
// ReportSuffix, and the names clients find the pictures by.
const (
	ReportSuffix = ".report/"
	// ReportJSON lists everything: pooled scores, percentiles, every worst frame with all
	// its features, every scene.
	ReportJSON = "report.json"
	// ReportPlotSVG and ReportPlotPNG plot the per-frame scores with the worst frames marked.
	ReportPlotSVG = "scores.svg"
	ReportPlotPNG = "scores.png"
)

// WorstFramePicture is the name, in the report, of the picture of the frame at index:
// reference, distorted and difference heat map side by side.
func WorstFramePicture(index int) string { return fmt.Sprintf("frame-%06d.png", index) }

// WorstOf returns the 5th percentile and the worst frame of a score, for a comparison's
// or a ladder's row; empty and nil when it has none.
func (w *JobWorst) WorstOf() (p5 string, worst *JobFrame) {
	if w == nil {
		return "", nil
	}
	if w.Percentiles != nil {
		p5 = w.Percentiles.P5
	}
	if len(w.WorstFrames) > 0 {
		f := w.WorstFrames[0]
		worst = &f
	}
	return p5, worst
}

// WorstOf returns the 5th percentile and the worst frame of a job's result (JobWorst's);
// empty and nil for no result.
func (r *JobResult) WorstOf() (p5 string, worst *JobFrame) {
	if r == nil {
		return "", nil
	}
	return r.JobWorst.WorstOf()
}
