// Package scheme adds vmafx-scheduler's plugin args to kube-scheduler's schemes. Import it
// (blank) wherever a KubeSchedulerConfiguration that configures the VMAFX plugins is
// decoded: the vmafx-scheduler command does, and so do the tests that load its config.
package scheme
