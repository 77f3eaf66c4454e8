package vmaf

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// SpEED chroma: libvmaf 3.2.0's speed_chroma extractor (libvmaf/src/feature/
// speed.c, vmaf_fex_speed_chroma), which VMAF v1 models read as
// Speed_chroma_feature_speed_chroma_uv_score. It is purely spatial: each
// frame pair's score needs that pair's U and V planes and nothing else.
//
// Per chroma plane, for the reference and then the distorted picture:
// picture_copy (samples scaled to the 8-bit range, minus 128), an optional
// rescale (speed_prescale, speed_prescale_method), a Gaussian anti-alias
// blur decimated by 16, and local mean subtraction with a small Gaussian
// (filter_and_downscale). On that small image est_params fits a Gaussian
// scale mixture over 5x5 blocks: the covariance of the 25 pixel positions,
// its eigenvalues, and the per-block variance field S from solving K X = Y
// by QR; entropies follow from the eigenvalues and S. get_speed_score
// averages the absolute differences of the variance-weighted entropies.
//
// libvmaf computes all this in float, with some steps in double (C's
// promotions around log2, sqrt and the double constants); the code below
// keeps every rounding and the order of every sum, so results match
// libvmaf's scalar path to the last bit or close to it (log2 and exp come
// from Go's math package, not glibc). Where a float32 product feeds a sum
// it is converted explicitly, which keeps Go from fusing it into an FMA
// (the C is built without FMA contraction for its plain path).

const (
	speedBlock     = 5                       // DEFAULT_BLOCK_SIZE
	speedBlockLen  = speedBlock * speedBlock // elements_in_block
	speedScales    = 4                       // NUM_SCALES: decimation by 2^4
	speedEigenEps  = 1e-6                    // EIGENVALUE_EPS
	speedEigenIter = 500                     // EIGENVALUE_MAX_ITERS
	// speedMinPlane is the smallest chroma plane side, after
	// speed_prescale, that SpEED works on: the plane decimated by 16 must
	// hold one 5x5 block. libvmaf 3.2.0 logs "image too small" below it,
	// ignores its own error and crashes (speed_init_dimensions, init_chroma).
	speedMinPlane = speedBlock << speedScales
)

// speedLog2TwoPiE is log2(2*M_PI*M_E) correctly rounded, as GCC folds the
// constant; Go's math.Log2 is one ulp off here.
const speedLog2TwoPiE = 4.094191170361282

// speedOptions are the speed_chroma extractor's options (options_chroma).
type speedOptions struct {
	kernelscale    float64 // speed_kernelscale, "ks"
	prescale       float64 // speed_prescale, "ps"
	prescaleMethod string  // speed_prescale_method, "psm"
	sigmaNN        float64 // speed_sigma_nn, "snn"
	nnFloor        float64 // speed_nn_floor, "nnf"
	maxVal         float64 // speed_max_val, "mxv"
	weightVarMode  int     // speed_weight_var_mode, "wvm"
}

// defaultSpeedOptions are libvmaf's defaults (DEFAULT_SPEED_*).
func defaultSpeedOptions() speedOptions {
	return speedOptions{kernelscale: 1, prescale: 1, prescaleMethod: "nearest", sigmaNN: 0.29, maxVal: 1000}
}

// speedOptionTable is options_chroma; every option is a VMAF_OPT_FLAG_FEATURE_PARAM.
var speedOptionTable = []fexOption{
	{name: "speed_kernelscale", alias: "ks", kind: fexDouble, min: 0.1, max: 4, def: 1.0, param: true},
	{name: "speed_max_val", alias: "mxv", kind: fexDouble, min: 0, max: 1000, def: 1000.0, param: true},
	{name: "speed_nn_floor", alias: "nnf", kind: fexDouble, min: 0, max: 1, def: 0.0, param: true},
	{name: "speed_prescale", alias: "ps", kind: fexDouble, min: 0.1, max: 4, def: 1.0, param: true},
	{name: "speed_prescale_method", alias: "psm", kind: fexString, def: "nearest", param: true},
	{name: "speed_sigma_nn", alias: "snn", kind: fexDouble, min: 0.1, max: 2, def: 0.29, param: true},
	{name: "speed_weight_var_mode", alias: "wvm", kind: fexInt, min: 0, max: 6, def: 0, param: true},
}

// speedScaleMethods are vif_get_scaling_method's names.
var speedScaleMethods = []string{"nearest", "bilinear", "bicubic", "lanczos4"}

// speedKernelscales are the kernel scales vif_validate_kernelscale accepts
// (vif_tools.h, valid_kernelscales), as floats.
var speedKernelscales = [...]float32{1.0, 1.0 / 2.0, 3.0 / 2.0, 2.0, 2.0 / 3.0, 24.0 / 10.0, 360.0 / 97.0,
	4.0 / 3.0, 3.5 / 3.0, 3.75 / 3.0, 4.25 / 3.0, 5.0 / 3.0, 3.0, 1.0 / 2.25, 1.4746, 1.54, 1.6, 1.06667,
	0.711111, 0.740740, 1.111111}

