package vmaf

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
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

// admOptionSpec is one option of integer_adm.c's options[]: its alias (the
// feature-name key; the option's name where it has none), whether it is a
// feature parameter (VMAF_OPT_FLAG_FEATURE_PARAM: a non-default value
// names the features), its kind and range, and where it goes.
type admOptionSpec struct {
	alias        string
	featureParam bool
	kind         byte // 'd' double, 'i' int, 'b' bool
	min, max     float64
	// get and set read and write the value in an admOptions, as float64
	// (bools as 0 or 1).
	get func(*admOptions) float64
	set func(*admOptions, float64)
}

// admOptionSpecs are the options libvmaf's integer ADM accepts, by name,
// with its ranges. "debug" (extra debug features) and adm_skip_scale0
// (which skips scale 0's DWT bands) are left out: VMAFX does not compute
// them, so a model asking for them is refused rather than scored wrongly.
var admOptionSpecs = map[string]admOptionSpec{
	"adm_csf_scale": {alias: "scf", featureParam: true, kind: 'd', min: 0, max: 50,
		get: func(o *admOptions) float64 { return o.csfScale }, set: func(o *admOptions, v float64) { o.csfScale = v }},
	"adm_csf_diag_scale": {alias: "scfd", featureParam: true, kind: 'd', min: 0, max: 50,
		get: func(o *admOptions) float64 { return o.csfDiagScale }, set: func(o *admOptions, v float64) { o.csfDiagScale = v }},
	"adm_dlm_weight": {alias: "dlmw", featureParam: true, kind: 'd', min: 0, max: 1,
		get: func(o *admOptions) float64 { return o.dlmWeight }, set: func(o *admOptions, v float64) { o.dlmWeight = v }},
	"adm_enhn_gain_limit": {alias: "egl", featureParam: true, kind: 'd', min: 1, max: defaultEnhnGainLimit,
		get: func(o *admOptions) float64 { return o.egl }, set: func(o *admOptions, v float64) { o.egl = v }},
	"adm_norm_view_dist": {alias: "nvd", featureParam: true, kind: 'd', min: 0.75, max: 24,
		get: func(o *admOptions) float64 { return o.normViewDist }, set: func(o *admOptions, v float64) { o.normViewDist = v }},
	"adm_ref_display_height": {alias: "rdh", featureParam: true, kind: 'i', min: 1, max: 4320,
		get: func(o *admOptions) float64 { return float64(o.refDisplayHeight) }, set: func(o *admOptions, v float64) { o.refDisplayHeight = int(v) }},
	"adm_csf_mode": {alias: "csf", featureParam: true, kind: 'i', min: 0, max: admCSFModeLatest,
		get: func(o *admOptions) float64 { return float64(o.csfMode) }, set: func(o *admOptions, v float64) { o.csfMode = int(v) }},
	"adm_noise_weight": {alias: "nw", featureParam: true, kind: 'd', min: 0, max: 1500,
		get: func(o *admOptions) float64 { return o.noiseWeight }, set: func(o *admOptions, v float64) { o.noiseWeight = v }},
	"adm_min_val": {alias: "min", featureParam: true, kind: 'd', min: 0, max: 1,
		get: func(o *admOptions) float64 { return o.minVal }, set: func(o *admOptions, v float64) { o.minVal = v }},
	"adm_skip_aim": {alias: "adm_skip_aim", kind: 'b', min: 0, max: 1,
		get: func(o *admOptions) float64 { return b2f(o.skipAIM) }, set: func(o *admOptions, v float64) { o.skipAIM = v != 0 }},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// parseADMOptions reads the ADM options of one model feature's
// feature_opts_dicts entry, as decoded from JSON (numbers as float64,
// booleans as bool), starting from the defaults. Like libvmaf's
// vmaf_option_set it refuses a value out of the option's range; it also
// refuses a fractional value for an integer option, an option VMAFX does
// not know, Barten's CSF (not implemented), and viewing conditions
// libvmaf cannot score (extract's 1080p-at-3H floor; the blended CSFs'
// tables).
func parseADMOptions(opts map[string]any) (admOptions, error) {
	o := defaultADMOptions()
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad key is the same every time
	for _, k := range keys {
		v := opts[k]
		spec, ok := admOptionSpecs[k]
		if !ok {
			return o, fmt.Errorf("unsupported ADM option %q", k)
		}
		var x float64
		switch val := v.(type) {
		case bool:
			if spec.kind != 'b' {
				return o, fmt.Errorf("ADM option %s=%v: want a number", k, v)
			}
			x = b2f(val)
		case float64:
			x = val
		case int:
			x = float64(val)
		case int64:
			x = float64(val)
		default:
			return o, fmt.Errorf("ADM option %s=%v: not a number or boolean", k, v)
		}
		if spec.kind == 'b' {
			if _, isBool := v.(bool); !isBool {
				return o, fmt.Errorf("ADM option %s=%v: want true or false", k, v)
			}
		}
		if math.IsNaN(x) || x < spec.min || x > spec.max {
			return o, fmt.Errorf("ADM option %s=%v: out of range [%g, %g]", k, v, spec.min, spec.max)
		}
		if spec.kind == 'i' && x != math.Trunc(x) {
			return o, fmt.Errorf("ADM option %s=%v: want an integer", k, v)
		}
		spec.set(&o, x)
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

// suffix is the feature-name suffix libvmaf gives the ADM features under
// these options (feature_name.c, vmaf_feature_name_from_options): for each
// feature parameter that differs from its default, in the order of the
// options' names, "_" alias "_" value, the value as printf's %g (%d for
// integers). It is empty for the defaults, "_egl_1" for
// vmaf_v0.6.1neg and "_csf_2_dlmw_0.7_egl_1_min_0.5_nw_0.02" for
// vmaf_v1.0.16_3d0h.
func (o admOptions) suffix() string {
	def := defaultADMOptions()
	names := make([]string, 0, len(admOptionSpecs))
	for name, spec := range admOptionSpecs {
		if spec.featureParam && spec.get(&o) != spec.get(&def) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		spec := admOptionSpecs[name]
		b.WriteString("_" + spec.alias + "_")
		if spec.kind == 'i' {
			b.WriteString(strconv.Itoa(int(spec.get(&o))))
		} else {
			b.WriteString(formatG(spec.get(&o)))
		}
	}
	return b.String()
}

// formatG formats v as C's printf("%g"): 6 significant digits, trailing
// zeros dropped, an exponent of at least two digits below 1e-4 and from
// 1e6.
func formatG(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}

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
