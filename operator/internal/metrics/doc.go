// Package metrics defines the operator's Prometheus metrics and registers them with
// controller-runtime's registry, which the manager serves next to its own
// (controller_runtime_reconcile_total, controller_runtime_reconcile_errors_total, ...).
package metrics
