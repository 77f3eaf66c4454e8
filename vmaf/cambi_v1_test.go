package vmaf

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// v1CAMBIModels are the reference set's models with CAMBI (all v1 models).
var v1CAMBIModels = []string{
	"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160", "vmaf_v1.0.16_3d0h_2160", "vmaf_v1.0.16_hfr_3d0h",
}

// TestCAMBIV1Reference: under each v1 model's CAMBI options, every pair's per-frame
// cambi is libvmaf's within its print rounding, under libvmaf's metric name.
func TestCAMBIV1Reference(t *testing.T) {
	pairs := loadV1Pairs(t)
	dists := map[string][]*Frame{}
	for _, p := range pairs {
		dists[p.name] = v1Frames(t, p, "dist", false)
	}
	for _, model := range v1CAMBIModels {
		o, err := parseCAMBIOptions(v1FeatureOpts(t, model, "Cambi_feature"))
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		name := "cambi" + o.suffix()
		var worst float64
		for _, p := range pairs {
			if err := o.check(p.w, p.h, p.bitDepth); err != nil {
				t.Fatalf("%s %s: %v", p.name, model, err)
			}
			log := readV1Log(t, p, model)
			s := newCAMBIState(p.w, p.h, p.bitDepth, o)
			for i, f := range dists[p.name] {
				want, ok := log.Frames[i].Metrics[name]
				if !ok {
					t.Fatalf("%s %s: libvmaf's log has no %s", p.name, model, name)
				}
				got := s.compute(f.Y)
				d := math.Abs(got - want)
				worst = max(worst, d)
				if d > 1e-6+1e-9 {
					t.Errorf("%s %s frame %d %s: %.9f, libvmaf %.6f", p.name, model, i, name, got, want)
				}
			}
		}
		t.Logf("%s: worst |delta| %s %.3g", model, name, worst)
	}
}

