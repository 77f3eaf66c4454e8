package placement

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	coordinationinformers "k8s.io/client-go/informers/coordination/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// byNodeName indexes VmafxNodes by the Kubernetes Node they describe: spec.nodeName, or
// the VmafxNode's own name when that is unset.
const byNodeName = "spec.nodeName"

// maxClockSkew is how far in the future a heartbeat may lie before the scheduler calls the
// node's clock wrong. A heartbeat within it is taken as written; one beyond it still counts
// as fresh (the agent is evidently alive) but is logged, and its age is measured from the
// moment the scheduler received it, so a node whose clock runs an hour fast still goes
// stale heartbeatStaleAfter after its agent stops, not an hour later.
const maxClockSkew = 5 * time.Second

// nodeFacts is what Filter and Score need to know of one Kubernetes node's VmafxNode. The
// zero value means no VmafxNode names the node.
type nodeFacts struct {
	// present says some VmafxNode names the node.
	present bool
	// conflict says more than one does, which Filter refuses to guess about.
	conflict bool
	// vendor is the VmafxNode's spec.gpuVendor.
	vendor vendorIndex
	// heartbeat is the effective heartbeat (see maxClockSkew) in Unix nanoseconds, kept to
	// the millisecond, or 0 before the first heartbeat: the later of the node's Lease's
	// renewTime and its status.lastHeartbeat (vmafxv1.NodeHeartbeat), which a device plugin
	// of the release before the Leases still writes.
	heartbeat int64
}

// offers reports whether the node, as these facts describe it, can take a Pod whose backend
// fits the vendors in fits at time now.
func (f nodeFacts) offers(fits *[numVendors]bool, now, staleAfter int64) bool {
	return f.present && !f.conflict && fits[f.vendor] && f.heartbeat != 0 && now-f.heartbeat <= staleAfter
}

// A nodeFacts packs into one word, so the table can hold it in an atomic.Uint64: bits 0-3
// the vendor, bit 4 conflict, bit 5 present, bits 8-63 the heartbeat in Unix milliseconds.
const (
	vendorMask     = 0xf
	conflictBit    = 1 << 4
	presentBit     = 1 << 5
	heartbeatShift = 8
)

func (f nodeFacts) pack() uint64 {
	if !f.present {
		return 0
	}
	w := uint64(f.vendor)&vendorMask | presentBit
	if f.conflict {
		w |= conflictBit
	}
	if f.heartbeat > 0 {
		w |= uint64(f.heartbeat/int64(time.Millisecond)) << heartbeatShift
	}
	return w
}

func unpack(w uint64) nodeFacts {
	if w&presentBit == 0 {
		return nodeFacts{}
	}
	return nodeFacts{
		present:   true,
		conflict:  w&conflictBit != 0,
		vendor:    vendorIndex(w & vendorMask),
		heartbeat: int64(w>>heartbeatShift) * int64(time.Millisecond),
	}
}

// nodeTable is the plugin's read side of the VmafxNodes in the system namespace: the
// informer's store, indexed by spec.nodeName, and for each Kubernetes node name its
// nodeFacts.
//
// Filter and Score look a node up twice per node per cycle, on up to 16 goroutines, between
// the other plugins' work, so the lookup must be cheap with a cold cache. The store's own
// index lookup takes a shared lock and allocates a slice per call; a sync.Map hashes an
// interface and walks a trie, and in the 1000-node throughput benchmark its Load took nine
// tenths of the plugin's CPU time. So the table is a snapshot: a map from node name to a
// slot, whose keys share one contiguous string, and the slots' packed facts in one slice of
// atomic words. A heartbeat or vendor change stores one word; only a node name the
// snapshot lacks makes a new one. A lookup is an atomic load, a map read over compact keys
// and one more atomic load: no lock, no allocation, no write to memory that cores share.
type nodeTable struct {
	indexer cache.Indexer
	// leases is the store of the node heartbeat Leases of the system namespace; nil in
	// tests that give every node a status heartbeat.
	leases cache.Store
	snap   atomic.Pointer[tableSnapshot]
	// mu serializes writers (the informer's handler is one goroutine, tests are others) and
	// guards reported.
	mu sync.Mutex
	// reported is each node's heartbeat as written, in Unix nanoseconds, to tell
	// a new beat from the same one seen again (see maxClockSkew).
	reported map[string]int64
	clock    clock.PassiveClock
	// synced reports whether the informer's initial list has reached the table.
	synced func() bool
	// offered, when set, is told of every node that starts to offer a backend something it
	// did not (it appeared, its heartbeat turned fresh, its vendor changed).
	offered func(logger klog.Logger, node string, f nodeFacts)
	// staleAfter is heartbeatStaleAfter in nanoseconds, to tell when a node starts to offer.
	staleAfter int64
}

