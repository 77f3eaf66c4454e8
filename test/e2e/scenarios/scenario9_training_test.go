package scenarios

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// envRegistry is the distribution registry binary `make e2e` builds (hack/tools/distribution).
const envRegistry = "VMAFX_REGISTRY"

const registryNamespace = "vmafx-registry"

// trainingPairs are the clip pairs the labelled jobs score.
var trainingPairs = []clipPair{
	{name: "p01", width: 176, height: 144, format: "yuv420p"},
	{name: "p02", width: 176, height: 144, format: "yuv420p"},
	{name: "p03", width: 320, height: 240, format: "yuv420p"},
	{name: "p04", width: 320, height: 240, format: "yuv420p"},
	{name: "p09", width: 177, height: 145, format: "yuv444p"},
}

// TestTraining is scenario 9, the seeds' e2e case 05: an OCI registry (distribution) runs
// in the cluster; a VmafxModelTraining learns from labelled jobs (viewers who rate every
// clip 8 points above vmaf_v0.6.1), its trainer pushes a checkpoint to the registry, and a
// VmafxJob with model: oci://...@<digest> of that checkpoint is scored with it, while the
// same job on vmaf_v0.6.1 keeps libvmaf's score (rolling back is naming the old model).
// It depends on no other scenario and leaves the cluster as it found it.
func TestTraining(t *testing.T) {
	requireBaseline(t)
	registry := deployRegistry(t)
	restore := setOperatorEnv(t, "VMAFX_OPERATOR_PLAIN_HTTP_REGISTRIES", registry)
	defer restore()

	ns := createNamespace(t)
	trainerAccount(t, ns)
	outputs := outputClaim(t, ns)

	run := &vmafxv1.VmafxModelTraining{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "online-training-1"},
		Spec: vmafxv1.VmafxModelTrainingSpec{
			BaseModel:      "vmaf_v0.6.1",
			OutputRegistry: vmafxv1.RegistryRepository(registry + "/vmafx/models"),
			DataSource:     vmafxv1.TrainingDataSource{OutputClaim: outputs},
			// What this scenario is about: a checkpoint as soon as the labelled jobs are in.
			Checkpoint: vmafxv1.CheckpointPolicy{Interval: "5s", MinSamples: int32(len(trainingPairs))},
		},
	}
	if err := c.Create(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	for _, pair := range trainingPairs {
		j := newJob(ns, "labelled-"+pair.name, pair)
		label := math.Min(100, libvmafMean(t, pair)+8)
		q := resource.MustParse(strconv.FormatFloat(label, 'f', 3, 64))
		j.Spec.SubjectiveScore = &q
		j.Spec.Output = ptr.To(vmafxv1.OutputURI("file:///output/" + j.Name + ".json"))
		j.Spec.OutputVolume = &vmafxv1.OutputVolume{PersistentVolumeClaim: corev1.PersistentVolumeClaimVolumeSource{ClaimName: outputs}}
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
	}
	for _, pair := range trainingPairs {
		j := waitJobDone(t, types.NamespacedName{Namespace: ns, Name: "labelled-" + pair.name}, 4*time.Minute)
		if j.Status.Phase != vmafxv1.JobSucceeded {
			t.Fatalf("labelled job %s: %s: %s", j.Name, j.Status.Phase, j.Status.Message)
		}
	}

	trained := &vmafxv1.VmafxModelTraining{}
	eventually(t, 4*time.Minute, "a checkpoint in the registry", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), trained); err != nil {
			return err
		}
		if trained.Status.LastCheckpoint == nil {
			return fmt.Errorf("phase %s, %d samples, conditions %+v", trained.Status.Phase, trained.Status.Samples, trained.Status.Conditions)
		}
		return nil
	})
	st := trained.Status
	t.Logf("run: phase %s, %d samples (%d held out), version %s, %s@%s, held-out RMSE %s (base %s)", st.Phase, st.Samples,
		st.HeldOutSamples, st.ModelVersion, st.LastCheckpoint.Reference, st.LastCheckpoint.Digest, st.HeldOutError, st.BaseHeldOutError)
	if st.Phase != vmafxv1.TrainingRunning || st.Samples != int64(len(trainingPairs)) || st.ModelVersion != "online-training-1-v1" ||
		st.LastCheckpoint.Reference != "oci://"+registry+"/vmafx/models:online-training-1-v1" {
		t.Errorf("run status %+v", st)
	}
	if c := meta.FindStatusCondition(st.Conditions, vmafxv1.TrainingCheckpointPublished); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("CheckpointPublished %+v", c)
	}
	kubectlOut := kubectl(t, "get", "vmtrain", "--namespace", ns)
	if !strings.Contains(kubectlOut, "Running") || !strings.Contains(kubectlOut, "online-training-1-v1") {
		t.Errorf("kubectl get vmtrain:\n%s", kubectlOut)
	}
	var events eventsv1.EventList
	if err := c.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	written := 0
	for _, e := range events.Items {
		if e.Reason == vmafxv1.EventCheckpointWritten && e.Regarding.Name == run.Name {
			written++
		}
	}
	if written != 1 {
		t.Errorf("%d CheckpointWritten events, want 1", written)
	}

	// A job scored with the checkpoint, named by digest, and the same pair on the base model.
	p := trainingPairs[1]
	withCheckpoint := newJob(ns, "trained-"+p.name, p)
	withCheckpoint.Spec.Model = vmafxv1.ModelReference("oci://" + registry + "/vmafx/models@" + st.LastCheckpoint.Digest)
	rolledBack := newJob(ns, "base-"+p.name, p)
	for _, j := range []*vmafxv1.VmafxJob{withCheckpoint, rolledBack} {
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
	}
	a := waitJobDone(t, client.ObjectKeyFromObject(withCheckpoint), 4*time.Minute)
	b := waitJobDone(t, client.ObjectKeyFromObject(rolledBack), 4*time.Minute)
	if a.Status.Phase != vmafxv1.JobSucceeded || b.Status.Phase != vmafxv1.JobSucceeded {
		t.Fatalf("jobs: %s %s: %s / %s %s", a.Status.Phase, a.Status.Message, b.Status.Phase, b.Status.Message, "")
	}
	scoreA, _ := strconv.ParseFloat(a.Status.Score, 64)
	scoreB, _ := strconv.ParseFloat(b.Status.Score, 64)
	t.Logf("%s: %v with %s, %v with vmaf_v0.6.1 (label %v)", p.name, scoreA, withCheckpoint.Spec.Model, scoreB, libvmafMean(t, p)+8)
	// result.model is the model's name and its file's checksum: here the reference.
	if a.Status.Result == nil || !strings.HasPrefix(a.Status.Result.Model, string(withCheckpoint.Spec.Model)+"@sha256:") {
		t.Errorf("result.model = %+v, want the reference and the model's checksum", a.Status.Result)
	}
	if math.Abs(scoreB-libvmafMean(t, p)) > 1e-4 {
		t.Errorf("the base model scores %v, libvmaf %v", scoreB, libvmafMean(t, p))
	}
	if !(scoreA > scoreB) {
		t.Errorf("the checkpoint, trained on labels above vmaf_v0.6.1, scores %v, not above the base model's %v", scoreA, scoreB)
	}
}