// TestCAMBIV1Options checks the options the reference logs do not reach against what
// cambi.c does with them, on synthetic banded clips (see synthClip):
//   - cambi_vis_lum_threshold and cambi_max_val change the score as libvmaf's
//     get_vlt_luma and the final MIN do;
//   - enc_width/enc_height equal to the input, or larger in either side, are the
//     input's (init keeps or falls back to w x h) and score as without them;
//   - a smaller encode scores as the input first scaled down by libvmaf's nearest
//     neighbour rule and scored at that size with default options: decimating
//     an exact 2:1 picks the odd samples (ratio 2, start 0.5, index (int)(x+0.5));
//   - enc_bitdepth: 8 on a 10-bit input applies the anti-dithering filter, as an
//     8-bit input shifted to 10 bits gets it; 10 on an 8-bit input drops it, as
//     the same samples given as 10-bit do;
//   - cambi_high_res_speedup turns on only from its resolution (of the encode),
//     and then scores as the half-size picture's mask-first pipeline: checked
//     against the window libvmaf computes for it.
func TestCAMBIV1Options(t *testing.T) {
	const w, h, n = 432, 240, 2
	_, dist8 := synthClip(w, h, YUV420P, n)
	fb := YUV420P.FrameBytes(w, h)
	luma8 := func(f int) []uint16 {
		y := make([]uint16, w*h)
		for i := range y {
			y[i] = uint16(dist8[f*fb+i])
		}
		return y
	}
	score := func(o cambiOptions, w, h, bpc int, y []uint16) float64 {
		t.Helper()
		if err := o.check(w, h, bpc); err != nil {
			t.Fatal(err)
		}
		return newCAMBIState(w, h, bpc, o).compute(y)
	}
	def := defaultCAMBIOptions()
	y := luma8(1)
	base := score(def, w, h, 8, y)
	if base <= 0 {
		t.Fatalf("the synthetic clip has no banding (cambi %v): the test would check nothing", base)
	}

	// cambi_max_val clips.
	o := def
	o.maxVal = base / 2
	if got := score(o, w, h, 8, y); got != base/2 {
		t.Errorf("cambi_max_val %v: %v", o.maxVal, got)
	}

	// enc size: equal, or larger in one side, is the input's.
	for _, e := range [][2]int{{w, h}, {w + 2, h}, {w - 2, h + 2}, {0, h / 2}} {
		o := def
		o.encWidth, o.encHeight = e[0], e[1]
		if got := score(o, w, h, 8, y); got != base {
			t.Errorf("enc %dx%d on %dx%d: %v, want the input's %v", e[0], e[1], w, h, got, base)
		}
	}
	// A 2:1 smaller encode scores as the odd samples at that size: ratio 2, start
	// 2/2-0.5 = 0.5, sample (int)(0.5+0.5) = 1, then 3, 5, ...
	o = def
	o.encWidth, o.encHeight = w/2, h/2
	half := make([]uint16, (w/2)*(h/2))
	for i := 0; i < h/2; i++ {
		for j := 0; j < w/2; j++ {
			half[i*(w/2)+j] = y[(2*i+1)*w+2*j+1]
		}
	}
	if got, want := score(o, w, h, 8, y), score(def, w/2, h/2, 8, half); got != want {
		t.Errorf("enc %dx%d: %v, want the 2:1 decimated picture's %v", w/2, h/2, got, want)
	}
	// A 3:2 smaller encode: libvmaf's float stepping, written out here once
	// (ratio 1.5, start 0.25: samples 0, 2, 3, 5, 6, ...).
	o.encWidth, o.encHeight = w*2/3, h*2/3
	ew, eh := w*2/3, h*2/3
	pick := func(i int) int { return int(float64(float32(0.25)+float32(i)*1.5) + 0.5) }
	third := make([]uint16, ew*eh)
	for i := 0; i < eh; i++ {
		for j := 0; j < ew; j++ {
			third[i*ew+j] = y[pick(i)*w+pick(j)]
		}
	}
	if pick(1) != 2 || pick(2) != 3 || pick(3) != 5 {
		t.Fatalf("3:2 picks %d %d %d", pick(1), pick(2), pick(3))
	}
	if got, want := score(o, w, h, 8, y), score(def, ew, eh, 8, third); got != want {
		t.Errorf("enc %dx%d: %v, want the 3:2 decimated picture's %v", ew, eh, got, want)
	}
	// A smaller encode below 216 on both sides is refused, naming it.
	o.encWidth, o.encHeight = 200, 150
	if err := o.check(w, h, 8); !errors.Is(err, ErrTooSmall) || !strings.Contains(err.Error(), "200x150") {
		t.Errorf("enc 200x150: %v, want ErrTooSmall naming it", err)
	}

	// enc_bitdepth: the 8-bit picture as 10-bit samples.
	y10 := make([]uint16, len(y))
	for i, v := range y {
		y10[i] = v << 2
	}
	o = def
	o.encBitDepth = 8
	if got := score(o, w, h, 10, y10); got != base {
		t.Errorf("enc_bitdepth 8 on the 10-bit picture: %v, want the 8-bit input's %v", got, base)
	}
	if got := score(def, w, h, 10, y10); got == base {
		t.Errorf("the 10-bit picture without enc_bitdepth scores as with the anti-dithering: the test checks nothing")
	}
	o.encBitDepth = 10
	if got, want := score(o, w, h, 8, y), score(def, w, h, 10, y10); got != want {
		t.Errorf("enc_bitdepth 10 on the 8-bit picture: %v, want the 10-bit input's %v", got, want)
	}

	// cambi_vis_lum_threshold: the v1 models' 0.06 cd/m² is luma 78 (BT.1886 of
	// (78-64)/876 is 0.0632 cd/m², of 77 0.0576). c_value_pixel counts a step d
	// from value v only when v+numDiffs+d > vlt (libvmaf compares the offset
	// value), so with 4 steps bands at 10-bit luma 70 and below score 0, and
	// bands from 74 up (v+4+1 > 78 for every d) score as without the threshold.
	if got := cambiVLTLuma(0.06, cambiBT1886); got != 78 {
		t.Errorf("vlt luma of 0.06 cd/m² = %d, want 78", got)
	}
	if got := cambiVLTLuma(0, cambiBT1886); got != 0 {
		t.Errorf("vlt luma of 0 = %d, want 0", got)
	}
	bands := func(lo uint16) []uint16 { // 8-bit bands lo, lo+1, 27 columns wide
		b := make([]uint16, len(y))
		for i := range b {
			b[i] = lo + uint16((i%w)/27%2)
		}
		return b
	}
	o = def
	o.visLumThreshold = 0.06
	dark, bright := bands(16), bands(30) // 10-bit 64/68 and 120/124
	if d, v := score(def, w, h, 8, dark), score(o, w, h, 8, dark); d <= 0 || v != 0 {
		t.Errorf("banding at luma 64/68: cambi %v without the threshold, %v with 0.06 cd/m², want > 0 and 0", d, v)
	}
	if d, v := score(def, w, h, 8, bright), score(o, w, h, 8, bright); d <= 0 || v != d {
		t.Errorf("banding at luma 120/124: cambi %v without the threshold, %v with 0.06 cd/m², want them equal, > 0", d, v)
	}

	// cambi_high_res_speedup: off below its resolution (the v1 models at 640x360).
	o = def
	o.highResSpeedup = 1080
	if got := score(o, w, h, 8, y); got != base {
		t.Errorf("hrs 1080 at %dx%d: %v, want %v", w, h, got, base)
	}
	for _, c := range []struct {
		hrs, w, h int
		on        bool
		window    int
	}{
		{1080, 1920, 1080, true, 17}, {1080, 1920, 1078, false, 33}, {1440, 1920, 1080, false, 33},
		{1440, 2560, 1440, true, 23}, {2160, 3840, 2160, true, 33}, {2160, 3840, 2158, false, 65}, {7, 3840, 2160, false, 65},
	} {
		o := def
		o.highResSpeedup = c.hrs
		s, err := o.setup(c.w, c.h, 10)
		if err != nil || s.speedup != c.on || s.window != c.window {
			t.Errorf("hrs %d at %dx%d: speed-up %v window %d (%v), want %v %d", c.hrs, c.w, c.h, s.speedup, s.window, err, c.on, c.window)
		}
	}
	// With the speed-up, the mask is the full picture's and the scales start at
	// half size: a picture made of 2x2 blocks then scores as its half-size
	// original would at scale 0 onwards with the halved window, which cambiState
	// with the same fields computes directly.
	{
		const bw, bh = 1920, 1080
		big := make([]uint16, bw*bh)
		for i := 0; i < bh; i++ {
			for j := 0; j < bw; j++ {
				big[i*bw+j] = uint16(60 + (j/40)%2 + (i/300)%2)
			}
		}
		o := def
		o.highResSpeedup = 1080
		sp := newCAMBIState(bw, bh, 8, o)
		got := sp.compute(big)
		// Recompute by hand: the same steps with the speed-up's decimation
		// written out.
		ref := newCAMBIState(bw, bh, 8, def)
		ref.window = sp.window
		ref.preprocess(big)
		ref.spatialMask()
		var scores [cambiNumScales]float64
		cw, ch := bw, bh
		for scale := range cambiNumScales {
			nw, nh := (cw+1)>>1, (ch+1)>>1
			decimateInPlace(ref.img, cw, nw, nh)
			decimateInPlace(ref.mask, cw, nw, nh)
			cw, ch = nw, nh
			ref.filterMode(cw, ch)
			ref.cValues(cw, ch)
			scores[scale] = cambiPool(ref.cvals[:cw*ch], cambiTopK)
		}
		var want float64
		for i, v := range scores {
			want += v * cambiScaleWeights[i]
		}
		want /= float64(sp.window * sp.window)
		if got != want || got <= 0 {
			t.Errorf("speed-up at 1080p: %v, want %v (> 0)", got, want)
		}
		if plain := newCAMBIState(bw, bh, 8, def).compute(big); plain == got {
			t.Errorf("speed-up at 1080p scores as without it (%v): the test checks nothing", plain)
		}
	}
}

