package heartbeat

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

var ignoreMeta = cmpopts.IgnoreFields(vmafxv1.VmafxNode{}, "TypeMeta", "ObjectMeta")

func TestBeat(t *testing.T) {
	beat := metav1.NewTime(now)
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
				Status: vmafxv1.VmafxNodeStatus{LastHeartbeat: &beat, Device: "2x nvidia (10de:2684)", Slots: &vmafxv1.SlotCounts{Total: 8, Healthy: 8, Allocated: 1}},
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
					s.LastHeartbeat, s.Device, s.Slots = &beat, "2x nvidia (10de:2684)", &vmafxv1.SlotCounts{Total: 8, Healthy: 4, Allocated: 2}
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
				Status: vmafxv1.VmafxNodeStatus{LastHeartbeat: &beat, Device: "2x nvidia (10de:2684)", Slots: &vmafxv1.SlotCounts{Total: 8, Healthy: 0, Allocated: 5}},
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
				Status: vmafxv1.VmafxNodeStatus{LastHeartbeat: &beat, Device: "2x nvidia (10de:2684)", Slots: &vmafxv1.SlotCounts{Total: 8, Healthy: 8}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			b := fake.NewClientBuilder().WithScheme(scheme(t)).WithStatusSubresource(&vmafxv1.VmafxNode{})
			if tc.existing != nil {
				tc.existing.Name, tc.existing.Namespace = "node-1", "vmafx-system"
				// An earlier release's VmafxNode has no vendor label, or a stale one.
				tc.existing.Labels = map[string]string{"team": "video"}
				if tc.existing.Spec.GPUVendor == vmafxv1.VendorCPU {
					tc.existing.Labels[vmafxv1.LabelGPUVendor] = "cpu"
				}
				b = b.WithObjects(tc.existing)
			}
			c := b.Build()
			h := New(c, fixed(tc.counts), options(testingclock.NewFakeClock(now)))
			if err := h.Beat(ctx); err != nil {
				t.Fatalf("Beat: %v", err)
			}
			got := get(t, c)
			if diff := cmp.Diff(tc.want, got, ignoreMeta); diff != "" {
				t.Errorf("VmafxNode (-want +got):\n%s", diff)
			}
			// The vendor label follows discovery; a user's own labels stay.
			wantLabels := map[string]string{vmafxv1.LabelGPUVendor: "nvidia"}
			if tc.existing != nil {
				wantLabels["team"] = "video"
			}
			if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBeatRecreatesADeletedNode(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithStatusSubresource(&vmafxv1.VmafxNode{}).Build()
	clk := testingclock.NewFakeClock(now)
	h := New(c, fixed(Counts{Total: 8, Healthy: 8}), options(clk))
	if err := h.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	n := get(t, c)
	if err := c.Delete(ctx, &n); err != nil {
		t.Fatal(err)
	}
	clk.Step(10 * time.Second)
	if err := h.Beat(ctx); err != nil {
		t.Fatalf("Beat after deletion: %v", err)
	}
	if got := get(t, c).Status.LastHeartbeat; got == nil || !got.Time.Equal(now.Add(10*time.Second)) {
		t.Errorf("lastHeartbeat = %v, want %v", got, now.Add(10*time.Second))
	}
}

// TestRunRetriesWithBackoff fails the first three status patches: the heartbeat
// counts each failure, keeps retrying, and the fourth attempt lands.
func TestRunRetriesWithBackoff(t *testing.T) {
	_, tctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(tctx)
	defer cancel()
	var patches atomic.Int32
	landed := make(chan struct{})
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithStatusSubresource(&vmafxv1.VmafxNode{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				if patches.Add(1) <= 3 {
					return errors.New("apiserver unavailable")
				}
				err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
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
	if get(t, c).Status.LastHeartbeat == nil {
		t.Error("no lastHeartbeat after recovery")
	}
}

func TestTriggerDoesNotBlock(t *testing.T) {
	h := New(nil, nil, Options{Interval: time.Second})
	for i := 0; i < 3; i++ {
		h.Trigger()
	}
}
