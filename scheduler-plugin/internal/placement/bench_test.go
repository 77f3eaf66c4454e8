package placement

import (
	"fmt"
	"testing"
	"time"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// BenchmarkFilterScore measures what the plugin adds per node to a scheduling cycle: Filter
// and Score of one node, over 1000 nodes of all four vendors, for an auto Pod (the backend
// that uses every part of the score). One op is one node. Target: under 1 µs and zero
// allocations per node.
func BenchmarkFilterScore(b *testing.B) {
	const numNodes = 1000
	clk := testingclock.NewFakeClock(t0)
	vendors := []vmafxv1.GPUVendor{vmafxv1.VendorNVIDIA, vmafxv1.VendorAMD, vmafxv1.VendorIntel, vmafxv1.VendorCPU}
	var objs []*vmafxv1.VmafxNode
	nodes := make([]fwk.NodeInfo, numNodes)
	for i := range nodes {
		name := fmt.Sprintf("node-%04d", i)
		objs = append(objs, vmafxNode(name, vendors[i%len(vendors)], t0.Add(-time.Duration(i%50)*time.Second)))
		nodes[i] = nodeInfo(name, 8, i%4)
	}
	p := testPlugin(defaultArgs(), newTestTable(b, clk, time.Minute, objs...), clk)
	pod := workerPod("auto")
	cs := framework.NewCycleState()
	if _, s := p.PreFilter(ctx(b), cs, pod, nodes); !s.IsSuccess() {
		b.Fatal(s)
	}
	if s := p.PreScore(ctx(b), cs, pod, nodes); !s.IsSuccess() {
		b.Fatal(s)
	}
	c := ctx(b)
	// Only the nodes that pass Filter are scored; the cpu quarter are rejected with a
	// constant reason (and the allocation of a Status).
	b.Run("fit", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			n := nodes[(i*4)%numNodes] // nvidia nodes: all pass
			if s := p.Filter(c, cs, pod, n); s != nil {
				b.Fatal(s)
			}
			if _, s := p.Score(c, cs, pod, n); s != nil {
				b.Fatal(s)
			}
		}
	})
	b.Run("mixed", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			n := nodes[i%numNodes]
			if s := p.Filter(c, cs, pod, n); s == nil {
				p.Score(c, cs, pod, n)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				n := nodes[(i*4)%numNodes]
				p.Filter(c, cs, pod, n)
				p.Score(c, cs, pod, n)
				i++
			}
		})
	})
}
