package placement

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	testingclock "k8s.io/utils/clock/testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestPreFilter(t *testing.T) {
	tests := map[string]struct {
		pod        string // backend annotation; "-" for none
		wantCode   fwk.Code
		wantReason string
	}{
		"not a worker pod": {pod: "-", wantCode: fwk.Skip},
		"cuda":             {pod: "cuda", wantCode: fwk.Success},
		"auto":             {pod: "auto", wantCode: fwk.Success},
		"unknown backend": {pod: "opencl", wantCode: fwk.UnschedulableAndUnresolvable,
			wantReason: `pod has an unknown vmafx.dev/backend "opencl" (want one of cuda, hip, sycl, vulkan, cpu, auto)`},
		"empty backend": {pod: "", wantCode: fwk.UnschedulableAndUnresolvable,
			wantReason: `pod has an unknown vmafx.dev/backend "" (want one of cuda, hip, sycl, vulkan, cpu, auto)`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			p := testPlugin(defaultArgs(), newTestTable(t, clk, time.Minute), clk)
			pod := st.MakePod().Namespace("jobs").Name("p").Obj()
			if tc.pod != "-" {
				pod.Annotations = map[string]string{vmafxv1.AnnotationBackend: tc.pod}
			}
			cs := framework.NewCycleState()
			_, status := p.PreFilter(ctx(t), cs, pod, nil)
			if got := status.Code(); got != tc.wantCode {
				t.Fatalf("PreFilter code = %v, want %v (%v)", got, tc.wantCode, status)
			}
			if got := status.Message(); got != tc.wantReason {
				t.Errorf("PreFilter reason (-want +got):\n%s", cmp.Diff(tc.wantReason, got))
			}
			if _, err := getPreFilterState(cs); (err == nil) != (tc.wantCode == fwk.Success) {
				t.Errorf("PreFilter wrote state: %v, want %v", err == nil, tc.wantCode == fwk.Success)
			}
		})
	}
}

func TestPreFilterNotSynced(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	tt := newTestTable(t, clk, time.Minute)
	tt.synced = func() bool { return false }
	p := testPlugin(defaultArgs(), tt, clk)
	c, cancel := context.WithCancel(ctx(t))
	cancel() // do not wait out maxSyncWait
	_, status := p.PreFilter(c, framework.NewCycleState(), workerPod("cuda"), nil)
	if status.Code() != fwk.Error {
		t.Fatalf("PreFilter before the informer synced: code %v, want Error (so the Pod is retried)", status.Code())
	}
}

func TestPreFilterWaitsForSync(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	tt := newTestTable(t, clk, time.Minute, vmafxNode("n1", vmafxv1.VendorNVIDIA, t0))
	var synced atomic.Bool
	tt.synced = synced.Load
	time.AfterFunc(50*time.Millisecond, func() { synced.Store(true) })
	p := testPlugin(defaultArgs(), tt, clk)
	if _, status := p.PreFilter(ctx(t), framework.NewCycleState(), workerPod("cuda"), nil); !status.IsSuccess() {
		t.Fatalf("PreFilter while the informer catches up: %v, want success", status)
	}
}

