package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestChaos2APIServerOutage is chaos scenario 2: a job runs while the API server is
// stopped for 90 s (longer than the 60 s staleness window) and started again. The
// relisted heartbeats are old when it is back, but the operator counts silence only from
// when it can see the API server again: the worker is not deleted and the job succeeds
// with no failed or lost attempt.
func TestChaos2APIServerOutage(t *testing.T) {
	requireChaos(t)
	requireBaseline(t)
	ns := createNamespace(t)
	clip := newGatedClip(t, p01)
	job := clip.job(ns, "through-outage")
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(job)
	running := waitPhase(t, key, 3*time.Minute, vmafxv1.JobRunning)
	var pod corev1.Pod
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: running.Status.PodName}, &pod); err != nil {
		t.Fatal(err)
	}

	harness(t, "restart", "kube-apiserver", "-down-for=90s")
	// The API server is back; give the operator, which lost its lease and restarted, and
	// the device plugin time to be seen, then the staleness window to pass: a wrong
	// verdict would delete the worker within it.
	eventually(t, 3*time.Minute, "the operator ready again", func(ctx context.Context) error {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(vmafxv1.SystemNamespace), client.MatchingLabels{"app.kubernetes.io/name": "vmafx-operator"}); err != nil {
			return err
		}
		for _, p := range pods.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					return nil
				}
			}
		}
		return fmt.Errorf("no ready operator Pod")
	})
	deadline := time.Now().Add(75 * time.Second)
	for time.Now().Before(deadline) {
		var now corev1.Pod
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(&pod), &now); err != nil {
			t.Fatalf("worker Pod %s: %v", pod.Name, err)
		}
		if now.UID != pod.UID || now.DeletionTimestamp != nil {
			t.Fatalf("worker Pod %s was deleted after the API server outage", pod.Name)
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(time.Second):
		}
	}
	clip.release()
	done := waitJobDone(t, key, 3*time.Minute)
	requireScore(t, done, p01)
	if done.Status.Attempts != 1 || done.Status.FailedAttempts != 0 || done.Status.LostAttempts != 0 {
		t.Errorf("attempts %d, failed %d, lost %d; want 1, 0, 0", done.Status.Attempts, done.Status.FailedAttempts, done.Status.LostAttempts)
	}
}
