package placement

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestNodeTableClockSkew(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	tt := newTestTable(t, clk, time.Minute)

	// Within the allowance, a heartbeat from the future is taken as written.
	tt.put(vmafxNode("n1", vmafxv1.VendorNVIDIA, t0.Add(maxClockSkew)))
	if got, want := tt.get("n1").heartbeat, t0.Add(maxClockSkew).UnixNano(); got != want {
		t.Errorf("heartbeat within the skew allowance = %v, want %v", time.Unix(0, got), time.Unix(0, want))
	}

	// Beyond it, the heartbeat counts from when the scheduler received it ...
	ahead := vmafxNode("n1", vmafxv1.VendorNVIDIA, t0.Add(time.Hour))
	tt.put(ahead)
	if got := tt.get("n1").heartbeat; got != t0.UnixNano() {
		t.Errorf("heartbeat an hour ahead counts from %v, want receipt time %v", time.Unix(0, got), t0)
	}
	// ... and the same beat seen again later (a resync, another field changed) does not
	// renew it: a node whose agent died goes stale on time even with a clock an hour fast.
	clk.Step(30 * time.Second)
	tt.put(ahead.DeepCopy())
	if got := tt.get("n1").heartbeat; got != t0.UnixNano() {
		t.Errorf("same beat seen again counts from %v, want the first receipt %v", time.Unix(0, got), t0)
	}
	clk.Step(31 * time.Second)
	f := tt.get("n1")
	if f.offers(&anyVendor, clk.Now().UnixNano(), tt.staleAfter) {
		t.Errorf("node whose fast-clocked agent stopped 61 s ago still offers slots")
	}
	// A new beat from the still-fast clock is fresh again.
	tt.put(vmafxNode("n1", vmafxv1.VendorNVIDIA, t0.Add(time.Hour+10*time.Second)))
	if got := tt.get("n1").heartbeat; got != clk.Now().UnixNano() {
		t.Errorf("new beat ahead counts from %v, want now %v", time.Unix(0, got), clk.Now())
	}
}

// TestNodeTableLeases: a node's heartbeat is its Lease's renewTime or, from a device
// plugin of the previous release, its status.lastHeartbeat, whichever is later; a renewal
// that turns the node fresh is news (offered), a routine one is not, and a Lease of no
// VmafxNode changes nothing.
func TestNodeTableLeases(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	tt := newTestTable(t, clk, time.Minute)
	offered := 0
	tt.offered = func(klog.Logger, string, nodeFacts) { offered++ }
	vn := vmafxNode("n1", vmafxv1.VendorNVIDIA, time.Time{})
	vn.Spec.NodeName = "kube-n1" // the Lease is the VmafxNode's; the table is by Kubernetes node
	tt.put(vn)
	if got := tt.get("kube-n1").heartbeat; got != 0 {
		t.Fatalf("heartbeat before any = %v", time.Unix(0, got))
	}
	tt.renew("n1", t0)
	if got := tt.get("kube-n1").heartbeat; got != t0.UnixNano() || offered != 1 {
		t.Errorf("after the first renewal: heartbeat %v, offered %d times; want %v, once", time.Unix(0, got), offered, t0)
	}
	clk.Step(10 * time.Second)
	tt.renew("n1", clk.Now())
	if got := tt.get("kube-n1").heartbeat; got != clk.Now().UnixNano() || offered != 1 {
		t.Errorf("after a routine renewal: heartbeat %v, offered %d times; want %v, once", time.Unix(0, got), offered, clk.Now())
	}
	// A later status stamp wins; an earlier one does not.
	withStatus := func(at time.Time) *vmafxv1.VmafxNode {
		c := vn.DeepCopy()
		c.Status.LastHeartbeat = &metav1.Time{Time: at}
		return c
	}
	tt.put(withStatus(clk.Now().Add(-time.Minute)))
	if got := tt.get("kube-n1").heartbeat; got != clk.Now().UnixNano() {
		t.Errorf("with an older status stamp: heartbeat %v, want the Lease's %v", time.Unix(0, got), clk.Now())
	}
	tt.put(withStatus(clk.Now().Add(time.Second)))
	if got := tt.get("kube-n1").heartbeat; got != clk.Now().Add(time.Second).UnixNano() {
		t.Errorf("with a newer status stamp: heartbeat %v, want the status's %v", time.Unix(0, got), clk.Now().Add(time.Second))
	}
	// The Lease goes (with its VmafxNode, or by hand): the status stamp is what is left.
	tt.renew("n1", time.Time{})
	tt.put(withStatus(t0))
	if got := tt.get("kube-n1").heartbeat; got != t0.UnixNano() {
		t.Errorf("without the Lease: heartbeat %v, want the status's %v", time.Unix(0, got), t0)
	}
	// A Lease whose VmafxNode does not exist makes no node.
	tt.renew("ghost", clk.Now())
	if f := tt.get("ghost"); f.present {
		t.Errorf("a Lease without a VmafxNode made facts %+v", f)
	}
}

