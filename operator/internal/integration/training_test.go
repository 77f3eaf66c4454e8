package integration

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/controller/training"
	"github.com/vmafx/vmafx/operator/internal/manager"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// scriptedTrainer stands in for a trainer Pod's /status: the integration API server has
// no kubelet to run one (the real trainer is tested against this API server in
// trainer/internal/trainer, and both together in the e2e scenario).
type scriptedTrainer struct {
	mu sync.Mutex
	st *vmafxv1.TrainerStatus
}

func (s *scriptedTrainer) set(st vmafxv1.TrainerStatus) { s.mu.Lock(); s.st = &st; s.mu.Unlock() }

// silence plays a trainer that does not answer (it exited).
func (s *scriptedTrainer) silence() { s.mu.Lock(); s.st = nil; s.mu.Unlock() }

func (s *scriptedTrainer) follow(_ context.Context, _ *corev1.Pod) (*vmafxv1.TrainerStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil {
		return nil, context.DeadlineExceeded
	}
	st := *s.st
	return &st, nil
}

// TestTrainingRunsATrainer: a run gets its trainer Deployment (the worker image in train
// mode, owned by the run), reports TrainerStarting until the trainer answers, then the
// trainer's samples, errors and checkpoint, with one CheckpointWritten event per version;
// suspend scales the trainer to zero and says Stopped.
func TestTrainingRunsATrainer(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	script := &scriptedTrainer{}
	cfg, err := config.Load(func(k string) (string, bool) {
		v, ok := operatorEnv(config.EnvPlainHTTPRegistries, "10.96.0.50:5000")[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(testenv.Config(), cfg, manager.Options{SkipNameValidation: true, TrainerFollow: script.follow})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator: %v", err)
		}
	})

	run := &vmafxv1.VmafxModelTraining{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "online"},
		Spec: vmafxv1.VmafxModelTrainingSpec{BaseModel: "vmaf_v0.6.1", OutputRegistry: "10.96.0.50:5000/vmafx/models"}}
	create(t, run)
	get := func() *vmafxv1.VmafxModelTraining {
		got := &vmafxv1.VmafxModelTraining{}
		if err := testenv.Client().Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	ready := func(tr *vmafxv1.VmafxModelTraining) *metav1.Condition {
		return meta.FindStatusCondition(tr.Status.Conditions, vmafxv1.TrainingReady)
	}

	dep := &appsv1.Deployment{}
	eventually(t, 10*time.Second, "the trainer Deployment", func() (bool, error) {
		err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: training.DeploymentName("online")}, dep)
		return err == nil, client.IgnoreNotFound(err)
	})
	c := dep.Spec.Template.Spec.Containers[0]
	if c.Image != "vmafx-trainer:test" || len(c.Args) < 2 || c.Args[0] != "--training" || c.Args[1] != ns+"/online" ||
		!metav1.IsControlledBy(dep, get()) || *dep.Spec.Replicas != 1 {
		t.Errorf("trainer Deployment: image %s args %v replicas %d owners %v", c.Image, c.Args, *dep.Spec.Replicas, dep.OwnerReferences)
	}
	eventually(t, 10*time.Second, "TrainerStarting", func() (bool, error) {
		tr := get()
		c := ready(tr)
		return tr.Status.Phase == vmafxv1.TrainingInitializing && c != nil && c.Reason == vmafxv1.ReasonTrainerStarting &&
			tr.Status.Trainer == dep.Name, nil
	})
	// kubectl get vmtrain prints SAMPLES 0 for the new run, not an empty column.
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(vmafxv1.GroupVersion.WithKind("VmafxModelTraining"))
	if err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "online"}, stored); err != nil {
		t.Fatal(err)
	}
	if samples, ok, _ := unstructured.NestedInt64(stored.Object, "status", "samples"); !ok || samples != 0 {
		t.Errorf("stored status.samples of a new run: %d (present %v), want 0, present", samples, ok)
	}

	// A trainer Pod, as the Deployment's ReplicaSet would make it, answering /status.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trainer-pod", Labels: dep.Spec.Template.Labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "trainer", Image: "vmafx-trainer:test"}}}}
	create(t, pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.9"}
	if err := testenv.Client().Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	ckpt := &vmafxv1.Checkpoint{Reference: "oci://10.96.0.50:5000/vmafx/models:online-v1", Digest: "sha256:0123", Samples: 120}
	script.set(vmafxv1.TrainerStatus{Version: vmafxv1.TrainerStatusVersion, Phase: vmafxv1.TrainingRunning, Reason: vmafxv1.ReasonTraining,
		Samples: 130, HeldOut: 26, ModelVersion: "online-v1", LastCheckpoint: ckpt, TrainingError: "4.000000",
		HeldOutError: "3.500000", BaseHeldOutError: "9.250000", PublishReason: vmafxv1.ReasonPublished, PublishMessage: "online-v1 from 120 samples"})
	eventually(t, 30*time.Second, "the trainer's status", func() (bool, error) {
		tr := get()
		c := ready(tr)
		return tr.Status.Phase == vmafxv1.TrainingRunning && c != nil && c.Status == "True" && tr.Status.Samples == 130 &&
			tr.Status.ModelVersion == "online-v1" && tr.Status.LastCheckpoint != nil && tr.Status.LastCheckpoint.Digest == "sha256:0123" &&
			tr.Status.HeldOutError == "3.500000", nil
	})
	checkpointEvents := func() int {
		var list eventsv1.EventList
		if err := testenv.Client().List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range list.Items {
			if e.Reason == vmafxv1.EventCheckpointWritten && e.Regarding.Name == "online" {
				n += eventCount(e)
			}
		}
		return n
	}
	eventually(t, 30*time.Second, "a CheckpointWritten event", func() (bool, error) { return checkpointEvents() == 1, nil })

	// The trainer exits and the kubelet restarts it: the run says so, with the last exit,
	// counts the restart and emits one TrainerRestarted event.
	script.silence()
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "trainer", Image: "vmafx-trainer:test", ImageID: "x", RestartCount: 1,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: "registry unreachable"}}}}
	if err := testenv.Client().Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "TrainerRestarting", func() (bool, error) {
		tr := get()
		c := ready(tr)
		return tr.Status.Phase == vmafxv1.TrainingInitializing && tr.Status.TrainerRestarts == 1 && c != nil &&
			c.Reason == vmafxv1.ReasonTrainerRestarting && strings.Contains(c.Message, "Error, exit code 1: registry unreachable"), nil
	})
	eventually(t, 30*time.Second, "a TrainerRestarted event", func() (bool, error) {
		return slices.Contains(eventReasons(t, ns, "VmafxModelTraining", "online"), vmafxv1.EventTrainerRestarted), nil
	})

	// Suspended: no trainer, phase Stopped.
	tr := get()
	tr.Spec.Suspend = true
	if err := testenv.Client().Update(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "a stopped run", func() (bool, error) {
		d := &appsv1.Deployment{}
		if err := testenv.Client().Get(context.Background(), client.ObjectKeyFromObject(dep), d); err != nil {
			return false, err
		}
		tr := get()
		return tr.Status.Phase == vmafxv1.TrainingStopped && *d.Spec.Replicas == 0, nil
	})
	if n := checkpointEvents(); n != 1 {
		t.Errorf("%d CheckpointWritten events for one version", n)
	}
}
