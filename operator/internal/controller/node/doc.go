// Package node reconciles VmafxNodes: it judges each node's health from the heartbeat
// that the node's device plugin writes, counts the worker Pods running there, and moves
// the jobs of a node whose heartbeat went stale.
//
// The operator never writes status.lastHeartbeat: the device plugin owns it. Status is
// written with merge patches that carry only the fields this reconciler owns (healthy,
// jobs, conditions, observedGeneration), so a heartbeat written at the same moment is
// never overwritten.
package node
