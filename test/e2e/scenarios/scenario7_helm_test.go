package scenarios

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// envHelm names the helm binary `make e2e` built from module sources (`make helm`).
const envHelm = "VMAFX_HELM"

// helmRelease is the release name docs/install.md installs with.
const helmRelease = "vmafx"

// The components' workloads, named alike by the kustomize manifests and the chart.
const (
	operatorName     = "vmafx-operator"
	schedulerName    = "vmafx-scheduler"
	devicePluginName = "vmafx-device-plugin"
)

// The leader election Leases in the system namespace: the operator's
// (VMAFX_OPERATOR_LEADER_ELECTION_ID's default) and vmafx-scheduler's (leaderElection in
// its KubeSchedulerConfiguration).
const (
	operatorLease  = "vmafx-operator.vmafx.dev"
	schedulerLease = "vmafx-scheduler"
)

// crdNames are the CRDs both installs share; neither the migration nor helm uninstall may
// remove them.
var crdNames = []string{"vmafxjobs.vmafx.dev", "vmafxnodes.vmafx.dev", "vmafxmodeltrainings.vmafx.dev", "vmafxcomparisons.vmafx.dev", "vmafxladders.vmafx.dev"}

// TestHelm is scenario 7 (issue 8): the Helm chart replaces the kustomize deploy on the
// live cluster and goes through a release's life.
//
//  1. The kustomize workloads, ServiceAccounts, RBAC and ConfigMap are removed with the
//     commands of docs/install.md, and nothing of VMAFX but the CRDs and the namespace is
//     left;
//  2. manifests/helm/vmafx is packaged (`helm package`) and pushed to an OCI registry in
//     the cluster (`helm push --plain-http`), and `helm upgrade --install` from that
//     oci:// reference with local-values.yaml brings the operator, vmafx-scheduler and
//     the device plugin up, owned by the release;
//  3. a VmafxJob succeeds with libvmaf's score, as in scenario 2;
//  4. `helm upgrade --reuse-values --set operator.logLevel=debug` rolls the operator to a
//     new ReplicaSet whose Pods are ready, and leaves the other two workloads alone;
//  5. `helm uninstall` leaves no object of the release, no VMAFX workload, Pod,
//     ServiceAccount, RBAC object or ConfigMap, and keeps the CRDs and the job.
//
// Whatever happens, it puts the kustomize deploy back (`kubectl apply -k
// manifests/overlays/local`, rolled out), so the cluster is left as `make deploy` leaves it.
func TestHelm(t *testing.T) {
	requireBaseline(t)
	bin := os.Getenv(envHelm)
	if bin == "" {
		t.Skipf("%s is not set (`make e2e` sets it to the helm that `make helm` builds)", envHelm)
	}
	began := time.Now()
	h := &helmCLI{bin: bin, home: t.TempDir()}
	// Registered before the job's namespace: cleanups run last first, so the namespace
	// goes, then the kustomize deploy comes back, then the helm home is removed.
	t.Cleanup(func() {
		restoreKustomize(t, h)
		t.Logf("scenario 7 took %s in all", time.Since(began).Round(100*time.Millisecond))
	})
	ns := createNamespace(t)
	// The chart is installed as users install a published release: packaged, pushed to
	// an OCI registry (distribution, in the cluster, as scenario 9 runs it) and installed
	// from its oci:// reference. Registered after restoreKustomize, so it goes first.
	registry := deployRegistry(t)

	chart := filepath.Join(repoRoot(), "manifests", "helm", "vmafx")
	localValues := filepath.Join(repoRoot(), "manifests", "helm", "local-values.yaml")
	var (
		released []*unstructured.Unstructured // the objects of the release, from helm get manifest
		job      *vmafxv1.VmafxJob
	)

	step := func(name string, f func(t *testing.T)) bool {
		start := time.Now()
		ok := t.Run(name, f)
		t.Logf("%s: %s", name, time.Since(start).Round(100*time.Millisecond))
		return ok
	}

	if !step("kustomize deploy removed", removeKustomize) {
		return
	}

	var chartRef, chartVersion string
	if !step("helm package and push to the registry", func(t *testing.T) {
		dir := t.TempDir()
		h.run(t, "package", chart, "--destination", dir)
		pkgs, err := filepath.Glob(filepath.Join(dir, "vmafx-*.tgz"))
		if err != nil || len(pkgs) != 1 {
			t.Fatalf("helm package wrote %v (%v), want one vmafx-<version>.tgz", pkgs, err)
		}
		chartVersion = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(pkgs[0]), "vmafx-"), ".tgz")
		out := h.run(t, "push", pkgs[0], "oci://"+registry+"/charts", "--plain-http")
		if !strings.Contains(out, "Digest: sha256:") {
			t.Fatalf("helm push did not report a digest:\n%s", out)
		}
		chartRef = "oci://" + registry + "/charts/vmafx"
	}) {
		return
	}

	if !step("helm upgrade --install from the OCI reference", func(t *testing.T) {
		out := h.run(t, "upgrade", "--install", helmRelease, chartRef, "--version", chartVersion, "--plain-http",
			"--namespace", vmafxv1.SystemNamespace, "--values", localValues, "--wait", "--timeout", "3m")
		if !strings.Contains(out, "STATUS: deployed") {
			t.Fatalf("helm upgrade --install did not report STATUS: deployed:\n%s", out)
		}
		waitDeploymentRolledOut(t, operatorName)
		waitDeploymentRolledOut(t, schedulerName)
		waitDevicePluginRolledOut(t, true)
		for name, o := range map[string]client.Object{operatorName: &appsv1.Deployment{}, schedulerName: &appsv1.Deployment{}, devicePluginName: &appsv1.DaemonSet{}} {
			if err := c.Get(t.Context(), systemKey(name), o); err != nil {
				t.Fatal(err)
			}
			if got := o.GetAnnotations()["meta.helm.sh/release-name"]; got != helmRelease {
				t.Errorf("%T %s: annotation meta.helm.sh/release-name = %q, want %q (the release owns it)", o, name, got, helmRelease)
			}
		}
		waitLeader(t, operatorLease, operatorName)
		waitLeader(t, schedulerLease, schedulerName)
		released = decodeManifest(t, h.run(t, "get", "manifest", helmRelease, "--namespace", vmafxv1.SystemNamespace))
		t.Logf("the release holds %d objects", len(released))
		eventually(t, time.Minute, "node "+nodeName+" offers "+vmafxv1.ResourceSlot+" from the chart's device plugin", func(ctx context.Context) error {
			n, err := allocatableSlots(ctx)
			if err != nil {
				return err
			}
			if n < 1 {
				return fmt.Errorf("allocatable %d", n)
			}
			return nil
		})
	}) {
		return
	}

	if !step("VmafxJob succeeds", func(t *testing.T) {
		job = newJob(ns, "helm", p01)
		applied := time.Now()
		if err := c.Create(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		job = waitJobDone(t, client.ObjectKeyFromObject(job), 3*time.Minute)
		t.Logf("apply to %s in %s", job.Status.Phase, time.Since(applied).Round(10*time.Millisecond))
		if job.Status.Phase != vmafxv1.JobSucceeded {
			t.Fatalf("job phase %s (%s), want %s", job.Status.Phase, job.Status.Message, vmafxv1.JobSucceeded)
		}
		score, err := strconv.ParseFloat(job.Status.Score, 64)
		if err != nil {
			t.Fatalf("status.score %q: %v", job.Status.Score, err)
		}
		if want := libvmafMean(t, p01); math.Abs(score-want) > 1e-6 {
			t.Errorf("status.score = %v, want libvmaf's mean %v", score, want)
		}
		if job.Status.Node != nodeName {
			t.Errorf("status.node = %q, want %q", job.Status.Node, nodeName)
		}
	}) {
		return
	}

	if !step("helm upgrade rolls the operator", func(t *testing.T) {
		var before appsv1.Deployment
		if err := c.Get(t.Context(), systemKey(operatorName), &before); err != nil {
			t.Fatal(err)
		}
		beforeRS, err := currentReplicaSet(t.Context(), &before)
		if err != nil {
			t.Fatal(err)
		}
		beforePods, err := componentPods(t.Context(), operatorName)
		if err != nil {
			t.Fatal(err)
		}
		others := workloadGenerations(t, schedulerName, devicePluginName)

		h.run(t, "upgrade", helmRelease, chart, "--namespace", vmafxv1.SystemNamespace,
			"--reuse-values", "--set", "operator.logLevel=debug", "--wait", "--timeout", "3m")

		var after appsv1.Deployment
		if err := c.Get(t.Context(), systemKey(operatorName), &after); err != nil {
			t.Fatal(err)
		}
		if after.Generation <= before.Generation {
			t.Fatalf("Deployment %s generation %d after the upgrade, want more than %d (a new Pod template)", operatorName, after.Generation, before.Generation)
		}
		if got := envValue(after.Spec.Template.Spec.Containers[0], "VMAFX_LOG_LEVEL"); got != "debug" {
			t.Errorf("Deployment %s: VMAFX_LOG_LEVEL = %q after the upgrade, want debug", operatorName, got)
		}
		waitDeploymentRolledOut(t, operatorName)
		eventually(t, 2*time.Minute, "operator Pods all of a new ReplicaSet, ready, the old ones gone", func(ctx context.Context) error {
			var d appsv1.Deployment
			if err := c.Get(ctx, systemKey(operatorName), &d); err != nil {
				return err
			}
			rs, err := currentReplicaSet(ctx, &d)
			if err != nil {
				return err
			}
			if rs.UID == beforeRS.UID {
				return fmt.Errorf("the current ReplicaSet is still %s (revision %s)", rs.Name, rs.Annotations["deployment.kubernetes.io/revision"])
			}
			pods, err := componentPods(ctx, operatorName)
			if err != nil {
				return err
			}
			if len(pods) != int(*d.Spec.Replicas) {
				return fmt.Errorf("%d operator Pods, want %d", len(pods), *d.Spec.Replicas)
			}
			for _, p := range pods {
				if slices.ContainsFunc(beforePods, func(old corev1.Pod) bool { return old.UID == p.UID }) {
					return fmt.Errorf("Pod %s from before the upgrade still runs", p.Name)
				}
				if !metav1.IsControlledBy(&p, rs) {
					return fmt.Errorf("Pod %s is not of the new ReplicaSet %s", p.Name, rs.Name)
				}
				if !podReady(&p) {
					return fmt.Errorf("Pod %s not Ready", p.Name)
				}
				if got := envValue(p.Spec.Containers[0], "VMAFX_LOG_LEVEL"); got != "debug" {
					return fmt.Errorf("Pod %s runs with VMAFX_LOG_LEVEL %q, want debug", p.Name, got)
				}
			}
			t.Logf("operator rolled from ReplicaSet %s to %s", beforeRS.Name, rs.Name)
			return nil
		})
		waitLeader(t, operatorLease, operatorName)
		if got := workloadGenerations(t, schedulerName, devicePluginName); !maps.Equal(got, others) {
			t.Errorf("operator.logLevel changed other workloads: generations %v, want %v", got, others)
		}
	}) {
		return
	}

	step("helm uninstall leaves nothing but the CRDs", func(t *testing.T) {
		if len(released) == 0 {
			t.Fatal("no release manifest recorded")
		}
		h.run(t, "uninstall", helmRelease, "--namespace", vmafxv1.SystemNamespace, "--wait", "--timeout", "2m")
		for _, o := range released {
			err := c.Get(t.Context(), client.ObjectKeyFromObject(o), o.DeepCopy())
			if !apierrors.IsNotFound(err) {
				t.Errorf("%s %s of the release after helm uninstall: err = %v, want NotFound", o.GetKind(), describeKey(o), err)
			}
		}
		waitNoComponentPods(t)
		waitNoLeftovers(t, "after helm uninstall")
		if out := h.run(t, "list", "--all", "--short", "--namespace", vmafxv1.SystemNamespace); strings.TrimSpace(out) != "" {
			t.Errorf("helm list --all after uninstall shows %q, want no release", strings.TrimSpace(out))
		}
		requireCRDs(t, "after helm uninstall (Helm keeps crds/)")
		var kept vmafxv1.VmafxJob
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(job), &kept); err != nil {
			t.Errorf("VmafxJob %s after helm uninstall: %v; want it kept with the CRDs", client.ObjectKeyFromObject(job), err)
		} else if kept.Status.Score != job.Status.Score {
			t.Errorf("VmafxJob %s score %q after helm uninstall, want %q", kept.Name, kept.Status.Score, job.Status.Score)
		}
	})
}

