package vmaf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// v1Tolerance is how far a metric may be from libvmaf's printed value: libvmaf prints
// six decimals, so an exact computation is within 5e-7 of it; 1e-6 leaves room for the
// last printed digit's own rounding.
const v1Tolerance = 1e-6

// TestV1Accuracy scores every pair of the v1 reference set with every model it holds and
// compares every frame's metrics, and the pooled ones, with libvmaf 3.2.0's C path: the
// same metric names (options in the suffixes), the same values.
func TestV1Accuracy(t *testing.T) {
	paths := []CPU{CPUGeneric}
	if best := BestCPU(); best != CPUGeneric {
		paths = append(paths, best)
	}
	for _, p := range loadV1Pairs(t) {
		for _, model := range v1Models {
			for _, cpu := range paths {
				t.Run(p.name+"/"+model+"/"+cpu.String(), func(t *testing.T) {
					t.Parallel()
					testV1Pair(t, p, model, cpu)
				})
			}
		}
	}
}

// testV1Pair scores pair p with model on one kernel path and compares every metric.
func testV1Pair(t *testing.T, p v1Pair, model string, cpu CPU) {
	want := readV1Log(t, p, model)
	ref, dist := openV1Pair(t, p)
	got, err := Score(context.Background(), ref, dist, Options{Model: model, Threads: 2, CPU: cpu})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Frames) != len(want.Frames) {
		t.Fatalf("got %d frames, want %d", len(got.Frames), len(want.Frames))
	}
	names := got.Metrics()
	wantNames := make([]string, 0, len(want.Frames[0].Metrics))
	for k := range want.Frames[0].Metrics {
		wantNames = append(wantNames, k)
	}
	sorted := slices.Clone(names)
	sort.Strings(sorted)
	sort.Strings(wantNames)
	if !slices.Equal(sorted, wantNames) {
		t.Fatalf("metrics\n got %v\nwant %v", sorted, wantNames)
	}
	worst := map[string]float64{}
	for i, wf := range want.Frames {
		for _, key := range names {
			gv, _ := got.Metric(i, key)
			d := math.Abs(gv - wf.Metrics[key])
			worst[key] = max(worst[key], d)
			if d > v1Tolerance {
				t.Errorf("frame %d %s: want %.6f, got %.7f (delta %.2g)", wf.FrameNum, key, wf.Metrics[key], gv, d)
			}
		}
	}
	for _, key := range names {
		w, g := want.PooledMetrics[key], got.Pooled[key]
		for stat, gv := range map[string]float64{"min": g.Min, "max": g.Max, "mean": g.Mean, "harmonic_mean": g.HarmonicMean} {
			if d := math.Abs(gv - w[stat]); d > v1Tolerance {
				t.Errorf("pooled %s %s: want %.6f, got %.7f", key, stat, w[stat], gv)
			}
		}
	}
	t.Logf("%s %s %v: worst |delta| vmaf %.2g, any metric %.2g", p.name, model, cpu, worst[metricVMAF], maxValue(worst))
}

func maxValue(m map[string]float64) float64 {
	v := 0.0
	for _, x := range m {
		v = max(v, x)
	}
	return v
}

