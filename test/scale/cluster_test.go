package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// heartbeatEvery is the device plugin's heartbeat period.
const heartbeatEvery = 10 * time.Second

// slotsPerNode is what each simulated node offers: a 4-GPU node at one slot per device.
const slotsPerNode = 4

// fakeNodes are the simulated nodes: Node objects with vmafx.dev/slot capacity and their
// VmafxNodes, whose heartbeats the benchmark writes in place of device plugins.
type fakeNodes struct {
	names []string
	// statusBeats writes heartbeats as device plugins before the Leases did, into
	// status.lastHeartbeat (VMAFX_SCALE_HEARTBEAT=status), to compare the two costs.
	statusBeats bool
	// leases holds each node's Lease as last written, renewed with an update as the
	// device plugin renews it.
	leases []*coordinationv1.Lease
}

// heartbeatMode reads VMAFX_SCALE_HEARTBEAT: lease (the default: the device plugin of
// this release) or status (one of the release before, for the cost before the Leases).
func heartbeatMode(tb testing.TB) bool {
	switch v := os.Getenv("VMAFX_SCALE_HEARTBEAT"); v {
	case "", "lease":
		return false
	case "status":
		return true
	default:
		tb.Fatalf("VMAFX_SCALE_HEARTBEAT=%q: want lease or status", v)
		return false
	}
}

var vendors = []vmafxv1.GPUVendor{vmafxv1.VendorNVIDIA, vmafxv1.VendorAMD, vmafxv1.VendorIntel, vmafxv1.VendorCPU}

// createNodes creates n Nodes named scale-nNNNN (kept from an earlier run in the same
// API server) with their VmafxNodes, all with a fresh heartbeat.
func createNodes(tb testing.TB, ctx context.Context, n int) *fakeNodes {
	tb.Helper()
	c := testenv.Client()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: vmafxv1.SystemNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		tb.Fatal(err)
	}
	f := &fakeNodes{names: make([]string, n), statusBeats: heartbeatMode(tb), leases: make([]*coordinationv1.Lease, n)}
	errs := testutil.Parallel(n, func(i int) error {
		name := fmt.Sprintf("scale-n%04d", i)
		f.names[i] = name
		res := corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("64"),
			corev1.ResourceMemory: resource.MustParse("256Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
			vmafxv1.ResourceSlot:  *resource.NewQuantity(slotsPerNode, resource.DecimalSI),
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
			Status: corev1.NodeStatus{Capacity: res, Allocatable: res,
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		}
		if err := c.Create(ctx, node); err != nil {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
		// TaintNodesByCondition taints a new Node not-ready until a node controller sees its
		// kubelet; none runs here, so lift the taint as it would.
		node.Spec.Taints = nil
		if err := c.Update(ctx, node); err != nil {
			return fmt.Errorf("untainting node %s: %w", name, err)
		}
		vn := &vmafxv1.VmafxNode{
			ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: name},
			Spec:       vmafxv1.VmafxNodeSpec{NodeName: name, GPUVendor: vendors[i%len(vendors)], Capacity: slotsPerNode},
		}
		if err := c.Create(ctx, vn); err != nil {
			return fmt.Errorf("creating VmafxNode %s: %w", name, err)
		}
		return f.beat(ctx, i, time.Now())
	})
	if errs != nil {
		tb.Fatal(errs)
	}
	tb.Cleanup(func() { f.delete(tb) })
	return f
}

func (f *fakeNodes) delete(tb testing.TB) {
	ctx := context.Background()
	c := testenv.Client()
	if err := c.DeleteAllOf(ctx, &vmafxv1.VmafxNode{}, client.InNamespace(vmafxv1.SystemNamespace)); err != nil {
		tb.Errorf("deleting VmafxNodes: %v", err)
	}
	// No garbage collector runs to follow the Leases' owners.
	if err := c.DeleteAllOf(ctx, &coordinationv1.Lease{}, client.InNamespace(vmafxv1.SystemNamespace),
		client.MatchingLabels{vmafxv1.LabelComponent: vmafxv1.ComponentNodeHeartbeat}); err != nil {
		tb.Errorf("deleting heartbeat Leases: %v", err)
	}
	if err := c.DeleteAllOf(ctx, &corev1.Node{}); err != nil {
		tb.Errorf("deleting Nodes: %v", err)
	}
}

// heartbeats writes every node's heartbeat every 10 s, as the device plugins do, until ctx ends.
func (f *fakeNodes) heartbeats(tb testing.TB, ctx context.Context) {
	testutil.Every(ctx, heartbeatEvery, func(now time.Time) {
		if err := testutil.Parallel(len(f.names), func(i int) error { return f.beat(ctx, i, now) }); err != nil && ctx.Err() == nil {
			tb.Errorf("heartbeats: %v", err)
		}
	})
}

