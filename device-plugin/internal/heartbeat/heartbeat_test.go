package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus/testutil"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/metrics"
)

var now = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := vmafxv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := coordinationv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func options(clk *testingclock.FakeClock) Options {
	return Options{
		Namespace: "vmafx-system", NodeName: "node-1", Interval: 10 * time.Second,
		Spec:   vmafxv1.VmafxNodeSpec{GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 8, Image: "vmafx-worker:dev"},
		Device: "2x nvidia (10de:2684)", Clock: clk,
	}
}

func fixed(c Counts) func(context.Context) Counts {
	return func(context.Context) Counts { return c }
}

func get(t *testing.T, c client.Client) vmafxv1.VmafxNode {
	t.Helper()
	var n vmafxv1.VmafxNode
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "vmafx-system", Name: "node-1"}, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// assignUIDs gives each created object a UID, as the API server does and the fake
// client does not.
func assignUIDs() interceptor.Funcs {
	var n atomic.Int32
	return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		obj.SetUID(types.UID(fmt.Sprintf("uid-%d", n.Add(1))))
		return c.Create(ctx, obj, opts...)
	}}
}

var ignoreMeta = cmpopts.IgnoreFields(vmafxv1.VmafxNode{}, "TypeMeta", "ObjectMeta")

func getLease(t *testing.T, c client.Client) *coordinationv1.Lease {
	t.Helper()
	var l coordinationv1.Lease
	err := c.Get(context.Background(), client.ObjectKey{Namespace: "vmafx-system", Name: "vmafx-node-node-1"}, &l)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return &l
}

func renewTime(l *coordinationv1.Lease) time.Time {
	if l == nil || l.Spec.RenewTime == nil {
		return time.Time{}
	}
	return l.Spec.RenewTime.Time
}

