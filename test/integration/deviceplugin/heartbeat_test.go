package deviceplugin_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/testing/fakehost"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestHeartbeat runs the plugin with a 1 s heartbeat against the real apiserver,
// reached through a TCP proxy the test stops and restarts to take the apiserver away
// and bring it back. Meanwhile the plugin serves the kubelet's device manager, and
// counts allocated slots from the kubelet's own PodResources server. The heartbeat is
// the node's Lease; the status is written when what it reports changes, never stamped
// (no upgrade overlap: --status-heartbeat-for=0).
func TestHeartbeat(t *testing.T) {
	requireAPIServer(t)
	ctx := testenv.Context(t)
	c := testenv.Client()
	ns := testenv.CreateNamespace(t)
	const node = "node-hb"

	h := fakehost.New(t, 4)
	h.AddGPU(fakehost.NVIDIA(0))
	h.AddGPU(fakehost.NVIDIA(1))
	k := startKubelet(t, nil)
	podResources := k.servePodResources()
	px := startProxy(t, apiserverHostPort(t))
	p := startPlugin(t, h.Root,
		"--heartbeat-interval=1s", "--status-heartbeat-for=0", "--node-name="+node, "--namespace="+ns,
		"--kubeconfig="+kubeconfig(t, "https://"+px.addr, nil),
		"--worker-image=vmafx-worker:test", "--pod-resources-socket="+podResources)
	k.waitSlots(8, 8)

	// Created, with the spec and status from discovery, and the Lease renewed.
	n := waitNode(t, ns, node, "got its status", func(n *vmafxv1.VmafxNode) bool { return n.Status.Slots != nil })
	first := waitRenewed(t, ns, node, time.Time{})
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vmafx-node-" + node}, lease); err != nil {
		t.Fatal(err)
	}
	if holder := lease.Spec.HolderIdentity; holder == nil || *holder != node || lease.Spec.LeaseDurationSeconds == nil || *lease.Spec.LeaseDurationSeconds != 6 ||
		len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != n.UID || lease.Labels[vmafxv1.LabelComponent] != vmafxv1.ComponentNodeHeartbeat {
		t.Errorf("Lease: holder %v, duration %v, owners %+v, labels %v; want %s, 6 s, the VmafxNode, the heartbeat label",
			lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.OwnerReferences, lease.Labels, node)
	}
	wantSpec := vmafxv1.VmafxNodeSpec{NodeName: node, GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 8, Image: "vmafx-worker:test"}
	if diff := cmp.Diff(wantSpec, n.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if n.Status.Device != "2x nvidia (10de:2684)" {
		t.Errorf("status.device = %q", n.Status.Device)
	}
	if diff := cmp.Diff(&vmafxv1.SlotCounts{Total: 8, Healthy: 8}, n.Status.Slots); diff != "" {
		t.Errorf("status.slots (-want +got):\n%s", diff)
	}

	// A steady node: the Lease is renewed, the VmafxNode is not written.
	steady := n.ResourceVersion
	waitRenewed(t, ns, node, waitRenewed(t, ns, node, first))
	if n = getNode(t, ns, node); n.ResourceVersion != steady || n.Status.LastHeartbeat != nil {
		t.Errorf("a steady node's VmafxNode was written (resourceVersion %s, then %s), lastHeartbeat %v", steady, n.ResourceVersion, n.Status.LastHeartbeat)
	}
	// The operator writes its half of the status; the heartbeat must not undo it.
	operator := []byte(`{"status":{"healthy":true,"jobs":1,"conditions":[{"type":"Ready","status":"True","reason":"HeartbeatFresh","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	if err := c.Status().Patch(ctx, n, client.RawPatch(types.MergePatchType, operator)); err != nil {
		t.Fatal(err)
	}
	k.allocate(workerPod("job-1", 1))
	n = waitNode(t, ns, node, "counted the allocated slot", func(n *vmafxv1.VmafxNode) bool {
		return n.Status.Slots != nil && n.Status.Slots.Allocated == 1
	})
	if !n.Status.Healthy || n.Status.Jobs != 1 || len(n.Status.Conditions) != 1 {
		t.Errorf("the heartbeat overwrote the operator's status: %+v", n.Status)
	}

	// The apiserver goes away.
	px.stop()
	p.waitMetric("vmafx_device_plugin_heartbeat_failures_total", 2)
	last := renewedAt(t, ns, node)
	// The kubelet is still served: a device loss reaches it, and a worker starts.
	h.Remove("/dev/nvidia1")
	k.waitSlots(8, 4)
	if got := env(k.allocate(workerPod("job-2", 1)))["VMAFX_DEVICE"]; got != "nvidia-0" {
		t.Errorf("allocation during the outage: VMAFX_DEVICE = %q", got)
	}
	p.waitMetric("vmafx_device_plugin_heartbeat_failures_total", 4)
	if got := renewedAt(t, ns, node); !got.Equal(last) {
		t.Fatalf("the Lease's renewTime moved from %v to %v while the apiserver was unreachable", last, got)
	}

	// It comes back: the heartbeat resumes, with the state of the outage.
	back := time.Now()
	px.start()
	waitRenewed(t, ns, node, last)
	n = waitNode(t, ns, node, "got the state of the outage", func(n *vmafxv1.VmafxNode) bool {
		return n.Status.Slots != nil && n.Status.Slots.Healthy == 4 && n.Status.Slots.Allocated == 2
	})
	t.Logf("heartbeat resumed %v after the apiserver came back", time.Since(back))
	if !n.Status.Healthy {
		t.Error("the operator's healthy field was lost")
	}
}

// TestHeartbeatRecreatesTheNode deletes the VmafxNode under a running plugin, and its
// Lease with it as the garbage collector would (none runs here): the next heartbeat
// creates both again.
func TestHeartbeatRecreatesTheNode(t *testing.T) {
	requireAPIServer(t)
	ctx := testenv.Context(t)
	ns := testenv.CreateNamespace(t)
	h := fakehost.New(t, 4) // no GPU: CPU slots
	startPlugin(t, h.Root, "--heartbeat-interval=1s", "--node-name=node-cpu", "--namespace="+ns,
		"--kubeconfig="+kubeconfig(t, testenv.Config().Host, nil))
	n := waitNode(t, ns, "node-cpu", "was created", func(*vmafxv1.VmafxNode) bool { return true })
	if n.Spec.GPUVendor != vmafxv1.VendorCPU || n.Spec.Capacity != 2 {
		t.Errorf("spec = %+v, want cpu with 2 slots", n.Spec)
	}
	waitRenewed(t, ns, "node-cpu", time.Time{})
	if err := testenv.Client().Delete(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Client().Delete(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vmafx-node-node-cpu"}}); err != nil {
		t.Fatal(err)
	}
	n2 := waitNode(t, ns, "node-cpu", "was re-created with its status", func(m *vmafxv1.VmafxNode) bool {
		return m.UID != n.UID && m.Status.Slots != nil
	})
	waitRenewed(t, ns, "node-cpu", time.Time{})
	if n2.Status.Device != "cpu (4 CPUs)" {
		t.Errorf("status.device = %q", n2.Status.Device)
	}
}

// TestManifestsGrantWhatTheHeartbeatNeeds installs the generated ClusterRole and the
// plugin's service account, RoleBinding and own-node admission policy, then runs the
// plugin as that service account (impersonated, with the node name a Pod's token
// carries): it can keep its own node's VmafxNode and heartbeat Lease and nothing else.
func TestManifestsGrantWhatTheHeartbeatNeeds(t *testing.T) {
	requireAPIServer(t)
	ctx := testenv.Context(t)
	c := testenv.Client()
	ns := vmafxv1.SystemNamespace
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	root := testenv.RepoRoot()
	// Everything the device plugin's install creates, as rendered from the chart: its
	// roles, the admission policy and the DaemonSet (inert: no controller runs here).
	applyFile(t, filepath.Join(root, "manifests/default/vmafx-device-plugin.yaml"), false)

	sa := "system:serviceaccount:vmafx-system:vmafx-device-plugin"
	onNode := func(node string) *rest.ImpersonationConfig {
		return &rest.ImpersonationConfig{UserName: sa, Extra: map[string][]string{"authentication.kubernetes.io/node-name": {node}}}
	}
	asPlugin := func(as *rest.ImpersonationConfig) client.Client {
		cfg := testenv.Config()
		cfg.Impersonate = *as
		cl, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	other := &vmafxv1.VmafxNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "node-b"},
		Spec:       vmafxv1.VmafxNodeSpec{NodeName: "node-b", GPUVendor: vmafxv1.VendorCPU},
	}
	// The policy takes effect once the apiserver has loaded it (dry runs: before that
	// they would succeed, and must leave nothing behind).
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := asPlugin(onNode("node-a")).Create(ctx, other.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "may only write the VmafxNode of that node"), nil
	})
	if err != nil {
		t.Fatalf("the own-node policy never refused a write to another node's VmafxNode")
	}

	h := fakehost.New(t, 2)
	dir := t.TempDir()
	// The default upgrade overlap: the plugin stamps status.lastHeartbeat besides renewing
	// its Lease, which the shipped rights and policy must allow too.
	own := startPlugin(t, h.Root, "--device-plugin-dir="+dir, "--heartbeat-interval=1s", "--node-name=node-a", "--namespace="+ns,
		"--kubeconfig="+kubeconfig(t, testenv.Config().Host, onNode("node-a")))
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "node-a"}})
		_ = c.Delete(context.Background(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vmafx-node-node-a"}})
	})
	waitRenewed(t, ns, "node-a", waitRenewed(t, ns, "node-a", time.Time{}))
	waitNode(t, ns, "node-a", "got a status heartbeat in the upgrade overlap", func(n *vmafxv1.VmafxNode) bool { return n.Status.LastHeartbeat != nil })
	if got := own.metric("vmafx_device_plugin_heartbeat_failures_total"); got != 0 {
		t.Errorf("the plugin's own heartbeat failed %v times with the shipped RBAC", got)
	}

	// A plugin claiming another node is refused, every time.
	liar := startPlugin(t, h.Root, "--device-plugin-dir="+t.TempDir(), "--heartbeat-interval=1s", "--node-name=node-b", "--namespace="+ns,
		"--kubeconfig="+kubeconfig(t, testenv.Config().Host, onNode("node-a")))
	liar.waitMetric("vmafx_device_plugin_heartbeat_failures_total", 2)
	if getNode(t, ns, "node-b") != nil {
		t.Error("a plugin on node-a created node-b's VmafxNode")
	}
	if !renewedAt(t, ns, "node-b").IsZero() {
		t.Error("a plugin on node-a wrote node-b's heartbeat Lease")
	}

	// Nor may it write another node's Lease directly, nor its own Lease held by another.
	asA := asPlugin(onNode("node-a"))
	for _, tc := range []struct{ name, holder string }{{"vmafx-node-node-b", "node-b"}, {"vmafx-node-node-b", "node-a"}, {"vmafx-node-node-a", "node-b"}, {"node-a", "node-a"}} {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &tc.holder}}
		err := asA.Create(ctx, lease, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "may only write the heartbeat Lease 'vmafx-node-node-a' held by that node") {
			t.Errorf("node-a's plugin creating Lease %s held by %s: %v; want the own-node refusal", tc.name, tc.holder, err)
		}
	}
	if !strings.Contains(liar.log.String(), "may only write the VmafxNode of that node") {
		t.Error("the refused plugin does not log why")
	}

	// A VmafxNode written without spec.nodeName (the operator README's node.yaml) is its
	// node's by name: that node's plugin may keep it.
	readme := &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "node-c"}, Spec: vmafxv1.VmafxNodeSpec{GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 4}}
	if err := c.Create(ctx, readme); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), readme) })
	beat := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"status":{"lastHeartbeat":%q}}`, time.Now().UTC().Format(time.RFC3339)))
	if err := asPlugin(onNode("node-c")).Status().Patch(ctx, readme.DeepCopy(), beat); err != nil {
		t.Errorf("node-c's plugin writing the heartbeat of VmafxNode node-c (no spec.nodeName): %v", err)
	}
	if err := asPlugin(onNode("node-a")).Status().Patch(ctx, readme.DeepCopy(), beat); err == nil {
		t.Error("node-a's plugin wrote the heartbeat of VmafxNode node-c")
	}
	holder := "node-c"
	cLease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vmafx-node-node-c"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	if err := asPlugin(onNode("node-c")).Create(ctx, cLease, client.DryRunAll); err != nil {
		t.Errorf("node-c's plugin creating its heartbeat Lease: %v", err)
	}

	// Credentials without a node (not from a Pod's token) write nothing.
	nodeless := asPlugin(&rest.ImpersonationConfig{UserName: sa})
	err = nodeless.Create(ctx, other.DeepCopy(), client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "no node in the device plugin's credentials") {
		t.Errorf("a write without a node in the credentials: %v", err)
	}

	// And the RoleBinding grants nothing outside the namespace, nor listing.
	plugin := asPlugin(onNode("node-a"))
	elsewhere := testenv.CreateNamespace(t)
	err = plugin.Create(ctx, &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere, Name: "node-a"}, Spec: vmafxv1.VmafxNodeSpec{NodeName: "node-a", GPUVendor: vmafxv1.VendorCPU}})
	if !apierrors.IsForbidden(err) {
		t.Errorf("creating a VmafxNode in another namespace: %v, want Forbidden", err)
	}
	if err := plugin.List(ctx, &vmafxv1.VmafxNodeList{}, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
		t.Errorf("listing VmafxNodes: %v, want Forbidden", err)
	}
	if err := plugin.List(ctx, &coordinationv1.LeaseList{}, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
		t.Errorf("listing Leases: %v, want Forbidden", err)
	}
	if err := plugin.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere, Name: "vmafx-node-node-a"}}); !apierrors.IsForbidden(err) {
		t.Errorf("creating a Lease in another namespace: %v, want Forbidden", err)
	}
}
