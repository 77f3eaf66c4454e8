package node

import (
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Reasons of the Ready and WorkerImage conditions and of events.
const (
	ReasonHeartbeatFresh = "HeartbeatFresh"
	ReasonHeartbeatStale = "HeartbeatStale"
	ReasonNoHeartbeat    = "NoHeartbeat"
	ReasonNodeStale      = "NodeStale"
	ReasonNodeRecovered  = "NodeRecovered"
	// ReasonMassStaleness: too many nodes look stale at once to move their jobs.
	ReasonMassStaleness = "MassStaleness"
	ReasonImageMatches  = "Matches"
	ReasonImageDiffers  = "Differs"
)

// maxClockSkew is how far ahead of the operator's clock a heartbeat's stamp may be before
// the node's clock is called wrong in the node's status, as vmafx-scheduler does. Either
// way the stamp only tells one heartbeat from the next: ages are measured on the
// operator's own clock from the moment it saw the heartbeat change.
const maxClockSkew = 5 * time.Second

// sighting is what the operator has seen of one node's heartbeat.
type sighting struct {
	// value is the node's heartbeat as last seen (vmafxv1.NodeHeartbeat: the later of its
	// Lease's renewTime and its status.lastHeartbeat; zero: none).
	value time.Time
	// seenAt is when the operator saw value first, on its own clock.
	seenAt time.Time
	// staleAtStart says value is the one the operator found on its first look, and the
	// node's status already called it stale then (a restarted operator does not make a
	// dead node look alive for a staleness window).
	staleAtStart bool
}

// sightings remembers, per VmafxNode, when its heartbeat last changed, as the node
// lifecycle controller keeps a probe timestamp per Node: a heartbeat's age is measured
// from that moment, on the operator's clock, so neither clock skew between the nodes and
// the operator nor heartbeats relisted after a watch outage can make a node look stale.
type sightings struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]sighting
}

// observe records node's heartbeat at now, from the node and its Lease (nil: none), and
// returns what is known of it.
func (s *sightings) observe(node *vmafxv1.VmafxNode, lease *coordinationv1.Lease, now time.Time) sighting {
	key := types.NamespacedName{Namespace: node.Namespace, Name: node.Name}
	value := vmafxv1.NodeHeartbeat(node, lease)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[types.NamespacedName]sighting{}
	}
	old, ok := s.seen[key]
	switch {
	case !ok:
		old = sighting{value: value, seenAt: now, staleAtStart: judgedStale(node, value)}
	case !old.value.Equal(value):
		old = sighting{value: value, seenAt: now}
	}
	s.seen[key] = old
	return old
}

func (s *sightings) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, key)
}

// judgedStale says whether node's status already calls this heartbeat value stale: Ready
// is False for want of a heartbeat since a moment no earlier than the heartbeat itself.
func judgedStale(node *vmafxv1.VmafxNode, value time.Time) bool {
	c := meta.FindStatusCondition(node.Status.Conditions, vmafxv1.NodeReady)
	if c == nil || node.Status.Healthy || (c.Reason != ReasonHeartbeatStale && c.Reason != ReasonNoHeartbeat) {
		return false
	}
	return value.IsZero() || !c.LastTransitionTime.Time.Before(value)
}

// verdict is what a node's heartbeat says at one moment.
type verdict struct {
	healthy bool
	reason  string
	message string
	// staleIn is how long the node stays healthy without a new heartbeat.
	staleIn time.Duration
	// quietFor is how long no new heartbeat has been seen while the operator could have
	// seen one; the node's jobs are moved only once it reaches staleAfter.
	quietFor time.Duration
}

// assess judges a node's heartbeat at now from what was seen of it. connectedSince is
// when the operator's present spell of contact with the API server began: it could not
// have seen a heartbeat before, so silence counts only from then (a grace period after
// the operator starts and after an API server outage, whatever the relisted heartbeats
// say).
func assess(nodeName string, seen sighting, connectedSince, now time.Time, staleAfter time.Duration) verdict {
	quiet := max(now.Sub(later(seen.seenAt, connectedSince)), 0)
	v := verdict{quietFor: quiet}
	switch {
	case seen.value.IsZero():
		v.reason = ReasonNoHeartbeat
		v.message = fmt.Sprintf("the device plugin on node %s has not reported a heartbeat", nodeName)
	case quiet >= staleAfter:
		v.reason = ReasonHeartbeatStale
		v.message = fmt.Sprintf("no new heartbeat for %s (the last stamped %s), stale after %s",
			quiet.Round(time.Second), seen.value.UTC().Format(time.RFC3339), staleAfter)
	case seen.staleAtStart:
		v.reason = ReasonHeartbeatStale
		v.message = fmt.Sprintf("no new heartbeat since the one stamped %s, stale after %s",
			seen.value.UTC().Format(time.RFC3339), staleAfter)
	default:
		v.healthy, v.reason, v.staleIn = true, ReasonHeartbeatFresh, staleAfter-quiet
		// No age in the message: it would change with every reconcile (every worker Pod that
		// starts or ends on the node triggers one) and make each a status write.
		v.message = fmt.Sprintf("heartbeats arrive: a new one within %s keeps the node healthy", staleAfter)
	}
	if ahead := seen.value.Sub(now); !seen.value.IsZero() && ahead > maxClockSkew {
		v.message += fmt.Sprintf("; the heartbeat is stamped %s ahead of the operator's clock: check the node's clock", ahead.Round(time.Second))
	}
	return v
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
