package placement

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// byNodeName indexes VmafxNodes by spec.nodeName, the Kubernetes Node they describe.
const byNodeName = "spec.nodeName"

// maxClockSkew is how far in the future a heartbeat may lie before the scheduler calls the
// node's clock wrong. A heartbeat within it is taken as written; one beyond it still counts
// as fresh (the agent is evidently alive) but is logged, and its age is measured from the
// moment the scheduler received it, so a node whose clock runs an hour fast still goes
// stale heartbeatStaleAfter after its agent stops, not an hour later.
const maxClockSkew = 5 * time.Second

// nodeFacts is what Filter and Score need to know of one Kubernetes node's VmafxNode,
// reduced when the VmafxNode changes so that reading it per node costs no allocation.
// A nodeFacts is never modified once stored.
type nodeFacts struct {
	// vendor is the VmafxNode's spec.gpuVendor.
	vendor vendorIndex
	// heartbeat is the effective status.lastHeartbeat in Unix nanoseconds (see
	// maxClockSkew), or 0 before the first heartbeat.
	heartbeat int64
	// reported is status.lastHeartbeat as the node wrote it, in Unix nanoseconds.
	reported int64
	// objects counts the VmafxNodes naming this node; more than one is a conflict that
	// Filter refuses to guess about.
	objects int
}

// offers reports whether the node, as these facts describe it, can take a Pod whose backend
// fits the vendors in fits at time now.
func (f *nodeFacts) offers(fits *[numVendors]bool, now, staleAfter int64) bool {
	return f != nil && f.objects == 1 && fits[f.vendor] && f.heartbeat != 0 && now-f.heartbeat <= staleAfter
}

// nodeTable is the plugin's read side of the VmafxNodes in the system namespace: the
// informer's store, indexed by spec.nodeName, and for each Kubernetes node name its
// nodeFacts.
//
// Filter and Score look a node up twice per node per cycle, on up to 16 goroutines. The
// store's own index lookup takes a shared lock and allocates a slice per call. A sync.Map
// allocates nothing but hashes an interface and walks a trie: in the 1000-node throughput
// benchmark its Load was nine tenths of the plugin's CPU time. So the table is a plain map
// behind an atomic pointer, replaced (copied) only when a node name appears or goes, and
// each entry holds its facts behind an atomic pointer of its own, which a heartbeat swaps
// without touching the map. A lookup is one atomic load, one map read and one more atomic
// load: no lock, no allocation, no write to memory shared between cores.
type nodeTable struct {
	indexer cache.Indexer
	// entries maps node names to their entry; the map is never modified once published.
	entries atomic.Pointer[map[string]*nodeEntry]
	// mu serializes writers (the informer's handler is one goroutine, tests are others).
	mu    sync.Mutex
	clock clock.PassiveClock
	// synced reports whether the informer's initial list has reached the table.
	synced func() bool
	// offered, when set, is told of every node that starts to offer a backend something it
	// did not (it appeared, its heartbeat turned fresh, its vendor changed).
	offered func(logger klog.Logger, node string, f *nodeFacts)
	// staleAfter is heartbeatStaleAfter in nanoseconds, to tell when a node starts to offer.
	staleAfter int64
}

// nodeEntry is a node name's slot in the table: its current facts.
type nodeEntry struct {
	facts atomic.Pointer[nodeFacts]
}

func indexByNodeName(obj any) ([]string, error) {
	vn, ok := obj.(*vmafxv1.VmafxNode)
	if !ok {
		return nil, fmt.Errorf("indexing by %s: want *VmafxNode, got %T", byNodeName, obj)
	}
	return []string{vn.Spec.NodeName}, nil
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
	t := &nodeTable{indexer: informer.GetIndexer(), clock: clk, staleAfter: staleAfter.Nanoseconds()}
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
	t.synced = reg.HasSynced
	return t, nil
}

func nodeNameOf(obj any) string {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if vn, ok := obj.(*vmafxv1.VmafxNode); ok {
		return vn.Spec.NodeName
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

// get returns the facts of the Kubernetes node called name, or nil when no VmafxNode
// names it.
func (t *nodeTable) get(name string) *nodeFacts {
	m := t.entries.Load()
	if m == nil {
		return nil
	}
	e := (*m)[name]
	if e == nil {
		return nil
	}
	return e.facts.Load()
}

// set stores the facts of node name; nil removes the node. Only a name that appears or
// goes copies the map (O(nodes), about 15 ms in all for 1000 nodes at start-up); a changed
// heartbeat or vendor only swaps the entry's facts.
func (t *nodeTable) set(name string, f *nodeFacts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var old map[string]*nodeEntry
	if m := t.entries.Load(); m != nil {
		old = *m
	}
	if e, ok := old[name]; ok && f != nil {
		e.facts.Store(f)
		return
	}
	if _, ok := old[name]; !ok && f == nil {
		return
	}
	next := make(map[string]*nodeEntry, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if f == nil {
		delete(next, name)
	} else {
		e := &nodeEntry{}
		e.facts.Store(f)
		next[name] = e
	}
	t.entries.Store(&next)
}

// refresh recomputes the facts of node name from the store, which already holds the
// change being handled (the informer updates its store before it notifies).
func (t *nodeTable) refresh(logger klog.Logger, name string) {
	if name == "" {
		return
	}
	objs, err := t.indexer.ByIndex(byNodeName, name)
	if err != nil || len(objs) == 0 {
		t.set(name, nil)
		return
	}
	old := t.get(name)
	now := t.clock.Now()
	f := &nodeFacts{objects: len(objs)}
	if len(objs) == 1 {
		vn := objs[0].(*vmafxv1.VmafxNode)
		f.vendor = lookupVendor(vn.Spec.GPUVendor)
		if hb := vn.Status.LastHeartbeat; hb != nil {
			f.reported = hb.UnixNano()
			f.heartbeat = f.reported
			if ahead := time.Duration(f.reported - now.UnixNano()); ahead > maxClockSkew {
				switch {
				case old != nil && old.reported == f.reported:
					// The same beat seen again (a resync or another field changed): keep the
					// moment it was first received.
					f.heartbeat = old.heartbeat
				default:
					f.heartbeat = now.UnixNano()
					logger.Info("VmafxNode heartbeat is ahead of the scheduler's clock; counting it as received now",
						"vmafxNode", klog.KObj(vn), "node", name, "ahead", ahead.Round(time.Second))
				}
			}
		}
	}
	t.set(name, f)
	if t.offered != nil && t.synced != nil && t.synced() && startsOffering(old, f, now.UnixNano(), t.staleAfter) {
		t.offered(logger, name, f)
	}
}

// startsOffering reports whether a node whose facts went from old to f now offers a worker
// Pod something it did not: it has become usable (first VmafxNode, first or fresh heartbeat,
// conflict resolved) or usable for another vendor.
func startsOffering(old, f *nodeFacts, now, staleAfter int64) bool {
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
