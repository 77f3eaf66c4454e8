package vmaf

import (
	"errors"
	"fmt"
)

// cambiOptions are CAMBI's options (cambi.c, CambiState and its options
// table). defaultCAMBIOptions gives libvmaf's defaults, under which CAMBI is
// what the "cambi" feature computes.
type cambiOptions struct {
	// maxVal clips the score (cambi_max_val, cmxv).
	maxVal float64
	// encWidth and encHeight are the encode's size (enc_width, encw;
	// enc_height, ench): CAMBI looks at the distorted picture scaled down to
	// it, nearest neighbour, when it is smaller than the input. 0 (either)
	// means the input's size.
	encWidth, encHeight int
	// encBitDepth is the encode's bit depth (enc_bitdepth, encbd): below 10
	// the picture is smoothed against dithering. 0 means the input's.
	encBitDepth int
	// srcWidth and srcHeight are the source's size for full-reference CAMBI
	// (src_width, srcw; src_height, srch). Without full_ref, which VMAFX does
	// not compute, libvmaf only checks them at init, and so does check.
	srcWidth, srcHeight int
	// windowSize is the window at 4K (window_size, ws), scaled to the
	// encode's size.
	windowSize int
	// topk and cambiTopK are the share of pixels pooled (topk;
	// cambi_topk, ctpk): topk wins when it is not the default.
	topk, cambiTopK float64
	// tviThreshold is the visibility threshold of a luminance step
	// (tvi_threshold, tvit).
	tviThreshold float64
	// visLumThreshold is the luminance in cd/m² below which banding is not
	// visible (cambi_vis_lum_threshold, vlt).
	visLumThreshold float64
	// maxLogContrast: steps of 1 to 2^maxLogContrast 10-bit codes are looked
	// for (max_log_contrast, mlc).
	maxLogContrast int
	// eotf and cambiEOTF are the transfer function of the thresholds,
	// "bt1886" or "pq" (eotf; cambi_eotf, ceot): cambiEOTF wins when it is
	// not the default.
	eotf, cambiEOTF string
	// highResSpeedup is the smallest encode height, 1080, 1440 or 2160, from
	// which CAMBI halves the picture after the spatial mask
	// (cambi_high_res_speedup, hrs); 0 never.
	highResSpeedup int
}

// cambiOptionTable is cambi.c's options table. heatmaps_path (files written
// beside the scores) and full_ref (a second score, of the reference) are
// refused by parseCAMBIOptions: VMAFX computes neither.
var cambiOptionTable = []fexOption{
	{name: "cambi_max_val", alias: "cmxv", kind: fexDouble, min: 0, max: 1000, def: cambiMaxVal, param: true},
	{name: "enc_width", alias: "encw", kind: fexInt, min: 180, max: 7680, def: 0, param: true},
	{name: "enc_height", alias: "ench", kind: fexInt, min: 150, max: 7680, def: 0, param: true},
	{name: "enc_bitdepth", alias: "encbd", kind: fexInt, min: 6, max: 16, def: 0, param: true},
	{name: "src_width", alias: "srcw", kind: fexInt, min: 320, max: 7680, def: 0, param: true},
	{name: "src_height", alias: "srch", kind: fexInt, min: 200, max: 4320, def: 0, param: true},
	{name: "window_size", alias: "ws", kind: fexInt, min: 15, max: 127, def: cambiWindowSize, param: true},
	{name: "topk", kind: fexDouble, min: 0.0001, max: 1, def: cambiTopK, param: true},
	{name: "cambi_topk", alias: "ctpk", kind: fexDouble, min: 0.0001, max: 1, def: cambiTopK, param: true},
	{name: "tvi_threshold", alias: "tvit", kind: fexDouble, min: 0.0001, max: 1, def: cambiTVIThreshold, param: true},
	{name: "cambi_vis_lum_threshold", alias: "vlt", kind: fexDouble, min: 0, max: 300, def: 0.0, param: true},
	{name: "max_log_contrast", alias: "mlc", kind: fexInt, min: 0, max: 5, def: cambiMaxLogContrast, param: true},
	{name: "heatmaps_path", kind: fexString, def: ""},
	{name: "full_ref", kind: fexBool, def: false},
	{name: "eotf", kind: fexString, def: "bt1886", param: true},
	{name: "cambi_eotf", alias: "ceot", kind: fexString, def: "bt1886", param: true},
	{name: "cambi_high_res_speedup", alias: "hrs", kind: fexInt, min: 0, max: 2160, def: 0, param: true},
}

