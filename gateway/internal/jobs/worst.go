package jobs

import (
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Worst is where a job's score is made: the HTTP API's worst route and the MCP
// worst_frames tool answer with it.
type Worst struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Rendition is the index of the distorted video this is of, in the job's spec order
	// (0: spec.distorted, k: spec.renditions[k-1]); Distorted its URI; Renditions how many
	// distorted videos the job scores (1 but for a shared-reference group).
	Rendition  int    `json:"rendition"`
	Distorted  string `json:"distorted"`
	Renditions int    `json:"renditions"`
	// Phase is the video's: its row's once it has one, else the job's.
	Phase string `json:"phase"`
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

// ParseRendition reads a rendition query parameter (empty: 0, spec.distorted).
func ParseRendition(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 0 || k > vmafxv1.MaxWorkerRenditions-1 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("rendition %q: want the index of a distorted video in the job's spec order, 0 (spec.distorted) to %d", v, vmafxv1.MaxWorkerRenditions-1))
	}
	return k, nil
}

// Video is the distorted video k of j in spec order (vmafxv1.VmafxJob.Videos); a
// NotFound error names how many j has when it has no video k.
func Video(j *vmafxv1.VmafxJob, k int) (vmafxv1.JobVideo, error) {
	vs := j.Videos()
	if k < 0 || k >= len(vs) {
		return vmafxv1.JobVideo{}, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
			Reason: metav1.StatusReasonNotFound, Message: fmt.Sprintf("rendition %d: job %s scores %d distorted videos, 0 to %d in its spec order", k, j.Name, len(vs), len(vs)-1)}}
	}
	return vs[k], nil
}

// WorstOf returns the worst frames, percentiles and scenes of j's distorted video k (in
// spec order; 0 for a job of one) from its status: status.result's, or for a
// shared-reference group its row's of status.results.
func WorstOf(j *vmafxv1.VmafxJob, k int) (*Worst, error) {
	v, err := Video(j, k)
	if err != nil {
		return nil, err
	}
	w := &Worst{Namespace: j.Namespace, Name: j.Name, Rendition: k, Distorted: v.Distorted, Renditions: len(j.Videos()),
		Phase: string(v.Phase), WorstFrames: []WorstFrame{}}
	r := v.Worst
	if v.Phase != vmafxv1.JobSucceeded || r == nil {
		w.Message = "the video has no score yet"
		if v.Message != "" {
			w.Message = "the video has no score: " + v.Message
		}
		return w, nil
	}
	w.Score, w.Percentiles, w.Scenes, w.Report = v.Score, r.Percentiles, r.Scenes, r.Report
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
		w.Message = "the pictures lie beside the video's output; read them with the output's own credentials"
	}
	return w, nil
}
