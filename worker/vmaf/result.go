package vmaf

import (
	"strconv"
)

// FrameScore holds one frame's VMAF score and the features it came from.
type FrameScore struct {
	// Index is the frame's position in the inputs (counting skipped frames).
	Index int
	// VMAF is the model's score.
	VMAF float64
	// VIF holds integer_vif_scale0..3.
	VIF [4]float64
	// ADM2 is integer_adm2; ADMScale holds integer_adm_scale0..3. AIM is
	// integer_aim, the additive impairment measure, and ADM3 is
	// integer_adm3, the even blend of ADM2 and 1-AIM.
	ADM2, AIM, ADM3 float64
	ADMScale        [4]float64
	// MotionSAD is VMAF_integer_feature_motion_sad_score (motion against the
	// previous frame, 0 for the first frame); Motion2 and Motion3 are
	// integer_motion2 and integer_motion3.
	MotionSAD, Motion2, Motion3 float64
}

func (f *FrameScore) feature(k featureKind) float64 {
	switch k {
	case featVIF0, featVIF1, featVIF2, featVIF3:
		return f.VIF[k-featVIF0]
	case featADM2:
		return f.ADM2
	case featMotion2:
		return f.Motion2
	}
	return 0
}

// Result is the outcome of Score.
type Result struct {
	// Model is the name of the model that produced the VMAF scores.
	Model string
	// Width, Height and BitDepth describe the scored frames.
	Width, Height, BitDepth int
	// Frames holds the scored frames in order (every Subsample-th frame).
	Frames []FrameScore
	// Pooled maps each metric name (see Metrics) to its pooled statistics.
	Pooled map[string]Pooled
	// FPS is the scoring speed in frames per second.
	FPS float64

	vifSuffix, admSuffix string
}

// Metric names, in libvmaf's JSON order. The VIF and ADM names take the
// model's gain-limit suffix (e.g. "_egl_1" for vmaf_v0.6.1neg).
const (
	metricADM2      = "integer_adm2"
	metricAIM       = "integer_aim"
	metricADM3      = "integer_adm3"
	metricADMScale  = "integer_adm_scale"
	metricMotionSAD = "VMAF_integer_feature_motion_sad_score"
	metricVIFScale  = "integer_vif_scale"
	metricMotion2   = "integer_motion2"
	metricMotion3   = "integer_motion3"
	metricVMAF      = "vmaf"
)

// eglSuffix is the feature-name suffix libvmaf appends for a non-default
// enhancement gain limit (feature_name.c, alias "egl").
func eglSuffix(egl float64) string {
	if egl == defaultEnhnGainLimit {
		return ""
	}
	return "_egl_" + strconv.FormatFloat(egl, 'g', -1, 64)
}

// Metrics returns the names of the per-frame metrics, in output order.
func (r *Result) Metrics() []string {
	names := []string{metricADM2 + r.admSuffix, metricAIM + r.admSuffix, metricADM3 + r.admSuffix}
	for i := range 4 {
		names = append(names, metricADMScale+strconv.Itoa(i)+r.admSuffix)
	}
	names = append(names, metricMotionSAD)
	for i := range 4 {
		names = append(names, metricVIFScale+strconv.Itoa(i)+r.vifSuffix)
	}
	return append(names, metricMotion2, metricMotion3, metricVMAF)
}

// values returns f's metrics in Metrics order.
func (f *FrameScore) values(dst []float64) []float64 {
	dst = append(dst[:0], f.ADM2, f.AIM, f.ADM3, f.ADMScale[0], f.ADMScale[1], f.ADMScale[2], f.ADMScale[3], f.MotionSAD,
		f.VIF[0], f.VIF[1], f.VIF[2], f.VIF[3], f.Motion2, f.Motion3, f.VMAF)
	return dst
}

// Metric returns the value of metric name for frame i of r, and whether the
// name is known.
func (r *Result) Metric(i int, name string) (float64, bool) {
	vals := r.Frames[i].values(nil)
	for k, n := range r.Metrics() {
		if n == name {
			return vals[k], true
		}
	}
	return 0, false
}

// pool fills r.Pooled.
func (r *Result) pool() {
	names := r.Metrics()
	cols := make([][]float64, len(names))
	var buf []float64
	for i := range r.Frames {
		buf = r.Frames[i].values(buf)
		for k, v := range buf {
			cols[k] = append(cols[k], v)
		}
	}
	r.Pooled = make(map[string]Pooled, len(names))
	for k, n := range names {
		r.Pooled[n] = pool(cols[k])
	}
}
