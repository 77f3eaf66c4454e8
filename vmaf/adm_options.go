package vmaf

import (
	"fmt"
	"math"
)

// ADM's contrast sensitivity functions (adm_options.h and integer_adm.h,
// enum ADM_CSF_MODE): Watson et al. 1997's noise floor model, Barten's CSF,
// and the two Barten/Watson blends of the v1 models, tabulated per viewing
// condition (the second with libvmaf's CSF fix for v1.0.17+ models).
const (
	admCSFWatson97   = 0
	admCSFBarten     = 1
	admCSFBlend      = 2
	admCSFBlendMAE   = 3
	admCSFModeLatest = admCSFBlendMAE
)

// admOptions are the options of libvmaf's integer ADM extractor
// (integer_adm.c, options[]) that a model's feature_opts_dicts can set.
// The zero value is not valid: start from defaultADMOptions.
type admOptions struct {
	// csfMode picks the contrast sensitivity function (adm_csf_mode).
	csfMode int
	// normViewDist is the viewing distance over the display's height and
	// refDisplayHeight the display's height in pixels (adm_norm_view_dist,
	// adm_ref_display_height): together the display's pixels per degree.
	normViewDist     float64
	refDisplayHeight int
	// csfScale and csfDiagScale scale Barten's CSF (adm_csf_scale,
	// adm_csf_diag_scale); the other CSFs ignore them, but they still name
	// the features.
	csfScale, csfDiagScale float64
	// egl is the enhancement gain limit of the decoupling
	// (adm_enhn_gain_limit): 100 in effect none, 1 for the "neg" models.
	egl float64
	// dlmWeight weighs DLM (adm2) against 1-AIM in adm3 (adm_dlm_weight).
	dlmWeight float64
	// noiseWeight is the noise floor per scored coefficient added to the
	// DLM numerator and denominator (adm_noise_weight).
	noiseWeight float64
	// minVal is adm3's floor (adm_min_val).
	minVal float64
	// skipAIM leaves AIM at 0 (adm_skip_aim); it does not name the
	// features.
	skipAIM bool
}

// defaultADMOptions are libvmaf's defaults, under which VMAFX's ADM has
// always run (adm_options.h).
func defaultADMOptions() admOptions {
	return admOptions{
		csfMode:          admCSFWatson97,
		normViewDist:     admNormViewDist,
		refDisplayHeight: admRefDisplayHeight,
		csfScale:         1,
		csfDiagScale:     1,
		egl:              defaultEnhnGainLimit,
		dlmWeight:        0.5,
		noiseWeight:      0.03125,
		minVal:           0,
	}
}

// admOptionsEGL are the default options with the enhancement gain limit
// egl, the only ADM option of the models before v1.
func admOptionsEGL(egl float64) admOptions {
	o := defaultADMOptions()
	o.egl = egl
	return o
}

// admOptionTable is integer_adm.c's options[] with its ranges. "debug" (extra debug
// features) and adm_skip_scale0 (which skips scale 0's DWT bands) are left out: VMAFX
// does not compute them, so a model asking for them is refused rather than scored
// wrongly. adm_skip_aim does not name the features.
var admOptionTable = []fexOption{
	{name: "adm_csf_diag_scale", alias: "scfd", kind: fexDouble, min: 0, max: 50, def: 1.0, param: true},
	{name: "adm_csf_mode", alias: "csf", kind: fexInt, min: 0, max: admCSFModeLatest, def: admCSFWatson97, param: true},
	{name: "adm_csf_scale", alias: "scf", kind: fexDouble, min: 0, max: 50, def: 1.0, param: true},
	{name: "adm_dlm_weight", alias: "dlmw", kind: fexDouble, min: 0, max: 1, def: 0.5, param: true},
	{name: "adm_enhn_gain_limit", alias: "egl", kind: fexDouble, min: 1, max: defaultEnhnGainLimit, def: defaultEnhnGainLimit, param: true},
	{name: "adm_min_val", alias: "min", kind: fexDouble, min: 0, max: 1, def: 0.0, param: true},
	{name: "adm_noise_weight", alias: "nw", kind: fexDouble, min: 0, max: 1500, def: 0.03125, param: true},
	{name: "adm_norm_view_dist", alias: "nvd", kind: fexDouble, min: 0.75, max: 24, def: admNormViewDist, param: true},
	{name: "adm_ref_display_height", alias: "rdh", kind: fexInt, min: 1, max: 4320, def: admRefDisplayHeight, param: true},
	{name: "adm_skip_aim", kind: fexBool, def: false},
}

