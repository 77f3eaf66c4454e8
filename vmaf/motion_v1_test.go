package vmaf

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// v1FeatureOpts returns the feature_opts_dicts entry of a built-in model
// (models/<model>.json) for its feature whose name starts with prefix.
func v1FeatureOpts(t testing.TB, model, prefix string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("models", model+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ModelDict struct {
			FeatureNames     []string         `json:"feature_names"`
			FeatureOptsDicts []map[string]any `json:"feature_opts_dicts"`
		} `json:"model_dict"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	for i, n := range m.ModelDict.FeatureNames {
		if strings.HasPrefix(n, prefix) && i < len(m.ModelDict.FeatureOptsDicts) {
			return m.ModelDict.FeatureOptsDicts[i]
		}
	}
	t.Fatalf("%s: no options for %s*", model, prefix)
	return nil
}

// v1MotionOpts returns the motion options of a built-in model's
// feature_opts_dicts, read with parseMotionOptions.
func v1MotionOpts(t testing.TB, model string) motionOptions {
	t.Helper()
	raw := v1FeatureOpts(t, model, "VMAF_integer_feature_motion")
	o, err := parseMotionOptions(raw)
	if err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	return o
}

// TestMotionV1Reference: under the v1 models' motion options (motion_max_val 18;
// the HFR model's five-frame window and moving average), every pair's per-frame SAD
// score, motion2 and motion3 are libvmaf's within its print rounding, and the metric
// names carry libvmaf's suffix. Score runs on 1 and 3 threads, so the slots the
// five-frame window holds longer are recycled out of order too.
func TestMotionV1Reference(t *testing.T) {
	worst := map[string]float64{}
	for _, model := range []string{"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_hfr_3d0h"} {
		mo := v1MotionOpts(t, model)
		suf := mo.suffix()
		for _, p := range loadV1Pairs(t) {
			log := readV1Log(t, p, model)
			for _, threads := range []int{1, 3} {
				ref, dist := openV1Pair(t, p)
				res, err := Score(context.Background(), ref, dist, Options{Threads: threads, motion: &mo})
				if err != nil {
					t.Fatalf("%s %s: %v", p.name, model, err)
				}
				if len(res.Frames) != len(log.Frames) {
					t.Fatalf("%s %s: %d frames, libvmaf %d", p.name, model, len(res.Frames), len(log.Frames))
				}
				for i, f := range res.Frames {
					for _, c := range []struct {
						name string
						got  float64
					}{
						{"VMAF_integer_feature_motion_sad_score" + suf, f.MotionSAD},
						{"integer_motion2" + suf, f.Motion2},
						{"integer_motion3" + suf, f.Motion3},
					} {
						want, ok := log.Frames[i].Metrics[c.name]
						if !ok {
							t.Fatalf("%s %s: libvmaf's log has no %s", p.name, model, c.name)
						}
						d := math.Abs(c.got - want)
						key := model + " " + strings.TrimSuffix(c.name, suf)
						worst[key] = max(worst[key], d)
						if d > 1e-6+1e-9 {
							t.Errorf("%s %s frame %d %s: %.9f, libvmaf %.6f", p.name, model, i, c.name, c.got, want)
						}
					}
				}
			}
		}
	}
	for k, v := range worst {
		t.Logf("worst |delta| %s: %.3g", k, v)
	}
}

// TestMotionV1Suffix: the metric-name suffixes of libvmaf's feature_name.c for the
// motion options (the reference logs check the v1 ones above).
func TestMotionV1Suffix(t *testing.T) {
	for _, c := range []struct {
		opts map[string]any
		want string
	}{
		{nil, ""},
		{map[string]any{"motion_max_val": 10000.0}, ""},
		{map[string]any{"motion_max_val": 18.0}, "_mmxv_18"},
		{map[string]any{"motion_max_val": 18.0, "motion_five_frame_window": true, "motion_moving_average": true}, "_mffw_mmxv_18_mma"},
		{map[string]any{"motion_blend_factor": 0.5, "motion_blend_offset": 20.0, "motion_fps_weight": 1.25}, "_mbf_0.5_mbo_20_mfw_1.25"},
		{map[string]any{"motion_force_zero": true, "motion_five_frame_window": false}, "_force_0"},
		{map[string]any{"motion_max_val": 0.1234567}, "_mmxv_0.123457"},
	} {
		o, err := parseMotionOptions(c.opts)
		if err != nil {
			t.Fatalf("%v: %v", c.opts, err)
		}
		if got := o.suffix(); got != c.want {
			t.Errorf("%v: suffix %q, want %q", c.opts, got, c.want)
		}
	}
}

// TestMotionV1Parse: option values as libvmaf reads them, and every bad key or value
// refused with an error naming it.
func TestMotionV1Parse(t *testing.T) {
	def := defaultMotionOptions()
	if want := (motionOptions{maxVal: 10000, blendFactor: 1, blendOffset: 40, fpsWeight: 1}); def != want {
		t.Fatalf("defaults %+v, want %+v", def, want)
	}
	for _, c := range []struct {
		opts map[string]any
		want motionOptions
	}{
		{map[string]any{}, def},
		{map[string]any{"motion_max_val": 18.0}, motionOptions{maxVal: 18, blendFactor: 1, blendOffset: 40, fpsWeight: 1}},
		{map[string]any{"motion_max_val": 18}, motionOptions{maxVal: 18, blendFactor: 1, blendOffset: 40, fpsWeight: 1}},
		{map[string]any{"motion_five_frame_window": true, "motion_moving_average": true, "motion_max_val": 0.0},
			motionOptions{blendFactor: 1, blendOffset: 40, fpsWeight: 1, fiveFrame: true, movingAverage: true}},
		// Rounded to float and six digits, as libvmaf's model reader does.
		{map[string]any{"motion_blend_offset": 12.3456789}, motionOptions{maxVal: 10000, blendFactor: 1, blendOffset: 12.3457, fpsWeight: 1}},
		{map[string]any{"motion_force_zero": true, "motion_blend_factor": 0.0, "motion_fps_weight": 5.0},
			motionOptions{maxVal: 10000, blendOffset: 40, fpsWeight: 5, forceZero: true}},
	} {
		got, err := parseMotionOptions(c.opts)
		if err != nil {
			t.Errorf("%v: %v", c.opts, err)
			continue
		}
		if got != c.want {
			t.Errorf("%v: %+v, want %+v", c.opts, got, c.want)
		}
	}
	for _, c := range []struct {
		opts map[string]any
		name string // the error names it
	}{
		{map[string]any{"motion_maxval": 18.0}, "motion_maxval"},
		{map[string]any{"debug": true}, "debug"},
		{map[string]any{"motion_max_val": 10001.0}, "motion_max_val"},
		{map[string]any{"motion_max_val": -1.0}, "motion_max_val"},
		{map[string]any{"motion_max_val": "18"}, "motion_max_val"},
		{map[string]any{"motion_max_val": math.NaN()}, "motion_max_val"},
		{map[string]any{"motion_blend_factor": 1.5}, "motion_blend_factor"},
		{map[string]any{"motion_fps_weight": 6.0}, "motion_fps_weight"},
		{map[string]any{"motion_five_frame_window": 1.0}, "motion_five_frame_window"},
		{map[string]any{"motion_moving_average": "true"}, "motion_moving_average"},
	} {
		_, err := parseMotionOptions(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%v: error %v, want one naming %s", c.opts, err, c.name)
		}
	}
}

func FuzzMotionOptions(f *testing.F) {
	f.Add(18.0, 1.0, 40.0, 1.0, true, true)
	f.Add(10000.0, 0.5, 1000.0, 5.0, false, true)
	f.Add(-1.0, 2.0, 0.0, 0.0, true, false)
	f.Fuzz(func(t *testing.T, maxVal, factor, offset, fps float64, five, avg bool) {
		o, err := parseMotionOptions(map[string]any{
			"motion_max_val": maxVal, "motion_blend_factor": factor, "motion_blend_offset": offset,
			"motion_fps_weight": fps, "motion_five_frame_window": five, "motion_moving_average": avg,
		})
		if err != nil {
			return
		}
		if o.maxVal < 0 || o.maxVal > 10000 || o.blendFactor < 0 || o.blendFactor > 1 || o.fpsWeight > 5 {
			t.Fatalf("out of range accepted: %+v", o)
		}
		// What parses prints a name that names the same options.
		if o2, err := parseMotionOptions(fexNonDefault(motionOptionTable, o.values())); err != nil || o2 != o || o2.suffix() != o.suffix() {
			t.Fatalf("%+v: reparsed %+v, %v", o, o2, err)
		}
		m2, m3 := motionTemporal([]float64{0, 0, 1.5, 20, 0.25, 3}, o)
		for i := range m3 {
			if m3[i] > o.maxVal || m3[i] < 0 || m2[i] < 0 {
				t.Fatalf("%+v: frame %d motion2 %v motion3 %v", o, i, m2[i], m3[i])
			}
		}
	})
}

// TestMotionV1Temporal checks flush's arithmetic on hand-made SADs.
func TestMotionV1Temporal(t *testing.T) {
	sad := []float64{0, 0, 4, 2, 8, 6}
	five := motionOptions{maxVal: 5, blendFactor: 1, blendOffset: 40, fpsWeight: 1, fiveFrame: true}
	m2, m3 := motionTemporal(sad, five)
	// motion2[i] = min(sad[i-1], sad[i+1]) from frame 3; frame 2 takes sad[3]; the
	// last its own.
	if want := []float64{0, 0, 2, 4, 2, 6}; !cmp.Equal(m2, want) {
		t.Errorf("five-frame motion2 %v, want %v", m2, want)
	}
	// Frames 0 and 1 take sad[2], clipped; the rest their motion2, clipped.
	if want := []float64{4, 4, 2, 4, 2, 5}; !cmp.Equal(m3, want) {
		t.Errorf("five-frame motion3 %v, want %v", m3, want)
	}
	five.movingAverage = true
	_, m3 = motionTemporal(sad, five)
	if want := []float64{4, 4, 3, 3, 3, 3.5}; !cmp.Equal(m3, want) {
		t.Errorf("moving-average motion3 %v, want %v", m3, want)
	}
	blend := motionOptions{maxVal: 10000, blendFactor: 0.25, blendOffset: 3, fpsWeight: 1}
	_, m3 = motionTemporal([]float64{0, 8, 2}, blend)
	// 0.25*score + 0.75*min(3, score): frame 1's motion2 is min(8, 2) = 2.
	if want := []float64{0.25*8 + 0.75*3, 2, 2}; !cmp.Equal(m3, want) {
		t.Errorf("blended motion3 %v, want %v", m3, want)
	}
	if got := motionScore(256*100, 10, 10, motionOptions{maxVal: 18, fpsWeight: 0.5}); got != 0.5 {
		t.Errorf("motionScore with weight 0.5 = %v, want 0.5", got)
	}
	if got := motionScore(256*100*40, 10, 10, motionOptions{maxVal: 18, fpsWeight: 1}); got != 18 {
		t.Errorf("motionScore clipped = %v, want 18", got)
	}
}

// TestMotionV1ChunkContext: chunkContext's windows for the three kinds of motion.
func TestMotionV1ChunkContext(t *testing.T) {
	def := defaultMotionOptions()
	five := def
	five.fiveFrame = true
	avg := five
	avg.movingAverage = true
	for _, c := range []struct {
		o                   motionOptions
		start, count, total int
		wantLead, wantTrail int
	}{
		{def, 0, 5, 9, 0, 1}, {def, 5, 4, 9, 1, 0}, {def, 3, 3, 9, 1, 1},
		{five, 0, 1, 9, 0, 2}, {five, 0, 2, 9, 0, 1}, {five, 1, 1, 9, 1, 1}, {five, 6, 2, 9, 3, 1},
		{avg, 2, 3, 9, 2, 1}, {avg, 6, 2, 9, 4, 1}, {avg, 8, 1, 9, 4, 0}, {avg, 0, 1, 2, 0, 1},
	} {
		lead, trail := c.o.chunkContext(c.start, c.count, c.total)
		if lead != c.wantLead || trail != c.wantTrail {
			t.Errorf("%+v %d:%d of %d: lead %d trail %d, want %d %d", c.o, c.start, c.count, c.total, lead, trail, c.wantLead, c.wantTrail)
		}
	}
}

// TestMotionV1MergeEqualsOneRun: under the five-frame window with the moving average
// (and without it), a clip scored as chunks with chunkContext's context and merged is
// one run, frame for frame and pooled, for every split tried; with one frame of
// context, as chunks have today, it is not.
func TestMotionV1MergeEqualsOneRun(t *testing.T) {
	p := loadV1Pairs(t)[3] // q04: 60 fps, 12 frames
	ref, dist := v1Clip(t, p.ref), v1Clip(t, p.dist)
	n := p.frames
	for _, model := range []string{"vmaf_v1.0.16_hfr_3d0h", "vmaf_v1.0.16_3d0h"} {
		mo := v1MotionOpts(t, model)
		for _, avg := range []bool{true, false} {
			if !avg && !mo.movingAverage {
				continue
			}
			o := mo
			o.movingAverage = avg
			opts := Options{Threads: 2, Features: []Feature{FeaturePSNR}, motion: &o}
			whole, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf), opts)
			if err != nil {
				t.Fatal(err)
			}
			split := func(chunks []int, ctx func(start, count int) (int, int)) (*Result, error) {
				var parts []*Part
				start := 0
				for _, c := range chunks {
					lead, trail := ctx(start, c)
					co := opts
					co.Start, co.Count = start-lead, c+lead+trail
					res, err := Score(context.Background(), rawSource(t, ref, p.w, p.h, p.pf), rawSource(t, dist, p.w, p.h, p.pf), co)
					if err != nil {
						t.Fatal(err)
					}
					if err := res.Trim(lead, trail); err != nil {
						t.Fatal(err)
					}
					parts = append(parts, res.Part())
					start += c
				}
				return Merge(parts)
			}
			for _, chunks := range [][]int{{12}, {6, 6}, {1, 11}, {2, 10}, {3, 9}, {4, 8}, {5, 7}, {11, 1}, {10, 2},
				{4, 4, 4}, {3, 3, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {2, 1, 6, 3}} {
				got, err := split(chunks, func(start, count int) (int, int) { return o.chunkContext(start, count, n) })
				if err != nil {
					t.Fatalf("chunks %v: %v", chunks, err)
				}
				if diff := cmp.Diff(whole.Frames, got.Frames); diff != "" {
					t.Errorf("%s avg=%v chunks %v: frames differ from one run (-want,+got):\n%s", model, avg, chunks, diff)
				}
				if diff := cmp.Diff(whole.Pooled, got.Pooled, cmpopts.EquateNaNs()); diff != "" {
					t.Errorf("%s avg=%v chunks %v: pooled values differ (-want,+got):\n%s", model, avg, chunks, diff)
				}
			}
			// One frame less of leading context, or none trailing, is not
			// one run for some split in two: the clip tests the window.
			for _, less := range []struct{ lead, trail int }{{1, 0}, {0, 1}} {
				differs := false
				for k := 1; k < n && !differs; k++ {
					got, err := split([]int{k, n - k}, func(start, count int) (int, int) {
						lead, trail := o.chunkContext(start, count, n)
						return max(lead-less.lead, 0), max(trail-less.trail, 0)
					})
					if err != nil {
						t.Fatal(err)
					}
					differs = !cmp.Equal(whole.Frames, got.Frames)
				}
				if !differs {
					t.Errorf("%s avg=%v: context %+v short gave one run's frames: the clip does not test it", model, avg, less)
				}
			}
		}
	}
}