func defaultCAMBIOptions() cambiOptions {
	o, _ := parseCAMBIOptions(nil)
	return o
}

// parseCAMBIOptions reads a model's feature_opts_dicts entry for
// Cambi_feature_cambi_score: nil or empty gives the defaults. An EOTF other
// than bt1886 and pq fails here (libvmaf fails at init), and so do
// heatmaps_path and full_ref true, which VMAFX does not compute.
func parseCAMBIOptions(opts map[string]any) (cambiOptions, error) {
	v, err := parseFexOptions("cambi", cambiOptionTable, opts)
	if err != nil {
		return cambiOptions{}, err
	}
	if p := v["heatmaps_path"].(string); p != "" {
		return cambiOptions{}, errors.New("cambi: option heatmaps_path: heatmaps are not written by VMAFX")
	}
	if v["full_ref"].(bool) {
		return cambiOptions{}, errors.New("cambi: option full_ref: full-reference CAMBI is not computed by VMAFX")
	}
	for _, k := range []string{"eotf", "cambi_eotf"} {
		if e := v[k].(string); cambiEOTFs[e] == nil {
			return cambiOptions{}, fmt.Errorf("cambi: option %s: unknown EOTF %q, want bt1886 or pq", k, e)
		}
	}
	return cambiOptions{
		maxVal:          v["cambi_max_val"].(float64),
		encWidth:        v["enc_width"].(int),
		encHeight:       v["enc_height"].(int),
		encBitDepth:     v["enc_bitdepth"].(int),
		srcWidth:        v["src_width"].(int),
		srcHeight:       v["src_height"].(int),
		windowSize:      v["window_size"].(int),
		topk:            v["topk"].(float64),
		cambiTopK:       v["cambi_topk"].(float64),
		tviThreshold:    v["tvi_threshold"].(float64),
		visLumThreshold: v["cambi_vis_lum_threshold"].(float64),
		maxLogContrast:  v["max_log_contrast"].(int),
		eotf:            v["eotf"].(string),
		cambiEOTF:       v["cambi_eotf"].(string),
		highResSpeedup:  v["cambi_high_res_speedup"].(int),
	}, nil
}

// values are o by option name, for fexSuffix.
func (o cambiOptions) values() map[string]any {
	return map[string]any{
		"cambi_max_val":           o.maxVal,
		"enc_width":               o.encWidth,
		"enc_height":              o.encHeight,
		"enc_bitdepth":            o.encBitDepth,
		"src_width":               o.srcWidth,
		"src_height":              o.srcHeight,
		"window_size":             o.windowSize,
		"topk":                    o.topk,
		"cambi_topk":              o.cambiTopK,
		"tvi_threshold":           o.tviThreshold,
		"cambi_vis_lum_threshold": o.visLumThreshold,
		"max_log_contrast":        o.maxLogContrast,
		"eotf":                    o.eotf,
		"cambi_eotf":              o.cambiEOTF,
		"cambi_high_res_speedup":  o.highResSpeedup,
	}
}

// suffix is what libvmaf appends to "cambi" under o
// ("_hrs_1080_cmxv_17_vlt_0.06" for the v1 models); empty for the defaults.
// libvmaf names the options as given, before init replaces a 0 encode size
// by the input's or turns the speed-up off below its resolution.
func (o cambiOptions) suffix() string { return fexSuffix(cambiOptionTable, o.values()) }

// cambiSetup is what libvmaf's cambi init makes of the options for one input.
type cambiSetup struct {
	encW, encH, encBPC int
	speedup            bool
	window             int // at the encode's size, halved with the speed-up
	topk               float64
	eotf               func(float64) float64
}

