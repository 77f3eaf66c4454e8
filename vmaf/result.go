package vmaf

import (
	"fmt"
	"math"
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
	// ModelCAMBI is the model's CAMBI feature, computed with the model's options
	// (VMAF v1: cambi_hrs_1080_cmxv_17_vlt_0.06); CAMBI above is the extra
	// feature's, with libvmaf's default options.
	ModelCAMBI float64
	// SpeedU, SpeedV and SpeedUV are speed_chroma_u, speed_chroma_v and
	// speed_chroma_uv: SpEED of the chroma planes, for models that use them
	// (VMAF v1).
	SpeedU, SpeedV, SpeedUV float64
	// Bootstrap is set for a bootstrapped model (vmaf_b_v0.6.3): each of its
	// models' scores and the interval they give.
	Bootstrap *BootstrapScore
}

// BootstrapScore is a bootstrapped model's view of one frame (predict.c,
// vmaf_bootstrap_predict_score_at_index).
type BootstrapScore struct {
	// Models holds each bootstrap model's score: vmaf_0001, vmaf_0002, ...
	Models []float64
	// Bagging is the mean of the bootstrap models' scores (vmaf_bagging),
	// StdDev their standard deviation (vmaf_stddev), CILow and CIHigh the
	// 95% confidence interval (vmaf_ci_p95_lo, vmaf_ci_p95_hi), each mapped
	// through the model's transform and clip as libvmaf does.
	Bagging, StdDev, CILow, CIHigh float64
}

