// Package metrics defines the device plugin's Prometheus metrics: slots by state,
// Allocate count and latency, kubelet registrations and heartbeat failures. Every
// collector lives in one Metrics value registered with a registry the caller owns, so
// tests get fresh counters.
package metrics
