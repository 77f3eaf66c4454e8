package scheduler

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestPriorityOrdersTheQueue: with every slot taken, a low-priority job's Pod and then a
// high-priority one wait; when a slot frees, the high-priority Pod gets it, though it
// came second, and the low-priority one waits for the next slot.
//
// The slot is freed while the scheduler is stopped, and a new one starts: a starting
// scheduler has queued every pending Pod before its first scheduling cycle (it waits for
// its event handlers to sync), so the queue's order alone decides which Pod is bound
// first. With the scheduler running, a freed slot moves the waiting Pods to the active
// queue one at a time, and the scheduling cycle may take the first before the second
// arrives (seen once in CI: the low-priority Pod was bound). The starting scheduler lists
// the Pods by name, so the low-priority Pod, named first, is also queued first: only the
// priority can put the other one ahead.
func TestPriorityOrdersTheQueue(t *testing.T) {
	cl, sched, cfg := oneSlotTaken(t)
	priority := func(p int) map[string]string {
		return map[string]string{vmafxv1.AnnotationPriority: strconv.Itoa(p)}
	}
	cl.workerPod("low", "cpu", priority(10))
	cl.waitFailedScheduling("low", scheduleTimeout)
	cl.workerPod("urgent", "cpu", priority(900))
	cl.waitFailedScheduling("urgent", scheduleTimeout)
	if n := cl.nodeOf("low") + cl.nodeOf("urgent"); n != "" {
		t.Fatalf("a waiting Pod was bound to %s while no slot was free", n)
	}

	// Free the slot, as a finished worker Pod leaves the node, while no scheduler runs.
	sched.Stop()
	cl.deletePod("running")
	startScheduler(t, cfg, "--leader-elect=false")
	if first := cl.waitFirstBound(scheduleTimeout, "low", "urgent"); first != "urgent" {
		t.Fatalf("Pod %s got the freed slot, want the high-priority Pod urgent", first)
	}
	// The next free slot goes to the low-priority Pod.
	cl.deletePod("urgent")
	cl.waitScheduled("low", scheduleTimeout)
}

// TestSamePriorityFirstComeFirstServed: among Pods of equal priority, the one that came
// first gets the freed slot.
func TestSamePriorityFirstComeFirstServed(t *testing.T) {
	cl, _, _ := oneSlotTaken(t)
	same := map[string]string{vmafxv1.AnnotationPriority: "100"}
	cl.workerPod("first", "cpu", same)
	cl.waitFailedScheduling("first", scheduleTimeout)
	cl.workerPod("second", "cpu", same)
	cl.waitFailedScheduling("second", scheduleTimeout)
	cl.waitBackoffOver()
	cl.deletePod("running")
	if first := cl.waitFirstBound(scheduleTimeout, "first", "second"); first != "first" {
		t.Fatalf("the later Pod got the freed slot before the earlier one")
	}
}

// oneSlotTaken starts the shipped scheduler on a cluster of one node with one slot, which
// the Pod "running" takes; it returns the scheduler and its configuration too.
func oneSlotTaken(t *testing.T) (*cluster, *inProcessScheduler, map[string]any) {
	t.Helper()
	cl := newCluster(t)
	node := cl.node("one", 1)
	cl.vmafxNode(node, vmafxv1.VendorCPU, time.Now())
	cfg := schedulerConfig(t)
	// Waiting Pods must be out of their backoff when the slot frees, or the one that failed
	// first would leave the backoff queue first. Pin the backoff to 1 s (the minimum) so
	// the test knows how long that is.
	cfg["podInitialBackoffSeconds"], cfg["podMaxBackoffSeconds"] = 1, 1
	sched := startScheduler(t, cfg, "--leader-elect=false")
	cl.workerPod("running", "cpu", nil)
	cl.waitScheduled("running", scheduleTimeout)
	return cl, sched, cfg
}

// deletePod removes a Pod at once, as the kubelet's final delete does for a finished Pod.
func (cl *cluster) deletePod(name string) {
	cl.t.Helper()
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = cl.ns, name
	if err := cl.c.Delete(cl.ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		cl.t.Fatalf("deleting pod %s: %v", name, err)
	}
}

// waitBackoffOver waits out the 1 s backoff (podInitialBackoffSeconds and
// podMaxBackoffSeconds pinned to 1) of Pods whose FailedScheduling event has been seen:
// each failed before its event was written, so 1 s from now covers them. The scheduler
// shows no sign when a backoff ends, so this is a wait for a known time, bounded.
func (cl *cluster) waitBackoffOver() {
	cl.t.Helper()
	over := time.Now().Add(time.Second + 200*time.Millisecond)
	if err := wait.PollUntilContextTimeout(cl.ctx, 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return time.Now().After(over), nil
	}); err != nil {
		cl.t.Fatal(err)
	}
}

// waitFirstBound waits until one of the named Pods is bound and returns its name; it fails
// the test if more than one is bound by then, as only one slot was free.
func (cl *cluster) waitFirstBound(timeout time.Duration, names ...string) string {
	cl.t.Helper()
	var bound []string
	err := wait.PollUntilContextTimeout(cl.ctx, 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		bound = bound[:0]
		for _, n := range names {
			if cl.nodeOf(n) != "" {
				bound = append(bound, n)
			}
		}
		return len(bound) > 0, nil
	})
	if err != nil {
		cl.t.Fatalf("none of %v bound within %v", names, timeout)
	}
	if len(bound) > 1 {
		cl.t.Fatalf("%v all bound, but only one slot was free", bound)
	}
	return bound[0]
}