// TestNodeTableNodeNameDefault: a VmafxNode without spec.nodeName (as the operator
// README's node.yaml writes it) describes the Kubernetes Node of its own name.
func TestNodeTableNodeNameDefault(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	vn := vmafxNode("gpu-node-0", vmafxv1.VendorNVIDIA, t0)
	vn.Spec.NodeName = ""
	tt := newTestTable(t, clk, time.Minute, vn)
	if f := tt.get("gpu-node-0"); !f.present || f.vendor != lookupVendor(vmafxv1.VendorNVIDIA) || f.heartbeat != t0.UnixNano() {
		t.Errorf("node gpu-node-0: %+v; want the facts of the VmafxNode named after it", f)
	}
	if f := tt.get(""); f.present {
		t.Errorf("the empty node name has facts: %+v", f)
	}
	ev, err := vmafxNodeFactsOf(asEvent(t, vn))
	if err != nil || ev.nodeName != "gpu-node-0" {
		t.Errorf("event facts %+v (%v); want node gpu-node-0", ev, err)
	}
}

func TestNodeTableConflictsAndDeletes(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	first := vmafxNode("n1", vmafxv1.VendorNVIDIA, t0)
	second := vmafxNode("n1", vmafxv1.VendorAMD, t0)
	second.Name = "n1-again"
	tt := newTestTable(t, clk, time.Minute, first, second)
	if f := tt.get("n1"); !f.present || !f.conflict {
		t.Fatalf("n1 named by two VmafxNodes: %+v, want a conflict", f)
	}
	tt.remove(second)
	if f := tt.get("n1"); !f.present || f.conflict || f.vendor != lookupVendor(vmafxv1.VendorNVIDIA) {
		t.Errorf("after the duplicate is deleted: %+v, want one nvidia VmafxNode", f)
	}
	tt.remove(first)
	if f := tt.get("n1"); f.present {
		t.Errorf("after the last VmafxNode is deleted: %+v, want none", f)
	}
}

