package vmaf

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// speedV1Models are the reference set's models that use SpEED chroma.
var speedV1Models = []string{
	"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160", "vmaf_v1.0.16_3d0h_2160",
	"vmaf_v1.0.16_hfr_3d0h",
}

// speedModelOptions reads a built-in model's feature_opts_dicts entry for
// SpEED chroma and parses it.
func speedModelOptions(t testing.TB, model string) speedOptions {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("models", model+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var mj modelJSON
	if err := json.Unmarshal(data, &mj); err != nil {
		t.Fatal(err)
	}
	i := slices.Index(mj.ModelDict.FeatureNames, "Speed_chroma_feature_speed_chroma_uv_score")
	if i < 0 {
		t.Fatalf("%s has no SpEED chroma feature", model)
	}
	o, err := parseSpeedOptions(mj.ModelDict.FeatureOptsDicts[i])
	if err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	return o
}

// TestSpeedV1Reference compares every frame's speed_chroma_u, _v and _uv
// with libvmaf 3.2.0's on every pair of the v1 reference set under every
// v1 model that reads them.
func TestSpeedV1Reference(t *testing.T) {
	const tol = 1e-6 // libvmaf prints six decimals
	for _, p := range loadV1Pairs(t) {
		ref, dis := v1Frames(t, p, "ref", true), v1Frames(t, p, "dist", true)
		for _, m := range speedV1Models {
			o := speedModelOptions(t, m)
			names := o.metricNames()
			l := readV1Log(t, p, m)
			s, err := newSpeedState(p.w, p.h, p.pf, o)
			if err != nil {
				t.Fatalf("%s %s: %v", p.name, m, err)
			}
			var worst [3]float64
			for i := range ref {
				got, err := s.compute(ref[i], dis[i])
				if err != nil {
					t.Fatal(err)
				}
				for k, g := range []float64{got.U, got.V, got.UV} {
					want, ok := l.Frames[i].Metrics[names[k]]
					if !ok {
						t.Fatalf("%s %s: frame %d has no %s", p.name, m, i, names[k])
					}
					d := math.Abs(g - want)
					worst[k] = max(worst[k], d)
					if !(d <= tol) {
						t.Errorf("%s %s frame %d %s: %.9f, libvmaf %.6f", p.name, m, i, names[k], g, want)
					}
				}
			}
			t.Logf("%s %-24s worst |delta| u %.2g v %.2g uv %.2g", p.name, m, worst[0], worst[1], worst[2])
		}
	}
}

var _ = fmt.Sprint
