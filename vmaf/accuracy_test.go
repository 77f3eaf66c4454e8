package vmaf

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// refPair is one line of testdata/pairs.tsv.
type refPair struct {
	name, ref, dist string
	w, h            int
	pf              PixelFormat
	frames          int
}

func loadPairs(t testing.TB) []refPair {
	t.Helper()
	var pairs []refPair
	for _, c := range pairLines(t, "testdata/pairs.tsv", 8) {
		pairs = append(pairs, parseRefPair(t, c))
	}
	return pairs
}

// pairLines returns the columns of every pair line of a pairs.tsv (comments and blank
// lines left out), each with at least cols columns.
func pairLines(t testing.TB, path string, cols int) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) < cols {
			t.Fatalf("%s: bad line %q", path, line)
		}
		lines = append(lines, c)
	}
	if len(lines) == 0 {
		t.Fatalf("%s lists no pair", path)
	}
	return lines
}

// parseRefPair reads the columns every pairs.tsv shares: name, ref, dist, width,
// height, pix_fmt, bit depth (not kept) and frames.
func parseRefPair(t testing.TB, c []string) refPair {
	t.Helper()
	w, _ := strconv.Atoi(c[3])
	h, _ := strconv.Atoi(c[4])
	n, _ := strconv.Atoi(c[7])
	pf, err := ParsePixelFormat(c[5])
	if err != nil {
		t.Fatal(err)
	}
	return refPair{name: c[0], ref: c[1], dist: c[2], w: w, h: h, pf: pf, frames: n}
}

// libvmafLog is the part of a libvmaf JSON log the tests read.
type libvmafLog struct {
	Frames []struct {
		FrameNum int                `json:"frameNum"`
		Metrics  map[string]float64 `json:"metrics"`
	} `json:"frames"`
	PooledMetrics map[string]map[string]float64 `json:"pooled_metrics"`
}

func readLog(t testing.TB, path string) *libvmafLog {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var l libvmafLog
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &l
}

func openPair(t testing.TB, p refPair) (FrameSource, FrameSource) {
	t.Helper()
	open := func(name string) FrameSource {
		f, err := os.Open(filepath.Join("testdata/clips", name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		r, err := OpenRaw(f, p.w, p.h, p.pf)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	return open(p.ref), open(p.dist)
}

// Tolerances of the accuracy test: libvmaf prints six decimals.
const (
	vmafTolerance    = 1e-4
	featureTolerance = 1e-5
)

var refModels = []struct{ suffix, model string }{
	{"v061", "vmaf_v0.6.1"},
	{"v061neg", "vmaf_v0.6.1neg"},
	{"v061phone", "vmaf_v0.6.1phone"},
}

// TestAccuracy compares every frame's features and score, and the pooled
// metrics, with libvmaf 3.2.0's output for all reference pairs and models.
func TestAccuracy(t *testing.T) {
	for _, p := range loadPairs(t) {
		for _, m := range refModels {
			t.Run(p.name+"/"+m.model, func(t *testing.T) {
				t.Parallel()
				want := readLog(t, filepath.Join("testdata/ref", p.name+"_"+m.suffix+".json"))
				ref, dist := openPair(t, p)
				got, err := Score(context.Background(), ref, dist, Options{Model: m.model, Threads: 2})
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Frames) != len(want.Frames) || len(got.Frames) != p.frames {
					t.Fatalf("got %d frames, want %d", len(got.Frames), len(want.Frames))
				}
				var maxVMAF, maxFeat float64
				var maxFeatKey string
				for i, wf := range want.Frames {
					for _, key := range got.Metrics() {
						wv, ok := wf.Metrics[key]
						if !ok {
							t.Errorf("frame %d: reference lacks %s", wf.FrameNum, key)
							continue
						}
						gv, _ := got.Metric(i, key)
						d := math.Abs(gv - wv)
						tol := featureTolerance
						if key == metricVMAF {
							tol = vmafTolerance
							maxVMAF = max(maxVMAF, d)
						} else if d > maxFeat {
							maxFeat, maxFeatKey = d, key
						}
						if d > tol {
							t.Errorf("frame %d %s: want %.6f, got %.6f (delta %.2g)", wf.FrameNum, key, wv, gv, d)
						}
					}
				}
				for key, pooled := range got.Pooled {
					w := want.PooledMetrics[key]
					for name, gv := range map[string]float64{"min": pooled.Min, "max": pooled.Max, "mean": pooled.Mean, "harmonic_mean": pooled.HarmonicMean} {
						tol := featureTolerance
						if key == metricVMAF {
							tol = vmafTolerance
						}
						if d := math.Abs(gv - w[name]); d > tol {
							t.Errorf("pooled %s %s: want %.6f, got %.6f", key, name, w[name], gv)
						}
					}
				}
				t.Logf("%s %s: max |dVMAF| %.2g, max |dfeature| %.2g (%s)", p.name, m.model, maxVMAF, maxFeat, maxFeatKey)
			})
		}
	}
}

func ExampleScore() {
	ref, _ := os.Open("testdata/clips/p01_ref.yuv")
	defer ref.Close()
	dist, _ := os.Open("testdata/clips/p01_dist.yuv")
	defer dist.Close()
	r, _ := OpenRaw(ref, 176, 144, YUV420P)
	d, _ := OpenRaw(dist, 176, 144, YUV420P)
	res, err := Score(context.Background(), r, d, Options{Model: "vmaf_v0.6.1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d frames, mean VMAF %.3f\n", len(res.Frames), res.Pooled["vmaf"].Mean)
	// Output: 24 frames, mean VMAF 98.653
}