// parseADMOptions reads the ADM options of one model feature's
// feature_opts_dicts entry as parseFexOptions reads any extractor's (libvmaf's
// ranges and value normalisation; unknown options, wrong types and fractional
// integers refused). It also refuses Barten's CSF (not implemented) and viewing
// conditions libvmaf cannot score (extract's 1080p-at-3H floor; the blended
// CSFs' tables).
func parseADMOptions(opts map[string]any) (admOptions, error) {
	v, err := parseFexOptions("adm", admOptionTable, opts)
	if err != nil {
		return defaultADMOptions(), err
	}
	o := admOptions{
		csfMode:          v["adm_csf_mode"].(int),
		normViewDist:     v["adm_norm_view_dist"].(float64),
		refDisplayHeight: v["adm_ref_display_height"].(int),
		csfScale:         v["adm_csf_scale"].(float64),
		csfDiagScale:     v["adm_csf_diag_scale"].(float64),
		egl:              v["adm_enhn_gain_limit"].(float64),
		dlmWeight:        v["adm_dlm_weight"].(float64),
		noiseWeight:      v["adm_noise_weight"].(float64),
		minVal:           v["adm_min_val"].(float64),
		skipAIM:          v["adm_skip_aim"].(bool),
	}
	if o.csfMode == admCSFBarten {
		return o, fmt.Errorf("ADM option adm_csf_mode=%d (Barten's CSF) is not supported", o.csfMode)
	}
	// integer_adm.c, extract: the 16-bit pipeline cannot score below
	// 1080p at 3H.
	if o.normViewDist*float64(o.refDisplayHeight) < admNormViewDist*admRefDisplayHeight {
		return o, fmt.Errorf("ADM options adm_norm_view_dist=%g, adm_ref_display_height=%d: below libvmaf's 1080 lines at 3 heights",
			o.normViewDist, o.refDisplayHeight)
	}
	if o.csfMode == admCSFBlend || o.csfMode == admCSFBlendMAE {
		if _, ok := admBlendTable(o.csfMode, o.normViewDist, o.refDisplayHeight); !ok {
			return o, fmt.Errorf("ADM options adm_csf_mode=%d, adm_norm_view_dist=%g, adm_ref_display_height=%d: no blended CSF for this viewing condition",
				o.csfMode, o.normViewDist, o.refDisplayHeight)
		}
	}
	return o, nil
}

// values are o by option name, for fexSuffix.
func (o admOptions) values() map[string]any {
	return map[string]any{
		"adm_csf_mode": o.csfMode, "adm_norm_view_dist": o.normViewDist, "adm_ref_display_height": o.refDisplayHeight,
		"adm_csf_scale": o.csfScale, "adm_csf_diag_scale": o.csfDiagScale, "adm_enhn_gain_limit": o.egl,
		"adm_dlm_weight": o.dlmWeight, "adm_noise_weight": o.noiseWeight, "adm_min_val": o.minVal, "adm_skip_aim": o.skipAIM,
	}
}

// suffix is the feature-name suffix libvmaf gives the ADM features under
// these options (fexSuffix): empty for the defaults, "_egl_1" for
// vmaf_v0.6.1neg and "_csf_2_dlmw_0.7_egl_1_min_0.5_nw_0.02" for
// vmaf_v1.0.16_3d0h.
func (o admOptions) suffix() string { return fexSuffix(admOptionTable, o.values()) }

// Blended Barten/Watson CSF weights (barten_csf_tools.h,
// BLENDED_CSF_<height>_<dist>H and their _MAE versions), [theta][scale]:
// theta 0 weighs the h and v bands, 1 the d band.
var (
	admBlend1080x3 = [2][4]float32{{0.01183, 0.025026, 0.04295, 0.058621}, {0.004302, 0.011778, 0.023918, 0.035901}}
	admBlend1080x5 = [2][4]float32{{0.004212, 0.014809, 0.029642, 0.047464}, {0.000984, 0.005852, 0.0146, 0.027574}}
	admBlend2160x3 = [2][4]float32{{0.00226, 0.01183, 0.025026, 0.04295}, {0.000479, 0.004302, 0.011778, 0.023918}}
	admBlend2160x5 = [2][4]float32{{0.000092, 0.004212, 0.014809, 0.029642}, {0.000050, 0.000984, 0.005852, 0.0146}}
	admBlend720x3  = [2][4]float32{{0.018715, 0.035637, 0.052798, 0.061509}, {0.007999, 0.018396, 0.031851, 0.037718}}
	admBlend720x5  = [2][4]float32{{0.010144, 0.022561, 0.040309, 0.05672}, {0.003463, 0.010282, 0.021839, 0.034641}}
	admBlend480x3  = [2][4]float32{{0.027961, 0.045875, 0.060275, 0.056234}, {0.013572, 0.026277, 0.036959, 0.034511}}
	admBlend480x5  = [2][4]float32{{0.016781, 0.032822, 0.05032, 0.061594}, {0.00691, 0.016545, 0.029917, 0.037777}}

	admBlendMAE1080x3 = [2][4]float32{{0.011249, 0.022606, 0.035930, 0.045673}, {0.004097, 0.010921, 0.021430, 0.031313}}
	admBlendMAE1080x5 = [2][4]float32{{0.004052, 0.013939, 0.026298, 0.038833}, {0.000927, 0.005544, 0.013415, 0.024515}}
	admBlendMAE2160x3 = [2][4]float32{{0.002166, 0.011249, 0.022606, 0.035930}, {0.000447, 0.004097, 0.010921, 0.021430}}
	admBlendMAE2160x5 = [2][4]float32{{0.000077, 0.004052, 0.013939, 0.026298}, {0.000045, 0.000927, 0.005544, 0.013415}}
	admBlendMAE720x3  = [2][4]float32{{0.017329, 0.030870, 0.042134, 0.047410}, {0.007509, 0.016707, 0.028072, 0.032722}}
	admBlendMAE720x5  = [2][4]float32{{0.009689, 0.020577, 0.034162, 0.044523}, {0.003302, 0.009579, 0.019661, 0.030318}}
	admBlendMAE480x3  = [2][4]float32{{0.024969, 0.037825, 0.046676, 0.043974}, {0.012511, 0.023424, 0.032139, 0.030166}}
	admBlendMAE480x5  = [2][4]float32{{0.015665, 0.028766, 0.040612, 0.047483}, {0.006514, 0.015107, 0.026476, 0.032776}}
)

