package vmaf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// metricFeature maps each extra metric libvmaf prints to the feature that
// computes it.
var metricFeature = map[string]Feature{
	metricPSNRY: FeaturePSNR, metricPSNRCb: FeaturePSNR, metricPSNRCr: FeaturePSNR,
	metricSSIM: FeatureSSIM, metricMSSSIM: FeatureMSSSIM, metricCAMBI: FeatureCAMBI,
}

// logFeatures returns the extra features whose metrics a libvmaf log holds.
func logFeatures(l *libvmafLog) []Feature {
	var fs []Feature
	for name := range l.Frames[0].Metrics {
		if f, ok := metricFeature[name]; ok && !slices.Contains(fs, f) {
			fs = append(fs, f)
		}
	}
	slices.Sort(fs)
	return fs
}

// compareLog checks every metric of got, per frame and pooled, against a
// libvmaf log: the score within vmafTolerance, VMAF's features and the
// extra metrics within featureTolerance (the extra metrics are asked to be
// within 1e-4; they come within libvmaf's print rounding, 5e-7). The log must hold the same metrics,
// except extra ones of features got did not compute. It returns the largest
// difference of each extra metric.
func compareLog(t *testing.T, got *Result, want *libvmafLog) map[string]float64 {
	t.Helper()
	names := got.Metrics()
	for name := range want.Frames[0].Metrics {
		if f, extra := metricFeature[name]; (!extra || slices.Contains(got.Features, f)) && !slices.Contains(names, name) {
			t.Errorf("metric %s missing from %v", name, names)
		}
	}
	if len(got.Frames) != len(want.Frames) {
		t.Fatalf("got %d frames, want %d", len(got.Frames), len(want.Frames))
	}
	tolerance := func(key string) float64 {
		if key == metricVMAF {
			return vmafTolerance
		}
		return featureTolerance
	}
	worst := map[string]float64{}
	for i, wf := range want.Frames {
		for _, key := range names {
			wv, ok := wf.Metrics[key]
			if !ok {
				t.Fatalf("frame %d: libvmaf's log lacks %s", wf.FrameNum, key)
			}
			gv, _ := got.Metric(i, key)
			d := math.Abs(gv - wv)
			if _, extra := metricFeature[key]; extra {
				worst[key] = max(worst[key], d)
			}
			if !(d <= tolerance(key)) {
				t.Errorf("frame %d %s: want %.6f, got %.6f (delta %.2g)", wf.FrameNum, key, wv, gv, d)
			}
		}
	}
	for _, key := range names {
		p, w := got.Pooled[key], want.PooledMetrics[key]
		for stat, gv := range map[string]float64{"min": p.Min, "max": p.Max, "mean": p.Mean, "harmonic_mean": p.HarmonicMean} {
			if d := math.Abs(gv - w[stat]); !(d <= tolerance(key)) {
				t.Errorf("pooled %s %s: want %.6f, got %.6f", key, stat, w[stat], gv)
			}
		}
	}
	return worst
}

// TestExtraAccuracy scores every pair that has a libvmaf log with extra
// features (testdata/ref_extra) with the same features and compares every
// metric, VMAF's included, per frame and pooled.
func TestExtraAccuracy(t *testing.T) {
	for _, p := range loadPairs(t) {
		path := filepath.Join("testdata/ref_extra", p.name+"_extra.json")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			want := readLog(t, path)
			feats := logFeatures(want)
			ref, dist := openPair(t, p)
			got, err := Score(context.Background(), ref, dist, Options{Model: "vmaf_v0.6.1", Threads: 2, Features: feats})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Features, feats) {
				t.Errorf("Result.Features = %v, want %v", got.Features, feats)
			}
			worst := compareLog(t, got, want)
			t.Logf("%s %v: max |delta| %v", p.name, feats, worst)
		})
	}
}