// tableSnapshot is never modified once published, but for storing into words.
type tableSnapshot struct {
	slots map[string]int32
	words []atomic.Uint64
}

func indexByNodeName(obj any) ([]string, error) {
	vn, ok := obj.(*vmafxv1.VmafxNode)
	if !ok {
		return nil, fmt.Errorf("indexing by %s: want *VmafxNode, got %T", byNodeName, obj)
	}
	return []string{vn.KubernetesNodeName()}, nil
}

// newNodeTable builds the VmafxNode informer from the scheduler's client config and
// registers it in the scheduler's informer factory, which starts it with the others and
// waits for it to sync before the scheduler places any Pod.
func newNodeTable(logger klog.Logger, cfg *rest.Config, factory informers.SharedInformerFactory, clk clock.PassiveClock, staleAfter time.Duration) (*nodeTable, error) {
	scheme := runtime.NewScheme()
	if err := vmafxv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	// kube-scheduler talks protobuf to the API server; custom resources speak only JSON.
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	cfg.GroupVersion = &vmafxv1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the VmafxNode client: %w", err)
	}
	informer := factory.InformerFor(&vmafxv1.VmafxNode{}, func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
		lw := cache.NewListWatchFromClient(client, "vmafxnodes", vmafxv1.SystemNamespace, fields.Everything())
		return cache.NewSharedIndexInformer(lw, &vmafxv1.VmafxNode{}, 0, cache.Indexers{byNodeName: indexByNodeName})
	})
	// The node heartbeat Leases of the system namespace only: not the leader-election Leases
	// there, nor the kubelets' Node Leases, each renewed every 10 s. The kube-scheduler
	// itself uses no Lease informer, so this filtered one under the Lease type in the
	// shared factory serves no one else.
	leases := factory.InformerFor(&coordinationv1.Lease{}, func(cs kubernetes.Interface, _ time.Duration) cache.SharedIndexInformer {
		return coordinationinformers.NewFilteredLeaseInformer(cs, vmafxv1.SystemNamespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
			o.LabelSelector = labels.SelectorFromSet(labels.Set{vmafxv1.LabelComponent: vmafxv1.ComponentNodeHeartbeat}).String()
		})
	})
	t := &nodeTable{indexer: informer.GetIndexer(), leases: leases.GetStore(), clock: clk, staleAfter: staleAfter.Nanoseconds()}
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { t.refresh(logger, nodeNameOf(obj)) },
		UpdateFunc: func(oldObj, newObj any) {
			oldName, newName := nodeNameOf(oldObj), nodeNameOf(newObj)
			if oldName != newName {
				t.refresh(logger, oldName)
			}
			t.refresh(logger, newName)
		},
		DeleteFunc: func(obj any) { t.refresh(logger, nodeNameOf(obj)) },
	})
	if err != nil {
		return nil, err
	}
	onLease := func(obj any) { t.refresh(logger, t.nodeNameOfLease(obj)) }
	leaseReg, err := leases.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onLease,
		UpdateFunc: func(_, newObj any) { onLease(newObj) },
		DeleteFunc: onLease,
	})
	if err != nil {
		return nil, err
	}
	t.synced = func() bool { return reg.HasSynced() && leaseReg.HasSynced() }
	return t, nil
}

// nodeNameOfLease returns the Kubernetes node whose heartbeat the Lease is, through its
// VmafxNode; "" when no VmafxNode has the Lease's name.
func (t *nodeTable) nodeNameOfLease(obj any) string {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	lease, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return ""
	}
	node, ok := vmafxv1.NodeOfLease(lease.Name)
	if !ok {
		return ""
	}
	vn, exists, err := t.indexer.GetByKey(lease.Namespace + "/" + node)
	if err != nil || !exists {
		return ""
	}
	return nodeNameOf(vn)
}

