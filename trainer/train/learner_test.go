package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vmafx/vmafx/vmaf"
)

// tinyModel is a libvmaf model small enough to step by hand: one feature (motion2) used as
// it is (slope 1, intercept 0), two support vectors at 0 and 1, gamma ln 2, so that a frame
// with motion2 = 0 has the kernel row (1, 0.5); coefficients (1, 2), rho 0.5, output
// slope 1 and intercept 0, scores clipped to 0..100.
const tinyModel = `{"model_dict": {"model_type": "LIBSVMNUSVR", "norm_type": "linear_rescale",
 "feature_names": ["VMAF_integer_feature_motion2_score"], "slopes": [1, 1], "intercepts": [0, 0],
 "score_clip": [0, 100],
 "model": "svm_type nu_svr\nkernel_type rbf\ngamma 0.6931471805599453\nnr_class 2\ntotal_sv 2\nrho 0.5\nSV\n1 1:0 \n2 1:1 \n"}}`

func parse(t *testing.T, doc []byte, name string) *vmaf.Model {
	t.Helper()
	m, err := vmaf.ParseModel(doc, name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestStepByHand checks one SGD-EMA step against numbers worked out by hand.
//
// Frame x = 0: kernel row k = (1, 0.5); output 1*1 + 2*0.5 - 0.5 = 1.5 = the pooled score.
// Label 3.5: error e = 1.5 - 3.5 = -2 (within the clip of 10). Gradient of the pooled
// score g = (k1, k2, -1) = (1, 0.5, -1), |g|^2 = 2.25. With learning rate 0.5 the step is
// theta -= 0.5 * e * g / |g|^2 = +0.4444 g: coef (1.4444, 2.2222), rho 0.0556, which scores
// 1.4444 + 1.1111 - 0.0556 = 2.5, half-way to the label. EMA with decay 0.5 publishes
// (1.2222, 2.1111), rho 0.2778.
func TestStepByHand(t *testing.T) {
	l, err := New(parse(t, []byte(tinyModel), "tiny"), Config{LearningRate: 0.5, EMADecay: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	frames := [][]float64{{0}}
	if got := l.Predict(frames); math.Abs(got-1.5) > 1e-12 {
		t.Fatalf("base prediction %v, want 1.5", got)
	}
	if held, err := l.Add(Sample{ID: "a", Frames: frames, Label: 3.5}); err != nil || held {
		t.Fatalf("Add = %v, %v", held, err)
	}
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %.15f, want %.15f", name, got, want)
		}
	}
	near("theta coef 1", l.theta.Coef[0], 1+4.0/9)
	near("theta coef 2", l.theta.Coef[1], 2+2.0/9)
	near("theta rho", l.theta.Rho, 0.5-4.0/9)
	l.kernelRows(frames)
	p, _ := l.pooled(l.theta, false)
	near("theta prediction", p, 2.5)
	ema := l.Published()
	near("ema coef 1", ema.Coef[0], 1+2.0/9)
	near("ema coef 2", ema.Coef[1], 2+1.0/9)
	near("ema rho", ema.Rho, 0.5-2.0/9)
	near("ema prediction", l.Predict(frames), 1.5+0.5)

	// The same sample is counted once.
	if _, err := l.Add(Sample{ID: "a", Frames: frames, Label: 3.5}); !errors.Is(err, ErrSeen) {
		t.Errorf("second Add = %v, want ErrSeen", err)
	}
}

// TestStepClipped checks that a label far off moves the prediction by at most
// LearningRate * UpdateClip.
func TestStepClipped(t *testing.T) {
	l, err := New(parse(t, []byte(tinyModel), "tiny"), Config{LearningRate: 0.5, EMADecay: 0})
	if err != nil {
		t.Fatal(err)
	}
	frames := [][]float64{{0}}
	if _, err := l.Add(Sample{ID: "far", Frames: frames, Label: 90}); err != nil {
		t.Fatal(err)
	}
	if got := l.Predict(frames); math.Abs(got-(1.5+0.5*DefaultUpdateClip)) > 1e-9 {
		t.Errorf("prediction after a clipped step %v, want %v", got, 1.5+0.5*DefaultUpdateClip)
	}
}

func TestHeldOutEveryKth(t *testing.T) {
	l, err := New(parse(t, []byte(tinyModel), "tiny"), Config{LearningRate: 0.1, HeldOutPercent: 20})
	if err != nil {
		t.Fatal(err)
	}
	var held []int
	for i := range 20 {
		h, err := l.Add(Sample{ID: fmt.Sprint(i), Frames: [][]float64{{0.1}}, Label: 50})
		if err != nil {
			t.Fatal(err)
		}
		if h {
			held = append(held, i)
		}
	}
	if fmt.Sprint(held) != "[4 9 14 19]" {
		t.Errorf("held out %v, want every fifth", held)
	}
}

// pairLog is a libvmaf 3.2.0 JSON log of the kernel's reference pairs.
func pairLog(t *testing.T, pair, model string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "vmaf", "testdata", "ref", pair+"_"+model+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// phoneSamples cuts the reference pairs into windows of frames (as jobs scoring frame
// ranges would be) and labels each with the phone model's pooled score on that window,
// as libvmaf computed it: a "viewer" that disagrees with vmaf_v0.6.1 in a way the base
// model's parameters can learn.
func phoneSamples(t *testing.T, base *vmaf.Model, pairs []string, n int, rng *rand.Rand) []Sample {
	t.Helper()
	type pairData struct {
		frames [][]float64
		phone  []float64
	}
	var data []pairData
	for _, p := range pairs {
		frames, err := ReadFrames(bytes.NewReader(pairLog(t, p, "v061")), base)
		if err != nil {
			t.Fatal(err)
		}
		var phone struct {
			Frames []struct {
				Metrics map[string]float64 `json:"metrics"`
			} `json:"frames"`
		}
		if err := json.Unmarshal(pairLog(t, p, "v061phone"), &phone); err != nil {
			t.Fatal(err)
		}
		var scores []float64
		for _, f := range phone.Frames {
			scores = append(scores, f.Metrics["vmaf"])
		}
		data = append(data, pairData{frames, scores})
	}
	var out []Sample
	for i := range n {
		d := data[rng.IntN(len(data))]
		length := 1 + rng.IntN(min(8, len(d.frames)))
		start := rng.IntN(len(d.frames) - length + 1)
		var label float64
		for _, s := range d.phone[start : start+length] {
			label += s
		}
		out = append(out, Sample{ID: fmt.Sprint(i), Frames: d.frames[start : start+length], Label: label / float64(length)})
	}
	return out
}

// TestLearnsAnotherModel labels windows of the reference pairs with the phone model's
// scores, trains vmaf_v0.6.1 on them at the default settings, and requires the held-out
// error (and the error on a pair never trained on) to fall well below the base model's.
func TestLearnsAnotherModel(t *testing.T) {
	base, err := vmaf.LoadModel("vmaf_v0.6.1")
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(base, Config{LearningRate: 0.05, EMADecay: 0.9, HeldOutPercent: 20})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range phoneSamples(t, base, []string{"p01", "p02", "p03", "p04", "p09"}, 600, rng) {
		if _, err := l.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	e := l.Evaluate()
	t.Logf("training RMSE %.3f, held-out RMSE %.3f, base %.3f", e.Training, e.HeldOut, e.Base)
	if !(e.HeldOut < 0.5*e.Base) {
		t.Errorf("held-out error %.3f is not below half the base model's %.3f", e.HeldOut, e.Base)
	}

	// A pair the learner never saw.
	unseen := phoneSamples(t, base, []string{"p07"}, 50, rng)
	var sse, bse float64
	for _, s := range unseen {
		p := l.Predict(s.Frames)
		sse += (p - s.Label) * (p - s.Label)
	}
	fresh, _ := New(base, Config{LearningRate: 0.05})
	for _, s := range unseen {
		p := fresh.Predict(s.Frames)
		bse += (p - s.Label) * (p - s.Label)
	}
	t.Logf("unseen pair p07: RMSE %.3f, base %.3f", math.Sqrt(sse/50), math.Sqrt(bse/50))
	if !(sse < bse) {
		t.Errorf("on the unseen pair the trained model (RMSE %.3f) is not better than the base (%.3f)", math.Sqrt(sse/50), math.Sqrt(bse/50))
	}
}