// TestExtraVMAFUnchanged checks that asking for every extra feature leaves
// the VMAF scores and their features bit for bit as without them.
func TestExtraVMAFUnchanged(t *testing.T) {
	p := pairNamed(t, "p03")
	run := func(fs []Feature) *Result {
		ref, dist := openPair(t, p)
		res, err := Score(context.Background(), ref, dist, Options{Threads: 2, Features: fs})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	plain, all := run(nil), run(AllFeatures)
	if plain.Features != nil || len(all.Features) != len(AllFeatures) {
		t.Fatalf("Features: %v and %v", plain.Features, all.Features)
	}
	extra := slices.DeleteFunc(all.Metrics(), func(name string) bool { return slices.Contains(plain.Metrics(), name) })
	want := []string{metricPSNRY, metricPSNRCb, metricPSNRCr, metricSSIM, metricMSSSIM, metricCAMBI}
	if !slices.Equal(extra, want) || !slices.Equal(all.ExtraMetrics(), want) || plain.ExtraMetrics() != nil {
		t.Fatalf("extra metrics %v, ExtraMetrics %v and %v; want %v", extra, all.ExtraMetrics(), plain.ExtraMetrics(), want)
	}
	for i := range plain.Frames {
		for _, name := range extra {
			if v, _ := all.Metric(i, name); v == 0 && name != metricCAMBI {
				t.Fatalf("frame %d: %s is 0", i, name)
			}
		}
		f := all.Frames[i]
		f.PSNRY, f.PSNRCb, f.PSNRCr, f.SSIM, f.MSSSIM, f.CAMBI = 0, 0, 0, 0, 0, 0
		if f != plain.Frames[i] || math.Float64bits(f.VMAF) != math.Float64bits(plain.Frames[i].VMAF) {
			t.Errorf("frame %d:\n with features %+v\n without       %+v", i, f, plain.Frames[i])
		}
	}
	for _, name := range plain.Metrics() {
		if all.Pooled[name] != plain.Pooled[name] {
			t.Errorf("pooled %s: %+v with features, %+v without", name, all.Pooled[name], plain.Pooled[name])
		}
	}
	// The JSON without features is the VMAF-only layout, byte for byte.
	var a, b bytes.Buffer
	plain.FPS, all.FPS = 0, 0
	all.Features = nil
	if err := plain.WriteJSON(&a); err != nil {
		t.Fatal(err)
	}
	if err := all.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("VMAF-only JSON differs once the extra features are dropped")
	}
}

