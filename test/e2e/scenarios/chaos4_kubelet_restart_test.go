package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestChaos4KubeletRestart is chaos scenario 4: the kubelet restarts while a job runs
// and others wait: the device plugin registers again, the node's slots come back, and
// every job finishes without a failed attempt.
func TestChaos4KubeletRestart(t *testing.T) {
	requireChaos(t)
	requireBaseline(t)
	ns := createNamespace(t)
	var clips []*gatedClip
	var jobs []*vmafxv1.VmafxJob
	for i := range 3 {
		clip := newGatedClip(t, p01)
		clips = append(clips, clip)
		job := clip.job(ns, fmt.Sprintf("through-restart-%d", i))
		if err := c.Create(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job)
	}
	eventually(t, 3*time.Minute, "a job running", func(ctx context.Context) error {
		for _, j := range jobs {
			got := &vmafxv1.VmafxJob{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(j), got); err == nil && got.Status.Phase == vmafxv1.JobRunning {
				return nil
			}
		}
		return fmt.Errorf("none running yet")
	})

	harness(t, "restart", "kubelet")
	eventually(t, 2*time.Minute, "slots advertised again", func(ctx context.Context) error {
		n, err := allocatableSlots(ctx)
		if err != nil {
			return err
		}
		if n < 1 {
			return fmt.Errorf("allocatable %s %d", vmafxv1.ResourceSlot, n)
		}
		return nil
	})
	for _, clip := range clips {
		clip.release()
	}
	for _, j := range jobs {
		done := waitJobDone(t, client.ObjectKeyFromObject(j), 5*time.Minute)
		requireScore(t, done, p01)
		if done.Status.FailedAttempts != 0 {
			t.Errorf("job %s: %d failed attempts across a kubelet restart", j.Name, done.Status.FailedAttempts)
		}
		t.Logf("job %s: attempts %d, lost %d", j.Name, done.Status.Attempts, done.Status.LostAttempts)
	}
}
