package v1

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestNodeLeaseName(t *testing.T) {
	for _, node := range []string{"gpu-1", "node.example.com", strings.Repeat("n", 242)} {
		lease, ok := NodeLeaseName(node)
		if !ok {
			t.Errorf("NodeLeaseName(%d chars): no name", len(node))
			continue
		}
		if errs := validation.IsDNS1123Subdomain(lease); len(errs) > 0 {
			t.Errorf("NodeLeaseName(%q) = %q: %v", node, lease, errs)
		}
		if back, ok := NodeOfLease(lease); !ok || back != node {
			t.Errorf("NodeOfLease(%q) = %q, %v; want %q", lease, back, ok, node)
		}
	}
	if lease, ok := NodeLeaseName(strings.Repeat("n", 243)); ok {
		t.Errorf("NodeLeaseName(243 chars) = %q; want none", lease)
	}
	for _, lease := range []string{"vmafx-operator.vmafx.dev", NodeLeasePrefix} {
		if node, ok := NodeOfLease(lease); ok {
			t.Errorf("NodeOfLease(%q) = %q; want no node", lease, node)
		}
	}
}

func TestNodeHeartbeat(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	status := func(at time.Time) *VmafxNode {
		ts := metav1.NewTime(at)
		return &VmafxNode{Status: VmafxNodeStatus{LastHeartbeat: &ts}}
	}
	lease := func(at time.Time) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: at}}}
	}
	cases := []struct {
		name  string
		node  *VmafxNode
		lease *coordinationv1.Lease
		want  time.Time
	}{
		{"neither", &VmafxNode{}, nil, time.Time{}},
		{"lease only", &VmafxNode{}, lease(t0), t0},
		{"status only (a device plugin of the previous release)", status(t0), nil, t0},
		{"lease newer", status(t0), lease(t0.Add(time.Second)), t0.Add(time.Second)},
		{"status newer", status(t0.Add(time.Second)), lease(t0), t0.Add(time.Second)},
		{"lease never renewed", status(t0), &coordinationv1.Lease{}, t0},
	}
	for _, tc := range cases {
		if got := NodeHeartbeat(tc.node, tc.lease); !got.Equal(tc.want) {
			t.Errorf("%s: NodeHeartbeat = %v, want %v", tc.name, got, tc.want)
		}
	}
}
