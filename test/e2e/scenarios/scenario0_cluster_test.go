package scenarios

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Names of the local cluster that the smoke test checks against (test/e2e/cluster).
const (
	podCIDR    = "10.244.0.0/16"
	pauseImage = "vmafx.local/pause:dev"
	workerImg  = "vmafx.local/vmafx-worker:dev"
)

// TestCluster is the local cluster's smoke test, before anything of the project is
// involved: the node is Ready, a Pod of the locally built pause image runs with an
// address from the pod network, `kubectl logs` reaches the kubelet through the API
// server, and a Pod that exits 0 ends Succeeded with its output in the log.
func TestCluster(t *testing.T) {
	ns := createNamespace(t)

	t.Run("node Ready", func(t *testing.T) {
		var n corev1.Node
		if err := c.Get(t.Context(), types.NamespacedName{Name: nodeName}, &n); err != nil {
			t.Fatal(err)
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue {
				t.Fatalf("node %s Ready=%s: %s", nodeName, cond.Status, cond.Message)
			}
		}
	})

	t.Run("pause Pod runs on the pod network", func(t *testing.T) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pause"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "pause", Image: pauseImage, ImagePullPolicy: corev1.PullNever,
			}}},
		}
		if err := c.Create(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
		_, pods, _ := net.ParseCIDR(podCIDR)
		eventually(t, time.Minute, "Pod pause Running", func(ctx context.Context) error {
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "pause"}, pod); err != nil {
				return err
			}
			if pod.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("phase %s", pod.Status.Phase)
			}
			if ip := net.ParseIP(pod.Status.PodIP); ip == nil || !pods.Contains(ip) {
				return fmt.Errorf("Pod IP %q is not in %s", pod.Status.PodIP, podCIDR)
			}
			return nil
		})
		// The pause program writes nothing; success shows that the API server reaches the
		// kubelet on the node address with its client certificate.
		kubectl(t, "logs", "--namespace", ns, "pause")
	})

	t.Run("Pod runs to completion", func(t *testing.T) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "version"},
			Spec: corev1.PodSpec{
				RestartPolicy:   corev1.RestartPolicyNever,
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
				Containers: []corev1.Container{{
					Name: "worker", Image: workerImg, ImagePullPolicy: corev1.PullNever,
					Args: []string{"version"},
				}},
			},
		}
		if err := c.Create(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "Pod version Succeeded", func(ctx context.Context) error {
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "version"}, pod); err != nil {
				return err
			}
			switch pod.Status.Phase {
			case corev1.PodSucceeded:
				return nil
			case corev1.PodFailed:
				t.Fatalf("Pod failed: %s", kubectl(t, "describe", "pod", "--namespace", ns, "version"))
			}
			return fmt.Errorf("phase %s", pod.Status.Phase)
		})
		if out := kubectl(t, "logs", "--namespace", ns, "version"); !strings.HasPrefix(out, "vmafx-worker") {
			t.Errorf("log of `vmafx-worker version` = %q, want it to start with vmafx-worker", out)
		}
	})
}

// createNamespace makes a namespace for one test and deletes it when the test ends.
func createNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Delete(ctx, ns); err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}
