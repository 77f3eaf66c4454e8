package trainer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/modelregistry"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
	"github.com/vmafx/vmafx/vmaf"
)

type frameLog struct {
	Frames []struct {
		FrameNum int                `json:"frameNum"`
		Metrics  map[string]float64 `json:"metrics"`
	} `json:"frames"`
}

func readLog(t *testing.T, pair, model string) frameLog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "vmaf", "testdata", "ref", pair+"_"+model+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var l frameLog
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// labelledJobs writes n per-frame logs, windows of the reference pairs' libvmaf logs,
// into dir and creates a Succeeded job for each in ns, scored on node, labelled with the
// phone model's score of the window and its output at file:///output/<name>.json.
func labelledJobs(t *testing.T, ctx context.Context, ns, node, dir, prefix string, n int, rng *rand.Rand) {
	t.Helper()
	pairs := []string{"p02", "p04", "p09"}
	logs := map[string]frameLog{}
	for _, p := range pairs {
		logs[p+"v061"], logs[p+"v061phone"] = readLog(t, p, "v061"), readLog(t, p, "v061phone")
	}
	for i := range n {
		p := pairs[rng.IntN(len(pairs))]
		feats, phone := logs[p+"v061"], logs[p+"v061phone"]
		length := 1 + rng.IntN(6)
		start := rng.IntN(len(feats.Frames) - length + 1)
		window := frameLog{Frames: feats.Frames[start : start+length]}
		var label float64
		for _, f := range phone.Frames[start : start+length] {
			label += f.Metrics["vmaf"]
		}
		label /= float64(length)
		name := fmt.Sprintf("%s-%d", prefix, i)
		data, _ := json.Marshal(window)
		if err := os.WriteFile(filepath.Join(dir, name+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		createJob(t, ctx, ns, node, name, "file:///output/"+name+".json", strconv.FormatFloat(label, 'f', 3, 64))
	}
}

func createJob(t *testing.T, ctx context.Context, ns, node, name, output, label string) {
	t.Helper()
	q := resource.MustParse(label)
	j := &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmafxv1.VmafxJobSpec{Reference: "file:///data/ref.y4m", Distorted: "file:///data/dist.y4m",
			Output: ptr.To(vmafxv1.OutputURI(output)), SubjectiveScore: &q,
			OutputVolume: &vmafxv1.OutputVolume{}},
	}
	j.Spec.OutputVolume.PersistentVolumeClaim.ClaimName = "outputs"
	if err := testenv.Client().Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	j.Status = vmafxv1.VmafxJobStatus{Phase: vmafxv1.JobSucceeded, Node: node, Score: "50"}
	if err := testenv.Client().Status().Update(ctx, j); err != nil {
		t.Fatal(err)
	}
}

// startTrainer runs a trainer of run until the returned stop is called.
func startTrainer(t *testing.T, ns, run, outputDir, host string) (*Trainer, func()) {
	t.Helper()
	tr, err := New(Config{Namespace: ns, Name: run, Poll: 100 * time.Millisecond, OutputDir: outputDir, PlainHTTP: []string{host}},
		testenv.Client(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	return tr, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("trainer: %v", err)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, "waiting for "+what, testutil.Condition(what, func() (bool, error) { return cond(), nil }))
}

// TestTrainerLearnsAndResumes runs the trainer against the real API server and an OCI
// registry: it reads labelled jobs' per-frame outputs, pushes a model version whose
// held-out error beats the base model's, and after a restart resumes from it without
// counting any job twice.
func TestTrainerLearnsAndResumes(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ns := testenv.CreateNamespace(t)
	ctx := testenv.Context(t)
	dir := t.TempDir()

	run := &vmafxv1.VmafxModelTraining{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "phone"},
		Spec: vmafxv1.VmafxModelTrainingSpec{BaseModel: "vmaf_v0.6.1", OutputRegistry: vmafxv1.RegistryRepository(host + "/vmafx/models"),
			Checkpoint: vmafxv1.CheckpointPolicy{Interval: "1s", MinSamples: 20}},
	}
	if err := testenv.Client().Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	labelledJobs(t, ctx, ns, "node-a", dir, "a", 40, rng)
	createJob(t, ctx, ns, "node-a", "broken", "file:///output/missing.json", "50") // no output: skipped
	// An unlabelled job is no sample.
	other := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unlabelled"},
		Spec: vmafxv1.VmafxJobSpec{Reference: "file:///data/ref.y4m", Distorted: "file:///data/dist.y4m"}}
	if err := testenv.Client().Create(ctx, other); err != nil {
		t.Fatal(err)
	}

	tr, stop := startTrainer(t, ns, "phone", dir, host)
	waitFor(t, "the first checkpoint", func() bool { return tr.Status().LastCheckpoint != nil })
	st := tr.Status()
	stop()
	t.Logf("status after the first checkpoint: %+v", st)
	if st.Samples != 40 || st.HeldOut != 8 || st.SkippedJobs != 1 || st.ModelVersion != "phone-v1" || st.PublishReason != vmafxv1.ReasonPublished {
		t.Errorf("status %+v", st)
	}
	heldOut, _ := strconv.ParseFloat(st.HeldOutError, 64)
	baseErr, _ := strconv.ParseFloat(st.BaseHeldOutError, 64)
	if !(heldOut < baseErr) {
		t.Errorf("held-out RMSE %v is not below the base model's %v", heldOut, baseErr)
	}

	// The version is a model and says what it is.
	c := &modelregistry.Client{PlainHTTP: []string{host}}
	ref, err := modelregistry.ParseReference(st.LastCheckpoint.Reference)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Pull(context.Background(), ref, true)
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest != st.LastCheckpoint.Digest || a.Annotations[modelregistry.AnnotationBaseModel] != "vmaf_v0.6.1" ||
		a.Annotations[modelregistry.AnnotationSamples] != "40" || a.Annotations[modelregistry.AnnotationHeldOutError] != st.HeldOutError {
		t.Errorf("artifact digest %s annotations %v", a.Digest, a.Annotations)
	}
	if _, err := vmaf.ParseModel(a.Model, "v1"); err != nil {
		t.Errorf("the checkpoint is not a model: %v", err)
	}

	// Restart: the trainer resumes at 40 samples, counts only the 20 new jobs and writes v2.
	labelledJobs(t, ctx, ns, "node-a", dir, "b", 20, rng)
	tr, stop = startTrainer(t, ns, "phone", dir, host)
	defer stop()
	waitFor(t, "the second checkpoint", func() bool { return tr.Status().ModelVersion == "phone-v2" })
	st = tr.Status()
	if st.Samples != 60 || st.LastCheckpoint.Samples != 60 {
		t.Errorf("after resuming: %d samples, checkpoint of %d; want 60", st.Samples, st.LastCheckpoint.Samples)
	}
}

