package scheduler

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
)

// scheduleTimeout bounds how long a Pod that fits may take to be bound. It is generous
// for a loaded 2-core machine; the heartbeat test measures its own, tighter bound.
const scheduleTimeout = 30 * time.Second

func TestVendorMatching(t *testing.T) {
	cl := newCluster(t)
	now := time.Now()
	nodes := map[vmafxv1.GPUVendor]string{}
	for _, v := range []vmafxv1.GPUVendor{vmafxv1.VendorNVIDIA, vmafxv1.VendorAMD, vmafxv1.VendorIntel, vmafxv1.VendorCPU} {
		nodes[v] = cl.node(string(v), 4)
		cl.vmafxNode(nodes[v], v, now)
	}
	startScheduler(t, schedulerConfig(t), "--leader-elect=false")

	for _, tc := range []struct {
		backend string
		want    vmafxv1.GPUVendor
	}{
		{"cuda", vmafxv1.VendorNVIDIA},
		{"hip", vmafxv1.VendorAMD},
		{"sycl", vmafxv1.VendorIntel},
		{"cpu", vmafxv1.VendorCPU},
	} {
		cl.workerPod(tc.backend, tc.backend, nil)
		if got := cl.waitScheduled(tc.backend, scheduleTimeout); got != nodes[tc.want] {
			t.Errorf("%s pod landed on %s, want the %s node %s", tc.backend, got, tc.want, nodes[tc.want])
		}
	}
	// vulkan and auto run on any GPU; with each GPU node equally loaded (one slot taken),
	// vendorPreference [nvidia, amd, intel] decides.
	for _, backend := range []string{"vulkan", "auto"} {
		cl.workerPod(backend, backend, nil)
		got := cl.waitScheduled(backend, scheduleTimeout)
		if got == nodes[vmafxv1.VendorCPU] {
			t.Errorf("%s pod landed on the cpu node", backend)
		}
		if backend == "vulkan" && got != nodes[vmafxv1.VendorNVIDIA] {
			t.Errorf("vulkan pod landed on %s, want the preferred nvidia node %s", got, nodes[vmafxv1.VendorNVIDIA])
		}
	}
}

// TestAutoRunsOnTheCPUWithoutGPUs: a job that leaves backend at its default (auto) runs
// on a cluster of CPU nodes only, and prefers a GPU node once there is one.
func TestAutoRunsOnTheCPUWithoutGPUs(t *testing.T) {
	cl := newCluster(t)
	now := time.Now()
	cpu := cl.node("cpu", 4)
	cl.vmafxNode(cpu, vmafxv1.VendorCPU, now)
	startScheduler(t, schedulerConfig(t), "--leader-elect=false")

	cl.workerPod("default", "auto", nil)
	if got := cl.waitScheduled("default", scheduleTimeout); got != cpu {
		t.Errorf("auto pod landed on %s, want the cpu node %s", got, cpu)
	}
	gpu := cl.node("gpu", 4)
	cl.vmafxNode(gpu, vmafxv1.VendorIntel, time.Now())
	cl.workerPod("with-gpu", "auto", nil)
	if got := cl.waitScheduled("with-gpu", scheduleTimeout); got != gpu {
		t.Errorf("auto pod landed on %s, want the GPU node %s (cpu last)", got, gpu)
	}
}

func TestStaleNodesAvoided(t *testing.T) {
	cl := newCluster(t)
	now := time.Now()
	fresh, stale, silent := cl.node("fresh", 4), cl.node("stale", 4), cl.node("silent", 4)
	cl.vmafxNode(fresh, vmafxv1.VendorNVIDIA, now)
	cl.vmafxNode(stale, vmafxv1.VendorNVIDIA, now.Add(-90*time.Second))
	cl.vmafxNode(silent, vmafxv1.VendorNVIDIA, time.Time{}) // created, never beat
	cl.node("unregistered", 4)                              // no VmafxNode at all
	startScheduler(t, schedulerConfig(t), "--leader-elect=false")

	for i := range 4 {
		name := fmt.Sprintf("w%d", i)
		cl.workerPod(name, "cuda", nil)
		if got := cl.waitScheduled(name, scheduleTimeout); got != fresh {
			t.Errorf("pod %s landed on %s, want the only fresh node %s", name, got, fresh)
		}
	}
}

