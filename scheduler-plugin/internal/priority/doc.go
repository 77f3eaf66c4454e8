// Package priority is the VmafxPriority scheduler plugin: the QueueSort of vmafx-scheduler.
// It decides which pending worker Pod the scheduler tries next when several wait.
//
// Pods are ordered by their Kubernetes priority (Pod.spec.priority, from a PriorityClass),
// then by their job's spec.priority (the annotation vmafx.dev/priority that the operator
// copies onto each worker Pod), then first come first served (the time the Pod entered the
// scheduling queue). The Kubernetes priority comes first because preemption and eviction
// use it: a queue that disagreed with them would place a Pod only for it to be preempted.
//
// The job's priority travels in an annotation rather than in Pod.spec.priority because the
// API server's Priority admission plugin refuses a Pod that sets spec.priority to a value
// other than its PriorityClass's (or 0 without one); the operator cannot set it directly.
//
// kube-scheduler allows exactly one QueueSort plugin, the same in every profile, since all
// profiles share one queue.
package priority
