// Package agent runs the device plugin: it discovers the devices, starts the health
// watcher, keeps the gRPC server registered with the kubelet across kubelet restarts,
// runs the VmafxNode heartbeat and serves metrics and health probes, until its context
// ends. The binary's main only parses the configuration and calls Run.
package agent
