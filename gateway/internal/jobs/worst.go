package jobs

import (
	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Worst is where a job's score is made: the HTTP API's worst route and the MCP
// worst_frames tool answer with it.
type Worst struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Phase     string `json:"phase"`
	// Score is the pooled (mean) VMAF; empty until the job succeeded.
	Score       string                  `json:"score,omitempty"`
	Percentiles *vmafxv1.JobPercentiles `json:"percentiles,omitempty"`
	WorstFrames []WorstFrame            `json:"worstFrames"`
	Scenes      *vmafxv1.JobScenes      `json:"scenes,omitempty"`
	// Report is the URI of the report beside the job's output (report.json, pictures).
	Report string `json:"report,omitempty"`
	// Plot names the per-frame score plot, when the job drew pictures.
	Plot *WorstPlot `json:"plot,omitempty"`
	// Message says why there is nothing to show yet, or where the pictures are read.
	Message string `json:"message,omitempty"`
}

// WorstFrame is one of the worst frames, with its picture's URI when the job drew them.
type WorstFrame struct {
	Index   int32  `json:"index"`
	VMAF    string `json:"vmaf"`
	Picture string `json:"picture,omitempty"`
	// PictureURL is the HTTP API's path of the picture, when the door reads it.
	PictureURL string `json:"pictureURL,omitempty"`
}

// WorstPlot is the URIs of the per-frame score plot, and the HTTP API's paths of it
// when the door reads it.
type WorstPlot struct {
	SVG    string `json:"svg"`
	PNG    string `json:"png"`
	SVGURL string `json:"svgURL,omitempty"`
	PNGURL string `json:"pngURL,omitempty"`
}

// WorstOf returns j's worst frames, percentiles and scenes from its status.
func WorstOf(j *vmafxv1.VmafxJob) *Worst {
	w := &Worst{Namespace: j.Namespace, Name: j.Name, Phase: string(j.Status.Phase), WorstFrames: []WorstFrame{}}
	if w.Phase == "" {
		w.Phase = string(vmafxv1.JobPending)
	}
	r := j.Status.Result
	if j.Status.Phase != vmafxv1.JobSucceeded || r == nil {
		w.Message = "the job has no score yet"
		return w
	}
	w.Score, w.Percentiles, w.Scenes, w.Report = r.Mean, r.Percentiles, r.Scenes, r.Report
	pictures := r.Report != "" && j.Spec.WorstFrames != nil && j.Spec.WorstFrames.Pictures
	for _, f := range r.WorstFrames {
		wf := WorstFrame{Index: f.Index, VMAF: f.VMAF}
		if pictures {
			wf.Picture = r.Report + vmafxv1.WorstFramePicture(int(f.Index))
		}
		w.WorstFrames = append(w.WorstFrames, wf)
	}
	if pictures {
		w.Plot = &WorstPlot{SVG: r.Report + vmafxv1.ReportPlotSVG, PNG: r.Report + vmafxv1.ReportPlotPNG}
		w.Message = "the pictures lie beside the job's output; read them with the output's own credentials"
	}
	return w
}
