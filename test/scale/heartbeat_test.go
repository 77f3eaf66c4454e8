package scale

import (
	"context"
	"os"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// BenchmarkHeartbeat measures what one node heartbeat costs kube-apiserver and etcd in CPU:
// a renewal of the node's Lease (lease, this release's device plugin) against a status
// patch of its VmafxNode (status, the release before the Leases). Each is watched as the
// operator and vmafx-scheduler watch it (two watches of the heartbeat Leases, or two of
// the VmafxNodes), so the API server's fan-out is in the figure. VMAFX_SCALE_NODES nodes
// (default 100) beat VMAFX_SCALE_BEATS times each (default 20), back to back, each beat
// 10 s later on the clock than the one before (a status stamp has one-second precision,
// and an unchanged one would cost no write):
//
//	VMAFX_SCALE_NODES=100 VMAFX_SCALE_BEATS=20 \
//	KUBEBUILDER_ASSETS=$HOME/.cache/vmafx/envtest/v1.37.1-etcd-v3.6.16 \
//	  go test ./test/scale/ -run '^$' -bench Heartbeat -benchtime 1x
func BenchmarkHeartbeat(b *testing.B) {
	nodes, beats := size("VMAFX_SCALE_NODES", 100), size("VMAFX_SCALE_BEATS", 20)
	for _, mode := range []string{"lease", "status"} {
		b.Run(mode, func(b *testing.B) {
			if err := os.Setenv("VMAFX_SCALE_HEARTBEAT", mode); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = os.Unsetenv("VMAFX_SCALE_HEARTBEAT") }()
			ctx := testenv.Context(b)
			fake := createNodes(b, ctx, nodes)
			watchCtx, stopWatches := context.WithCancel(ctx)
			defer stopWatches()
			for range 2 {
				watchHeartbeats(b, watchCtx, mode == "status")
			}
			cp := controlPlane()
			start := time.Now()
			for b.Loop() {
				all0, etcd0 := cpuOf(cp), cpuOf(cp, "etcd")
				for r := range beats {
					at := start.Add(time.Duration(r+1) * heartbeatEvery)
					if err := testutil.Parallel(nodes, func(i int) error { return fake.beat(ctx, i, at) }); err != nil {
						b.Fatal(err)
					}
				}
				all, etcd := cpuOf(cp)-all0, cpuOf(cp, "etcd")-etcd0
				n := float64(nodes * beats)
				b.ReportMetric((all-etcd).Seconds()*1000/n, "apiserver-cpu-ms/beat")
				b.ReportMetric(etcd.Seconds()*1000/n, "etcd-cpu-ms/beat")
				b.ReportMetric(loadAverage(), "load1")
			}
		})
	}
}

// watchHeartbeats watches what a reader of heartbeats watches, the heartbeat Leases or
// (status) the VmafxNodes, draining the events until ctx ends.
func watchHeartbeats(b *testing.B, ctx context.Context, status bool) {
	b.Helper()
	c, err := client.NewWithWatch(testenv.Config(), client.Options{Scheme: testenv.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	var list client.ObjectList = &coordinationv1.LeaseList{}
	opts := []client.ListOption{client.InNamespace(vmafxv1.SystemNamespace), client.MatchingLabels{vmafxv1.LabelComponent: vmafxv1.ComponentNodeHeartbeat}}
	if status {
		list, opts = &vmafxv1.VmafxNodeList{}, opts[:1]
	}
	w, err := c.Watch(ctx, list, opts...)
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.ResultChan():
				if !ok {
					return
				}
			}
		}
	}()
}