// TestCAMBIV1Check: the smallest inputs and the window limit, as cambi.c's init.
func TestCAMBIV1Check(t *testing.T) {
	def := defaultCAMBIOptions()
	v1, err := parseCAMBIOptions(map[string]any{"cambi_high_res_speedup": 1080.0, "cambi_vis_lum_threshold": 0.06, "cambi_max_val": 17.0})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    cambiOptions
		w, h int
		want error
	}{
		{def, 176, 144, ErrTooSmall}, {def, 215, 215, ErrTooSmall}, {def, 216, 144, nil}, {def, 100, 216, nil},
		{v1, 176, 144, ErrTooSmall}, {v1, 216, 120, nil}, {def, 3840, 2160, nil}, {def, 4096, 2160, ErrTooLarge},
		// The speed-up halves the window: 8K passes with it, not without.
		{def, 7680, 4320, ErrTooLarge}, {v1, 7680, 4320, nil},
	} {
		err := c.o.check(c.w, c.h, 8)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%dx%d hrs %d: %v, want %v", c.w, c.h, c.o.highResSpeedup, err, c.want)
		}
	}
	o := def
	o.srcWidth, o.srcHeight = 1920, 200
	if err := o.check(640, 360, 8); !errors.Is(err, ErrSizeMismatch) {
		t.Errorf("src 1920x200 against 640x360: %v, want ErrSizeMismatch", err)
	}
	if err := checkCAMBISize(176, 144); !errors.Is(err, ErrTooSmall) || !strings.Contains(err.Error(), "216") {
		t.Errorf("checkCAMBISize(176, 144) = %v, want ErrTooSmall naming 216", err)
	}
}