// admBlendTable returns the blended CSF table of a viewing condition
// (barten_watson_blend_csf, barten_watson_blend_csf_mae), matching the
// distance exactly as libvmaf does. 2160 lines at 1.5H has 1080 at 3H's
// pixels per degree and shares its table. Other conditions have none
// (libvmaf returns -EINVAL as the weight and scores garbage).
func admBlendTable(mode int, dist float64, height int) (*[2][4]float32, bool) {
	mae := mode == admCSFBlendMAE
	pick := func(legacy, fixed *[2][4]float32) (*[2][4]float32, bool) {
		if mae {
			return fixed, true
		}
		return legacy, true
	}
	switch {
	case height == 1080 && dist == 3.0, height == 2160 && dist == 1.5:
		return pick(&admBlend1080x3, &admBlendMAE1080x3)
	case height == 1080 && dist == 5.0:
		return pick(&admBlend1080x5, &admBlendMAE1080x5)
	case height == 2160 && dist == 3.0:
		return pick(&admBlend2160x3, &admBlendMAE2160x3)
	case height == 2160 && dist == 5.0:
		return pick(&admBlend2160x5, &admBlendMAE2160x5)
	case height == 720 && dist == 3.0:
		return pick(&admBlend720x3, &admBlendMAE720x3)
	case height == 720 && dist == 5.0:
		return pick(&admBlend720x5, &admBlendMAE720x5)
	case height == 480 && dist == 3.0:
		return pick(&admBlend480x3, &admBlendMAE480x3)
	case height == 480 && dist == 5.0:
		return pick(&admBlend480x5, &admBlendMAE480x5)
	}
	return nil, false
}

// rfactors returns a scale's CSF weights (the reciprocal quantisation
// steps under Watson's model) for the h, v and d bands, as adm_csf,
// i4_adm_csf, adm_csf_den_* and *adm_cm each compute them.
func (o admOptions) rfactors(scale int) [3]float32 {
	if o.csfMode == admCSFBlend || o.csfMode == admCSFBlendMAE {
		t, _ := admBlendTable(o.csfMode, o.normViewDist, o.refDisplayHeight)
		return [3]float32{t[0][scale], t[0][scale], t[1][scale]}
	}
	r := admDisplayResolution(o.normViewDist, o.refDisplayHeight)
	f1 := admQuantStep(r, scale, 1)
	f2 := admQuantStep(r, scale, 2)
	return [3]float32{1.0 / f1, 1.0 / f1, 1.0 / f2}
}

// irf0 returns scale 0's CSF weights in fixed point (adm_csf, adm_cm's
// i_rfactor): Q21 for h and v, Q23 for d, truncated to uint16. libvmaf
// hard-codes them for Watson's CSF at 1080 lines and 3H (the product only
// counts), where the computed ones would differ.
func (o admOptions) irf0() [3]int32 {
	if math.Abs(o.normViewDist*float64(o.refDisplayHeight)-admNormViewDist*admRefDisplayHeight) < 1.0e-8 &&
		o.csfMode == admCSFWatson97 {
		return [3]int32{36453, 36453, 49417}
	}
	rf := o.rfactors(0)
	// (uint16_t)(double): the weights are below 2^16 in every viewing
	// condition libvmaf accepts; wrap like x86's conversion otherwise.
	q := func(f float32, shift int) int32 {
		return int32(uint16(int64(float64(f) * math.Pow(2, float64(shift)))))
	}
	return [3]int32{q(rf[0], 21), q(rf[1], 21), q(rf[2], 23)}
}
