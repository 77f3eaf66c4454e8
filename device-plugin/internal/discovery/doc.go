// Package discovery finds the node's scoring devices under a host root: NVIDIA, AMD
// and Intel GPUs, identified by their PCI vendor in sysfs (never by device names), with
// the device nodes a container needs to use each one; or, without a GPU, the node's
// CPUs. It also sizes the slots each device is offered as and probes whether a device
// is still there, for the health checks.
package discovery