// parseSpeedOptions reads one model's feature_opts_dicts entry for
// Speed_chroma_feature_speed_chroma_uv_score. Values become what libvmaf's
// model reader and opt.c make of them (read_json_model.c,
// parse_feature_opts_dicts; dict.c; opt.c): a JSON number is rounded to
// float, printed with "%g" and parsed back, so doubles keep six significant
// digits. An unknown key, a value of the wrong JSON type or out of libvmaf's
// range, an invalid kernel scale or scaling method (speed_init) is an error
// naming the option. Stricter than libvmaf: a fractional
// speed_weight_var_mode is an error (atoi truncates it), and so is a
// speed_prescale within 1e-3 of 1 but not 1, under which libvmaf skips the
// rescale yet sizes the frame as rescaled, reading samples it never wrote
// (filter_and_downscale, ALMOST_EQUAL).
func parseSpeedOptions(opts map[string]any) (speedOptions, error) {
	v, err := parseFexOptions("speed_chroma", speedOptionTable, opts)
	if err != nil {
		return defaultSpeedOptions(), err
	}
	o := speedOptions{
		kernelscale:    v["speed_kernelscale"].(float64),
		prescale:       v["speed_prescale"].(float64),
		prescaleMethod: v["speed_prescale_method"].(string),
		sigmaNN:        v["speed_sigma_nn"].(float64),
		nnFloor:        v["speed_nn_floor"].(float64),
		maxVal:         v["speed_max_val"].(float64),
		weightVarMode:  v["speed_weight_var_mode"].(int),
	}
	if !slices.Contains(speedScaleMethods, o.prescaleMethod) {
		return o, fmt.Errorf("speed_chroma: option speed_prescale_method: %q is not one of %s", o.prescaleMethod, strings.Join(speedScaleMethods, ", "))
	}
	ks := float32(o.kernelscale) // vif_validate_kernelscale takes a float
	if !slices.ContainsFunc(speedKernelscales[:], func(v float32) bool { return speedAbs(ks-v) < 1e-3 }) {
		return o, fmt.Errorf("speed_chroma: option speed_kernelscale: %g is not one of libvmaf's kernel scales", o.kernelscale)
	}
	if o.prescale != 1 && math.Abs(o.prescale-1) < 1e-3 {
		return o, fmt.Errorf("speed_chroma: option speed_prescale: %g is within 1e-3 of 1 but not 1, which libvmaf mishandles", o.prescale)
	}
	return o, nil
}

// values are o by option name, for fexSuffix.
func (o speedOptions) values() map[string]any {
	return map[string]any{
		"speed_kernelscale": o.kernelscale, "speed_prescale": o.prescale, "speed_prescale_method": o.prescaleMethod,
		"speed_sigma_nn": o.sigmaNN, "speed_nn_floor": o.nnFloor, "speed_max_val": o.maxVal, "speed_weight_var_mode": o.weightVarMode,
	}
}

// suffix is what libvmaf appends to the speed_chroma metric names under o
// (fexSuffix). For the v1 models it is "_mxv_45_nnf_0.1_snn_0.19_wvm_5", with
// "_ps_0.5_psm_bilinear" (and 0.6) inserted for the prescaled ones; the
// defaults give "".
func (o speedOptions) suffix() string { return fexSuffix(speedOptionTable, o.values()) }

// speedMetricNames are the three metric names libvmaf writes for the
// extractor under o (the feature_name.c aliases of
// Speed_chroma_feature_speed_chroma_{u,v,uv}_score plus the suffix), in
// libvmaf's order: u, v, uv.
func (o speedOptions) metricNames() [3]string {
	s := o.suffix()
	return [3]string{metricSpeed + "u" + s, metricSpeed + "v" + s, metricSpeed + "uv" + s}
}

// speedPlaneSize is the chroma plane size libvmaf's init_chroma gives
// SpEED for a w x h frame in pf: halved with rounding down where pf
// subsamples (picture.c rounds the planes up; SpEED ignores the extra row
// or column). ok is false for a format without chroma, which init_chroma
// refuses.
func speedPlaneSize(w, h int, pf PixelFormat) (cw, ch int, ok bool) {
	fi := pf.info()
	if fi.planes != 3 {
		return 0, 0, false
	}
	return w >> fi.xShift, h >> fi.yShift, true
}

// speedScaled is one side after speed_prescale (speed_init_dimensions).
func speedScaled(n int, prescale float64) int {
	return int(float64(n)*prescale + 0.5)
}

// minSize returns the smallest frame width and height in pf that SpEED
// chroma supports under o: its chroma planes, rescaled by speed_prescale,
// must be at least speedMinPlane (80) on each side. With the default
// prescale that is 160x160 for 4:2:0, 160x80 for 4:2:2 and 80x80 for
// 4:4:4; the prescale 0.5 of the v1 2160 models doubles it. pf must have
// chroma.
func (o speedOptions) minSize(pf PixelFormat) (w, h int) {
	c := 1
	for speedScaled(c, o.prescale) < speedMinPlane {
		c++
	}
	fi := pf.info()
	return c << fi.xShift, c << fi.yShift
}

// checkSpeedSize refuses frames SpEED chroma cannot score under o before
// anything is decoded: a format without chroma (wrapping ErrNoChroma, as
// libvmaf's init_chroma refuses YUV400) and frames whose chroma planes are
// too small (wrapping ErrTooSmall and naming the smallest size; libvmaf
// 3.2.0 crashes there, e.g. on 176x144 4:2:0).
func checkSpeedSize(w, h int, pf PixelFormat, o speedOptions) error {
	cw, ch, ok := speedPlaneSize(w, h, pf)
	if !ok {
		return fmt.Errorf("%w: SpEED chroma needs chroma planes, and %v has none", ErrNoChroma, pf)
	}
	if speedScaled(cw, o.prescale)>>speedScales < speedBlock || speedScaled(ch, o.prescale)>>speedScales < speedBlock {
		mw, mh := o.minSize(pf)
		return fmt.Errorf("%w: %dx%d %v, SpEED chroma (speed_prescale %g) needs at least %dx%d",
			ErrTooSmall, w, h, pf, o.prescale, mw, mh)
	}
	return nil
}

// speedAbs is fabsf.
func speedAbs(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }
