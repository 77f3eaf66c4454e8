package scenarios

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestChaos3DeletedPod is chaos scenario 3: `kubectl delete pod` of a running worker of a
// job with backoffLimit 0. The kubelet stops the worker and marks the Pod Failed before it
// goes; the attempt is lost, not failed, and the job succeeds on attempt 2.
func TestChaos3DeletedPod(t *testing.T) {
	requireBaseline(t)
	// Quick (under half a minute): it runs in every `make e2e` as well as in `make chaos`.
	ns := createNamespace(t)
	clip := newGatedClip(t, p01)
	job := clip.job(ns, "deleted")
	job.Spec.BackoffLimit = ptr.To[int32](0)
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(job)
	running := waitPhase(t, key, 3*time.Minute, vmafxv1.JobRunning)
	kubectl(t, "delete", "pod", "--namespace", ns, running.Status.PodName, "--wait=false")
	// The clip is released only once the first worker has stopped, so it cannot finish.
	podGoneOrTerminal(t, ns, running.Status.PodName, 2*time.Minute)
	clip.release()
	done := waitJobDone(t, key, 3*time.Minute)
	requireScore(t, done, p01)
	if done.Status.Attempts != 2 || done.Status.FailedAttempts != 0 || done.Status.LostAttempts != 1 {
		t.Errorf("attempts %d, failed %d, lost %d; want 2, 0, 1", done.Status.Attempts, done.Status.FailedAttempts, done.Status.LostAttempts)
	}
	var first corev1.Pod
	err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: running.Status.PodName}, &first)
	if err == nil && len(first.Finalizers) > 0 {
		t.Errorf("the deleted Pod %s still has finalizers %v after its job finished", first.Name, first.Finalizers)
	}
}
