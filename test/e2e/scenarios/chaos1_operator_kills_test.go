package scenarios

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestChaos1OperatorKills is chaos scenario 1: 200 jobs while the operator is killed ten
// times (its Pod force-deleted, no chance to hand over its lease): every job succeeds with
// libvmaf's score, on its first and only attempt, with one Pod.
func TestChaos1OperatorKills(t *testing.T) {
	requireChaos(t)
	requireBaseline(t)
	const jobs, kills = 200, 10
	ns := createNamespace(t)
	var created []*vmafxv1.VmafxJob
	for i := range jobs {
		job := newJob(ns, fmt.Sprintf("job-%03d", i), p01)
		if err := c.Create(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		created = append(created, job)
	}

	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	killed := 0
	wg.Go(func() {
		for killed < kills && ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Second):
			}
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(vmafxv1.SystemNamespace), client.MatchingLabels{"app.kubernetes.io/name": "vmafx-operator"}); err != nil {
				continue
			}
			for i := range pods.Items {
				if err := c.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)); err == nil {
					killed++
					t.Logf("killed operator Pod %s (%d of %d)", pods.Items[i].Name, killed, kills)
				}
			}
		}
	})
	start := time.Now()
	for _, job := range created {
		waitJobDone(t, client.ObjectKeyFromObject(job), 30*time.Minute)
	}
	stop()
	wg.Wait()
	t.Logf("%d jobs done in %s with %d operator kills", jobs, time.Since(start).Round(time.Second), killed)
	if killed < kills {
		t.Errorf("the operator was killed %d times, want %d: the jobs ran faster than the kills, so the scenario proved less", killed, kills)
	}
	for _, job := range created {
		got := &vmafxv1.VmafxJob{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(job), got); err != nil {
			t.Fatal(err)
		}
		requireScore(t, got, p01)
		pods, err := jobPods(t.Context(), ns, job.Name)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Attempts != 1 || len(pods) != 1 || got.Status.FailedAttempts != 0 || got.Status.LostAttempts != 0 {
			t.Errorf("job %s: attempts %d, Pods %d, failed %d, lost %d; want one attempt, one Pod", job.Name,
				got.Status.Attempts, len(pods), got.Status.FailedAttempts, got.Status.LostAttempts)
		}
	}
}
