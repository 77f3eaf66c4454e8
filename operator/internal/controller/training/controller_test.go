package training

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

func TestSetStatus(t *testing.T) {
	ckpt := &vmafxv1.Checkpoint{Reference: "oci://r:5000/m:run-v2", Digest: "sha256:ab", Samples: 40}
	waiting := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "regcred" not found`}}}}}}
	cases := []struct {
		name        string
		suspend     bool
		obs         observed
		phase       vmafxv1.TrainingPhase
		ready       metav1ConditionStatus
		reason      string
		published   string
		samples     int64
		wantVersion string
	}{
		{"no pod yet", false, observed{deployment: "vmafx-trainer-run"}, vmafxv1.TrainingInitializing, "False", vmafxv1.ReasonTrainerStarting, "", 0, ""},
		{"pod cannot start", false, observed{deployment: "d", pod: waiting}, vmafxv1.TrainingInitializing, "False", vmafxv1.ReasonTrainerStarting, "", 0, ""},
		{"resuming", false, observed{trainer: &vmafxv1.TrainerStatus{Phase: vmafxv1.TrainingInitializing, Reason: vmafxv1.ReasonResuming}},
			vmafxv1.TrainingInitializing, "False", vmafxv1.ReasonResuming, "", 0, ""},
		{"running with a checkpoint", false, observed{trainer: &vmafxv1.TrainerStatus{Phase: vmafxv1.TrainingRunning, Reason: vmafxv1.ReasonTraining,
			Samples: 42, ModelVersion: "run-v2", LastCheckpoint: ckpt, PublishReason: vmafxv1.ReasonPublished}},
			vmafxv1.TrainingRunning, "True", vmafxv1.ReasonTraining, "True", 42, "run-v2"},
		{"withheld", false, observed{trainer: &vmafxv1.TrainerStatus{Phase: vmafxv1.TrainingRunning, Reason: vmafxv1.ReasonTraining,
			Samples: 10, PublishReason: vmafxv1.ReasonHeldOutWorseThanBase}},
			vmafxv1.TrainingRunning, "True", vmafxv1.ReasonTraining, "False", 10, ""},
		{"failed", false, observed{trainer: &vmafxv1.TrainerStatus{Phase: vmafxv1.TrainingFailed, Reason: "InvalidRun", Message: "bad"}},
			vmafxv1.TrainingFailed, "False", "InvalidRun", "", 0, ""},
		{"suspended", true, observed{}, vmafxv1.TrainingStopped, "False", vmafxv1.ReasonSuspended, "", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &vmafxv1.VmafxModelTraining{Spec: vmafxv1.VmafxModelTrainingSpec{BaseModel: "vmaf_v0.6.1", Suspend: tc.suspend}}
			tr.Generation = 3
			setStatus(tr, tc.obs)
			c := meta.FindStatusCondition(tr.Status.Conditions, vmafxv1.TrainingReady)
			if tr.Status.Phase != tc.phase || c == nil || c.Reason != tc.reason || string(c.Status) != string(tc.ready) || c.Message == "" ||
				tr.Status.ObservedGeneration != 3 || tr.Status.Samples != tc.samples || tr.Status.ModelVersion != tc.wantVersion {
				t.Errorf("phase %s, Ready %+v, samples %d, version %q", tr.Status.Phase, c, tr.Status.Samples, tr.Status.ModelVersion)
			}
			p := meta.FindStatusCondition(tr.Status.Conditions, vmafxv1.TrainingCheckpointPublished)
			if (p == nil) != (tc.published == "") || (p != nil && string(p.Status) != tc.published) {
				t.Errorf("CheckpointPublished %+v, want %q", p, tc.published)
			}
		})
	}
}

// metav1ConditionStatus keeps the table short: "True" or "False".
type metav1ConditionStatus string

func TestBuildDeployment(t *testing.T) {
	tr := &vmafxv1.VmafxModelTraining{Spec: vmafxv1.VmafxModelTrainingSpec{
		BaseModel: "vmaf_v0.6.1", OutputRegistry: "ghcr.io/vmafx/models",
		RegistryCredentials: &vmafxv1.SecretReference{Name: "regcred"},
		DataSource:          vmafxv1.TrainingDataSource{Credentials: &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "s3"}}, OutputClaim: "outputs"},
	}}
	tr.Namespace, tr.Name = "ns", "run"
	d := buildDeployment(tr, config.WorkerConfig{Image: "vmafx-worker:dev", TrainerImage: "vmafx-trainer:dev", TrainerServiceAccount: "vmafx-trainer", PlainHTTPRegistries: []string{"10.0.0.1:5000"}})
	c := d.Spec.Template.Spec.Containers[0]
	if d.Name != "vmafx-trainer-run" || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != "Recreate" || c.Image != "vmafx-trainer:dev" ||
		d.Spec.Template.Spec.ServiceAccountName != "vmafx-trainer" {
		t.Errorf("deployment %s replicas %d strategy %s image %s", d.Name, *d.Spec.Replicas, d.Spec.Strategy.Type, c.Image)
	}
	// The trainer image's entrypoint is vmafx-trainer: the arguments are its flags alone.
	want := []string{"--training", "ns/run", "--credentials-dir", vmafxv1.CredentialsMountPath}
	if len(c.Args) != len(want) {
		t.Fatalf("args %v, want %v", c.Args, want)
	}
	for i := range want {
		if c.Args[i] != want[i] {
			t.Errorf("args %v, want %v", c.Args, want)
		}
	}
	mounts := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.ReadOnly
	}
	for _, p := range []string{vmafxv1.TrainerRegistryCredentialsPath, vmafxv1.CredentialsMountPath, vmafxv1.OutputMountPath} {
		if ro, ok := mounts[p]; !ok || !ro {
			t.Errorf("%s not mounted read-only: %v", p, mounts)
		}
	}
	if len(c.Env) != 1 || c.Env[0].Name != vmafxv1.EnvRegistryPlainHTTP || c.Env[0].Value != "10.0.0.1:5000" {
		t.Errorf("env %v", c.Env)
	}
	tr.Spec.Suspend = true
	if d := buildDeployment(tr, config.WorkerConfig{}); *d.Spec.Replicas != 0 {
		t.Error("a suspended run keeps its trainer")
	}
	if n := DeploymentName("a-very-long-training-run-name-that-goes-on-and-on-and-on"); len(n) > 47 || n[:14] != "vmafx-trainer-" {
		t.Errorf("DeploymentName = %q", n)
	}
}

// TestSetStatusRestartsAndRefusals: a trainer that the kubelet restarts is Initializing
// with TrainerRestarting, its restarts counted and its last exit named; a Deployment whose
// Pod the API server refuses says so with the API server's words.
func TestSetStatusRestartsAndRefusals(t *testing.T) {
	crashing := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "trainer-x"}, Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: containerName, RestartCount: 3,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, Message: "ledger of 2 GiB\n"}},
	}}}}
	tr := &vmafxv1.VmafxModelTraining{Status: vmafxv1.VmafxModelTrainingStatus{Phase: vmafxv1.TrainingRunning}}
	setStatus(tr, observed{deployment: "d", pod: crashing})
	c := meta.FindStatusCondition(tr.Status.Conditions, vmafxv1.TrainingReady)
	if tr.Status.Phase != vmafxv1.TrainingInitializing || tr.Status.TrainerRestarts != 3 || c == nil || c.Reason != vmafxv1.ReasonTrainerRestarting ||
		!strings.Contains(c.Message, "restarted 3 times") || !strings.Contains(c.Message, "OOMKilled, exit code 137: ledger of 2 GiB") {
		t.Errorf("crash-looping trainer: phase %s, restarts %d, Ready %+v", tr.Status.Phase, tr.Status.TrainerRestarts, c)
	}

	tr = &vmafxv1.VmafxModelTraining{}
	setStatus(tr, observed{deployment: "d", refused: `pods "d-1" is forbidden: exceeded quota: workers, requested: pods=1, used: pods=0, limited: pods=0`})
	c = meta.FindStatusCondition(tr.Status.Conditions, vmafxv1.TrainingReady)
	if tr.Status.Phase != vmafxv1.TrainingInitializing || c == nil || c.Reason != vmafxv1.ReasonTrainerPodRefused || !strings.Contains(c.Message, "exceeded quota") {
		t.Errorf("refused trainer Pod: phase %s, Ready %+v", tr.Status.Phase, c)
	}
}