func (f *FrameScore) feature(k featureKind) float64 {
	switch k {
	case featVIF0, featVIF1, featVIF2, featVIF3:
		return f.VIF[k-featVIF0]
	case featADM2:
		return f.ADM2
	case featADM3:
		return f.ADM3
	case featAIM:
		return f.AIM
	case featADMScale0, featADMScale1, featADMScale2, featADMScale3:
		return f.ADMScale[k-featADMScale0]
	case featMotion2:
		return f.Motion2
	case featMotion3:
		return f.Motion3
	case featCAMBI:
		return f.ModelCAMBI
	case featSpeedU:
		return f.SpeedU
	case featSpeedV:
		return f.SpeedV
	case featSpeedUV:
		return f.SpeedUV
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
	// Offloaded is how many of Frames the Offload took part in; the others
	// were scored on the CPU alone, while an Options.Opening opened.
	Offloaded int
	// Features lists the extra features computed (Options.Features), in
	// output order, without repeats; nil for VMAF alone.
	Features []Feature

	layout MetricLayout
	chroma bool // psnr_cb and psnr_cr are present
}

// MetricLayout says which of the model's metrics a Result holds and the names
// libvmaf gives them, which carry the options of the extractor that computed them
// (e.g. "_egl_1" for vmaf_v0.6.1neg, "_mmxv_18" for VMAF v1's motion).
type MetricLayout struct {
	// VIF: the VIF scales are computed (VMAF v1 models use none).
	VIF                                bool
	VIFSuffix, ADMSuffix, MotionSuffix string
	// CAMBI is the model's CAMBI metric name, empty when the model has none.
	CAMBI string
	// Speed: the SpEED chroma metrics are computed, named with SpeedSuffix.
	Speed       bool
	SpeedSuffix string
	// Bootstrap is the number of bootstrap models (0 for a plain model).
	Bootstrap int
}

// Layout returns which metrics r holds.
func (r *Result) Layout() MetricLayout { return r.layout }

// layout returns the metrics scoring with m produces.
func (m *Model) layout() MetricLayout {
	l := MetricLayout{
		VIF: m.vif, VIFSuffix: eglSuffix(m.vifEGL), ADMSuffix: m.adm.suffix(), MotionSuffix: m.motion.suffix(),
		Speed: m.speed != nil, Bootstrap: len(m.bootstrap),
	}
	if m.cambi != nil {
		l.CAMBI = metricCAMBI + m.cambi.suffix()
	}
	if m.speed != nil {
		l.SpeedSuffix = m.speed.suffix()
	}
	return l
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
	metricSpeed     = "speed_chroma_"
)

// A bootstrapped model's metrics (predict.c): each model's score is vmaf_0001, ...;
// these are the statistics over them.
const (
	MetricBagging = metricVMAF + "_bagging"
	MetricStdDev  = metricVMAF + "_stddev"
	MetricCILow   = metricVMAF + "_ci_p95_lo"
	MetricCIHigh  = metricVMAF + "_ci_p95_hi"
)

func bootstrapMetric(i int) string { return fmt.Sprintf("%s_%04d", metricVMAF, i+1) }

// eglSuffix is the feature-name suffix libvmaf appends for a non-default
// enhancement gain limit (feature_name.c, alias "egl").
func eglSuffix(egl float64) string {
	if egl == defaultEnhnGainLimit {
		return ""
	}
	return "_egl_" + strconv.FormatFloat(egl, 'g', -1, 64)
}

// Metrics returns the names of the per-frame metrics, in output order:
// libvmaf's (the model's CAMBI and SpEED first, then ADM, motion and VIF), with
// the extra features (Result.Features) between the VIF scales and
// integer_motion2 as libvmaf writes them, and a bootstrapped model's scores and
// interval after vmaf.
func (r *Result) Metrics() []string {
	l := &r.layout
	var names []string
	if l.CAMBI != "" {
		names = append(names, l.CAMBI)
	}
	if l.Speed {
		names = append(names, metricSpeed+"u"+l.SpeedSuffix, metricSpeed+"v"+l.SpeedSuffix, metricSpeed+"uv"+l.SpeedSuffix)
	}
	names = append(names, metricADM2+l.ADMSuffix, metricAIM+l.ADMSuffix, metricADM3+l.ADMSuffix)
	for i := range 4 {
		names = append(names, metricADMScale+strconv.Itoa(i)+l.ADMSuffix)
	}
	names = append(names, metricMotionSAD+l.MotionSuffix)
	if l.VIF {
		for i := range 4 {
			names = append(names, metricVIFScale+strconv.Itoa(i)+l.VIFSuffix)
		}
	}
	names = append(names, r.ExtraMetrics()...)
	names = append(names, metricMotion2+l.MotionSuffix, metricMotion3+l.MotionSuffix, metricVMAF)
	if l.Bootstrap > 0 {
		for i := range l.Bootstrap {
			names = append(names, bootstrapMetric(i))
		}
		names = append(names, MetricBagging, MetricStdDev, MetricCILow, MetricCIHigh)
	}
	return names
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
	l := &r.layout
	dst = dst[:0]
	if l.CAMBI != "" {
		dst = append(dst, f.ModelCAMBI)
	}
	if l.Speed {
		dst = append(dst, f.SpeedU, f.SpeedV, f.SpeedUV)
	}
	dst = append(dst, f.ADM2, f.AIM, f.ADM3, f.ADMScale[0], f.ADMScale[1], f.ADMScale[2], f.ADMScale[3], f.MotionSAD)
	if l.VIF {
		dst = append(dst, f.VIF[0], f.VIF[1], f.VIF[2], f.VIF[3])
	}
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
	dst = append(dst, f.Motion2, f.Motion3, f.VMAF)
	if l.Bootstrap > 0 {
		b := f.Bootstrap
		if b == nil || len(b.Models) != l.Bootstrap {
			// A frame without its bootstrap scores (a part from another version): NaN,
			// written as null, rather than a wrong number.
			b = &BootstrapScore{Models: make([]float64, l.Bootstrap), Bagging: math.NaN(), StdDev: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN()}
			for i := range b.Models {
				b.Models[i] = math.NaN()
			}
		}
		dst = append(dst, b.Models...)
		dst = append(dst, b.Bagging, b.StdDev, b.CILow, b.CIHigh)
	}
	return dst
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
