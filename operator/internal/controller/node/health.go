package node

import (
	"fmt"
	"time"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Reasons of the Ready condition and of events.
const (
	ReasonHeartbeatFresh = "HeartbeatFresh"
	ReasonHeartbeatStale = "HeartbeatStale"
	ReasonNoHeartbeat    = "NoHeartbeat"
	ReasonNodeStale      = "NodeStale"
	ReasonNodeRecovered  = "NodeRecovered"
)

// verdict is what a heartbeat says about a node at one moment.
type verdict struct {
	healthy bool
	reason  string
	message string
	// staleIn is how long the node stays healthy without a new heartbeat.
	staleIn time.Duration
}

// assess judges node's heartbeat at now. A heartbeat from the future (clock skew
// between nodes) counts as fresh: the age is measured on the operator's clock only.
func assess(node *vmafxv1.VmafxNode, now time.Time, staleAfter time.Duration) verdict {
	hb := node.Status.LastHeartbeat
	if hb == nil {
		return verdict{reason: ReasonNoHeartbeat,
			message: fmt.Sprintf("the device plugin on node %s has not reported a heartbeat", node.Spec.NodeName)}
	}
	age := max(now.Sub(hb.Time), 0)
	if age >= staleAfter {
		return verdict{reason: ReasonHeartbeatStale,
			message: fmt.Sprintf("last heartbeat %s ago, stale after %s", age.Round(time.Second), staleAfter)}
	}
	return verdict{healthy: true, reason: ReasonHeartbeatFresh, staleIn: staleAfter - age,
		message: fmt.Sprintf("last heartbeat %s ago", age.Round(time.Second))}
}