// helmCLI runs the helm binary with its cache, configuration and data in a folder of the
// test's own, so that nothing of the host's helm setup is read or changed.
type helmCLI struct {
	bin, home string
}

func (h *helmCLI) command(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(h.home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(h.home, "config"),
		"HELM_DATA_HOME="+filepath.Join(h.home, "data"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), err
}

// run runs helm and fails the test if it fails.
func (h *helmCLI) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := h.command(t.Context(), args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// restoreKustomize puts the kustomize deploy back as `make deploy` does, whatever state
// the scenario left: a release (failed or not) is uninstalled, its Pods are waited out
// (two device plugins must not serve the kubelet at once), manifests/overlays/local is
// applied and the three workloads rolled out. On a failure the cluster's state is
// collected first, while the chart's objects still show what went wrong.
// removeKustomize removes the kustomize deploy with the commands of docs/install.md and
// checks that nothing of VMAFX but the CRDs and the namespace is left.
func removeKustomize(t *testing.T) {
	// docs/install.md, "Helm and the kustomize manifests": the workloads first, and
	// their RBAC only once their Pods are gone, so that the operator and
	// vmafx-scheduler can still release their leader leases on the way out.
	kubectl(t, "delete", "--namespace", vmafxv1.SystemNamespace,
		"deployment/"+operatorName, "deployment/"+schedulerName, "daemonset/"+devicePluginName)
	kubectl(t, "wait", "--namespace", vmafxv1.SystemNamespace, "--for=delete", "pod",
		"--selector=app.kubernetes.io/part-of=vmafx", "--timeout=2m")
	// Every rendered file but the namespace and the CRDs (kept: they hold the users' objects).
	files, err := filepath.Glob(filepath.Join(repoRoot(), "manifests", "overlays", "local", "vmafx*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the rendered local install: %v", err)
	}
	for _, f := range files {
		kubectl(t, "delete", "--filename", f, "--ignore-not-found")
	}
	waitNoComponentPods(t)
	waitNoLeftovers(t, "after removing the kustomize deploy")
	requireCRDs(t, "after removing the kustomize workloads")
	if err := c.Get(t.Context(), types.NamespacedName{Name: vmafxv1.SystemNamespace}, &corev1.Namespace{}); err != nil {
		t.Fatalf("namespace %s after removing the kustomize workloads: %v; want it kept", vmafxv1.SystemNamespace, err)
	}
}

func restoreKustomize(t *testing.T, h *helmCLI) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if harness := os.Getenv(envCluster); t.Failed() && harness != "" {
		args := append([]string{"collect"}, strings.Fields(os.Getenv(envClusterFlags))...)
		out, err := command(ctx, harness, args...)
		t.Logf("collected the cluster's state before restoring the kustomize deploy (err %v):\n%s", err, out)
	}
	if _, err := h.command(ctx, "status", helmRelease, "--namespace", vmafxv1.SystemNamespace); err == nil {
		if _, err := h.command(ctx, "uninstall", helmRelease, "--namespace", vmafxv1.SystemNamespace, "--wait", "--timeout", "2m"); err != nil {
			t.Errorf("restoring the kustomize deploy: %v", err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := componentPods(ctx, operatorName, schedulerName, devicePluginName)
		return err == nil && len(pods) == 0, nil
	})
	if err != nil {
		t.Errorf("restoring the kustomize deploy: the chart's Pods did not go away: %v", err)
	}
	overlay := filepath.Join(repoRoot(), "manifests", "overlays", "local")
	if out, err := command(ctx, kubectlPath(), "apply", "--kustomize", overlay); err != nil {
		t.Errorf("restoring the kustomize deploy: %v\n%s", err, out)
		return
	}
	for _, w := range []string{"deployment/" + operatorName, "deployment/" + schedulerName, "daemonset/" + devicePluginName} {
		if out, err := command(ctx, kubectlPath(), "rollout", "status", w, "--namespace", vmafxv1.SystemNamespace, "--timeout=2m"); err != nil {
			t.Errorf("restoring the kustomize deploy: %s not rolled out: %v\n%s", w, err, out)
			return
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := allocatableSlots(ctx)
		return err == nil && n >= 1, nil
	})
	if err != nil {
		t.Errorf("restoring the kustomize deploy: node %s offers no %s: %v", nodeName, vmafxv1.ResourceSlot, err)
		return
	}
	t.Logf("kustomize deploy (manifests/overlays/local) restored in %s", time.Since(start).Round(100*time.Millisecond))
}

// leftovers names every object in the cluster that a VMAFX install (either one) made and
// that is still there: Deployments, DaemonSets, ReplicaSets, ServiceAccounts, ConfigMaps,
// Services, RBAC objects, admission policies and disruption budgets that are named
// vmafx-*, carry the label app.kubernetes.io/part-of=vmafx, or belong to the Helm release;
// and the Pods of the system namespace. The CRDs, their objects and the components'
// leases are not among them.
func leftovers(ctx context.Context) ([]string, error) {
	kinds := []schema.GroupVersionKind{
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "apps", Version: "v1", Kind: "DaemonSet"},
		{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
		{Version: "v1", Kind: "ServiceAccount"},
		{Version: "v1", Kind: "ConfigMap"},
		{Version: "v1", Kind: "Service"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"},
		{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
		{Group: "batch", Version: "v1", Kind: "Job"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
	}
	var left []string
	for _, gvk := range kinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing %ss: %w", gvk.Kind, err)
		}
		for _, o := range list.Items {
			if strings.HasPrefix(o.Name, "vmafx-") || o.Labels["app.kubernetes.io/part-of"] == "vmafx" ||
				o.Annotations["meta.helm.sh/release-name"] == helmRelease {
				left = append(left, gvk.Kind+" "+describeKey(&o))
			}
		}
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(vmafxv1.SystemNamespace)); err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		left = append(left, "Pod "+describeKey(&p))
	}
	return left, nil
}

// waitNoLeftovers waits until no object that leftovers names is left.
func waitNoLeftovers(t *testing.T, when string) {
	t.Helper()
	eventually(t, time.Minute, "no VMAFX workload, Pod, ServiceAccount, RBAC object or ConfigMap left "+when, func(ctx context.Context) error {
		left, err := leftovers(ctx)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("still there: %s", strings.Join(left, ", "))
		}
		return nil
	})
}

// waitNoComponentPods waits until no Pod of the operator, vmafx-scheduler or the device
// plugin is left, terminating ones included.
func waitNoComponentPods(t *testing.T) {
	t.Helper()
	eventually(t, 2*time.Minute, "no operator, vmafx-scheduler or device plugin Pod left", func(ctx context.Context) error {
		pods, err := componentPods(ctx, operatorName, schedulerName, devicePluginName)
		if err != nil {
			return err
		}
		if len(pods) > 0 {
			var names []string
			for _, p := range pods {
				names = append(names, p.Name)
			}
			return fmt.Errorf("Pods still there: %s", strings.Join(names, ", "))
		}
		return nil
	})
}

// componentPods lists the system namespace's Pods of the named components (their
// app.kubernetes.io/name label, the same in both installs).
func componentPods(ctx context.Context, names ...string) ([]corev1.Pod, error) {
	sel, err := labels.Parse("app.kubernetes.io/name in (" + strings.Join(names, ",") + ")")
	if err != nil {
		return nil, err
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(vmafxv1.SystemNamespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// waitDeploymentRolledOut waits until a Deployment of the system namespace has observed
// its spec and every replica is updated, ready and available, as `kubectl rollout status`
// does.
func waitDeploymentRolledOut(t *testing.T, name string) {
	t.Helper()
	eventually(t, 2*time.Minute, "Deployment "+name+" rolled out", func(ctx context.Context) error {
		var d appsv1.Deployment
		if err := c.Get(ctx, systemKey(name), &d); err != nil {
			return err
		}
		st, want := d.Status, *d.Spec.Replicas
		if st.ObservedGeneration < d.Generation {
			return fmt.Errorf("generation %d not observed yet", d.Generation)
		}
		if want < 1 || st.Replicas != want || st.UpdatedReplicas != want || st.ReadyReplicas != want || st.AvailableReplicas != want {
			return fmt.Errorf("replicas %d, updated %d, ready %d, available %d; want %d of each", st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas, want)
		}
		return nil
	})
}

// waitLeader waits until a Pod of the named Deployment holds the leader Lease. A
// component that dies without releasing its Lease (its RBAC deleted first) makes its
// successor wait out the Lease's duration, 15 s; waiting here keeps that apart from the
// job's own time.
func waitLeader(t *testing.T, lease, deployment string) {
	t.Helper()
	eventually(t, time.Minute, "a Pod of "+deployment+" holds the Lease "+lease, func(ctx context.Context) error {
		var l coordinationv1.Lease
		if err := c.Get(ctx, systemKey(lease), &l); err != nil {
			return err
		}
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		pods, err := componentPods(ctx, deployment)
		if err != nil {
			return err
		}
		for _, p := range pods {
			// The holder identity is <Pod name>_<random>.
			if p.DeletionTimestamp == nil && strings.HasPrefix(holder, p.Name+"_") {
				return nil
			}
		}
		return fmt.Errorf("held by %q", holder)
	})
}

// currentReplicaSet is the ReplicaSet of d's current revision.
func currentReplicaSet(ctx context.Context, d *appsv1.Deployment) (*appsv1.ReplicaSet, error) {
	const revision = "deployment.kubernetes.io/revision"
	var list appsv1.ReplicaSetList
	if err := c.List(ctx, &list, client.InNamespace(d.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		rs := &list.Items[i]
		if metav1.IsControlledBy(rs, d) && rs.Annotations[revision] == d.Annotations[revision] {
			return rs, nil
		}
	}
	return nil, fmt.Errorf("no ReplicaSet of Deployment %s at revision %s", d.Name, d.Annotations[revision])
}

// workloadGenerations are the generations of the named Deployments or DaemonSets of the
// system namespace.
func workloadGenerations(t *testing.T, names ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, name := range names {
		var o client.Object = &appsv1.Deployment{}
		if name == devicePluginName {
			o = &appsv1.DaemonSet{}
		}
		if err := c.Get(t.Context(), systemKey(name), o); err != nil {
			t.Fatal(err)
		}
		out[name] = o.GetGeneration()
	}
	return out
}

// requireCRDs fails the test unless the VMAFX CRDs exist and are Established.
func requireCRDs(t *testing.T, when string) {
	t.Helper()
	for _, name := range crdNames {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := c.Get(t.Context(), types.NamespacedName{Name: name}, &crd); err != nil {
			t.Errorf("CRD %s %s: %v; want it kept", name, when, err)
			continue
		}
		if !slices.ContainsFunc(crd.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
			return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
		}) || crd.DeletionTimestamp != nil {
			t.Errorf("CRD %s %s: not Established or being deleted; want it kept as it was", name, when)
		}
	}
}

// decodeManifest reads the objects of a release manifest (`helm get manifest`), setting
// the release namespace on namespaced objects that name none, as Helm does.
func decodeManifest(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("decoding the release manifest: %v", err)
		}
		if len(raw) == 0 {
			continue
		}
		o := &unstructured.Unstructured{Object: raw}
		namespaced, err := c.IsObjectNamespaced(o)
		if err != nil {
			t.Fatalf("%s %s of the release: %v", o.GetKind(), o.GetName(), err)
		}
		if namespaced && o.GetNamespace() == "" {
			o.SetNamespace(vmafxv1.SystemNamespace)
		}
		objs = append(objs, o)
	}
	if len(objs) == 0 {
		t.Fatal("helm get manifest returned no objects")
	}
	return objs
}

// describeKey is namespace/name, or the name of a cluster-scoped object.
func describeKey(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

func systemKey(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: name}
}

// envValue is the value of a container's environment variable.
func envValue(ctr corev1.Container, name string) string {
	for _, e := range ctr.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func podReady(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	})
}

// repoRoot is the work tree's root; the manifests are applied from there.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// kubectlPath is the kubectl `make e2e` names, as kubectl uses it.
func kubectlPath() string {
	if bin := os.Getenv(envKubectl); bin != "" {
		return bin
	}
	return "kubectl"
}

// command runs a program with ctx, for cleanups (the test's own context is done by then).
func command(ctx context.Context, bin string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w", filepath.Base(bin), strings.Join(args, " "), err)
	}
	return string(out), nil
}