func TestSpreadAndBinPack(t *testing.T) {
	cl := newCluster(t)
	now := time.Now()
	a, b := cl.node("a", 4), cl.node("b", 4)
	cl.vmafxNode(a, vmafxv1.VendorNVIDIA, now)
	cl.vmafxNode(b, vmafxv1.VendorNVIDIA, now)
	startScheduler(t, schedulerConfig(t), "--leader-elect=false")

	// The shipped strategy is Spread: four Pods one after another split 2/2.
	for i := range 4 {
		name := fmt.Sprintf("spread-%d", i)
		cl.workerPod(name, "cuda", nil)
		cl.waitScheduled(name, scheduleTimeout)
	}
	if got := cl.podsPerNode(); got[a] != 2 || got[b] != 2 {
		t.Fatalf("spread: pods per node %v, want 2 on each of %s and %s", got, a, b)
	}
	// Pods that ask for BinPack fill one node before the other. Both nodes hold 2 now; the
	// first BinPack Pod picks one, and every next one must follow it.
	first := ""
	for i := range 2 {
		name := fmt.Sprintf("binpack-%d", i)
		cl.workerPod(name, "cuda", map[string]string{vmafxv1.AnnotationScoringStrategy: "BinPack"})
		got := cl.waitScheduled(name, scheduleTimeout)
		if first == "" {
			first = got
		} else if got != first {
			t.Errorf("bin-pack: pod %s landed on %s, want the fuller node %s", name, got, first)
		}
	}
	if got := cl.podsPerNode(); got[first] != 4 {
		t.Errorf("bin-pack: pods per node %v, want %s full", got, first)
	}
}