func TestNodeTableOffered(t *testing.T) {
	type change struct {
		step time.Duration // clock advance before the change
		put  *vmafxv1.VmafxNode
		del  *vmafxv1.VmafxNode
	}
	nv := func(hb time.Duration) *vmafxv1.VmafxNode { return vmafxNode("n1", vmafxv1.VendorNVIDIA, t0.Add(hb)) }
	tests := map[string]struct {
		changes []change
		want    []bool // whether each change made the node start offering
	}{
		"created fresh":          {changes: []change{{put: nv(0)}}, want: []bool{true}},
		"created without a beat": {changes: []change{{put: vmafxNode("n1", vmafxv1.VendorNVIDIA, time.Time{})}, {put: nv(0)}}, want: []bool{false, true}},
		"created stale":          {changes: []change{{put: nv(-2 * time.Minute)}}, want: []bool{false}},
		"routine heartbeats": {
			changes: []change{{put: nv(0)}, {step: 10 * time.Second, put: nv(10 * time.Second)}, {step: 10 * time.Second, put: nv(20 * time.Second)}},
			want:    []bool{true, false, false},
		},
		"fresh again after stale": {
			changes: []change{{put: nv(0)}, {step: 2 * time.Minute, put: nv(2 * time.Minute)}},
			want:    []bool{true, true},
		},
		"vendor changed": {
			changes: []change{{put: nv(0)}, {put: vmafxNode("n1", vmafxv1.VendorAMD, t0)}},
			want:    []bool{true, true},
		},
		"unknown vendor offers nothing": {
			changes: []change{{put: vmafxNode("n1", "matrox", t0)}},
			want:    []bool{false},
		},
		"deleted": {changes: []change{{put: nv(0)}, {del: nv(0)}}, want: []bool{true, false}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			tt := newTestTable(t, clk, time.Minute)
			var got []bool
			offered := false
			tt.offered = func(klog.Logger, string, nodeFacts) { offered = true }
			for _, c := range tc.changes {
				clk.Step(c.step)
				offered = false
				if c.put != nil {
					tt.put(c.put)
				} else {
					tt.remove(c.del)
				}
				got = append(got, offered)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("offered per change (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeTableNotOfferedBeforeSync(t *testing.T) {
	// The informer's initial list is not news: no Pod can have been rejected before it.
	clk := testingclock.NewFakeClock(t0)
	tt := newTestTable(t, clk, time.Minute)
	tt.synced = func() bool { return false }
	tt.offered = func(klog.Logger, string, nodeFacts) { t.Errorf("offered before the initial list was handled") }
	tt.put(vmafxNode("n1", vmafxv1.VendorNVIDIA, t0))
}

func TestNodeTableConcurrentReadsAndWrites(t *testing.T) {
	// Run with -race: Filter and Score read the table on many goroutines while the
	// informer's handler writes it.
	clk := testingclock.NewFakeClock(t0)
	tt := newTestTable(t, clk, time.Minute)
	done := make(chan struct{})
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, n := range []string{"a", "b", "c"} {
					if f := tt.get(n); f.present && (f.conflict || f.vendor != lookupVendor(vmafxv1.VendorNVIDIA)) {
						t.Errorf("read torn facts %+v", f)
					}
				}
			}
		}()
	}
	for i := range 200 {
		for _, n := range []string{"a", "b", "c"} {
			vn := vmafxNode(n, vmafxv1.VendorNVIDIA, t0.Add(time.Duration(i)*time.Second))
			if i%50 == 49 {
				tt.remove(vn)
			} else {
				tt.put(vn)
			}
		}
	}
	close(done)
}

func TestNodeFactsPack(t *testing.T) {
	for _, f := range []nodeFacts{
		{},
		{present: true},
		{present: true, vendor: lookupVendor(vmafxv1.VendorIntel), heartbeat: t0.UnixNano()},
		{present: true, conflict: true, vendor: unknownVendor, heartbeat: t0.Add(123 * time.Millisecond).UnixNano()},
		{present: true, vendor: lookupVendor(vmafxv1.VendorCPU), heartbeat: time.Date(2260, 12, 31, 23, 59, 59, 0, time.UTC).UnixNano()},
	} {
		if got := unpack(f.pack()); got != f {
			t.Errorf("unpack(pack(%+v)) = %+v", f, got)
		}
	}
	// Below the millisecond is dropped, toward the past: a heartbeat is never younger than
	// written.
	f := nodeFacts{present: true, heartbeat: t0.Add(-time.Nanosecond).UnixNano()}
	if got := unpack(f.pack()).heartbeat; got != t0.Add(-time.Millisecond).UnixNano() {
		t.Errorf("heartbeat 1 ns before t0 packs to %v", time.Unix(0, got).Sub(t0))
	}
}

func TestNodeTableDropsRemovedSlots(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	a, b := vmafxNode("a", vmafxv1.VendorNVIDIA, t0), vmafxNode("b", vmafxv1.VendorAMD, t0)
	tt := newTestTable(t, clk, time.Minute, a, b)
	tt.remove(a)
	if n := len(tt.snap.Load().slots); n != 2 {
		t.Fatalf("slots after a removal = %d, want 2 (kept until the next new node)", n)
	}
	tt.put(vmafxNode("c", vmafxv1.VendorIntel, t0))
	s := tt.snap.Load()
	if _, ok := s.slots["a"]; ok || len(s.slots) != 2 {
		t.Errorf("slots after adding c = %v, want b and c only", s.slots)
	}
	for name, want := range map[string]vmafxv1.GPUVendor{"b": vmafxv1.VendorAMD, "c": vmafxv1.VendorIntel} {
		if f := tt.get(name); !f.present || f.vendor != lookupVendor(want) || f.heartbeat != t0.UnixNano() {
			t.Errorf("%s after the rebuild: %+v", name, f)
		}
	}
	if f := tt.get("a"); f.present {
		t.Errorf("a after its removal: %+v", f)
	}
}

func TestInfoIndex(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	tt := newTestTable(t, clk, time.Minute, vmafxNode("a", vmafxv1.VendorNVIDIA, t0))
	a, b := nodeInfo("a", 4, 0), nodeInfo("b", 4, 0)
	nodes := []fwk.NodeInfo{a, b}
	idx := tt.index(nil, nodes)
	if tt.index(idx, nodes) != idx {
		t.Errorf("index rebuilt for the same node list and table")
	}
	if f := tt.lookup(idx, a); !f.present || f.vendor != lookupVendor(vmafxv1.VendorNVIDIA) {
		t.Errorf("a through the index: %+v", f)
	}
	if f := tt.lookup(idx, b); f.present {
		t.Errorf("b (no VmafxNode) through the index: %+v", f)
	}
	// A heartbeat is seen through the index at once: it swaps the word the index points at.
	tt.put(vmafxNode("a", vmafxv1.VendorNVIDIA, t0.Add(time.Second)))
	if f := tt.lookup(idx, a); f.heartbeat != t0.Add(time.Second).UnixNano() {
		t.Errorf("a after a heartbeat: %v", time.Unix(0, f.heartbeat))
	}
	// A node gaining a VmafxNode makes a new table snapshot: the old index no longer
	// applies and lookups fall back to the name until PreFilter rebuilds it.
	tt.put(vmafxNode("b", vmafxv1.VendorAMD, t0))
	if f := tt.lookup(idx, b); !f.present || f.vendor != lookupVendor(vmafxv1.VendorAMD) {
		t.Errorf("b after its VmafxNode appeared, stale index: %+v", f)
	}
	if idx2 := tt.index(idx, nodes); idx2 == idx {
		t.Errorf("index not rebuilt after the table changed")
	} else if f := tt.lookup(idx2, b); !f.present {
		t.Errorf("b through the rebuilt index: %+v", f)
	}
	// A copy of a NodeInfo (as preemption makes) is found by name.
	if f := tt.lookup(idx, a.Snapshot()); !f.present {
		t.Errorf("copy of a: %+v", f)
	}
}
