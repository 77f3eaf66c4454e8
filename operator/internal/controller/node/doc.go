// Package node reconciles VmafxNodes: it judges each node's health from the heartbeat
// that the node's device plugin writes, counts the worker Pods running there, and moves
// the jobs of a node whose heartbeat went stale.
//
// A heartbeat is a renewal of the node's Lease (apis/vmafx/v1 NodeLeaseName), or, from a
// device plugin of the release before the Leases, a new status.lastHeartbeat: whichever
// is later counts (vmafxv1.NodeHeartbeat), so nodes stay alive through an upgrade.
//
// The operator never writes status.lastHeartbeat nor the Leases: the device plugin owns them. Status is
// written with merge patches that carry only the fields this reconciler owns (healthy,
// jobs, conditions, observedGeneration), so a heartbeat written at the same moment is
// never overwritten.
package node
