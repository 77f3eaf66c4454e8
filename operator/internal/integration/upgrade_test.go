package integration

import (
	"testing"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestPreviousReleaseDevicePluginKeepsItsNodeAlive: during an upgrade a node's device
// plugin of the previous release still beats through status.lastHeartbeat, with no Lease.
// The operator counts those beats as it counts Lease renewals: the node stays healthy
// and its job stays put through twice the staleness window, also while the new plugin
// replaces the old one (the Lease starts, the status stamps stop), and the node goes stale
// only when both stop.
func TestPreviousReleaseDevicePluginKeepsItsNodeAlive(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvNamespace, ns)) // stale after 3s
	old := vmafxNode(t, ns, "old-plugin", time.Time{})
	statusHeartbeat(t, old, time.Now())
	create(t, newJob(ns, "on-old"))
	bindAndRun(t, ns, "on-old", 1, "old-plugin")
	waitForNode(t, old, "healthy from status heartbeats", func(n *vmafxv1.VmafxNode) bool { return n.Status.Healthy })

	beatFor := func(window time.Duration, beat func()) {
		t.Helper()
		end := time.Now().Add(window)
		consistently(t, window, "node healthy and its job in place", func() (bool, error) {
			if time.Now().Before(end) {
				beat()
			}
			return getNode(t, old).Status.Healthy && !deleting(t, ns, "on-old-1"), nil
		})
	}
	// The previous release's plugin: status stamps only.
	beatFor(6*time.Second, func() { statusHeartbeat(t, old, time.Now()) })
	// Replaced: the new plugin renews the Lease; the last status stamp stays as it was.
	beatFor(6*time.Second, func() { deviceHeartbeat(t, old, time.Now()) })

	// Both stop: stale, and the job moves.
	waitForNode(t, old, "stale", func(n *vmafxv1.VmafxNode) bool { return !n.Status.Healthy })
	eventually(t, 20*time.Second, "the job on the stale node moved", func() (bool, error) { return deleting(t, ns, "on-old-1"), nil })
}
