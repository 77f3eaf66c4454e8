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

// TestManyJobs is scenario 6: more jobs than the node has slots, applied at once, all
// succeed, and at no moment do more worker Pods run than there are slots.
func TestManyJobs(t *testing.T) {
	requireBaseline(t)
	slots, err := allocatableSlots(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if slots < 1 {
		t.Fatalf("node %s has no allocatable %s", nodeName, vmafxv1.ResourceSlot)
	}
	n := int(slots) + 3
	ns := createNamespace(t)

	// Watch the worker Pods every 100 ms while the jobs run: the most found running at
	// once must not exceed the slots.
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	maxRunning := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(ns), client.HasLabels{vmafxv1.LabelJob}); err == nil {
				running := 0
				for _, p := range pods.Items {
					if p.Status.Phase == corev1.PodRunning {
						running++
					}
				}
				maxRunning = max(maxRunning, running)
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	start := time.Now()
	var jobs []*vmafxv1.VmafxJob
	for i := range n {
		job := newJob(ns, fmt.Sprintf("job-%d", i), p01)
		if err := c.Create(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job)
	}
	for _, job := range jobs {
		done := waitJobDone(t, client.ObjectKeyFromObject(job), 5*time.Minute)
		if done.Status.Phase != vmafxv1.JobSucceeded {
			t.Errorf("job %s: %s: %s", job.Name, done.Status.Phase, done.Status.Message)
		}
	}
	stop()
	wg.Wait()
	t.Logf("%d jobs on %d slot(s) done in %s; at most %d worker Pods seen running at once", n, slots, time.Since(start).Round(100*time.Millisecond), maxRunning)
	if maxRunning > int(slots) {
		t.Errorf("%d worker Pods ran at once on %d slot(s)", maxRunning, slots)
	}
}