// deployRegistry imports the registry image, applies testdata/registry.yaml, waits for it
// to serve, and returns its host:port (the Service's ClusterIP: no cluster DNS).
func deployRegistry(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(envRegistry)
	if bin == "" {
		t.Fatalf("%s is not set: `make e2e` builds the registry and sets it", envRegistry)
	}
	args := append([]string{"image", bin, "registry"}, strings.Fields(os.Getenv(envClusterFlags))...)
	cluster := exec.CommandContext(t.Context(), os.Getenv(envCluster), append(args, "-out", t.TempDir())...)
	if out, err := cluster.CombinedOutput(); err != nil {
		t.Fatalf("importing the registry image: %v\n%s", err, out)
	}
	kubectl(t, "apply", "-f", filepath.Join("testdata", "registry.yaml"))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: registryNamespace}}); err != nil {
			t.Logf("deleting namespace %s: %v", registryNamespace, err)
		}
	})
	eventually(t, 2*time.Minute, "the registry ready", func(ctx context.Context) error {
		var d appsv1.Deployment
		if err := c.Get(ctx, types.NamespacedName{Namespace: registryNamespace, Name: "registry"}, &d); err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 1 {
			return fmt.Errorf("%d ready replicas", d.Status.ReadyReplicas)
		}
		return nil
	})
	return serviceAddress(t, registryNamespace, "registry", 5000)
}

// trainerAccount gives ns the vmafx-trainer ServiceAccount, bound to the trainer's
// ClusterRole, as docs/training.md tells users to for a run outside vmafx-system.
func trainerAccount(t *testing.T, ns string) {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vmafx-trainer"}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-vmafx-trainer-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "vmafx-trainer"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}},
	}
	for _, o := range []client.Object{sa, binding} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.Delete(ctx, binding)
	})
}

// outputClaim makes a PersistentVolumeClaim in ns on a host folder (the node is this
// machine; the cluster has no dynamic storage) that the labelled jobs write their
// per-frame outputs to and the trainer reads them from.
func outputClaim(t *testing.T, ns string) string {
	t.Helper()
	dir := hostDir(t)
	// The worker (uid 65532) writes here.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	const claim = "training-outputs"
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + ns + "-outputs"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claim},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectory)}},
		},
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: claim},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: ptr.To(""),
			VolumeName:       pv.Name,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	for _, o := range []client.Object{pv, pvc} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.Delete(ctx, pv)
	})
	return claim
}
