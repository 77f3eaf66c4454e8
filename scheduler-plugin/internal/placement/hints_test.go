package placement

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	testingclock "k8s.io/utils/clock/testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// asEvent returns the VmafxNode as the scheduler's dynamic informer delivers it.
func asEvent(t *testing.T, vn *vmafxv1.VmafxNode) *unstructured.Unstructured {
	t.Helper()
	if vn == nil {
		return nil
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(vn)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func TestEventsToRegister(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	p := testPlugin(defaultArgs(), newTestTable(t, clk, time.Minute), clk)
	events, err := p.EventsToRegister(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range events {
		if e.QueueingHintFn == nil {
			t.Errorf("event %s has no queueing hint", e.Event.Label())
		}
		got[string(e.Event.Resource)] = true
	}
	for _, want := range []string{"vmafxnodes.v1.vmafx.dev", string(fwk.Node), string(fwk.AssignedPod)} {
		if !got[want] {
			t.Errorf("no event registered for %s", want)
		}
	}
}

func TestVmafxNodeHint(t *testing.T) {
	nv := func(hb time.Duration) *vmafxv1.VmafxNode { return vmafxNode("n1", vmafxv1.VendorNVIDIA, t0.Add(hb)) }
	otherNS := nv(0)
	otherNS.Namespace = "default"
	tests := map[string]struct {
		pod      *v1.Pod
		old, new *vmafxv1.VmafxNode
		want     fwk.QueueingHint
	}{
		"created fresh, right vendor":       {pod: workerPod("cuda"), new: nv(0), want: fwk.Queue},
		"created fresh, wrong vendor":       {pod: workerPod("hip"), new: nv(0), want: fwk.QueueSkip},
		"created without a heartbeat":       {pod: workerPod("cuda"), new: vmafxNode("n1", vmafxv1.VendorNVIDIA, time.Time{}), want: fwk.QueueSkip},
		"created stale":                     {pod: workerPod("cuda"), new: nv(-2 * time.Minute), want: fwk.QueueSkip},
		"first heartbeat":                   {pod: workerPod("cuda"), old: vmafxNode("n1", vmafxv1.VendorNVIDIA, time.Time{}), new: nv(0), want: fwk.Queue},
		"fresh heartbeat after a stale one": {pod: workerPod("cuda"), old: nv(-94 * time.Second), new: nv(0), want: fwk.Queue},
		"routine heartbeat":                 {pod: workerPod("cuda"), old: nv(-10 * time.Second), new: nv(0), want: fwk.QueueSkip},
		"heartbeat from the future":         {pod: workerPod("cuda"), old: nv(-2 * time.Minute), new: nv(time.Hour), want: fwk.Queue},
		"heartbeat still stale":             {pod: workerPod("cuda"), old: nv(-3 * time.Minute), new: nv(-2 * time.Minute), want: fwk.QueueSkip},
		"vendor changed to fit":             {pod: workerPod("hip"), old: nv(0), new: vmafxNode("n1", vmafxv1.VendorAMD, t0), want: fwk.Queue},
		"vendor changed away":               {pod: workerPod("cuda"), old: nv(0), new: vmafxNode("n1", vmafxv1.VendorAMD, t0), want: fwk.QueueSkip},
		"any GPU for auto":                  {pod: workerPod("auto"), new: vmafxNode("n1", vmafxv1.VendorIntel, t0), want: fwk.Queue},
		"cpu node for auto":                 {pod: workerPod("auto"), new: vmafxNode("n1", vmafxv1.VendorCPU, t0), want: fwk.Queue},
		"cpu node for vulkan":               {pod: workerPod("vulkan"), new: vmafxNode("n1", vmafxv1.VendorCPU, t0), want: fwk.QueueSkip},
		"outside the system namespace":      {pod: workerPod("cuda"), new: otherNS, want: fwk.QueueSkip},
		"not a worker pod":                  {pod: workerPod(""), new: nv(0), want: fwk.QueueSkip},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			p := testPlugin(defaultArgs(), newTestTable(t, clk, time.Minute), clk)
			logger, _ := ktesting.NewTestContext(t)
			var oldObj any
			if tc.old != nil {
				oldObj = asEvent(t, tc.old)
			}
			got, err := p.isSchedulableAfterVmafxNodeChange(logger, tc.pod, oldObj, asEvent(t, tc.new))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
			// The typed object reads the same as the event's unstructured one.
			var typedOld any
			if tc.old != nil {
				typedOld = tc.old
			}
			if typed, _ := p.isSchedulableAfterVmafxNodeChange(logger, tc.pod, typedOld, tc.new); typed != got {
				t.Errorf("hint on typed objects = %v, on unstructured %v", typed, got)
			}
		})
	}
}

func TestVmafxNodeHintMalformedHeartbeat(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	p := testPlugin(defaultArgs(), newTestTable(t, clk, time.Minute), clk)
	logger, _ := ktesting.NewTestContext(t)
	obj := asEvent(t, vmafxNode("n1", vmafxv1.VendorNVIDIA, time.Time{}))
	if err := unstructured.SetNestedField(obj.Object, "yesterday", "status", "lastHeartbeat"); err != nil {
		t.Fatal(err)
	}
	// An error makes the scheduler queue the Pod rather than strand it.
	if _, err := p.isSchedulableAfterVmafxNodeChange(logger, workerPod("cuda"), nil, obj); err == nil {
		t.Errorf("malformed heartbeat: no error")
	}
}

func TestNodeHint(t *testing.T) {
	node := func(slots string) *v1.Node {
		capacity := map[v1.ResourceName]string{v1.ResourceCPU: "8"}
		if slots != "" {
			capacity[vmafxv1.ResourceSlot] = slots
		}
		return st.MakeNode().Name("n1").Capacity(capacity).Obj()
	}
	tests := map[string]struct {
		old, new *v1.Node
		want     fwk.QueueingHint
	}{
		"added with slots":       {new: node("4"), want: fwk.Queue},
		"added without slots":    {new: node(""), want: fwk.QueueSkip},
		"slots registered":       {old: node(""), new: node("4"), want: fwk.Queue},
		"slots grew":             {old: node("4"), new: node("8"), want: fwk.Queue},
		"slots unchanged":        {old: node("4"), new: node("4"), want: fwk.QueueSkip},
		"slots shrank":           {old: node("8"), new: node("4"), want: fwk.QueueSkip},
		"slots went unhealthy":   {old: node("4"), new: node("0"), want: fwk.QueueSkip},
		"still fewer than asked": {old: node(""), new: node("0"), want: fwk.QueueSkip},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			p := testPlugin(defaultArgs(), newTestTable(t, clk, time.Minute), clk)
			logger, _ := ktesting.NewTestContext(t)
			var oldObj any
			if tc.old != nil {
				oldObj = tc.old
			}
			got, err := p.isSchedulableAfterNodeChange(logger, workerPod("cuda"), oldObj, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodDeleteHint(t *testing.T) {
	worker := workerPod("cuda")
	worker.Spec.NodeName = "n1"
	pending := workerPod("cuda")
	other := st.MakePod().Namespace("web").Name("nginx").Node("n1").Obj()
	for name, tc := range map[string]struct {
		deleted *v1.Pod
		want    fwk.QueueingHint
	}{
		"scheduled worker frees a slot": {deleted: worker, want: fwk.Queue},
		"pending worker frees nothing":  {deleted: pending, want: fwk.QueueSkip},
		"pod without slots":             {deleted: other, want: fwk.QueueSkip},
	} {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			p := testPlugin(defaultArgs(), newTestTable(t, clk, time.Minute), clk)
			logger, _ := ktesting.NewTestContext(t)
			got, err := p.isSchedulableAfterPodDelete(logger, workerPod("cuda"), tc.deleted, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}
