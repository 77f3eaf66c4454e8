package node

import (
	"context"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Connectivity follows the operator's contact with the API server by reading from it
// around the cache every Interval. While there is no contact the operator cannot see
// heartbeats, so their silence must not count: the node reconciler measures staleness
// from the start of the present spell of contact at the earliest. That gives a grace
// period after the operator starts and after any API server or network outage, during
// which the device plugins' heartbeats come back.
type Connectivity struct {
	Reader    client.Reader
	Namespace string
	Clock     clock.Clock
	Interval  time.Duration

	mu    sync.Mutex
	up    bool
	since time.Time
}

// Since returns when the present spell of contact began, and false while there is none
// (or before the first probe).
func (c *Connectivity) Since() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.since, c.up
}

// Start probes until ctx ends. It runs on every replica, leader or not, so that a
// replica that becomes leader knows its contact already.
func (c *Connectivity) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("connectivity")
	for {
		c.probe(ctx, logger)
		select {
		case <-ctx.Done():
			return nil
		case <-c.Clock.After(c.Interval):
		}
	}
}

// NeedLeaderElection is false: see Start.
func (c *Connectivity) NeedLeaderElection() bool { return false }

func (c *Connectivity) probe(ctx context.Context, logger klog.Logger) {
	pctx, cancel := context.WithTimeout(ctx, max(c.Interval, time.Second))
	defer cancel()
	var nodes vmafxv1.VmafxNodeList
	err := c.Reader.List(pctx, &nodes, client.InNamespace(c.Namespace), client.Limit(1))
	if ctx.Err() != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err == nil && !c.up:
		c.up, c.since = true, c.Clock.Now()
		logger.Info("In contact with the API server; heartbeat silence counts from now")
	case err != nil && c.up:
		c.up = false
		logger.Error(err, "Lost contact with the API server; no node is judged stale until it is back")
	}
}

// ProbeInterval is how often Connectivity probes for a staleness window: a twelfth of
// it, between 250 ms and 5 s (5 s for the default 60 s).
func ProbeInterval(staleAfter time.Duration) time.Duration {
	return min(max(staleAfter/12, 250*time.Millisecond), 5*time.Second)
}
