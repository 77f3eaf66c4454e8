package node

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestAssess(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *vmafxv1.VmafxNode {
		n := &vmafxv1.VmafxNode{Spec: vmafxv1.VmafxNodeSpec{NodeName: "n1"}}
		ts := metav1.NewTime(now.Add(-ago))
		n.Status.LastHeartbeat = &ts
		return n
	}
	cases := []struct {
		name string
		node *vmafxv1.VmafxNode
		want verdict
	}{
		{"no heartbeat", &vmafxv1.VmafxNode{Spec: vmafxv1.VmafxNodeSpec{NodeName: "n1"}},
			verdict{reason: ReasonNoHeartbeat, message: "the device plugin on node n1 has not reported a heartbeat"}},
		{"fresh", at(10 * time.Second), verdict{healthy: true, reason: ReasonHeartbeatFresh, message: "last heartbeat 10s ago", staleIn: 50 * time.Second}},
		{"just under the threshold", at(59*time.Second + 999*time.Millisecond),
			verdict{healthy: true, reason: ReasonHeartbeatFresh, message: "last heartbeat 1m0s ago", staleIn: time.Millisecond}},
		{"exactly at the threshold", at(60 * time.Second), verdict{reason: ReasonHeartbeatStale, message: "last heartbeat 1m0s ago, stale after 1m0s"}},
		{"stale", at(94 * time.Second), verdict{reason: ReasonHeartbeatStale, message: "last heartbeat 1m34s ago, stale after 1m0s"}},
		{"from the future", at(-30 * time.Second), verdict{healthy: true, reason: ReasonHeartbeatFresh, message: "last heartbeat 0s ago", staleIn: 60 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := assess(tc.node, now, 60*time.Second)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(verdict{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
