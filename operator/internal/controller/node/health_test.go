package node

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestAssess(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	long := now.Add(-time.Hour) // connected for an hour
	seen := func(stamp, seenAgo time.Duration) sighting {
		return sighting{value: now.Add(-stamp), seenAt: now.Add(-seenAgo)}
	}
	cases := []struct {
		name      string
		seen      sighting
		connected time.Time
		want      verdict
	}{
		{"no heartbeat", sighting{seenAt: now.Add(-10 * time.Second)}, long,
			verdict{reason: ReasonNoHeartbeat, message: "the device plugin on node n1 has not reported a heartbeat", quietFor: 10 * time.Second}},
		{"fresh", seen(10*time.Second, 10*time.Second), long,
			verdict{healthy: true, reason: ReasonHeartbeatFresh, message: "heartbeats arrive: a new one within 1m0s keeps the node healthy", staleIn: 50 * time.Second, quietFor: 10 * time.Second}},
		{"just under the threshold", seen(time.Minute, 59*time.Second+999*time.Millisecond), long,
			verdict{healthy: true, reason: ReasonHeartbeatFresh, message: "heartbeats arrive: a new one within 1m0s keeps the node healthy", staleIn: time.Millisecond, quietFor: 59*time.Second + 999*time.Millisecond}},
		{"exactly at the threshold", seen(time.Minute, time.Minute), long,
			verdict{reason: ReasonHeartbeatStale, message: "no new heartbeat for 1m0s (the last stamped 2026-11-22T11:59:00Z), stale after 1m0s", quietFor: time.Minute}},
		// The age counts from when the operator saw the heartbeat change, not from its stamp:
		// a stamp written by a clock that runs slow is fresh when it arrives...
		{"old stamp, just seen", seen(94*time.Second, 2*time.Second), long,
			verdict{healthy: true, reason: ReasonHeartbeatFresh, message: "heartbeats arrive: a new one within 1m0s keeps the node healthy", staleIn: 58 * time.Second, quietFor: 2 * time.Second}},
		// ...and one from a clock that runs fast goes stale when no other follows it.
		{"from the future, unchanged for the window", sighting{value: now.Add(time.Hour), seenAt: now.Add(-61 * time.Second)}, long,
			verdict{reason: ReasonHeartbeatStale, quietFor: 61 * time.Second,
				message: "no new heartbeat for 1m1s (the last stamped 2026-11-22T13:00:00Z), stale after 1m0s; the heartbeat is stamped 1h0m0s ahead of the operator's clock: check the node's clock"}},
		// Silence while the operator had no contact with the API server does not count.
		{"quiet, but contact only since 20s", seen(5*time.Minute, 5*time.Minute), now.Add(-20 * time.Second),
			verdict{healthy: true, reason: ReasonHeartbeatFresh, message: "heartbeats arrive: a new one within 1m0s keeps the node healthy", staleIn: 40 * time.Second, quietFor: 20 * time.Second}},
		{"already stale when the operator started", sighting{value: now.Add(-time.Hour), seenAt: now.Add(-5 * time.Second), staleAtStart: true}, now.Add(-5 * time.Second),
			verdict{reason: ReasonHeartbeatStale, message: "no new heartbeat since the one stamped 2026-11-22T11:00:00Z, stale after 1m0s", quietFor: 5 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := assess("n1", tc.seen, tc.connected, now, 60*time.Second)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(verdict{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSightingsMeasureFromTheChange(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	node := &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: "vmafx-system", Name: "n1"}}
	beat := func(at time.Time) { ts := metav1.NewTime(at); node.Status.LastHeartbeat = &ts }
	var s sightings

	beat(t0.Add(-time.Hour)) // an old stamp, as relisted after an outage
	if got := s.observe(node, nil, t0); !got.seenAt.Equal(t0) || got.staleAtStart {
		t.Fatalf("first sighting %+v; want seen at %v", got, t0)
	}
	if got := s.observe(node, nil, t0.Add(30*time.Second)); !got.seenAt.Equal(t0) {
		t.Errorf("the same heartbeat again moved its sighting to %v", got.seenAt)
	}
	beat(t0.Add(-time.Hour + 10*time.Second))
	if got := s.observe(node, nil, t0.Add(40*time.Second)); !got.seenAt.Equal(t0.Add(40 * time.Second)) {
		t.Errorf("a new heartbeat was seen at %v; want %v", got.seenAt, t0.Add(40*time.Second))
	}

	// A Lease renewed later than the status's stamp is a new heartbeat, and a status stamp
	// later than the Lease is one too (a device plugin of the previous release).
	renewed := func(at time.Time) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: at}}}
	}
	if got := s.observe(node, renewed(t0.Add(-time.Hour+20*time.Second)), t0.Add(50*time.Second)); !got.seenAt.Equal(t0.Add(50 * time.Second)) {
		t.Errorf("a Lease renewal was seen at %v; want %v", got.seenAt, t0.Add(50*time.Second))
	}
	if got := s.observe(node, renewed(t0.Add(-time.Hour+20*time.Second)), t0.Add(60*time.Second)); !got.seenAt.Equal(t0.Add(50 * time.Second)) {
		t.Errorf("the same Lease renewal again moved its sighting to %v", got.seenAt)
	}
	beat(t0.Add(-time.Hour + 30*time.Second))
	if got := s.observe(node, renewed(t0.Add(-time.Hour+20*time.Second)), t0.Add(70*time.Second)); !got.seenAt.Equal(t0.Add(70 * time.Second)) {
		t.Errorf("a status stamp later than the Lease was seen at %v; want %v", got.seenAt, t0.Add(70*time.Second))
	}

	// A node that the status already called stale for this very heartbeat stays stale
	// when a restarted operator first looks.
	other := node.DeepCopy()
	other.Name = "n2"
	other.Status.Healthy = false
	other.Status.Conditions = []metav1.Condition{{Type: vmafxv1.NodeReady, Status: metav1.ConditionFalse, Reason: ReasonHeartbeatStale,
		LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour + time.Minute))}}
	if got := s.observe(other, nil, t0); !got.staleAtStart {
		t.Errorf("first sighting of a node judged stale: %+v; want staleAtStart", got)
	}
}
