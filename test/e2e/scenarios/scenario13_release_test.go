package scenarios

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	release "github.com/vmafx/vmafx/hack/release"
	"github.com/vmafx/vmafx/hack/release/project"
)

// TestReleaseFromRegistry is scenario 13 (issue 19): VMAFX installed as users install a
// published release, its images pulled from a registry rather than imported.
//
//  1. The kustomize deploy is removed (as in scenario 7) and a registry runs in the
//     cluster (distribution, as in scenario 9);
//  2. the release is built for this machine's architecture (the worker's runtime from
//     this machine's packages: the e2e reaches no network) and pushed there with its
//     SBOMs and chart, as `make push` does;
//  3. the cluster's containerd is told to pull from the registry over plain HTTP
//     (`vmafx-cluster registry-http`, a hosts.toml under its config_path);
//  4. `helm upgrade --install` from the chart's oci:// reference, with no image value
//     set: the chart the release pushed names the registry, and every component's image
//     is pulled from it (the Pods' events say so);
//  5. a VmafxJob scores with libvmaf's score, its worker image pulled from the registry.
//
// Whatever happens, the kustomize deploy and containerd's configuration are put back.
func TestReleaseFromRegistry(t *testing.T) {
	requireBaseline(t)
	bin := os.Getenv(envHelm)
	if bin == "" {
		t.Skipf("%s is not set (`make e2e` sets it to the helm that `make helm` builds)", envHelm)
	}
	harness := os.Getenv(envCluster)
	if harness == "" {
		t.Skipf("%s is not set (`make e2e` sets it)", envCluster)
	}
	h := &helmCLI{bin: bin, home: t.TempDir()}
	t.Cleanup(func() { restoreKustomize(t, h) })
	ns := createNamespace(t)
	registry := deployRegistry(t)
	removeKustomize(t)

	stamp, err := project.GitStamp(t.Context(), repoRoot(), "v0.0.0-e2e."+strconv.FormatInt(time.Now().Unix(), 10))
	if err != nil {
		t.Fatal(err)
	}
	o := release.Options{
		Repo: repoRoot(), Registry: registry + "/vmafx", PlainHTTP: true, Stamp: stamp,
		Arches: []string{runtime.GOARCH}, WorkDir: t.TempDir(), HostRuntime: true, License: project.License,
	}
	// The platform's four and the trainer, which the chart's default workload names; not
	// the front doors.
	for _, img := range project.Images() {
		if img.Name != "vmafx-api" && img.Name != "vmafx-mcp" {
			o.Images = append(o.Images, img)
		}
	}
	built, err := release.Build(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	chart, err := release.Push(t.Context(), o, built)
	if err != nil {
		t.Fatal(err)
	}

	flags := strings.Fields(os.Getenv(envClusterFlags))
	if out, err := command(t.Context(), harness, append([]string{"registry-http", registry}, flags...)...); err != nil {
		t.Fatalf("vmafx-cluster registry-http: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := command(ctx, harness, append([]string{"registry-http", registry, "-remove"}, flags...)...); err != nil {
			t.Errorf("vmafx-cluster registry-http -remove: %v\n%s", err, out)
		}
	})

	clips := filepath.Join(testdata(), "clips")
	out := h.run(t, "upgrade", "--install", helmRelease, chart, "--version", release.ChartVersion(stamp.Version), "--plain-http",
		"--namespace", vmafxv1.SystemNamespace, "--set-json", fmt.Sprintf("operator.allowedHostPaths=[%q]", clips),
		"--wait", "--timeout", "4m")
	if !strings.Contains(out, "STATUS: deployed") {
		t.Fatalf("helm upgrade --install did not report STATUS: deployed:\n%s", out)
	}
	waitDeploymentRolledOut(t, operatorName)
	waitDeploymentRolledOut(t, schedulerName)
	waitDevicePluginRolledOut(t, true)
	pods, err := componentPods(t.Context(), operatorName, schedulerName, devicePluginName)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods {
		requirePulled(t, &pods[i], registry+"/vmafx/", stamp.Version)
	}
	eventually(t, time.Minute, "node "+nodeName+" offers "+vmafxv1.ResourceSlot, func(ctx context.Context) error {
		n, err := allocatableSlots(ctx)
		if err != nil {
			return err
		}
		if n < 1 {
			return fmt.Errorf("allocatable %d", n)
		}
		return nil
	})

	job := newJob(ns, "release", p01)
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	done := waitJobDone(t, client.ObjectKeyFromObject(job), 4*time.Minute)
	if done.Status.Phase != vmafxv1.JobSucceeded {
		t.Fatalf("job phase %s (%s), want %s", done.Status.Phase, done.Status.Message, vmafxv1.JobSucceeded)
	}
	score, err := strconv.ParseFloat(done.Status.Score, 64)
	if err != nil {
		t.Fatalf("status.score %q: %v", done.Status.Score, err)
	}
	if want := libvmafMean(t, p01); math.Abs(score-want) > 1e-6 {
		t.Errorf("status.score = %v, want libvmaf's mean %v", score, want)
	}
	// The worker's image exists only in the registry, so the job's success already says it
	// was pulled; the Pod, while it is kept, says so too.
	var worker corev1.Pod
	switch err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: done.Status.PodName}, &worker); {
	case apierrors.IsNotFound(err):
		t.Logf("worker Pod %s is gone already", done.Status.PodName)
	case err != nil:
		t.Fatal(err)
	default:
		requirePulled(t, &worker, registry+"/vmafx/", stamp.Version)
	}
}

// requirePulled checks that pod's containers run images of the release (prefix, tag)
// that the kubelet pulled: an image pulled from the registry, not imported.
func requirePulled(t *testing.T, pod *corev1.Pod, prefix, tag string) {
	t.Helper()
	for _, ctr := range pod.Spec.Containers {
		if !strings.HasPrefix(ctr.Image, prefix) || !strings.HasSuffix(ctr.Image, ":"+tag) {
			t.Errorf("Pod %s container %s runs %s, want %s*:%s", pod.Name, ctr.Name, ctr.Image, prefix, tag)
		}
	}
	var events corev1.EventList
	if err := c.List(t.Context(), &events, client.InNamespace(pod.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.UID == pod.UID && e.Reason == "Pulled" && strings.Contains(e.Message, "Successfully pulled image") {
			return
		}
	}
	t.Errorf("Pod %s has no event saying the kubelet pulled its image", pod.Name)
}