func TestCAMBIV1Parse(t *testing.T) {
	def := defaultCAMBIOptions()
	if def.maxVal != 1000 || def.windowSize != 65 || def.topk != 0.6 || def.cambiTopK != 0.6 || def.tviThreshold != 0.019 ||
		def.maxLogContrast != 2 || def.eotf != "bt1886" || def.cambiEOTF != "bt1886" || def.visLumThreshold != 0 ||
		def.encWidth != 0 || def.encHeight != 0 || def.encBitDepth != 0 || def.highResSpeedup != 0 {
		t.Fatalf("defaults %+v", def)
	}
	for _, c := range []struct {
		opts   map[string]any
		suffix string
	}{
		{nil, ""},
		{map[string]any{"cambi_high_res_speedup": 1080.0, "cambi_vis_lum_threshold": 0.06, "cambi_max_val": 17.0}, "_hrs_1080_cmxv_17_vlt_0.06"},
		{map[string]any{"enc_width": 1920.0, "enc_height": 1080.0, "enc_bitdepth": 8.0}, "_encbd_8_ench_1080_encw_1920"},
		{map[string]any{"cambi_max_val": 1000.0, "window_size": 65}, ""},
		{map[string]any{"topk": 0.5, "cambi_topk": 0.25, "tvi_threshold": 0.02, "max_log_contrast": 3.0}, "_ctpk_0.25_mlc_3_topk_0.5_tvit_0.02"},
		{map[string]any{"eotf": "pq", "cambi_eotf": "pq", "window_size": 63.0, "src_width": 3840.0, "src_height": 2160.0},
			"_ceot_pq_eotf_pq_srch_2160_srcw_3840_ws_63"},
		{map[string]any{"full_ref": false, "heatmaps_path": ""}, ""},
	} {
		o, err := parseCAMBIOptions(c.opts)
		if err != nil {
			t.Errorf("%v: %v", c.opts, err)
			continue
		}
		if got := o.suffix(); got != c.suffix {
			t.Errorf("%v: suffix %q, want %q", c.opts, got, c.suffix)
		}
	}
	for _, c := range []struct {
		opts map[string]any
		name string
	}{
		{map[string]any{"cambi_maxval": 17.0}, "cambi_maxval"},
		{map[string]any{"cambi_max_val": 1001.0}, "cambi_max_val"},
		{map[string]any{"enc_width": 179.0}, "enc_width"},
		{map[string]any{"enc_width": 0.0}, "enc_width"}, // the default, but below the option's minimum
		{map[string]any{"enc_height": 1080.5}, "enc_height"},
		{map[string]any{"enc_bitdepth": 17.0}, "enc_bitdepth"},
		{map[string]any{"enc_bitdepth": "8"}, "enc_bitdepth"},
		{map[string]any{"cambi_vis_lum_threshold": 301.0}, "cambi_vis_lum_threshold"},
		{map[string]any{"cambi_high_res_speedup": 4320.0}, "cambi_high_res_speedup"},
		{map[string]any{"max_log_contrast": 6.0}, "max_log_contrast"},
		{map[string]any{"window_size": 129.0}, "window_size"},
		{map[string]any{"eotf": "hlg"}, "eotf"},
		{map[string]any{"cambi_eotf": 1.0}, "cambi_eotf"},
		{map[string]any{"full_ref": true}, "full_ref"},
		{map[string]any{"heatmaps_path": "/tmp/h"}, "heatmaps_path"},
	} {
		_, err := parseCAMBIOptions(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%v: error %v, want one naming %s", c.opts, err, c.name)
		}
	}
}

