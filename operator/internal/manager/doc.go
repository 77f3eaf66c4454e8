// Package manager assembles the operator: a controller-runtime manager with the
// VmafxJob, VmafxNode, VmafxModelTraining, VmafxComparison and VmafxLadder reconcilers,
// their cache indexes, metrics, health probes and leader election, all from one
// config.Config.
package manager
