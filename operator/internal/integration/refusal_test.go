package integration

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// setPodQuota sets a ResourceQuota of n Pods in ns, spec and status, as the resource quota
// controller (which does not run here) would report it.
func setPodQuota(t *testing.T, ns string, n int64) {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client()
	hard := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(n, resource.DecimalSI)}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers"}}
	err := c.Get(ctx, client.ObjectKeyFromObject(q), q)
	switch {
	case apierrors.IsNotFound(err):
		q.Spec.Hard = hard
		if err := c.Create(ctx, q); err != nil {
			t.Fatal(err)
		}
	case err != nil:
		t.Fatal(err)
	default:
		q.Spec.Hard = hard
		if err := c.Update(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}
	if err := c.Status().Update(ctx, q); err != nil {
		t.Fatal(err)
	}
}

func conditionMessage(j *vmafxv1.VmafxJob, typ string) string {
	if c := meta.FindStatusCondition(j.Status.Conditions, typ); c != nil {
		return c.Message
	}
	return ""
}

// TestQuotaExhaustionIsShownAndRetried: while a ResourceQuota leaves no room, the job
// says so (PodRefused with the API server's words, a Warning event) and keeps trying;
// once there is room, its Pod is created.
func TestQuotaExhaustionIsShownAndRetried(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	setPodQuota(t, ns, 0)
	startOperator(t, operatorEnv(config.EnvMaxRetryBackoff, "1s"))
	create(t, newJob(ns, "squeezed"))
	j := waitForJob(t, ns, "squeezed", "PodRefused=True/ExceededQuota", func(j *vmafxv1.VmafxJob) bool {
		return condition(j, vmafxv1.JobPodRefused) == "True/ExceededQuota"
	})
	if j.Status.Phase != vmafxv1.JobPending || !strings.Contains(conditionMessage(j, vmafxv1.JobPodRefused), "exceeded quota") ||
		!strings.Contains(j.Status.Message, "exceeded quota") {
		t.Errorf("phase %s, message %q, condition %q; want Pending with the quota's words", j.Status.Phase, j.Status.Message, conditionMessage(j, vmafxv1.JobPodRefused))
	}
	eventually(t, 10*time.Second, "FailedCreate event", func() (bool, error) {
		return slices.Contains(jobEvents(t, ns, "squeezed"), "FailedCreate"), nil
	})
	setPodQuota(t, ns, 5)
	waitForPod(t, ns, "squeezed-1")
	waitForJob(t, ns, "squeezed", "PodRefused=False", func(j *vmafxv1.VmafxJob) bool {
		return condition(j, vmafxv1.JobPodRefused) == "False/PodCreated"
	})
}

// TestPendingDeadlineEndsAQuotaWait: with a pending deadline (here the operator's
// default), a job whose Pod stays refused fails with the refusal as its reason.
func TestPendingDeadlineEndsAQuotaWait(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	setPodQuota(t, ns, 0)
	startOperator(t, operatorEnv(config.EnvPendingDeadline, "2s", config.EnvMaxRetryBackoff, "1s"))
	create(t, newJob(ns, "never-room"))
	j := waitForJob(t, ns, "never-room", "Failed", finished)
	if condition(j, vmafxv1.JobFailedCondition) != "True/PendingDeadlineExceeded" || !strings.Contains(j.Status.Message, "exceeded quota") {
		t.Errorf("Failed %s: %s; want PendingDeadlineExceeded with the quota's words", condition(j, vmafxv1.JobFailedCondition), j.Status.Message)
	}
}

// TestPendingDeadlineEndsAnUnschedulableWait: spec.pendingDeadlineSeconds fails a job
// that no node can take, with the scheduler's reason.
func TestPendingDeadlineEndsAnUnschedulableWait(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, newJob(ns, "nowhere", func(s *vmafxv1.VmafxJobSpec) { s.PendingDeadlineSeconds = ptr.To[int64](2) }))
	pod := waitForPod(t, ns, "nowhere-1")
	msg := "0/3 nodes are available: 3 node(s) had a stale VMAFX heartbeat (last 94s ago)."
	schedulerReject(t, pod, msg)
	j := waitForJob(t, ns, "nowhere", "Failed", finished)
	if condition(j, vmafxv1.JobFailedCondition) != "True/PendingDeadlineExceeded" || !strings.Contains(j.Status.Message, msg) {
		t.Errorf("Failed %s: %s; want PendingDeadlineExceeded with the scheduler's words", condition(j, vmafxv1.JobFailedCondition), j.Status.Message)
	}
	waitForPodGone(t, ns, "nowhere-1")
}

