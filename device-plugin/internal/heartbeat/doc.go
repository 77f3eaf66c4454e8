// Package heartbeat keeps the node's VmafxNode alive the way the kubelet keeps its Node
// alive: it creates the VmafxNode when it is missing (spec from discovery), and every
// interval renews the node's coordination.k8s.io/v1 Lease (apis/vmafx/v1 NodeLeaseName:
// spec.renewTime, holderIdentity the node, leaseDurationSeconds, owned by the VmafxNode so
// it goes with it). The VmafxNode's status (device, slots) is patched only when it changes,
// with a merge patch that names only those fields, so the ones the operator owns
// (healthy, jobs, conditions) are never overwritten: a steady node costs one Lease update
// per period and no custom-resource write.
//
// For a while after it starts (Options.StatusHeartbeatFor) the plugin also stamps the
// deprecated status.lastHeartbeat on every beat, so an operator and vmafx-scheduler of the
// previous release, which read only that, still see the node alive while a rolling upgrade
// replaces them. When the API server is unreachable it retries with backoff; nothing else
// in the plugin waits for it.
package heartbeat
