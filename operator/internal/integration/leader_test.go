package integration

import (
	"testing"
	"time"

	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestLeaderElection runs two replicas with leader election: one leads and acts, the
// other waits; when the leader stops, the other takes over and acts.
func TestLeaderElection(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	env := operatorEnv(config.EnvLeaderElection, "true", config.EnvLeaderElectionNamespace, ns,
		config.EnvLeaderElectionID, "vmafx-operator-test")
	a := startOperator(t, env)
	eventually(t, 20*time.Second, "replica a to lead", func() (bool, error) { return a.elected(), nil })
	b := startOperator(t, env)
	create(t, newJob(ns, "led"))
	waitForPod(t, ns, "led-1")
	// b retries the lease every RetryPeriod (a fraction of a second here): within a
	// second it would have taken a lease that a was not holding.
	consistently(t, time.Second, "only replica a leads", func() (bool, error) { return !b.elected(), nil })

	a.stop() // releases the lease on the way out
	eventually(t, 30*time.Second, "replica b to take over", func() (bool, error) { return b.elected(), nil })
	create(t, newJob(ns, "after-failover"))
	waitForPod(t, ns, "after-failover-1")
	if pods := workerPods(t, ns, "led"); len(pods) != 1 {
		t.Errorf("job led has %d Pods after the failover; want 1", len(pods))
	}
}
