package vmaf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// speedOffloadCases are option sets covering every rescale method and
// v1's weight mode.
func speedOffloadCases() []speedOptions {
	var out []speedOptions
	for i, m := range append([]string{"none"}, speedScaleMethods...) {
		o := defaultSpeedOptions()
		o.weightVarMode, o.nnFloor, o.sigmaNN, o.maxVal = i%7, 0.1, 0.19, 45
		if m != "none" {
			o.prescaleMethod, o.prescale = m, []float64{0.6, 0.5, 1.5, 0.7}[i%4]
		}
		out = append(out, o)
	}
	return out
}

// TestSpeedFromOffload: the metrics derived from the CPU's own pictures
// (SpeedPicturesCPU, what a device returns) through fromOffload are
// compute's, bit for bit, under every rescale method and chroma format.
func TestSpeedFromOffload(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, pf := range []PixelFormat{YUV420P, YUV422P10LE, YUV444P12LE} {
		for _, o := range speedOffloadCases() {
			w, h := 341, 331
			m := &Model{speed: &o}
			ref, dis := speedRandomFrame(r, w, h, pf), speedRandomFrame(r, w, h, pf)
			s, err := newSpeedState(w, h, pf, o, CPUGeneric)
			if err != nil {
				t.Fatal(err)
			}
			want, err := s.compute(ref, dis)
			if err != nil {
				t.Fatal(err)
			}
			p, err := SpeedPicturesCPU(ref, dis, pf, m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.fromOffload(p)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%v %+v: from the pictures %+v, compute %+v", pf, o, got, want)
			}
			p.Cov[3] = p.Cov[3][:10]
			if _, err := s.fromOffload(p); err == nil {
				t.Errorf("%v %+v: fromOffload took 10 covariance sums", pf, o)
			}
		}
	}
}

// speedTableRow is a row of the rescaled plane as SpeedConfig's tables
// describe it (what the shader computes).
func speedTableRow(c *SpeedConfig, plane []float32, y int) []float32 {
	out := make([]float32, c.ScaledWidth)
	k := c.Taps
	for x := range out {
		if c.Method == SpeedNearest {
			out[x] = plane[int(c.Rows[y])*c.Width+int(c.Cols[x])]
			continue
		}
		var v, sum float32
		first := true
		for j := range k {
			for i := range k {
				wt := float32(c.RowWeights[y*k+j] * c.ColWeights[x*k+i])
				term := float32(wt * plane[int(c.Rows[y*k+j])*c.Width+int(c.Cols[x*k+i])])
				sum += wt
				if first && c.Method == SpeedBilinear {
					v, first = term, false
					continue
				}
				v += term
			}
		}
		if c.Method == SpeedLanczos4 {
			v /= sum
		}
		out[x] = v
	}
	return out
}

// TestSpeedConfigTables: the rescale tables an Offload gets give
// speedScaleRow's samples bit for bit, for every method, at ratios below
// and above 1.
func TestSpeedConfigTables(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, o := range speedOffloadCases()[1:] {
		for _, ps := range []float64{0.5, 0.6, 1.5, 2.3} {
			o.prescale = ps
			const w, h = 330, 340
			s, err := newSpeedState(w, h, YUV420P, o, CPUGeneric)
			if err != nil {
				t.Fatal(err)
			}
			c := s.offloadConfig(YUV420P)
			if c.Method == SpeedCopy || len(c.Cols) != c.ScaledWidth*c.Taps || len(c.RowWeights) != c.ScaledHeight*c.Taps {
				t.Fatalf("%s %v: method %d, %d taps, %d columns, %d row weights", o.prescaleMethod, ps, c.Method, c.Taps, len(c.Cols), len(c.RowWeights))
			}
			plane := make([]float32, c.Width*c.Height)
			for i := range plane {
				plane[i] = float32(r.IntN(1024))/4 - 128
			}
			want := make([]float32, c.ScaledWidth)
			for y := range c.ScaledHeight {
				speedScaleRow(o.prescaleMethod, plane, c.Width, c.Height, want, c.ScaledWidth, c.ScaledHeight, y)
				got := speedTableRow(c, plane, y)
				for x := range want {
					if math.Float32bits(got[x]) != math.Float32bits(want[x]) {
						t.Fatalf("%s %v: (%d, %d): tables give %v, speedScaleRow %v", o.prescaleMethod, ps, x, y, got[x], want[x])
					}
				}
			}
		}
	}
}