func TestParseFeature(t *testing.T) {
	for name, want := range map[string]Feature{
		"psnr": FeaturePSNR, "PSNR": FeaturePSNR, " ssim ": FeatureSSIM, "float_ssim": FeatureSSIM,
		"ms_ssim": FeatureMSSSIM, "ms-ssim": FeatureMSSSIM, "MS-SSIM": FeatureMSSSIM, "msssim": FeatureMSSSIM,
		"float_ms_ssim": FeatureMSSSIM, "cambi": FeatureCAMBI,
	} {
		got, err := ParseFeature(name)
		if err != nil || got != want {
			t.Errorf("ParseFeature(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	for _, name := range []string{"", "vmaf", "psnr_y", "ssim2", "vif"} {
		if _, err := ParseFeature(name); !errors.Is(err, ErrUnknownFeature) {
			t.Errorf("ParseFeature(%q): err = %v, want ErrUnknownFeature", name, err)
		}
	}
	for _, f := range AllFeatures {
		if got, err := ParseFeature(f.String()); err != nil || got != f {
			t.Errorf("ParseFeature(%v.String()) = %v, %v", f, got, err)
		}
	}
	got, err := ParseFeatures("cambi, psnr,,ms-ssim,psnr")
	if err != nil || !slices.Equal(got, []Feature{FeaturePSNR, FeatureMSSSIM, FeatureCAMBI}) {
		t.Errorf("ParseFeatures = %v, %v", got, err)
	}
	if got, err := ParseFeatures(""); err != nil || got != nil {
		t.Errorf("ParseFeatures(\"\") = %v, %v; want nil, nil", got, err)
	}
	if _, err := ParseFeatures("psnr,bogus"); !errors.Is(err, ErrUnknownFeature) {
		t.Errorf("ParseFeatures with an unknown name: err = %v", err)
	}
	// Features travel in JSON by name.
	data, err := json.Marshal(AllFeatures)
	if err != nil || string(data) != `["psnr","ssim","ms_ssim","cambi"]` {
		t.Errorf("json.Marshal(AllFeatures) = %s, %v", data, err)
	}
	var back []Feature
	if err := json.Unmarshal([]byte(`["MS-SSIM","psnr"]`), &back); err != nil || !slices.Equal(back, []Feature{FeatureMSSSIM, FeaturePSNR}) {
		t.Errorf("json.Unmarshal = %v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`["vif"]`), &back); !errors.Is(err, ErrUnknownFeature) {
		t.Errorf("json.Unmarshal of an unknown name: err = %v", err)
	}
	if _, err := json.Marshal(Feature(0)); !errors.Is(err, ErrUnknownFeature) {
		t.Errorf("json.Marshal(Feature(0)): err = %v", err)
	}
	p := loadPairs(t)[0]
	ref, dist := openPair(t, p)
	if _, err := Score(context.Background(), ref, dist, Options{Features: []Feature{FeaturePSNR, Feature(99)}}); !errors.Is(err, ErrUnknownFeature) {
		t.Errorf("Score with Feature(99): err = %v, want ErrUnknownFeature", err)
	}
}

// shortChroma drops the last sample of every U plane its source delivers.
type shortChroma struct{ FrameSource }

func (s shortChroma) ReadFrame(f *Frame) error {
	err := s.FrameSource.ReadFrame(f)
	if err == nil && len(f.U) > 0 {
		f.U = f.U[:len(f.U)-1]
	}
	return err
}

// TestPSNRInputs covers PSNR's input cases: gray input gives psnr_y alone,
// equal to that of the same luma with chroma; chroma planes of different
// sizes are ErrSizeMismatch; a source that ignores Frame.Chroma, or fills
// a plane short, is ErrNoChroma; identical planes hit libvmaf's cap of 6*bpc+12 dB.
func TestPSNRInputs(t *testing.T) {
	const w, h, n = 48, 40, 3
	refP, distP := synthPair(w, h, n)
	src := func(pf PixelFormat, planes [][]uint16) *memSource {
		return &memSource{info: VideoInfo{Width: w, Height: h, Format: pf}, planes: planes, n: n}
	}
	score := func(r, d FrameSource) (*Result, error) {
		return Score(context.Background(), r, d, Options{Features: []Feature{FeaturePSNR}})
	}
	color, err := score(src(YUV420P, refP), src(YUV420P, distP))
	if err != nil {
		t.Fatal(err)
	}
	gray, err := score(src(Gray, refP), src(Gray, distP))
	if err != nil {
		t.Fatal(err)
	}
	if names := gray.Metrics(); slices.Contains(names, metricPSNRCb) || !slices.Contains(names, metricPSNRY) {
		t.Errorf("gray metrics %v", names)
	}
	if names := color.Metrics(); !slices.Contains(names, metricPSNRCb) || !slices.Contains(names, metricPSNRCr) {
		t.Errorf("4:2:0 metrics %v", names)
	}
	for i := range gray.Frames {
		g, c := gray.Frames[i], color.Frames[i]
		if g.PSNRY != c.PSNRY || g.PSNRCb != 0 || c.PSNRCb == 0 || c.PSNRCr == 0 || c.PSNRY >= 60 {
			t.Errorf("frame %d: gray %+v, 4:2:0 %+v", i, g, c)
		}
	}
	if _, err := score(src(YUV420P, refP), src(YUV444P, distP)); !errors.Is(err, ErrSizeMismatch) {
		t.Errorf("4:2:0 against 4:4:4: err = %v, want ErrSizeMismatch", err)
	}
	mute := src(YUV420P, distP)
	mute.noChroma = true
	if _, err := score(src(YUV420P, refP), mute); !errors.Is(err, ErrNoChroma) {
		t.Errorf("source ignoring Frame.Chroma: err = %v, want ErrNoChroma", err)
	}
	if _, err := score(src(YUV420P, refP), shortChroma{src(YUV420P, distP)}); !errors.Is(err, ErrNoChroma) {
		t.Errorf("source with a short chroma plane: err = %v, want ErrNoChroma", err)
	}
	same, err := Score(context.Background(), src(YUV420P10LE, refP), src(YUV420P10LE, refP), Options{Features: []Feature{FeaturePSNR}})
	if err != nil {
		t.Fatal(err)
	}
	if f := same.Frames[0]; f.PSNRY != 72 || f.PSNRCb != 72 || f.PSNRCr != 72 {
		t.Errorf("identical 10-bit planes: %v %v %v dB, want 72", f.PSNRY, f.PSNRCb, f.PSNRCr)
	}
}

// TestExtraSizeLimits checks that features refuse the frame sizes libvmaf
// refuses, before reading any frame, and accept the smallest it takes.
func TestExtraSizeLimits(t *testing.T) {
	tests := []struct {
		f    Feature
		w, h int
		want error
	}{
		{FeatureMSSSIM, 176, 144, ErrTooSmall}, // p01's size: libvmaf's "scale below 1x1"
		{FeatureMSSSIM, 175, 400, ErrTooSmall},
		{FeatureMSSSIM, 176, 176, nil},
		{FeatureCAMBI, 176, 144, ErrTooSmall}, // p01's size, where libvmaf's cambi fails
		{FeatureCAMBI, 215, 215, ErrTooSmall},
		{FeatureCAMBI, 216, 40, nil}, // one side is enough
		{FeatureCAMBI, 40, 216, nil},
		{FeatureCAMBI, 3840, 2160, nil},         // window 65, libvmaf's largest
		{FeatureCAMBI, 4000, 2200, ErrTooLarge}, // window 67
	}
	for _, tc := range tests {
		info := VideoInfo{Width: tc.w, Height: tc.h, Format: YUV420P}
		var refP, distP [][]uint16
		n := 0
		if tc.w*tc.h < 1<<20 {
			refP, distP = synthPair(tc.w, tc.h, 2)
			n = 2
		}
		_, err := Score(context.Background(), &memSource{info: info, planes: refP, n: n},
			&memSource{info: info, planes: distP, n: n}, Options{Features: []Feature{tc.f}})
		if tc.want == nil && n == 0 {
			tc.want = ErrNoFrames // accepted: failed only for lack of frames
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%v at %dx%d: err = %v, want %v", tc.f, tc.w, tc.h, err, tc.want)
		}
	}
}

// printTolerance is the difference allowed between two printed values of
// metric k: the rounding of both to six decimals, and for the score the
// kernel's known last-digit differences (vmafTolerance).
func printTolerance(k string) float64 {
	if k == metricVMAF {
		return vmafTolerance
	}
	return 1.5e-6
}

// TestWriteJSONExtra checks that the extra metrics are written per frame and
// pooled in libvmaf's layout and key order.
func TestWriteJSONExtra(t *testing.T) {
	p := pairNamed(t, "p03")
	path := filepath.Join("testdata/ref_extra", p.name+"_extra.json")
	want := readLog(t, path)
	ref, dist := openPair(t, p)
	res, err := Score(context.Background(), ref, dist, Options{Model: "vmaf_v0.6.1", Features: logFeatures(want)})
	if err != nil {
		t.Fatal(err)
	}
	out, got := writeJSONLog(t, res)
	for i, f := range got.Frames {
		if len(f.Metrics) != len(want.Frames[i].Metrics) {
			t.Fatalf("frame %d: %d metrics, libvmaf has %d", i, len(f.Metrics), len(want.Frames[i].Metrics))
		}
		for k, v := range f.Metrics {
			if w, ok := want.Frames[i].Metrics[k]; !ok || math.Abs(v-w) > printTolerance(k) {
				t.Errorf("frame %d %s: got %.6f, want %.6f (present %v)", i, k, v, w, ok)
			}
		}
	}
	if len(got.PooledMetrics) != len(want.PooledMetrics) {
		t.Errorf("%d pooled metrics, libvmaf has %d", len(got.PooledMetrics), len(want.PooledMetrics))
	}
	for k, m := range want.PooledMetrics {
		for stat, w := range m {
			if g := got.PooledMetrics[k][stat]; math.Abs(g-w) > printTolerance(k) {
				t.Errorf("pooled %s %s: got %.6f, want %.6f", k, stat, g, w)
			}
		}
	}
	// Key order of the first frame, as libvmaf writes it.
	keys := func(b []byte) []string {
		b = b[bytes.Index(b, []byte(`"metrics"`)):]
		b = b[:bytes.IndexByte(b, '}')]
		var out []string
		for _, m := range regexp.MustCompile(`"(\w+)":`).FindAllSubmatch(b, -1)[1:] {
			out = append(out, string(m[1]))
		}
		return out
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := keys(out), keys(raw); !slices.Equal(g, w) {
		t.Errorf("metric order\n got %v\nwant %v", g, w)
	}
}

// TestDocsMetricsExample checks the per-frame excerpt in docs/metrics.md:
// frame 0 of p01 scored with PSNR and SSIM has those metrics, in that
// order, with those values at the printed precision.
func TestDocsMetricsExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```json\n(\"metrics\": \\{.*?\n\\})\n```").FindSubmatch(doc)
	if block == nil {
		t.Fatal("docs/metrics.md has no metrics excerpt")
	}
	var excerpt struct {
		Metrics map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal(append(append([]byte("{"), block[1]...), '}'), &excerpt); err != nil {
		t.Fatalf("excerpt is not JSON: %v", err)
	}
	var order []string
	for _, m := range regexp.MustCompile(`"(\w+)":`).FindAllSubmatch(block[1], -1)[1:] {
		order = append(order, string(m[1]))
	}
	ref, dist := openPair(t, pairNamed(t, "p01"))
	res, err := Score(context.Background(), ref, dist, Options{Model: "vmaf_v0.6.1", Features: []Feature{FeaturePSNR, FeatureSSIM}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, res.Metrics()) {
		t.Errorf("excerpt lists\n%v\nthe kernel writes\n%v", order, res.Metrics())
	}
	for name, v := range excerpt.Metrics {
		if got, _ := res.Metric(0, name); math.Abs(got-v) > printTolerance(name) {
			t.Errorf("%s: excerpt %.6f, kernel %.6f", name, v, got)
		}
	}
}
