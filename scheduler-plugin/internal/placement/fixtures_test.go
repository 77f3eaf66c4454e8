package placement

import (
	"context"
	"strconv"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	testingclock "k8s.io/utils/clock/testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/scheduler-plugin/apis/config"
	configv1 "github.com/vmafx/vmafx/scheduler-plugin/apis/config/v1"
)

// t0 is the scheduler's clock in the tests.
var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// defaultArgs returns the plugin's args as kube-scheduler would pass them for an empty
// pluginConfig entry: the v1 defaults, converted.
func defaultArgs() *config.VmafxPlacementArgs {
	var in configv1.VmafxPlacementArgs
	configv1.SetDefaults_VmafxPlacementArgs(&in)
	var out config.VmafxPlacementArgs
	configv1.Convert_v1_VmafxPlacementArgs_To_config_VmafxPlacementArgs(&in, &out)
	return &out
}

// vmafxNode builds a VmafxNode in the system namespace for node name; a zero heartbeat
// means none yet.
func vmafxNode(name string, vendor vmafxv1.GPUVendor, heartbeat time.Time) *vmafxv1.VmafxNode {
	vn := &vmafxv1.VmafxNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: name},
		Spec:       vmafxv1.VmafxNodeSpec{NodeName: name, GPUVendor: vendor, Capacity: 4},
	}
	if !heartbeat.IsZero() {
		vn.Status.LastHeartbeat = &metav1.Time{Time: heartbeat}
	}
	return vn
}

// testTable is a nodeTable fed by hand instead of by an informer.
type testTable struct {
	*nodeTable
	logger klog.Logger
}

func newTestTable(t testing.TB, clk *testingclock.FakeClock, staleAfter time.Duration, objs ...*vmafxv1.VmafxNode) *testTable {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{byNodeName: indexByNodeName})
	tt := &testTable{
		nodeTable: &nodeTable{indexer: indexer, leases: cache.NewStore(cache.MetaNamespaceKeyFunc), clock: clk,
			staleAfter: staleAfter.Nanoseconds(), synced: func() bool { return true }},
		logger: ktesting.NewLogger(t, ktesting.NewConfig()),
	}
	for _, o := range objs {
		tt.put(o)
	}
	return tt
}

// put adds or replaces a VmafxNode, as an informer event would.
func (tt *testTable) put(vn *vmafxv1.VmafxNode) {
	if err := tt.indexer.Update(vn); err != nil {
		panic(err)
	}
	tt.refresh(tt.logger, vn.KubernetesNodeName())
}

// renew stores the heartbeat Lease of the VmafxNode called node renewed at, as the Lease
// informer's event would; a zero at deletes the Lease.
func (tt *testTable) renew(node string, at time.Time) {
	name, _ := vmafxv1.NodeLeaseName(node)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: name},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: at}}}
	var err error
	if at.IsZero() {
		err = tt.leases.Delete(lease)
	} else {
		err = tt.leases.Update(lease)
	}
	if err != nil {
		panic(err)
	}
	tt.refresh(tt.logger, tt.nodeNameOfLease(lease))
}

// remove deletes a VmafxNode, as an informer event would.
func (tt *testTable) remove(vn *vmafxv1.VmafxNode) {
	if err := tt.indexer.Delete(vn); err != nil {
		panic(err)
	}
	tt.refresh(tt.logger, vn.KubernetesNodeName())
}

// node builds a Node with slots allocatable vmafx.dev/slot, and its NodeInfo with pods
// holding used slots (one Pod per slot).
func nodeInfo(name string, slots, used int) fwk.NodeInfo {
	var pods []*v1.Pod
	for i := range used {
		pods = append(pods, st.MakePod().Namespace("jobs").Name(name+"-worker-"+strconv.Itoa(i)).Node(name).
			Res(map[v1.ResourceName]string{vmafxv1.ResourceSlot: "1"}).Obj())
	}
	ni := framework.NewNodeInfo(pods...)
	capacity := map[v1.ResourceName]string{v1.ResourceCPU: "8", v1.ResourceMemory: "32Gi"}
	if slots >= 0 {
		capacity[vmafxv1.ResourceSlot] = strconv.Itoa(slots)
	}
	ni.SetNode(st.MakeNode().Name(name).Capacity(capacity).Obj())
	return ni
}

// workerPod builds a worker Pod asking for backend (no annotation when empty) and one slot.
func workerPod(backend string) *v1.Pod {
	w := st.MakePod().Namespace("jobs").Name("job-1").SchedulerName(vmafxv1.SchedulerName).
		Res(map[v1.ResourceName]string{vmafxv1.ResourceSlot: "1"})
	if backend != "" {
		w = w.Annotation(vmafxv1.AnnotationBackend, backend)
	}
	return w.Obj()
}

// testPlugin builds the plugin on a hand-fed table.
func testPlugin(args *config.VmafxPlacementArgs, tt *testTable, clk *testingclock.FakeClock) *Placement {
	return newPlacement(args, tt.nodeTable, clk)
}

func ctx(t testing.TB) context.Context {
	_, c := ktesting.NewTestContext(t)
	return c
}
