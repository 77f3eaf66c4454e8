// Package heartbeat keeps the node's VmafxNode alive: it creates the VmafxNode when it
// is missing (spec from discovery), and every interval writes status.lastHeartbeat,
// status.device and status.slots with a status merge patch, so the fields the operator
// owns in the same status (healthy, jobs, conditions) are never overwritten. It is the
// only writer of lastHeartbeat. When the API server is unreachable it retries with
// backoff; nothing else in the plugin waits for it.
package heartbeat
