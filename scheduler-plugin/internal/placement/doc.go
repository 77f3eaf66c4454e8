// Package placement is the VmafxPlacement scheduler plugin, which vmafx-scheduler (kube-scheduler
// with this plugin registered) runs for VMAFX worker Pods.
//
// A worker Pod says which compute backend its job wants in the annotation vmafx.dev/backend.
// The plugin keeps it off nodes that cannot run that backend or whose node agent has gone
// quiet, and among the rest prefers nodes by free scoring slots, heartbeat freshness and, for
// backends any GPU can run, vendor preference:
//
//   - PreFilter reads the backend once per Pod; a Pod without the annotation is not a worker
//     Pod and the plugin skips it entirely.
//   - Filter rejects a node without a VmafxNode, of the wrong vendor, or with a heartbeat older
//     than heartbeatStaleAfter (as UnschedulableAndUnresolvable: preemption cannot fix them),
//     and a node without a free vmafx.dev/slot (as Unschedulable).
//   - PreScore, Score and NormalizeScore rank the nodes (Spread or BinPack on slots).
//   - EventsToRegister names the cluster events that can make a rejected Pod schedulable, with
//     queueing hints, so a Pod waiting for a heartbeat is retried when the heartbeat arrives.
//
// A node's heartbeat is the renewTime of its Lease (vmafx-node-<VmafxNode name>, renewed by
// the device plugin) or the status.lastHeartbeat that a device plugin of the release before
// the Leases writes, whichever is later (vmafxv1.NodeHeartbeat).
//
// The plugin reads VmafxNodes, and the node heartbeat Leases of the system namespace, from
// informers in the scheduler's informer factory and keeps no other state but lookup tables
// derived from them: slots being handed out are the framework's to track (assume and
// reserve). The scheduler's own event handlers see no Lease (a cluster event on Leases would
// make it watch every Lease of the cluster, the kubelets' included): a renewal that turns a
// node fresh wakes the Pods waiting for it through the plugin's table (Placement.activate).
package placement
