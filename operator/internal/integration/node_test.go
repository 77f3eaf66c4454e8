package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

func getNode(t *testing.T, n *vmafxv1.VmafxNode) *vmafxv1.VmafxNode {
	t.Helper()
	fresh := &vmafxv1.VmafxNode{}
	if err := testenv.Client().Get(context.Background(), client.ObjectKeyFromObject(n), fresh); err != nil {
		t.Fatal(err)
	}
	return fresh
}

func waitForNode(t *testing.T, n *vmafxv1.VmafxNode, what string, cond func(*vmafxv1.VmafxNode) bool) *vmafxv1.VmafxNode {
	t.Helper()
	var got *vmafxv1.VmafxNode
	eventually(t, 20*time.Second, "VmafxNode "+n.Name+": "+what, func() (bool, error) {
		got = getNode(t, n)
		return cond(got), nil
	})
	return got
}

// TestStaleNodeMovesItsJobsOnce: a node whose device plugin stops heartbeating turns
// unhealthy after the staleness window, its running job is moved to a new attempt exactly
// once without using the job's failure budget, and the node recovers when heartbeats
// return. The operator never writes the heartbeat Lease nor lastHeartbeat.
func TestStaleNodeMovesItsJobsOnce(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvNamespace, ns)) // stale after 3s; VmafxNodes of ns count
	node := &vmafxv1.VmafxNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gpu-1"},
		Spec:       vmafxv1.VmafxNodeSpec{NodeName: "gpu-1", GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 4},
	}
	create(t, node)
	waitForNode(t, node, "Ready=False/NoHeartbeat before any heartbeat", func(n *vmafxv1.VmafxNode) bool {
		c := meta.FindStatusCondition(n.Status.Conditions, vmafxv1.NodeReady)
		return c != nil && c.Reason == "NoHeartbeat" && !n.Status.Healthy
	})
	// kubectl get vmnode prints HEALTHY false and JOBS 0 for it, not empty columns: the
	// stored status names both.
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(vmafxv1.GroupVersion.WithKind("VmafxNode"))
	if err := testenv.Client().Get(context.Background(), client.ObjectKeyFromObject(node), stored); err != nil {
		t.Fatal(err)
	}
	healthy, hasHealthy, _ := unstructured.NestedBool(stored.Object, "status", "healthy")
	jobs, hasJobs, _ := unstructured.NestedInt64(stored.Object, "status", "jobs")
	if !hasHealthy || healthy || !hasJobs || jobs != 0 {
		t.Errorf("stored status of a node without heartbeat: healthy %v (present %v), jobs %d (present %v); want false and 0, present",
			healthy, hasHealthy, jobs, hasJobs)
	}

	beat := time.Now().Truncate(time.Second)
	deviceHeartbeat(t, node, beat)
	create(t, newJob(ns, "moved", func(s *vmafxv1.VmafxJobSpec) { s.BackoffLimit = new(int32) }))
	pod := waitForPod(t, ns, "moved-1")
	kubeletBind(t, pod, "gpu-1", true)
	waitForNode(t, node, "healthy with one job", func(n *vmafxv1.VmafxNode) bool { return n.Status.Healthy && n.Status.Jobs == 1 })

	// The device plugin stops. Within the window plus a margin the node is stale and the
	// Pod is being deleted; the test then plays the kubelet finishing that deletion.
	n := waitForNode(t, node, "stale", func(n *vmafxv1.VmafxNode) bool { return !n.Status.Healthy })
	c := meta.FindStatusCondition(n.Status.Conditions, vmafxv1.NodeReady)
	if renewed := getLease(t, node).Spec.RenewTime; c == nil || c.Reason != "HeartbeatStale" || !renewed.Time.Equal(beat) || n.Status.LastHeartbeat != nil {
		t.Fatalf("stale node: condition %+v, Lease renewTime %v (want %v, untouched), lastHeartbeat %v (want none)", c, renewed, beat, n.Status.LastHeartbeat)
	}
	eventually(t, 10*time.Second, "moved-1 being deleted", func() (bool, error) {
		p := waitForPod(t, ns, "moved-1")
		return p.DeletionTimestamp != nil, nil
	})
	kubeletStopDeleted(t, pod)
	kubeletConfirmDeletion(t, ns, "moved-1")
	waitForPod(t, ns, "moved-2")
	waitForPodGone(t, ns, "moved-1")
	j := waitForJob(t, ns, "moved", "attempt 2", func(j *vmafxv1.VmafxJob) bool { return j.Status.Attempts == 2 })
	if j.Status.FailedAttempts != 0 || j.Status.LostAttempts != 1 {
		t.Errorf("moving off a stale node: failedAttempts %d, lostAttempts %d; want 0 and 1", j.Status.FailedAttempts, j.Status.LostAttempts)
	}

	// Heartbeats return: the node recovers and the new attempt can land anywhere.
	deviceHeartbeat(t, node, time.Now())
	waitForNode(t, node, "healthy again", func(n *vmafxv1.VmafxNode) bool { return n.Status.Healthy })
	eventually(t, 10*time.Second, "the NodeStale event", func() (bool, error) { return countNodeStaleEvents(t, ns) >= 1, nil })
	// The node's recovery requeues the job: a second move would show within half a second.
	consistently(t, 500*time.Millisecond, "exactly one NodeStale event (moved once)", func() (bool, error) {
		if got := countNodeStaleEvents(t, ns); got != 1 {
			return false, fmt.Errorf("%d NodeStale events regarding the job", got)
		}
		return true, nil
	})
	if pods := workerPods(t, ns, "moved"); len(pods) != 1 || pods[0].Name != "moved-2" {
		t.Errorf("worker Pods after the move: %d", len(pods))
	}
}

func countNodeStaleEvents(t *testing.T, ns string) int {
	t.Helper()
	var list eventsv1.EventList
	if err := testenv.Client().List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Reason == "NodeStale" && e.Regarding.Kind == "VmafxJob" {
			n += eventCount(e)
		}
	}
	return n
}
