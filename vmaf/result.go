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
	// PSNRY, PSNRCb and PSNRCr are psnr_y, psnr_cb and psnr_cr in dB
	// (FeaturePSNR; the chroma values stay 0 for gray input). SSIM is
	// float_ssim, MSSSIM float_ms_ssim and CAMBI cambi. Each is zero unless
	// its feature is in Result.Features.
	PSNRY, PSNRCb, PSNRCr float64
	SSIM, MSSSIM, CAMBI   float64
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
	// Features lists the extra features computed (Options.Features), in
	// output order, without repeats; nil for VMAF alone.
	Features []Feature

	vifSuffix, admSuffix string
	chroma               bool // psnr_cb and psnr_cr are present
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

// Metrics returns the names of the per-frame metrics, in output order:
// libvmaf's, with the extra features (Result.Features) between the VIF
// scales and integer_motion2 as libvmaf writes them.
func (r *Result) Metrics() []string {
	names := []string{metricADM2 + r.admSuffix, metricAIM + r.admSuffix, metricADM3 + r.admSuffix}
	for i := range 4 {
		names = append(names, metricADMScale+strconv.Itoa(i)+r.admSuffix)
	}
	names = append(names, metricMotionSAD)
	for i := range 4 {
		names = append(names, metricVIFScale+strconv.Itoa(i)+r.vifSuffix)
	}
	names = append(names, r.ExtraMetrics()...)
	return append(names, metricMotion2, metricMotion3, metricVMAF)
}

// ExtraMetrics returns the names of the extra features' metrics
// (Result.Features), in output order: a subset of Metrics, empty for VMAF
// alone.
func (r *Result) ExtraMetrics() []string {
	var names []string
	for _, f := range r.Features {
		switch f {
		case FeaturePSNR:
			names = append(names, metricPSNRY)
			if r.chroma {
				names = append(names, metricPSNRCb, metricPSNRCr)
			}
		case FeatureSSIM:
			names = append(names, metricSSIM)
		case FeatureMSSSIM:
			names = append(names, metricMSSSIM)
		case FeatureCAMBI:
			names = append(names, metricCAMBI)
		}
	}
	return names
}

// values returns f's metrics in Metrics order.
func (r *Result) values(f *FrameScore, dst []float64) []float64 {
	dst = append(dst[:0], f.ADM2, f.AIM, f.ADM3, f.ADMScale[0], f.ADMScale[1], f.ADMScale[2], f.ADMScale[3], f.MotionSAD,
		f.VIF[0], f.VIF[1], f.VIF[2], f.VIF[3])
	for _, ft := range r.Features {
		switch ft {
		case FeaturePSNR:
			dst = append(dst, f.PSNRY)
			if r.chroma {
				dst = append(dst, f.PSNRCb, f.PSNRCr)
			}
		case FeatureSSIM:
			dst = append(dst, f.SSIM)
		case FeatureMSSSIM:
			dst = append(dst, f.MSSSIM)
		case FeatureCAMBI:
			dst = append(dst, f.CAMBI)
		}
	}
	return append(dst, f.Motion2, f.Motion3, f.VMAF)
}

// Metric returns the value of metric name for frame i of r, and whether the
// name is known.
func (r *Result) Metric(i int, name string) (float64, bool) {
	vals := r.values(&r.Frames[i], nil)
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
		buf = r.values(&r.Frames[i], buf)
		for k, v := range buf {
			cols[k] = append(cols[k], v)
		}
	}
	r.Pooled = make(map[string]Pooled, len(names))
	for k, n := range names {
		r.Pooled[n] = pool(cols[k])
	}
}
