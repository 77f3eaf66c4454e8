package v1

import (
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A node's heartbeat is a coordination.k8s.io/v1 Lease, as the kubelet's is: the device
// plugin renews the Lease of its VmafxNode every heartbeat period (spec.renewTime), and
// writes the VmafxNode's status only when something a user sees changes. A Lease renewal
// is a small update of a built-in object, where a status patch of the VmafxNode was a
// custom-resource write that every watcher of VmafxNodes decodes.
//
// The Lease lives beside the VmafxNode (its namespace), is named NodeLeasePrefix plus the
// VmafxNode's name, holds spec.holderIdentity the node's name and carries the label
// LabelComponent=ComponentNodeHeartbeat, so the operator and vmafx-scheduler watch these
// Leases and not the leader-election Leases of the same namespace.
const (
	// NodeLeasePrefix starts the name of every node heartbeat Lease.
	NodeLeasePrefix = "vmafx-node-"
	// ComponentNodeHeartbeat is the LabelComponent value of the node heartbeat Leases.
	ComponentNodeHeartbeat = "node-heartbeat"
)

// NodeLeaseName returns the name of the heartbeat Lease of the VmafxNode called node, and
// false when the name would be longer than an object name may be (a VmafxNode name of
// more than 242 characters): such a node's device plugin beats through status.lastHeartbeat
// instead, which the readers still accept.
func NodeLeaseName(node string) (string, bool) {
	name := NodeLeasePrefix + node
	if len(name) > validation.DNS1123SubdomainMaxLength {
		return "", false
	}
	return name, true
}

// NodeOfLease returns the name of the VmafxNode whose heartbeat the Lease called lease
// is, and false for a Lease that is no node heartbeat.
func NodeOfLease(lease string) (string, bool) {
	node, ok := strings.CutPrefix(lease, NodeLeasePrefix)
	return node, ok && node != ""
}

// NodeHeartbeat returns the node's latest heartbeat: the later of its Lease's renewTime
// and its status.lastHeartbeat, zero when there is neither. lease may be nil. Both count
// so that a device plugin of a release before the Leases, which stamps the status, keeps
// its node alive through an upgrade until it is replaced.
func NodeHeartbeat(node *VmafxNode, lease *coordinationv1.Lease) time.Time {
	var t time.Time
	if node != nil && node.Status.LastHeartbeat != nil {
		t = node.Status.LastHeartbeat.Time
	}
	if lease != nil && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(t) {
		t = lease.Spec.RenewTime.Time
	}
	return t
}