func TestBurstNeverOversubscribes(t *testing.T) {
	cl := newCluster(t)
	now := time.Now()
	const nodes, slots = 3, 4
	for i := range nodes {
		n := cl.node(fmt.Sprintf("n%d", i), slots)
		cl.vmafxNode(n, vmafxv1.VendorAMD, now)
	}
	startScheduler(t, schedulerConfig(t), "--leader-elect=false")

	// Twice the capacity at once.
	for i := range 2 * nodes * slots {
		cl.workerPod(fmt.Sprintf("burst-%02d", i), "hip", nil)
	}
	err := wait.PollUntilContextTimeout(cl.ctx, 100*time.Millisecond, scheduleTimeout, true, func(context.Context) (bool, error) {
		return cl.podsPerNode()[""] == nodes*slots, nil
	})
	if err != nil {
		t.Fatalf("pods per node %v: want %d bound and %d pending", cl.podsPerNode(), nodes*slots, nodes*slots)
	}
	// The scheduler retries the pending half (1 s backoff): a wrong bind would show within
	// 2 s. No node may hold more Pods than it has slots.
	testutil.Consistently(t, 2*time.Second, "no node over its slots", func(context.Context) error {
		for node, n := range cl.podsPerNode() {
			switch {
			case node == "" && n != nodes*slots:
				return fmt.Errorf("%d pods pending, want %d", n, nodes*slots)
			case node != "" && n > slots:
				return fmt.Errorf("node %s holds %d pods, more than its %d slots", node, n, slots)
			}
		}
		return nil
	})
	// The pending ones explain themselves.
	var pending corev1.PodList
	if err := cl.c.List(cl.ctx, &pending, client.InNamespace(cl.ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pending.Items {
		if p.Spec.NodeName == "" {
			note := cl.waitFailedScheduling(p.Name, scheduleTimeout)
			if !strings.Contains(note, "vmafx.dev/slot") {
				t.Errorf("pending pod %s: FailedScheduling %q does not mention vmafx.dev/slot", p.Name, note)
			}
			break
		}
	}
}

// heartbeatRequeueBound is how soon a Pod waiting for a heartbeat must be bound once the
// heartbeat arrives: without queueing hints it would wait for the 5-minute flush of
// unschedulable Pods.
const heartbeatRequeueBound = 2 * time.Second

// TestPendingUntilHeartbeat: a Pod whose only node is stale waits, and is bound as soon
// as the node beats again: through its Lease, or through status.lastHeartbeat as a device
// plugin of the release before the Leases still does during an upgrade.
func TestPendingUntilHeartbeat(t *testing.T) {
	for _, via := range []string{"Lease", "status of the previous release"} {
		t.Run(via, func(t *testing.T) {
			cl := newCluster(t)
			now := time.Now()
			nv, amd := cl.node("nvidia", 4), cl.node("amd", 4)
			cl.vmafxNode(nv, vmafxv1.VendorNVIDIA, now.Add(-94*time.Second))
			cl.vmafxNode(amd, vmafxv1.VendorAMD, now)
			startScheduler(t, schedulerConfig(t), "--leader-elect=false")

			cl.workerPod("waiting", "cuda", nil)
			note := cl.waitFailedScheduling("waiting", scheduleTimeout)
			want := regexp.MustCompile(`^0/\d+ nodes are available: .*1 node\(s\) had a stale VMAFX heartbeat \(last 9\d+s ago\).*1 node\(s\) offer amd but the job needs cuda`)
			if !want.MatchString(note) {
				t.Errorf("FailedScheduling event: %q, want it to match %q", note, want)
			}
			if got := cl.nodeOf("waiting"); got != "" {
				t.Fatalf("pod bound to %s while its only node is stale", got)
			}

			// Let the Pod's 1 s initial backoff pass, as it would in a real wait, then beat.
			cl.waitBackoffOver()
			beat := time.Now()
			if via == "Lease" {
				cl.heartbeat(nv, beat)
			} else {
				cl.statusHeartbeat(nv, beat)
			}
			got := cl.waitScheduled("waiting", scheduleTimeout)
			took := time.Since(beat)
			t.Logf("bound %v after the heartbeat", took)
			if got != nv {
				t.Errorf("pod landed on %s, want %s", got, nv)
			}
			if took > heartbeatRequeueBound {
				t.Errorf("pod bound %v after the heartbeat, want within %v", took, heartbeatRequeueBound)
			}
		})
	}
}

func TestPendingUntilVmafxNodeCreated(t *testing.T) {
	cl := newCluster(t)
	n := cl.node("new", 4)
	startScheduler(t, schedulerConfig(t), "--leader-elect=false")

	cl.workerPod("waiting", "sycl", nil)
	if note := cl.waitFailedScheduling("waiting", scheduleTimeout); !strings.Contains(note, "node(s) had no VmafxNode") {
		t.Errorf("FailedScheduling event: %q, want it to say the node has no VmafxNode", note)
	}
	cl.waitBackoffOver()
	start := time.Now()
	cl.vmafxNode(n, vmafxv1.VendorIntel, time.Now())
	cl.waitScheduled("waiting", scheduleTimeout)
	if took := time.Since(start); took > heartbeatRequeueBound {
		t.Errorf("pod bound %v after its VmafxNode appeared, want within %v", took, heartbeatRequeueBound)
	}
}

func TestOtherPodsUntouched(t *testing.T) {
	cl := newCluster(t)
	n := cl.node("plain", 4) // no VmafxNode: worker Pods could not go here
	startScheduler(t, schedulerConfig(t), "--leader-elect=false")

	// A Pod of the default scheduler is not this scheduler's to place, annotation or not
	// (no default scheduler runs here, so it stays pending).
	other := newWorkerPod(cl.ns, "default-scheduler", "cuda", nil)
	other.Spec.SchedulerName = corev1.DefaultSchedulerName
	if err := cl.c.Create(cl.ctx, other); err != nil {
		t.Fatal(err)
	}
	// A Pod of this scheduler without the backend annotation is not a worker Pod: the
	// plugin skips it and the rest of the profile places it like any other.
	cl.workerPod("not-a-worker", "", nil)
	if got := cl.waitScheduled("not-a-worker", scheduleTimeout); got != n {
		t.Errorf("non-worker pod landed on %s, want %s", got, n)
	}
	// vmafx-scheduler placed the other Pod in well under a second: had it taken the
	// default scheduler's Pod too, that would show within one.
	testutil.Consistently(t, time.Second, "the default scheduler's Pod left alone", func(context.Context) error {
		if got := cl.nodeOf("default-scheduler"); got != "" {
			return fmt.Errorf("vmafx-scheduler bound a default-scheduler pod to %s", got)
		}
		return nil
	})
}