// leaseOf returns the heartbeat Lease of vn, nil when there is none.
func (t *nodeTable) leaseOf(vn *vmafxv1.VmafxNode) *coordinationv1.Lease {
	name, ok := vmafxv1.NodeLeaseName(vn.Name)
	if t.leases == nil || !ok {
		return nil
	}
	obj, exists, err := t.leases.GetByKey(vn.Namespace + "/" + name)
	if err != nil || !exists {
		return nil
	}
	lease, _ := obj.(*coordinationv1.Lease)
	return lease
}

func nodeNameOf(obj any) string {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if vn, ok := obj.(*vmafxv1.VmafxNode); ok {
		return vn.KubernetesNodeName()
	}
	return ""
}

// maxSyncWait bounds how long PreFilter waits for the table to catch up with the informer.
// The scheduler starts placing Pods once the informers' stores have synced, but this table
// is filled by an event handler that runs just behind the store: at start-up, the first
// cycles can come a few milliseconds early.
const maxSyncWait = 5 * time.Second

// waitSynced reports whether the informer's initial list has reached the table, waiting up
// to maxSyncWait for it. Once synced it returns at once.
func (t *nodeTable) waitSynced(ctx context.Context) bool {
	if t.synced == nil || t.synced() {
		return true
	}
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, maxSyncWait, true, func(context.Context) (bool, error) {
		return t.synced(), nil
	})
	return err == nil
}

// get returns the facts of the Kubernetes node called name.
func (t *nodeTable) get(name string) nodeFacts {
	if w := t.snap.Load().word(name); w != nil {
		return unpack(w.Load())
	}
	return nodeFacts{}
}

// infoIndex finds a node's facts from the NodeInfo the framework hands Filter and Score,
// without reading the node's name. The scheduler keeps one NodeInfo per node in its
// snapshot and updates it in place, so its pointer is a stable key: hashing a pointer
// touches no memory, while hashing the name reads the Node object, which in the 1000-node
// benchmark missed the cache often enough to make the name lookup most of the plugin's
// time. PreFilter rebuilds the index when the snapshot's node list or the table snapshot
// changes; a NodeInfo it lacks (a copy made for preemption, a node just added) falls back
// to the name. A NodeInfo always names the same node, and the index keeps the ones it
// holds alive, so an entry can be missing but never wrong.
type infoIndex struct {
	table *tableSnapshot
	// list is the node list the index was built from: its first element and length.
	first fwk.NodeInfo
	n     int
	words map[*framework.NodeInfo]*atomic.Uint64 // nil: the node has no slot
}

// index returns an index of nodes over the current table snapshot, reusing last if it
// still fits.
func (t *nodeTable) index(last *infoIndex, nodes []fwk.NodeInfo) *infoIndex {
	table := t.snap.Load()
	if len(nodes) == 0 || (last != nil && last.table == table && last.n == len(nodes) && last.first == nodes[0]) {
		return last
	}
	idx := &infoIndex{table: table, first: nodes[0], n: len(nodes), words: make(map[*framework.NodeInfo]*atomic.Uint64, len(nodes))}
	for _, ni := range nodes {
		if p, ok := ni.(*framework.NodeInfo); ok && ni.Node() != nil {
			idx.words[p] = table.word(ni.Node().Name)
		}
	}
	return idx
}

// lookup returns the facts of the node of nodeInfo, through idx when it covers the node
// and still matches the table.
func (t *nodeTable) lookup(idx *infoIndex, nodeInfo fwk.NodeInfo) nodeFacts {
	if idx != nil && idx.table == t.snap.Load() {
		if p, ok := nodeInfo.(*framework.NodeInfo); ok {
			if w, ok := idx.words[p]; ok {
				if w == nil {
					return nodeFacts{}
				}
				return unpack(w.Load())
			}
		}
	}
	return t.get(nodeInfo.Node().Name)
}

// word returns where the facts of node name live in this snapshot, or nil if nowhere.
func (s *tableSnapshot) word(name string) *atomic.Uint64 {
	if s == nil {
		return nil
	}
	i, ok := s.slots[name]
	if !ok {
		return nil
	}
	return &s.words[i]
}

