package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Environment variables `make e2e` sets for the scenarios that act on the node itself.
const (
	envCluster      = "VMAFX_CLUSTER"       // the harness command, bin/vmafx-cluster
	envClusterFlags = "VMAFX_CLUSTER_FLAGS" // its flags: binary folder, versions, state folder
)

// TestKubeletRestart is scenario 5: the kubelet restarts (stopped by its PID and started
// again by the harness); the device plugin registers with the new kubelet, the node's
// vmafx.dev/slot comes back, and a job submitted afterwards succeeds.
func TestKubeletRestart(t *testing.T) {
	requireBaseline(t)
	harness := os.Getenv(envCluster)
	if harness == "" {
		t.Skipf("%s is not set (`make e2e` sets it)", envCluster)
	}
	args := append([]string{"restart", "kubelet"}, strings.Fields(os.Getenv(envClusterFlags))...)
	out, err := exec.CommandContext(t.Context(), harness, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", harness, strings.Join(args, " "), err, out)
	}
	t.Logf("%s", out)
	restarted := time.Now()

	eventually(t, 2*time.Minute, "device plugin registered with the new kubelet", func(ctx context.Context) error {
		// The plugin logs each registration; the kubelet's allocatable count alone
		// could still be the old one.
		pod, err := devicePluginPod(ctx)
		if err != nil {
			return err
		}
		since := restarted.Add(-time.Second).UTC().Format(time.RFC3339)
		// Right after its restart the kubelet answers 404 for logs until it knows the
		// Pods again: retry rather than fail.
		log, err := kubectlInput(t, "", "logs", "--namespace", vmafxv1.SystemNamespace, pod, "--since-time="+since)
		if err != nil {
			return fmt.Errorf("kubectl logs: %w: %s", err, log)
		}
		if !strings.Contains(log, "Registered with the kubelet") {
			return errors.New(`no "Registered with the kubelet" in the device plugin's log since the restart`)
		}
		n, err := allocatableSlots(ctx)
		if err != nil {
			return err
		}
		if n < 1 {
			return fmt.Errorf("allocatable %s %d", vmafxv1.ResourceSlot, n)
		}
		return nil
	})

	ns := createNamespace(t)
	job := newJob(ns, "after-restart", p01)
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	job = waitJobDone(t, client.ObjectKeyFromObject(job), 2*time.Minute)
	if job.Status.Phase != vmafxv1.JobSucceeded {
		t.Fatalf("job %s: %s", job.Status.Phase, job.Status.Message)
	}
}

// devicePluginPod is the name of the device plugin's Pod.
func devicePluginPod(ctx context.Context) (string, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(vmafxv1.SystemNamespace), client.MatchingLabels{"app.kubernetes.io/name": "vmafx-device-plugin"}); err != nil {
		return "", err
	}
	if len(pods.Items) != 1 {
		return "", fmt.Errorf("%d device plugin Pods", len(pods.Items))
	}
	return pods.Items[0].Name, nil
}