func TestBeat(t *testing.T) {
	operatorStatus := vmafxv1.VmafxNodeStatus{
		Healthy: true, Jobs: 3, ObservedGeneration: 2,
		Conditions: []metav1.Condition{{Type: vmafxv1.NodeReady, Status: metav1.ConditionTrue, Reason: "HeartbeatFresh", LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}},
	}
	tests := []struct {
		name     string
		existing *vmafxv1.VmafxNode
		counts   Counts
		want     vmafxv1.VmafxNode
	}{
		{
			name:   "created when missing",
			counts: Counts{Total: 8, Healthy: 8, Allocated: 1, AllocatedKnown: true},
			want: vmafxv1.VmafxNode{
				Spec:   vmafxv1.VmafxNodeSpec{NodeName: "node-1", GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 8, Image: "vmafx-worker:dev"},
				Status: vmafxv1.VmafxNodeStatus{Device: "2x nvidia (10de:2684)", Slots: &vmafxv1.SlotCounts{Total: 8, Healthy: 8, Allocated: 1}},
			},
		},
		{
			name: "operator's status fields are kept",
			existing: &vmafxv1.VmafxNode{
				Spec:   vmafxv1.VmafxNodeSpec{NodeName: "node-1", GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 8, Image: "vmafx-worker:dev"},
				Status: operatorStatus,
			},
			counts: Counts{Total: 8, Healthy: 4, Allocated: 2, AllocatedKnown: true},
			want: vmafxv1.VmafxNode{
				Spec: vmafxv1.VmafxNodeSpec{NodeName: "node-1", GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 8, Image: "vmafx-worker:dev"},
				Status: func() vmafxv1.VmafxNodeStatus {
					s := *operatorStatus.DeepCopy()
					s.Device, s.Slots = "2x nvidia (10de:2684)", &vmafxv1.SlotCounts{Total: 8, Healthy: 4, Allocated: 2}
					return s
				}(),
			},
		},
		{
			name: "zero healthy is written, unknown allocated is kept",
			existing: &vmafxv1.VmafxNode{
				Spec:   vmafxv1.VmafxNodeSpec{NodeName: "node-1", GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 8, Image: "vmafx-worker:dev"},
				Status: vmafxv1.VmafxNodeStatus{Slots: &vmafxv1.SlotCounts{Total: 8, Healthy: 8, Allocated: 5}},
			},
			counts: Counts{Total: 8, Healthy: 0},
			want: vmafxv1.VmafxNode{
				Spec:   vmafxv1.VmafxNodeSpec{NodeName: "node-1", GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 8, Image: "vmafx-worker:dev"},
				Status: vmafxv1.VmafxNodeStatus{Device: "2x nvidia (10de:2684)", Slots: &vmafxv1.SlotCounts{Total: 8, Healthy: 0, Allocated: 5}},
			},
		},
		{
			name: "spec brought in line with discovery",
			existing: &vmafxv1.VmafxNode{
				Spec: vmafxv1.VmafxNodeSpec{NodeName: "node-1", GPUVendor: vmafxv1.VendorCPU, Capacity: 1, Image: "old"},
			},
			counts: Counts{Total: 8, Healthy: 8, AllocatedKnown: true},
			want: vmafxv1.VmafxNode{
				Spec:   vmafxv1.VmafxNodeSpec{NodeName: "node-1", GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 8, Image: "vmafx-worker:dev"},
				Status: vmafxv1.VmafxNodeStatus{Device: "2x nvidia (10de:2684)", Slots: &vmafxv1.SlotCounts{Total: 8, Healthy: 8}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			b := fake.NewClientBuilder().WithScheme(scheme(t)).WithStatusSubresource(&vmafxv1.VmafxNode{})
			if tc.existing != nil {
				tc.existing.Name, tc.existing.Namespace, tc.existing.UID = "node-1", "vmafx-system", "uid-existing"
				// An earlier release's VmafxNode has no vendor label, or a stale one.
				tc.existing.Labels = map[string]string{"team": "video"}
				if tc.existing.Spec.GPUVendor == vmafxv1.VendorCPU {
					tc.existing.Labels[vmafxv1.LabelGPUVendor] = "cpu"
				}
				b = b.WithObjects(tc.existing)
			}
			c := b.WithInterceptorFuncs(assignUIDs()).Build()
			h := New(c, fixed(tc.counts), options(testingclock.NewFakeClock(now)))
			if err := h.Beat(ctx); err != nil {
				t.Fatalf("Beat: %v", err)
			}
			node := get(t, c)
			if diff := cmp.Diff(tc.want, node, ignoreMeta); diff != "" {
				t.Errorf("VmafxNode (-want +got):\n%s", diff)
			}
			// The vendor label follows discovery; a user's own labels stay.
			wantLabels := map[string]string{vmafxv1.LabelGPUVendor: "nvidia"}
			if tc.existing != nil {
				wantLabels["team"] = "video"
			}
			if diff := cmp.Diff(wantLabels, node.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			lease := getLease(t, c)
			if lease == nil {
				t.Fatal("no Lease")
			}
			holder, seconds := "node-1", int32(60)
			wantLease := coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds,
				AcquireTime: &metav1.MicroTime{Time: now}, RenewTime: &metav1.MicroTime{Time: now}}
			if diff := cmp.Diff(wantLease, lease.Spec); diff != "" {
				t.Errorf("Lease spec (-want +got):\n%s", diff)
			}
			if lease.Labels[vmafxv1.LabelComponent] != vmafxv1.ComponentNodeHeartbeat {
				t.Errorf("Lease labels %v", lease.Labels)
			}
			if len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != node.UID || lease.OwnerReferences[0].Kind != "VmafxNode" {
				t.Errorf("Lease owners %+v; want the VmafxNode %s", lease.OwnerReferences, node.UID)
			}
		})
	}
}

// TestBeatRecreatesADeletedNode: the VmafxNode and, as the garbage collector deletes it
// with its owner, its Lease are deleted; the next beat makes both again.
func TestBeatRecreatesADeletedNode(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithStatusSubresource(&vmafxv1.VmafxNode{}).WithInterceptorFuncs(assignUIDs()).Build()
	clk := testingclock.NewFakeClock(now)
	h := New(c, fixed(Counts{Total: 8, Healthy: 8}), options(clk))
	if err := h.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	n := get(t, c)
	if err := c.Delete(ctx, &n); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, getLease(t, c)); err != nil {
		t.Fatal(err)
	}
	clk.Step(10 * time.Second)
	if err := h.Beat(ctx); err != nil {
		t.Fatalf("Beat after deletion: %v", err)
	}
	again := get(t, c)
	if again.Status.Slots == nil || again.Status.Device == "" {
		t.Errorf("re-created VmafxNode without the plugin's status: %+v", again.Status)
	}
	lease := getLease(t, c)
	if got := renewTime(lease); !got.Equal(now.Add(10 * time.Second)) {
		t.Errorf("renewTime = %v, want %v", got, now.Add(10*time.Second))
	}
	if len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != again.UID {
		t.Errorf("Lease owners %+v; want the new VmafxNode %s", lease.OwnerReferences, again.UID)
	}
}