// beat writes node i's heartbeat as its device plugin does: an update of the node's Lease
// (created the first time), or with statusBeats a status merge patch of lastHeartbeat.
func (f *fakeNodes) beat(ctx context.Context, i int, at time.Time) error {
	node := f.names[i]
	c := testenv.Client()
	if f.statusBeats {
		patch := fmt.Appendf(nil, `{"status":{"lastHeartbeat":%q}}`, at.UTC().Format(time.RFC3339))
		vn := &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: node}}
		if err := c.Status().Patch(ctx, vn, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("heartbeat of %s: %w", node, err)
		}
		return nil
	}
	lease := f.leases[i]
	if lease == nil {
		name, _ := vmafxv1.NodeLeaseName(node)
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: name,
			Labels: map[string]string{vmafxv1.LabelComponent: vmafxv1.ComponentNodeHeartbeat}}}
		lease.Spec.HolderIdentity = &node
		lease.Spec.RenewTime = &metav1.MicroTime{Time: at}
		if err := c.Create(ctx, lease); err != nil {
			return fmt.Errorf("heartbeat Lease of %s: %w", node, err)
		}
		f.leases[i] = lease
		return nil
	}
	lease = lease.DeepCopy()
	lease.Spec.RenewTime = &metav1.MicroTime{Time: at}
	if err := c.Update(ctx, lease); err != nil {
		return fmt.Errorf("heartbeat of %s: %w", node, err)
	}
	f.leases[i] = lease
	return nil
}

// kubelets plays the kubelet of every simulated node: a worker Pod bound to a node is
// marked Running, and runTime later Succeeded with a worker result in its termination
// message, two status writes as a kubelet makes them. It counts the Pods it finished, and
// keeps how long each was Running on the API server (from its Running write to its
// Succeeded write): runTime plus the stand-in's own delays, which a busy machine lengthens.
type kubelets struct {
	finished atomic.Int64
	errs     atomic.Int64
	mu       sync.Mutex
	ran      []time.Duration
}

// ranFor returns the 50th and 90th percentiles and the longest of the Pods' Running times.
func (k *kubelets) ranFor() (p50, p90, most time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.ran) == 0 {
		return 0, 0, 0
	}
	r := slices.Clone(k.ran)
	slices.Sort(r)
	return r[len(r)/2], r[len(r)*9/10], r[len(r)-1]
}

func startKubelets(tb testing.TB, ctx context.Context, ns string, runTime time.Duration) *kubelets {
	tb.Helper()
	cfg := testenv.Config()
	cfg.QPS, cfg.Burst = 5000, 5000
	cs := kubernetes.NewForConfigOrDie(cfg)
	k := &kubelets{}
	var seen sync.Map
	type step struct {
		pod     *corev1.Pod
		done    bool      // false: start it; true: finish it
		started time.Time // when its Running write was stored
	}
	// Each node has its own kubelet: a worker's exit is reported without waiting behind
	// other nodes' Pods starting, so finishes go first.
	work, finish := make(chan step, 100000), make(chan step, 100000)
	onPod := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodPending || pod.DeletionTimestamp != nil {
			return
		}
		if _, dup := seen.LoadOrStore(pod.UID, true); dup {
			return
		}
		work <- step{pod: pod}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = vmafxv1.LabelJob }))
	if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPod, UpdateFunc: func(_, obj any) { onPod(obj) },
	}); err != nil {
		tb.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	result := workerResult()
	for range 16 {
		go func() {
			for {
				var s step
				select {
				case s = <-finish:
				default:
					select {
					case <-ctx.Done():
						return
					case s = <-finish:
					case s = <-work:
					}
				}
				pod, err := setStatus(ctx, cs, s.pod, func(st *corev1.PodStatus) { run(st, s.done, result) })
				switch {
				case err != nil && ctx.Err() == nil:
					k.errs.Add(1)
					tb.Logf("kubelet stand-in: %v", err)
				case err != nil:
				case s.done:
					k.finished.Add(1)
					k.mu.Lock()
					k.ran = append(k.ran, time.Since(s.started))
					k.mu.Unlock()
				default:
					// The worker scores for runTime (the simulated work), then exits.
					started := time.Now()
					time.AfterFunc(runTime, func() {
						select {
						case finish <- step{pod: pod, done: true, started: started}:
						case <-ctx.Done():
						}
					})
				}
			}
		}()
	}
	return k
}

// run sets a Pod's status as the kubelet reports a worker that started, or that finished.
func run(st *corev1.PodStatus, finished bool, result string) {
	now := metav1.Now()
	if st.StartTime == nil {
		st.StartTime = &now
	}
	st.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: *st.StartTime}}
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: *st.StartTime}}
	st.Phase = corev1.PodRunning
	if finished {
		st.Phase = corev1.PodSucceeded
		state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", Message: result, StartedAt: *st.StartTime, FinishedAt: now}}
	}
	st.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", Image: "vmafx-worker:dev", ImageID: "sim", Ready: !finished, State: state}}
}

// setStatus writes a Pod's status as mutate makes it, retrying on conflicts.
func setStatus(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, mutate func(*corev1.PodStatus)) (*corev1.Pod, error) {
	pod = pod.DeepCopy()
	for range 5 {
		mutate(&pod.Status)
		updated, err := cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		if err == nil {
			return updated, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("status of %s: %w", pod.Name, err)
		}
		if pod, err = cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("status of %s: conflicts", pod.Name)
}

// workerResult is a worker's result line, as vmafx-worker writes it on success.
func workerResult() string {
	b, err := json.Marshal(vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Score: 93.5, HarmonicMean: 93.1,
		Min: 90.2, Max: 96.4, Frames: 240, FPS: 120, WallSeconds: 2, Backend: "cpu", RequestedBackend: "cpu",
		Model: "vmaf_v0.6.1", ModelSHA256: "4d5c", KernelVersion: "scale"})
	if err != nil {
		panic(err)
	}
	return string(b)
}