// TestCAMBIV1OtherOptions: the options beside the v1 ones, on the v1 reference pair
// q01, do what their cambi.c code says: max_log_contrast 0 looks for 1-code steps
// only, and a wider window (window_size) and topk 1 change the score; pq thresholds
// differ from BT.1886's.
func TestCAMBIV1OtherOptions(t *testing.T) {
	p := loadV1Pairs(t)[0]
	y := v1Frames(t, p, "dist", false)[0].Y
	def := defaultCAMBIOptions()
	base := newCAMBIState(p.w, p.h, 8, def).compute(y)
	for _, c := range []map[string]any{
		{"max_log_contrast": 0.0}, {"max_log_contrast": 5.0}, {"window_size": 127.0}, {"topk": 1.0}, {"cambi_topk": 0.1},
		{"tvi_threshold": 0.5}, {"cambi_eotf": "pq"},
	} {
		o, err := parseCAMBIOptions(c)
		if err != nil {
			t.Fatal(err)
		}
		got := newCAMBIState(p.w, p.h, 8, o).compute(y)
		if got == base || math.IsNaN(got) || got < 0 {
			t.Errorf("%v: cambi %v, default %v", c, got, base)
		}
	}
	// pq's limits are what libvmaf's bisection returns: the step is visible at the
	// limit and not one code above, or 1023 when it is still visible at the
	// top of the range (head-d-1), as under PQ for steps of 2 and more.
	for d := 1; d <= 4; d++ {
		lim := cambiTVIForDiff(d, cambiTVIThreshold, cambiPQ)
		ok := cambiTVICondition(lim, d, cambiTVIThreshold, cambiPQ) && !cambiTVICondition(lim+1, d, cambiTVIThreshold, cambiPQ)
		if lim == 1023 {
			ok = cambiTVICondition(cambiHead-d-1, d, cambiTVIThreshold, cambiPQ)
		}
		if !ok {
			t.Errorf("pq limit of step %d: %d", d, lim)
		}
	}
}

// fexNonDefault returns the values of vals that are not their option's default: the
// entry that parses back to them.
func fexNonDefault(table []fexOption, vals map[string]any) map[string]any {
	m := map[string]any{}
	for _, o := range table {
		if v, ok := vals[o.name]; ok && v != o.def {
			m[o.name] = v
		}
	}
	return m
}

func FuzzCAMBIOptions(f *testing.F) {
	f.Add(17.0, 0.06, 1080.0, 0.0, 0.0, 0.0, 2.0, "bt1886")
	f.Add(1000.0, 0.0, 0.0, 1920.0, 1080.0, 8.0, 5.0, "pq")
	f.Add(-1.0, 400.0, 1.5, 179.0, 7681.0, 5.0, 6.0, "hlg")
	f.Fuzz(func(t *testing.T, maxVal, vlt, hrs, encW, encH, encBD, mlc float64, eotf string) {
		o, err := parseCAMBIOptions(map[string]any{
			"cambi_max_val": maxVal, "cambi_vis_lum_threshold": vlt, "cambi_high_res_speedup": hrs,
			"enc_width": encW, "enc_height": encH, "enc_bitdepth": encBD, "max_log_contrast": mlc, "cambi_eotf": eotf,
		})
		if err != nil {
			return
		}
		if o.maxVal < 0 || o.maxVal > 1000 || o.encWidth < 180 || o.encBitDepth < 6 || o.maxLogContrast > 5 {
			t.Fatalf("out of range accepted: %+v", o)
		}
		if o2, err := parseCAMBIOptions(fexNonDefault(cambiOptionTable, o.values())); err != nil || o2 != o || o2.suffix() != o.suffix() {
			t.Fatalf("%+v: reparsed %+v, %v", o, o2, err)
		}
		// Whatever check accepts, a state can be made and run at it.
		if o.check(216, 216, 8) == nil {
			y := make([]uint16, 216*216)
			for i := range y {
				y[i] = uint16(i / 216 % 3)
			}
			if v := newCAMBIState(216, 216, 8, o).compute(y); v < 0 || v > o.maxVal || math.IsNaN(v) {
				t.Fatalf("%+v: cambi %v", o, v)
			}
		}
	})
}