// TestTrainerWithholdsWorseModels labels jobs with scores that no model of these features
// can fit better than the base (random), and requires the checkpoint to be withheld.
func TestTrainerWithholdsWorseModels(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ns := testenv.CreateNamespace(t)
	ctx := testenv.Context(t)
	dir := t.TempDir()
	run := &vmafxv1.VmafxModelTraining{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "noise"},
		Spec: vmafxv1.VmafxModelTrainingSpec{BaseModel: "vmaf_v0.6.1", OutputRegistry: vmafxv1.RegistryRepository(host + "/vmafx/models"),
			Checkpoint: vmafxv1.CheckpointPolicy{Interval: "1s", MinSamples: 5}, LearningRate: "1", EMADecay: "0"},
	}
	if err := testenv.Client().Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	// Held-out samples (every fifth, in creation order, then by name) agree with the base
	// model; the others pull it away.
	feats := readLog(t, "p04", "v061")
	for i := range 10 {
		name := fmt.Sprintf("n-%d", i)
		window := frameLog{Frames: feats.Frames[i : i+1]}
		data, _ := json.Marshal(window)
		if err := os.WriteFile(filepath.Join(dir, name+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		label := "95"
		if i%5 == 4 {
			label = strconv.FormatFloat(feats.Frames[i].Metrics["vmaf"], 'f', 3, 64)
		}
		createJob(t, ctx, ns, "node-a", name, "file:///output/"+name+".json", label)
	}
	tr, stop := startTrainer(t, ns, "noise", dir, host)
	defer stop()
	waitFor(t, "a withheld checkpoint", func() bool { return tr.Status().PublishReason == vmafxv1.ReasonHeldOutWorseThanBase })
	if st := tr.Status(); st.LastCheckpoint != nil {
		t.Errorf("a worse model was published: %+v", st.LastCheckpoint)
	}
}