// TestModelSpeedConfig: a model without SpEED, or a size SpEED refuses,
// gives no configuration; v1's gives the decimated geometry.
func TestModelSpeedConfig(t *testing.T) {
	def, err := LoadModel("vmaf_v0.6.1")
	if err != nil {
		t.Fatal(err)
	}
	if c := def.SpeedConfig(1920, 1080, YUV420P); c != nil {
		t.Errorf("vmaf_v0.6.1: SpeedConfig %+v, want nil", c)
	}
	v1, err := LoadModel("vmaf_v1.0.16_3d0h")
	if err != nil {
		t.Fatal(err)
	}
	if c := v1.SpeedConfig(176, 144, YUV420P); c != nil {
		t.Errorf("176x144: SpeedConfig %+v, want nil", c)
	}
	c := v1.SpeedConfig(1921, 1080, YUV420P)
	if c == nil || c.Stride != 961 || c.Width != 960 || c.DecWidth != 60 || c.DecHeight != 33 || c.CovWidth != 56 || c.CovHeight != 26 || c.Method != SpeedCopy {
		t.Errorf("1921x1080: SpeedConfig %+v", c)
	}
}

// BenchmarkSpeedSplit measures SpEED chroma's two sides under vmaf_v1.0.16_3d0h's
// options: all of it on the CPU (cpu), and what stays on the CPU when an Offload
// computes the per-pixel stages (host-part: eigenvalues, solve, entropies, score).
func BenchmarkSpeedSplit(b *testing.B) {
	o := speedModelOptions(b, "vmaf_v1.0.16_3d0h")
	m := &Model{speed: &o}
	for _, sz := range [][2]int{{1920, 1080}, {3840, 2160}} {
		w, h := sz[0], sz[1]
		r := rand.New(rand.NewPCG(9, 9))
		ref, dis := speedRandomFrame(r, w, h, YUV420P), speedRandomFrame(r, w, h, YUV420P)
		s, err := newSpeedState(w, h, YUV420P, o, CPUAuto)
		if err != nil {
			b.Fatal(err)
		}
		p, err := SpeedPicturesCPU(ref, dis, YUV420P, m)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dx%d/cpu", w, h), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.compute(ref, dis); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dx%d/host-part", w, h), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.fromOffload(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestOffloadSplitAllV1: a device that offers SpEED chroma and CAMBI beside motion, VIF
// and ADM takes every feature of every v1 model; one that lacks them leaves them, and
// only them, to the CPU.
func TestOffloadSplitAllV1(t *testing.T) {
	all := []string{"motion", "vif", "adm", "speed_chroma", "cambi"}
	for _, name := range []string{"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_3d0h_2160", "vmaf_v1.0.16_hfr_5d0h"} {
		m, err := LoadModel(name)
		if err != nil {
			t.Fatal(err)
		}
		if dev, host := m.OffloadSplit(all); !slices.Equal(dev, []string{"motion", "adm", "cambi", "speed_chroma"}) || len(host) != 0 {
			t.Errorf("%s: OffloadSplit(%v) = device %v, host %v", name, all, dev, host)
		}
		if dev, host := m.OffloadSplit([]string{"motion", "cambi"}); !slices.Equal(dev, []string{"motion", "cambi"}) ||
			!slices.Equal(host, []string{"adm", "speed_chroma"}) {
			t.Errorf("%s: without float64 kernels: device %v, host %v", name, dev, host)
		}
	}
}