// TestBeatWritesStatusOnlyOnChange: a steady node's beats renew the Lease and leave the
// VmafxNode alone; a change in what the plugin reports is written at the next beat, and
// the status is written anyway once the report period has passed.
func TestBeatWritesStatusOnlyOnChange(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	var statusPatches atomic.Int32
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithStatusSubresource(&vmafxv1.VmafxNode{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				statusPatches.Add(1)
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	clk := testingclock.NewFakeClock(now)
	counts := Counts{Total: 8, Healthy: 8, Allocated: 1, AllocatedKnown: true}
	opts := options(clk)
	opts.StatusReportPeriod = 5 * time.Minute
	h := New(c, func(context.Context) Counts { return counts }, opts)
	beat := func(wantPatches int32, what string) {
		t.Helper()
		clk.Step(10 * time.Second)
		if err := h.Beat(ctx); err != nil {
			t.Fatal(err)
		}
		if got := renewTime(getLease(t, c)); !got.Equal(clk.Now()) {
			t.Errorf("%s: renewTime %v, want %v", what, got, clk.Now())
		}
		if got := statusPatches.Load(); got != wantPatches {
			t.Errorf("%s: %d status patches in all, want %d", what, got, wantPatches)
		}
	}
	beat(1, "first beat")
	beat(1, "steady")
	beat(1, "steady again")
	counts.Healthy = 4
	beat(2, "a device lost")
	if got := get(t, c).Status.Slots; got == nil || got.Healthy != 4 {
		t.Errorf("slots after the loss: %+v", got)
	}
	counts.AllocatedKnown = false // the kubelet does not answer: the last count stands
	beat(2, "allocated unknown")
	for range 30 { // five minutes of steady beats
		clk.Step(10 * time.Second)
		if err := h.Beat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := statusPatches.Load(); got != 3 {
		t.Errorf("after the report period: %d status patches in all, want 3", got)
	}
	if get(t, c).Status.LastHeartbeat != nil {
		t.Error("status.lastHeartbeat written with StatusHeartbeatFor 0")
	}
}

// TestBeatStampsTheStatusDuringTheUpgradeOverlap: for StatusHeartbeatFor after its first
// beat the plugin also stamps status.lastHeartbeat on every beat, for readers of the
// previous release; then only the Lease moves.
func TestBeatStampsTheStatusDuringTheUpgradeOverlap(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithStatusSubresource(&vmafxv1.VmafxNode{}).Build()
	clk := testingclock.NewFakeClock(now)
	opts := options(clk)
	opts.StatusHeartbeatFor = time.Minute
	h := New(c, fixed(Counts{Total: 8, Healthy: 8}), opts)
	for range 6 { // 0 s to 50 s
		if err := h.Beat(ctx); err != nil {
			t.Fatal(err)
		}
		if got := get(t, c).Status.LastHeartbeat; got == nil || !got.Time.Equal(clk.Now()) {
			t.Errorf("at %v: lastHeartbeat %v", clk.Now().Sub(now), got)
		}
		clk.Step(10 * time.Second)
	}
	last := get(t, c).Status.LastHeartbeat.Time
	for range 3 { // 60 s on
		if err := h.Beat(ctx); err != nil {
			t.Fatal(err)
		}
		clk.Step(10 * time.Second)
	}
	if got := get(t, c).Status.LastHeartbeat.Time; !got.Equal(last) {
		t.Errorf("lastHeartbeat moved to %v after the overlap", got)
	}
	if got := renewTime(getLease(t, c)); !got.Equal(clk.Now().Add(-10 * time.Second)) {
		t.Errorf("renewTime %v after the overlap", got)
	}
}

// TestBeatWithoutALeaseName: a node whose Lease name would be too long beats through the
// status, which the operator and vmafx-scheduler still read.
func TestBeatWithoutALeaseName(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithStatusSubresource(&vmafxv1.VmafxNode{}).Build()
	clk := testingclock.NewFakeClock(now)
	opts := options(clk)
	opts.NodeName = strings.Repeat("n", 250)
	h := New(c, fixed(Counts{Total: 8, Healthy: 8}), opts)
	for range 2 {
		if err := h.Beat(ctx); err != nil {
			t.Fatal(err)
		}
		var n vmafxv1.VmafxNode
		if err := c.Get(ctx, client.ObjectKey{Namespace: "vmafx-system", Name: opts.NodeName}, &n); err != nil {
			t.Fatal(err)
		}
		if got := n.Status.LastHeartbeat; got == nil || !got.Time.Equal(clk.Now()) {
			t.Errorf("lastHeartbeat %v, want %v", got, clk.Now())
		}
		clk.Step(10 * time.Second)
	}
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases); err != nil || len(leases.Items) != 0 {
		t.Errorf("Leases: %d (%v); want none", len(leases.Items), err)
	}
}

// TestRunRetriesWithBackoff fails the first three Lease writes: the heartbeat counts each
// failure, keeps retrying, and the fourth attempt lands.
func TestRunRetriesWithBackoff(t *testing.T) {
	_, tctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(tctx)
	defer cancel()
	var patches atomic.Int32
	landed := make(chan struct{})
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithStatusSubresource(&vmafxv1.VmafxNode{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if _, ok := obj.(*coordinationv1.Lease); !ok {
					return c.Create(ctx, obj, opts...)
				}
				if patches.Add(1) <= 3 {
					return errors.New("apiserver unavailable")
				}
				err := c.Create(ctx, obj, opts...)
				if patches.Load() == 4 {
					close(landed)
				}
				return err
			},
		}).Build()
	m := metrics.Discard()
	opts := options(nil)
	opts.Clock, opts.Interval, opts.Metrics = nil, 50*time.Millisecond, m
	h := New(c, fixed(Counts{Total: 8, Healthy: 8}), opts)
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	select {
	case <-landed:
	case <-time.After(10 * time.Second):
		t.Fatal("no successful heartbeat within 10 s")
	}
	cancel()
	<-done
	if got := testutil.ToFloat64(m.HeartbeatFailures); got != 3 {
		t.Errorf("heartbeat failures = %v, want 3", got)
	}
	if renewTime(getLease(t, c)).IsZero() {
		t.Error("no Lease after recovery")
	}
}

func TestTriggerDoesNotBlock(t *testing.T) {
	h := New(nil, nil, Options{Interval: time.Second})
	for i := 0; i < 3; i++ {
		h.Trigger()
	}
}