// set stores the facts of node name (zero facts remove it). Only a name the snapshot has no
// slot for makes a new snapshot, dropping the slots of removed nodes on the way: O(nodes)
// per new node, so about 25 ms in all as 1000 nodes arrive at start-up.
func (t *nodeTable) set(name string, f nodeFacts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.snap.Load()
	if old != nil {
		if i, ok := old.slots[name]; ok {
			old.words[i].Store(f.pack())
			return
		}
	}
	if !f.present {
		return
	}
	type slot struct {
		name string
		word uint64
	}
	live := []slot{{name, f.pack()}}
	if old != nil {
		for n, i := range old.slots {
			if w := old.words[i].Load(); w != 0 {
				live = append(live, slot{n, w})
			}
		}
	}
	var keys strings.Builder
	for _, l := range live {
		keys.WriteString(l.name)
	}
	arena := keys.String()
	next := &tableSnapshot{slots: make(map[string]int32, len(live)), words: make([]atomic.Uint64, len(live))}
	for i, l := range live {
		next.slots[arena[:len(l.name)]] = int32(i)
		arena = arena[len(l.name):]
		next.words[i].Store(l.word)
	}
	t.snap.Store(next)
}

// refresh recomputes the facts of node name from the store, which already holds the
// change being handled (the informer updates its store before it notifies).
func (t *nodeTable) refresh(logger klog.Logger, name string) {
	if name == "" {
		return
	}
	old := t.get(name)
	now := t.clock.Now()
	var f nodeFacts
	objs, err := t.indexer.ByIndex(byNodeName, name)
	if err == nil && len(objs) > 0 {
		f = nodeFacts{present: true, conflict: len(objs) > 1}
	}
	if len(objs) == 1 {
		vn := objs[0].(*vmafxv1.VmafxNode)
		f.vendor = lookupVendor(vn.Spec.GPUVendor)
		f.heartbeat = t.heartbeat(logger, vn, name, now, old)
	}
	t.set(name, f)
	if t.offered != nil && t.synced != nil && t.synced() && startsOffering(old, f, now.UnixNano(), t.staleAfter) {
		t.offered(logger, name, f)
	}
}

// heartbeat returns the effective heartbeat of vn in Unix nanoseconds: as written, unless
// it lies beyond maxClockSkew in the future, in which case it counts from when the
// scheduler first received that beat.
func (t *nodeTable) heartbeat(logger klog.Logger, vn *vmafxv1.VmafxNode, name string, now time.Time, old nodeFacts) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reported == nil {
		t.reported = map[string]int64{}
	}
	hb := vmafxv1.NodeHeartbeat(vn, t.leaseOf(vn))
	if hb.IsZero() {
		delete(t.reported, name)
		return 0
	}
	reported := hb.UnixNano()
	seenBefore := t.reported[name] == reported
	t.reported[name] = reported
	ahead := time.Duration(reported - now.UnixNano())
	switch {
	case ahead <= maxClockSkew:
		return reported
	case seenBefore && old.heartbeat != 0:
		// The same beat seen again (a resync, or another field changed): keep the moment it
		// was first received.
		return old.heartbeat
	}
	logger.Info("VmafxNode heartbeat is ahead of the scheduler's clock; counting it as received now",
		"vmafxNode", klog.KObj(vn), "node", name, "ahead", ahead.Round(time.Second))
	return now.UnixNano()
}

// startsOffering reports whether a node whose facts went from old to f now offers a worker
// Pod something it did not: it has become usable (first VmafxNode, first or fresh heartbeat,
// conflict resolved) or usable for another vendor.
func startsOffering(old, f nodeFacts, now, staleAfter int64) bool {
	if f.vendor == unknownVendor || !f.offers(&anyVendor, now, staleAfter) {
		return false
	}
	return !old.offers(&anyVendor, now, staleAfter) || old.vendor != f.vendor
}

// anyVendor fits every vendor, for asking whether a node offers anything at all.
var anyVendor = func() (all [numVendors]bool) {
	for v := range all {
		all[v] = true
	}
	return all
}()