// TestStandingRefusalsFailTheJob: a Pod that policy forbids (PodSecurity) or that is
// invalid fails the job at once, with the API server's reason, instead of a silent loop.
func TestStandingRefusalsFailTheJob(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	nsObj := &corev1.Namespace{}
	if err := testenv.Client().Get(context.Background(), client.ObjectKey{Name: ns}, nsObj); err != nil {
		t.Fatal(err)
	}
	if nsObj.Labels == nil {
		nsObj.Labels = map[string]string{}
	}
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "baseline"
	if err := testenv.Client().Update(context.Background(), nsObj); err != nil {
		t.Fatal(err)
	}
	// The driver is allowed, so that the API server, not the allow-list, refuses its name.
	startOperator(t, operatorEnv(config.EnvAllowedHostPaths, "/var/lib/vmafx", config.EnvAllowedCSIDrivers, "Not A Driver!"))
	create(t, newJob(ns, "host-path", func(s *vmafxv1.VmafxJobSpec) {
		s.Volume = &vmafxv1.JobVolume{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/vmafx/clips"}}
	}))
	create(t, newJob(ns, "bad-driver", func(s *vmafxv1.VmafxJobSpec) {
		s.Volume = &vmafxv1.JobVolume{CSI: &corev1.CSIVolumeSource{Driver: "Not A Driver!"}}
	}))
	for name, want := range map[string]string{"host-path": "PodSecurity", "bad-driver": "csi.driver"} {
		j := waitForJob(t, ns, name, "Failed", finished)
		if j.Status.Phase != vmafxv1.JobFailed || condition(j, vmafxv1.JobFailedCondition) != "True/PodRefused" || !strings.Contains(j.Status.Message, want) {
			t.Errorf("%s: %s, Failed %s: %s; want Failed/PodRefused naming %s", name, j.Status.Phase, condition(j, vmafxv1.JobFailedCondition), j.Status.Message, want)
		}
		if !slices.Contains(jobEvents(t, ns, name), "FailedCreate") {
			eventually(t, 10*time.Second, name+": FailedCreate event", func() (bool, error) {
				return slices.Contains(jobEvents(t, ns, name), "FailedCreate"), nil
			})
		}
	}
}

// TestVolumesOutsideTheAllowlistAreRefused: hostPath, NFS and inline CSI volumes only
// where the operator's configuration allows them; a PVC always, attached read-only.
func TestVolumesOutsideTheAllowlistAreRefused(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvAllowedHostPaths, "/var/lib/vmafx", config.EnvAllowedNFSServers, "nas.local",
		config.EnvAllowedCSIDrivers, "s3.csi.example.com"))
	volumes := map[string]*vmafxv1.JobVolume{
		"etc":       {HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}},
		"escape":    {HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/vmafx/../../etc"}},
		"other-nfs": {NFS: &corev1.NFSVolumeSource{Server: "10.1.2.3", Path: "/exports"}},
		// An NFS CSI driver would reach any server: the NFS allow-list's bypass.
		"csi-nfs": {CSI: &corev1.CSIVolumeSource{Driver: "nfs.csi.k8s.io", VolumeAttributes: map[string]string{"server": "10.1.2.3", "share": "/"}}},
		"csi-s3":  {CSI: &corev1.CSIVolumeSource{Driver: "s3.csi.example.com", VolumeAttributes: map[string]string{"bucket": "clips"}}},
		"clips":   {HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/vmafx/clips"}},
		"nas":     {NFS: &corev1.NFSVolumeSource{Server: "nas.local", Path: "/exports"}},
		"claim":   {PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "clips"}},
	}
	for name, v := range volumes {
		create(t, newJob(ns, name, func(s *vmafxv1.VmafxJobSpec) { s.Volume = v }))
	}
	for _, name := range []string{"etc", "escape", "other-nfs", "csi-nfs"} {
		j := waitForJob(t, ns, name, "Failed", finished)
		if condition(j, vmafxv1.JobFailedCondition) != "True/VolumeNotAllowed" || !strings.Contains(j.Status.Message, "VMAFX_OPERATOR_ALLOWED_") {
			t.Errorf("%s: Failed %s: %s; want VolumeNotAllowed naming the setting", name, condition(j, vmafxv1.JobFailedCondition), j.Status.Message)
		}
		if pods := workerPods(t, ns, name); len(pods) != 0 {
			t.Errorf("%s: %d worker Pods for a refused volume", name, len(pods))
		}
	}
	if j := waitForJob(t, ns, "csi-nfs", "Failed", finished); !strings.Contains(j.Status.Message, "nfs.csi.k8s.io") {
		t.Errorf("csi-nfs: %s; want the driver named", j.Status.Message)
	}
	for _, name := range []string{"clips", "nas", "claim", "csi-s3"} {
		pod := waitForPod(t, ns, name+"-1")
		mount := pod.Spec.Containers[0].VolumeMounts[len(pod.Spec.Containers[0].VolumeMounts)-1]
		if mount.MountPath != vmafxv1.DataMountPath || !mount.ReadOnly {
			t.Errorf("%s: data mount %+v; want read-only at %s", name, mount, vmafxv1.DataMountPath)
		}
	}
}

// TestOperatorRunsWithItsShippedRBAC runs the operator as its ServiceAccount with exactly
// the shipped RBAC, against an API server that enforces owner reference permissions: the
// worker Pod's blockOwnerDeletion needs update on vmafxjobs/finalizers.
func TestOperatorRunsWithItsShippedRBAC(t *testing.T) {
	ctx := context.Background()
	if err := testenv.Client().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: vmafxv1.SystemNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The operator's install as rendered from the chart: ServiceAccount, roles and
	// bindings (its Deployment stays inert: no controller runs here).
	if err := testenv.ApplyFile(ctx, filepath.Join(testenv.RepoRoot(), "manifests", "default", "vmafx-operator.yaml")); err != nil {
		t.Fatal(err)
	}
	cfg := testenv.Config()
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + vmafxv1.SystemNamespace + ":vmafx-operator",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + vmafxv1.SystemNamespace, "system:authenticated"},
	}
	ns := testenv.CreateNamespace(t)
	startOperatorWith(t, cfg, operatorEnv())
	create(t, newJob(ns, "as-itself"))
	pod := bindAndRun(t, ns, "as-itself", 1, "node-a")
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("owner reference %+v; want the job as controller with blockOwnerDeletion", ref)
	}
	kubeletFinish(t, pod, 0, resultMessage(60, 5))
	waitForJob(t, ns, "as-itself", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	eventually(t, 10*time.Second, "as-itself-1 released", func() (bool, error) {
		p := waitForPod(t, ns, "as-itself-1")
		return len(p.Finalizers) == 0, nil
	})
}
