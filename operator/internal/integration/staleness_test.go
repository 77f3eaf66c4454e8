package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/controller/node"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// vmafxNode creates a VmafxNode for the Kubernetes node of the same name in ns, with one
// heartbeat at beat unless beat is zero.
func vmafxNode(t *testing.T, ns, name string, beat time.Time) *vmafxv1.VmafxNode {
	t.Helper()
	n := &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmafxv1.VmafxNodeSpec{GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 4}}
	create(t, n)
	if !beat.IsZero() {
		deviceHeartbeat(t, n, beat)
	}
	return n
}

func deleting(t *testing.T, ns, pod string) bool {
	t.Helper()
	return waitForPod(t, ns, pod).DeletionTimestamp != nil
}

// TestVmafxNodesOutsideTheOperatorNamespaceDoNotCount: a VmafxNode that a tenant writes
// in its own namespace, naming a node where workers run, does not make the operator move
// them; the same staleness in the operator's namespace does.
func TestVmafxNodesOutsideTheOperatorNamespaceDoNotCount(t *testing.T) {
	system, tenant := testenv.CreateNamespace(t), testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvNamespace, system))
	n := &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "claim"},
		Spec: vmafxv1.VmafxNodeSpec{NodeName: "gpu-x", GPUVendor: vmafxv1.VendorNVIDIA}} // never beats
	create(t, n)
	vmafxNode(t, system, "gpu-y", time.Now())

	create(t, newJob(tenant, "on-x"))
	create(t, newJob(tenant, "on-y"))
	bindAndRun(t, tenant, "on-x", 1, "gpu-x")
	bindAndRun(t, tenant, "on-y", 1, "gpu-y")
	eventually(t, 20*time.Second, "the job on the stale gpu-y moved", func() (bool, error) { return deleting(t, tenant, "on-y-1"), nil })
	if deleting(t, tenant, "on-x-1") {
		t.Error("a VmafxNode outside the operator's namespace made the operator delete a worker on gpu-x")
	}
	if got := getNode(t, n); got.Status.Conditions != nil || got.Status.Healthy {
		t.Errorf("the operator wrote the status of a VmafxNode outside its namespace: %+v", got.Status)
	}
}

// TestNoMassMoveWhenMostNodesLookStale: when most nodes look stale at once, which points
// at the control plane rather than the nodes, nothing moves; once most are fresh again,
// the jobs of the one that stays stale do.
func TestNoMassMoveWhenMostNodesLookStale(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvNamespace, ns))
	names := []string{"n1", "n2", "n3"}
	nodes := map[string]*vmafxv1.VmafxNode{}
	for _, name := range names {
		nodes[name] = vmafxNode(t, ns, name, time.Now())
		create(t, newJob(ns, "on-"+name))
		bindAndRun(t, ns, "on-"+name, 1, name)
	}
	eventually(t, 20*time.Second, "MassStaleness event", func() (bool, error) {
		var list eventsv1.EventList
		if err := testenv.Client().List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		return slices.ContainsFunc(list.Items, func(e eventsv1.Event) bool { return e.Reason == "MassStaleness" }), nil
	})
	for _, name := range names {
		waitForNode(t, nodes[name], "Ready=False (stale is still reported)", func(n *vmafxv1.VmafxNode) bool {
			c := meta.FindStatusCondition(n.Status.Conditions, vmafxv1.NodeReady)
			return c != nil && c.Status == metav1.ConditionFalse
		})
	}
	for _, name := range names {
		if deleting(t, ns, "on-"+name+"-1") {
			t.Errorf("worker on %s deleted while all nodes looked stale at once", name)
		}
	}
	// n1 and n2 come back; n3 alone is stale, which is the node's doing.
	for _, name := range names[:2] {
		deviceHeartbeat(t, nodes[name], time.Now())
	}
	eventually(t, 20*time.Second, "the job on n3 moved", func() (bool, error) { return deleting(t, ns, "on-n3-1"), nil })
	for _, name := range names[:2] {
		if deleting(t, ns, "on-"+name+"-1") {
			t.Errorf("worker on the recovered %s deleted", name)
		}
	}
}

// TestHeartbeatFromTheFutureGoesStale: a heartbeat stamped an hour ahead (a node clock
// that runs fast) is fresh when it arrives and stale when no other follows it, as
// vmafx-scheduler sees it; the node's status says its clock is off.
func TestHeartbeatFromTheFutureGoesStale(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvNamespace, ns))
	n := vmafxNode(t, ns, "fast-clock", time.Now().Add(time.Hour))
	waitForNode(t, n, "healthy", func(n *vmafxv1.VmafxNode) bool { return n.Status.Healthy })
	got := waitForNode(t, n, "stale", func(n *vmafxv1.VmafxNode) bool {
		return !n.Status.Healthy && meta.FindStatusCondition(n.Status.Conditions, vmafxv1.NodeReady) != nil
	})
	if c := meta.FindStatusCondition(got.Status.Conditions, vmafxv1.NodeReady); c.Reason != "HeartbeatStale" || !strings.Contains(c.Message, "ahead of the operator's clock") {
		t.Errorf("Ready %s: %s", c.Reason, c.Message)
	}
}

// TestWorkerImageCondition: spec.image is compared with the image worker Pods run.
func TestWorkerImageCondition(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvNamespace, ns))
	for image, want := range map[string]string{"vmafx-worker:test": "True/Matches", "ghcr.io/vmafx/vmafx-node:latest": "False/Differs"} {
		n := &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "img-"},
			Spec: vmafxv1.VmafxNodeSpec{GPUVendor: vmafxv1.VendorCPU, Image: image}}
		create(t, n)
		waitForNode(t, n, "WorkerImage "+want, func(n *vmafxv1.VmafxNode) bool {
			c := meta.FindStatusCondition(n.Status.Conditions, vmafxv1.NodeWorkerImage)
			return c != nil && string(c.Status)+"/"+c.Reason == want
		})
	}
}

type contactSince time.Time

func (c contactSince) Since() (time.Time, bool) { return time.Time(c), true }

// TestHeartbeatReadAgainBeforeMoving: a node that looks stale in the cache is read from
// the API server before its workers are deleted; a newer heartbeat there (its Lease
// renewed since) keeps them.
func TestHeartbeatReadAgainBeforeMoving(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	n := vmafxNode(t, ns, "lagging", time.Now().Add(-time.Minute))
	stale := getLease(t, n)
	deviceHeartbeat(t, n, time.Now()) // what the API server holds
	create(t, newJob(ns, "stays"))
	// An operator whose namespace holds no VmafxNodes creates the Pod and leaves the node
	// to the reconciler under test.
	startOperator(t, operatorEnv(config.EnvNamespace, "elsewhere"))
	pod := bindAndRun(t, ns, "stays", 1, "lagging")

	clk := clocktesting.NewFakePassiveClock(time.Now())
	r := &node.Reconciler{
		Client: staleCache{Client: testenv.Client(), stale: stale}, APIReader: testenv.Client(),
		Recorder: events.NewFakeRecorder(100), Clock: clk, StaleAfter: 3 * time.Second,
		UnhealthyThreshold: 0.55, Contact: contactSince(clk.Now().Add(-time.Hour)),
	}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(n)}
	if _, err := r.Reconcile(context.Background(), req); err != nil { // first sight of the cached heartbeat
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(10 * time.Second)) // the cache still shows it: stale by now
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if deleting(t, ns, pod.Name) {
		t.Error("the worker was deleted although the API server had a fresh heartbeat")
	}
}