func TestFilter(t *testing.T) {
	const stale = time.Minute
	fresh := t0.Add(-5 * time.Second)
	tests := map[string]struct {
		backend    string
		vmafxNodes []*vmafxv1.VmafxNode
		slots      int // allocatable vmafx.dev/slot; -1 for none at all
		used       int
		wantCode   fwk.Code
		wantReason string
	}{
		"cuda on a fresh nvidia node": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, fresh)}, slots: 4,
			wantCode: fwk.Success,
		},
		"no VmafxNode": {
			backend: "cuda", slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) had no VmafxNode",
		},
		"VmafxNode for another node only": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n2", vmafxv1.VendorNVIDIA, fresh)}, slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) had no VmafxNode",
		},
		"two VmafxNodes claim the node": {
			backend: "cuda", slots: 4,
			vmafxNodes: []*vmafxv1.VmafxNode{
				vmafxNode("n1", vmafxv1.VendorNVIDIA, fresh),
				func() *vmafxv1.VmafxNode {
					vn := vmafxNode("n1", vmafxv1.VendorAMD, fresh)
					vn.Name = "n1-copy"
					return vn
				}(),
			},
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) had more than one VmafxNode",
		},
		"cuda on amd": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorAMD, fresh)}, slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) offer amd but the job needs cuda",
		},
		"hip on amd": {
			backend: "hip", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorAMD, fresh)}, slots: 4,
			wantCode: fwk.Success,
		},
		"sycl on intel": {
			backend: "sycl", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorIntel, fresh)}, slots: 4,
			wantCode: fwk.Success,
		},
		"sycl on nvidia": {
			backend: "sycl", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, fresh)}, slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) offer nvidia but the job needs sycl",
		},
		"cpu on a cpu node": {
			backend: "cpu", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorCPU, fresh)}, slots: 4,
			wantCode: fwk.Success,
		},
		"cpu on a GPU node": {
			backend: "cpu", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, fresh)}, slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) offer nvidia but the job needs cpu",
		},
		"vulkan on intel": {
			backend: "vulkan", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorIntel, fresh)}, slots: 4,
			wantCode: fwk.Success,
		},
		"vulkan on a cpu node": {
			backend: "vulkan", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorCPU, fresh)}, slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) offer cpu but the job needs a GPU (vulkan)",
		},
		"auto on amd": {
			backend: "auto", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorAMD, fresh)}, slots: 4,
			wantCode: fwk.Success,
		},
		"auto on a cpu node": {
			// auto means any GPU, else the CPU: a cluster without GPUs runs the default job.
			backend: "auto", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorCPU, fresh)}, slots: 4,
			wantCode: fwk.Success,
		},
		"malformed vendor": {
			backend: "auto", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", "matrox", fresh)}, slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) had a VmafxNode with an unknown gpuVendor",
		},
		"no heartbeat yet": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, time.Time{})}, slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) had no VMAFX heartbeat yet",
		},
		"heartbeat exactly at the threshold is fresh": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, t0.Add(-stale))}, slots: 4,
			wantCode: fwk.Success,
		},
		"heartbeat a nanosecond past the threshold is stale": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, t0.Add(-stale-time.Nanosecond))}, slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) had a stale VMAFX heartbeat (last 60s ago)",
		},
		"stale heartbeat": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, t0.Add(-94*time.Second))}, slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) had a stale VMAFX heartbeat (last 94s ago)",
		},
		"heartbeat slightly in the future": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, t0.Add(2*time.Second))}, slots: 4,
			wantCode: fwk.Success,
		},
		"heartbeat far in the future is fresh": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, t0.Add(time.Hour))}, slots: 4,
			wantCode: fwk.Success,
		},
		"wrong vendor is reported before a stale heartbeat": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorAMD, t0.Add(-time.Hour))}, slots: 4,
			wantCode: fwk.UnschedulableAndUnresolvable, wantReason: "node(s) offer amd but the job needs cuda",
		},
		"last free slot": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, fresh)}, slots: 4, used: 3,
			wantCode: fwk.Success,
		},
		"no free slot": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, fresh)}, slots: 4, used: 4,
			wantCode: fwk.Unschedulable, wantReason: "node(s) had no free vmafx.dev/slot",
		},
		"node offers no slots at all": {
			backend: "cuda", vmafxNodes: []*vmafxv1.VmafxNode{vmafxNode("n1", vmafxv1.VendorNVIDIA, fresh)}, slots: -1,
			wantCode: fwk.Unschedulable, wantReason: "node(s) had no free vmafx.dev/slot",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			p := testPlugin(defaultArgs(), newTestTable(t, clk, stale, tc.vmafxNodes...), clk)
			cs := framework.NewCycleState()
			pod := workerPod(tc.backend)
			if _, s := p.PreFilter(ctx(t), cs, pod, nil); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			status := p.Filter(ctx(t), cs, pod, nodeInfo("n1", tc.slots, tc.used))
			if got := status.Code(); got != tc.wantCode {
				t.Fatalf("Filter code = %v, want %v (%v)", got, tc.wantCode, status)
			}
			if got := status.Message(); got != tc.wantReason {
				t.Errorf("Filter reason (-want +got):\n%s", cmp.Diff(tc.wantReason, got))
			}
		})
	}
}

func TestFilterWithoutSlotRequest(t *testing.T) {
	// A worker Pod that asks for no slot (hand-made, not from the operator) is not held
	// back by full nodes: slots are what it did not ask for.
	clk := testingclock.NewFakeClock(t0)
	p := testPlugin(defaultArgs(), newTestTable(t, clk, time.Minute, vmafxNode("n1", vmafxv1.VendorNVIDIA, t0)), clk)
	pod := st.MakePod().Namespace("jobs").Name("p").Annotation(vmafxv1.AnnotationBackend, "cuda").Obj()
	cs := framework.NewCycleState()
	if _, s := p.PreFilter(ctx(t), cs, pod, nil); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	if s := p.Filter(ctx(t), cs, pod, nodeInfo("n1", 4, 4)); !s.IsSuccess() {
		t.Errorf("Filter = %v, want success", s)
	}
}

func TestFilterAfterTimePasses(t *testing.T) {
	// Staleness is measured on the scheduler's clock at the cycle's start: the same
	// heartbeat is fresh in one cycle and stale in a later one, with no event between.
	clk := testingclock.NewFakeClock(t0)
	p := testPlugin(defaultArgs(), newTestTable(t, clk, time.Minute, vmafxNode("n1", vmafxv1.VendorNVIDIA, t0)), clk)
	pod := workerPod("cuda")
	for _, tc := range []struct {
		after time.Duration
		want  fwk.Code
	}{{0, fwk.Success}, {time.Minute, fwk.Success}, {time.Minute + time.Second, fwk.UnschedulableAndUnresolvable}} {
		clk.SetTime(t0.Add(tc.after))
		cs := framework.NewCycleState()
		p.PreFilter(ctx(t), cs, pod, nil)
		if got := p.Filter(ctx(t), cs, pod, nodeInfo("n1", 4, 0)).Code(); got != tc.want {
			t.Errorf("%v after the heartbeat: Filter code %v, want %v", tc.after, got, tc.want)
		}
	}
}
