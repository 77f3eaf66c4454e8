package train

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vmafx/vmafx/vmaf"
)

// scoreP01 scores the first frames of reference pair p01 with model.
func scoreP01(t *testing.T, model *vmaf.Model) []float64 {
	t.Helper()
	open := func(name string) vmaf.FrameSource {
		data, err := os.ReadFile(filepath.Join("..", "..", "vmaf", "testdata", "clips", name))
		if err != nil {
			t.Fatal(err)
		}
		r, err := vmaf.OpenRaw(bytes.NewReader(data[:8*vmaf.YUV420P.FrameBytes(176, 144)]), 176, 144, vmaf.YUV420P)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	res, err := vmaf.Score(context.Background(), open("p01_ref.yuv"), open("p01_dist.yuv"), vmaf.Options{LoadedModel: model, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	scores := make([]float64, len(res.Frames))
	for i, f := range res.Frames {
		scores[i] = f.VMAF
	}
	return scores
}

// TestCheckpointIsAModel trains a little, writes the published model as a libvmaf JSON
// file, and requires the worker's kernel to score with it exactly as with the same
// document parsed in memory and as the learner predicts; and a model written with the
// base's own parameters to score exactly as the built-in model.
func TestCheckpointIsAModel(t *testing.T) {
	doc, err := vmaf.BuiltinModelJSON("vmaf_v0.6.1")
	if err != nil {
		t.Fatal(err)
	}
	base := parse(t, doc, "vmaf_v0.6.1")

	same, err := vmaf.WithSVR(doc, base.SVR())
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := vmaf.LoadModel("vmaf_v0.6.1")
	if err != nil {
		t.Fatal(err)
	}
	want, got := scoreP01(t, builtin), scoreP01(t, parse(t, same, "rewritten"))
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("frame %d: the rewritten base model scores %v, the built-in %v", i, got[i], want[i])
		}
	}

	l, err := New(base, Config{LearningRate: 0.05, EMADecay: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range phoneSamples(t, base, []string{"p02", "p04"}, 40, rand.New(rand.NewPCG(3, 4))) {
		if _, err := l.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	ckpt, err := l.Model(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "online-training-1-v1.json")
	if err := os.WriteFile(path, ckpt, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := vmaf.LoadModel(path)
	if err != nil {
		t.Fatalf("the checkpoint does not load as a model file: %v", err)
	}
	fileScores, memScores := scoreP01(t, fromFile), scoreP01(t, parse(t, ckpt, "mem"))
	changed := false
	for i := range fileScores {
		if fileScores[i] != memScores[i] {
			t.Fatalf("frame %d: %v from the file, %v from memory", i, fileScores[i], memScores[i])
		}
		changed = changed || fileScores[i] != want[i]
	}
	if !changed {
		t.Error("the trained checkpoint scores exactly as the base model")
	}
	// The learner's own prediction is the kernel's pooled score of the checkpoint, up to
	// the six decimals of the per-frame log the learner reads features from.
	var log bytes.Buffer
	res := func() *vmaf.Result {
		data, _ := os.ReadFile(filepath.Join("..", "..", "vmaf", "testdata", "clips", "p01_ref.yuv"))
		dist, _ := os.ReadFile(filepath.Join("..", "..", "vmaf", "testdata", "clips", "p01_dist.yuv"))
		fb := vmaf.YUV420P.FrameBytes(176, 144)
		r, _ := vmaf.OpenRaw(bytes.NewReader(data[:8*fb]), 176, 144, vmaf.YUV420P)
		d, _ := vmaf.OpenRaw(bytes.NewReader(dist[:8*fb]), 176, 144, vmaf.YUV420P)
		out, err := vmaf.Score(context.Background(), r, d, vmaf.Options{LoadedModel: fromFile, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}()
	if err := res.WriteJSON(&log); err != nil {
		t.Fatal(err)
	}
	frames, err := ReadFrames(&log, base)
	if err != nil {
		t.Fatal(err)
	}
	if p, k := l.Predict(frames), res.Pooled["vmaf"].Mean; p-k > 1e-3 || k-p > 1e-3 {
		t.Errorf("learner predicts %v, the kernel pools %v with the checkpoint", p, k)
	}
}

// TestStateResumes saves a learner's state, restores it into a fresh learner, and
// requires both to continue identically and to count no sample twice.
func TestStateResumes(t *testing.T) {
	base, err := vmaf.LoadModel("vmaf_v0.6.1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{LearningRate: 0.05, EMADecay: 0.9, HeldOutPercent: 20}
	samples := phoneSamples(t, base, []string{"p01", "p02", "p04"}, 60, rand.New(rand.NewPCG(5, 6)))
	a, _ := New(base, cfg)
	for _, s := range samples[:30] {
		if _, err := a.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	saved, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(base, cfg)
	if err := b.Restore(saved); err != nil {
		t.Fatal(err)
	}
	for _, s := range samples[:30] {
		if !b.Seen(s.ID) {
			t.Fatalf("sample %s missing from the restored ledger", s.ID)
		}
	}
	for _, s := range samples[30:] {
		ha, errA := a.Add(s)
		hb, errB := b.Add(s)
		if errA != nil || errB != nil || ha != hb {
			t.Fatalf("sample %s: %v %v / %v %v", s.ID, ha, errA, hb, errB)
		}
	}
	ea, eb := a.Evaluate(), b.Evaluate()
	if ea != eb {
		t.Errorf("errors differ after resuming: %+v vs %+v", ea, eb)
	}
	pa, pb := a.Published(), b.Published()
	for i := range pa.Coef {
		if pa.Coef[i] != pb.Coef[i] {
			t.Fatalf("coefficient %d differs after resuming", i)
		}
	}
	other, _ := New(parse(t, []byte(tinyModel), "tiny"), cfg)
	if err := other.Restore(saved); err == nil {
		t.Error("a state of another base model was restored")
	}
}