// setup resolves o for a w x h input of depth bpc as cambi.c's init does,
// and fails where it fails; the setup is complete even then.
func (o cambiOptions) setup(w, h, bpc int) (cambiSetup, error) {
	var err error
	fail := func(e error) {
		if err == nil {
			err = e
		}
	}
	s := cambiSetup{encW: o.encWidth, encH: o.encHeight, encBPC: o.encBitDepth}
	if s.encBPC == 0 {
		s.encBPC = bpc
	}
	if s.encW == 0 || s.encH == 0 {
		s.encW, s.encH = w, h
	}
	// A downscaled encode is not scaled back up to its encode size.
	if s.encH > h || s.encW > w {
		s.encW, s.encH = w, h
	}
	srcW, srcH := o.srcWidth, o.srcHeight
	if srcW == 0 || srcH == 0 {
		srcW, srcH = w, h
	}
	if s.encW < cambiMinWidthHeight && s.encH < cambiMinWidthHeight {
		if s.encW == w && s.encH == h {
			fail(fmt.Errorf("%w: %dx%d, CAMBI needs a side of at least %d", ErrTooSmall, w, h, cambiMinWidthHeight))
		} else {
			fail(fmt.Errorf("%w: CAMBI's encode size %dx%d, it needs a side of at least %d", ErrTooSmall, s.encW, s.encH, cambiMinWidthHeight))
		}
	}
	if srcW < cambiMinWidthHeight && srcH < cambiMinWidthHeight {
		fail(fmt.Errorf("%w: CAMBI's source size %dx%d, it needs a side of at least %d", ErrTooSmall, srcW, srcH, cambiMinWidthHeight))
	}
	if (srcW > s.encW && srcH < s.encH) || (srcW < s.encW && srcH > s.encH) {
		fail(fmt.Errorf("%w: CAMBI's source size %dx%d and encode size %dx%d are not one larger than the other",
			ErrSizeMismatch, srcW, srcH, s.encW, s.encH))
	}
	var least int
	switch o.highResSpeedup {
	case 1080:
		least = 1920 * 1080
	case 1440:
		least = 2560 * 1440
	case 2160:
		least = 3840 * 2160
	}
	s.speedup = least > 0 && s.encW*s.encH >= least
	s.window = cambiWindow(o.windowSize, s.encW, s.encH, s.speedup)
	if ws := max(s.window, cambiWindow(o.windowSize, srcW, srcH, s.speedup)); ws*ws >= cambiReciprocalLUTSize {
		fail(fmt.Errorf("%w: %dx%d, CAMBI's window of %d is too large for libvmaf's reciprocal table", ErrTooLarge, w, h, ws))
	}
	s.topk = o.cambiTopK
	if o.topk != cambiTopK {
		s.topk = o.topk
	}
	e := o.eotf
	if o.cambiEOTF != "bt1886" {
		e = o.cambiEOTF
	}
	if s.eotf = cambiEOTFs[e]; s.eotf == nil {
		fail(fmt.Errorf("cambi: unknown EOTF %q", e))
		s.eotf = cambiBT1886
	}
	// get_vlt_luma would search forever for a luminance above the peak.
	if cambiLuminance(cambiHead, s.eotf) < o.visLumThreshold {
		fail(fmt.Errorf("cambi: cambi_vis_lum_threshold %v is above the %s peak", o.visLumThreshold, e))
	}
	return s, err
}

// check reports the inputs libvmaf's CAMBI refuses under o, at init: an
// encode size (the input's by default) with both sides below 216, a window
// too large for its reciprocal table (width plus height above about 6000 at
// the default window), and inconsistent encode and source sizes. The
// smallest input is one side of cambiMinWidthHeight (216).
func (o cambiOptions) check(w, h, bpc int) error {
	_, err := o.setup(w, h, bpc)
	return err
}

// Encode describes how the distorted video was encoded before it was scaled or
// converted for scoring. CAMBI judges banding on the picture as it was encoded: at the
// encode's size (the distorted picture scaled back down, nearest neighbour) and, below
// 10 bits, smoothed against the encode's dithering. These are libvmaf's CAMBI options
// enc_width, enc_height and enc_bitdepth; zero fields mean the input's own.
type Encode struct {
	Width, Height, BitDepth int
}

// withEncode returns o with the encode's parameters set, where e sets them.
func (o cambiOptions) withEncode(e Encode) cambiOptions {
	if e.Width > 0 && e.Height > 0 {
		o.encWidth, o.encHeight = e.Width, e.Height
	}
	if e.BitDepth > 0 {
		o.encBitDepth = e.BitDepth
	}
	return o
}