func TestBuiltinModelsLoad(t *testing.T) {
	for _, name := range BuiltinModels() {
		m, err := LoadModel(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if m.Name != name {
			t.Errorf("%s: loaded as %q", name, m.Name)
		}
	}
	for _, name := range []string{"vmaf_4k_v0.6.1phone", "vmaf_v1.0.16_3d0hphone", "vmaf_v1.0.16", "../models/vmaf_v0.6.1"} {
		if _, err := LoadModel(name); !errors.Is(err, ErrUnknownModel) {
			t.Errorf("%s: err = %v, want ErrUnknownModel", name, err)
		}
	}
}

func TestModelCollectionRefused(t *testing.T) {
	var top map[string]json.RawMessage
	data, err := builtinModels.ReadFile("models/vmaf_b_v0.6.3.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	one, _ := json.Marshal(map[string]json.RawMessage{"0": top["0"]})
	var m0 map[string]any
	if err := json.Unmarshal(top["1"], &m0); err != nil {
		t.Fatal(err)
	}
	md := m0["model_dict"].(map[string]any)
	md["feature_names"] = []any{"VMAF_integer_feature_adm2_score", "VMAF_integer_feature_motion2_score", "VMAF_integer_feature_vif_scale0_score",
		"VMAF_integer_feature_vif_scale1_score", "VMAF_integer_feature_vif_scale2_score", "VMAF_integer_feature_adm3_score"}
	other, _ := json.Marshal(m0)
	mixed, _ := json.Marshal(map[string]json.RawMessage{"0": top["0"], "1": other})
	huge := map[string]json.RawMessage{}
	for i := range maxBootstrapModels + 2 {
		huge[strconv.Itoa(i)] = top["0"]
	}
	tooMany, _ := json.Marshal(huge)
	for name, doc := range map[string][]byte{"one model": one, "other features": mixed, "too many": tooMany, "empty": []byte(`{}`)} {
		if _, err := ParseModel(doc, "x"); !errors.Is(err, ErrBadModel) {
			t.Errorf("%s: err = %v, want ErrBadModel", name, err)
		}
	}
}

// TestChromaCorrection checks the substitution libvmaf makes before the SVM: a SpEED
// chroma score of exactly 0 becomes c*(1-adm3), in normalised units; any other is kept.
func TestChromaCorrection(t *testing.T) {
	m := &Model{linear: true, chromaCorrection: 120, chromaGuide: 1, chromaGuided: 0, features: []modelFeature{
		{kind: featSpeedUV, name: "Speed_chroma_feature_speed_chroma_uv_score", slope: 0.5, intercept: 0.25},
		{kind: featADM3, name: "VMAF_integer_feature_adm3_score", slope: 2, intercept: -1},
	}}
	x := make([]float64, 2)
	m.input(&FrameScore{SpeedUV: 0, ADM3: 0.99}, x)
	if want := 0.5*(-120*0.99+120) + 0.25; math.Abs(x[0]-want) > 1e-12 {
		t.Errorf("speed 0: x = %v, want %v", x[0], want)
	}
	m.input(&FrameScore{SpeedUV: 1.5, ADM3: 0.99}, x)
	if want := 0.5*1.5 + 0.25; x[0] != want {
		t.Errorf("speed 1.5: x = %v, want %v (kept)", x[0], want)
	}
}

// TestOffloadSplit: a device that offers motion, VIF and ADM takes all three for
// vmaf_v0.6.1, and motion and ADM (under v1's CSF options) for a v1 model, whose CAMBI
// and SpEED stay on the CPU.
func TestOffloadSplit(t *testing.T) {
	offered := []string{"motion", "vif", "adm"}
	m, err := LoadModel("vmaf_v0.6.1")
	if err != nil {
		t.Fatal(err)
	}
	if dev, host := m.OffloadSplit(offered); !slices.Equal(dev, offered) || len(host) != 0 {
		t.Errorf("vmaf_v0.6.1: device %v host %v", dev, host)
	}
	if dev, host := m.OffloadSplit([]string{"motion"}); !slices.Equal(dev, []string{"motion"}) || !slices.Equal(host, []string{"vif", "adm"}) {
		t.Errorf("vmaf_v0.6.1 on a device with motion alone: device %v host %v", dev, host)
	}
	for _, o := range []admOptions{admV1Options(3, 1080), admV1Options(5, 1080), admV1Options(1.5, 2160), admV1Options(3, 2160)} {
		v1 := &Model{adm: o, cambi: &cambiOptions{}, speed: &speedOptions{}}
		if dev, host := v1.OffloadSplit(offered); !slices.Equal(dev, []string{"motion", "adm"}) || !slices.Equal(host, []string{"cambi", "speed_chroma"}) {
			t.Errorf("v1 %s: device %v host %v", o.suffix(), dev, host)
		}
	}
	for _, name := range []string{"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_hfr_1d5h_2160"} {
		m, err := LoadModel(name)
		if err != nil {
			t.Fatal(err)
		}
		if dev, host := m.OffloadSplit(offered); !slices.Equal(dev, []string{"motion", "adm"}) || !slices.Equal(host, []string{"cambi", "speed_chroma"}) {
			t.Errorf("%s: device %v host %v", name, dev, host)
		}
	}
}

// TestV1RefusesWhatItCannotScore: libvmaf 3.2.0 crashes in SpEED on a 176x144 input and
// fails in CAMBI below 216 pixels; a v1 model refuses such inputs, and gray ones (SpEED
// scores chroma), before reading a frame, naming the smallest size.
func TestV1RefusesWhatItCannotScore(t *testing.T) {
	cases := []struct {
		w, h int
		pf   PixelFormat
		want error
		says string
	}{
		{176, 144, YUV420P, ErrTooSmall, "216"},
		{640, 150, YUV420P, ErrTooSmall, "160"},
		{200, 200, YUV420P, ErrTooSmall, "216"},
		{640, 360, Gray, ErrNoChroma, ""},
	}
	for _, tc := range cases {
		src := &unreadable{info: VideoInfo{Width: tc.w, Height: tc.h, Format: tc.pf}}
		_, err := Score(context.Background(), src, src, Options{Model: "vmaf_v1.0.16_3d0h"})
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%dx%d %v: err = %v, want %v naming %q", tc.w, tc.h, tc.pf, err, tc.want, tc.says)
		}
		if src.reads > 0 {
			t.Errorf("%dx%d %v: %d frames read before the refusal", tc.w, tc.h, tc.pf, src.reads)
		}
	}
	// vmaf_v0.6.1 has neither feature: the same small input scores.
	ref, dist := synthClip(176, 144, YUV420P, 2)
	r, _ := OpenRaw(bytes.NewReader(ref), 176, 144, YUV420P)
	d, _ := OpenRaw(bytes.NewReader(dist), 176, 144, YUV420P)
	if _, err := Score(context.Background(), r, d, Options{}); err != nil {
		t.Errorf("vmaf_v0.6.1 at 176x144: %v", err)
	}
}

// unreadable is a source that counts reads and has no frames.
type unreadable struct {
	info  VideoInfo
	reads int
}

func (u *unreadable) Info() VideoInfo { return u.info }
func (u *unreadable) ReadFrame(*Frame) error {
	u.reads++
	return io.EOF
}
