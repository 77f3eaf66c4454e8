// Package server is the device plugin's side of the kubelet device plugin API
// (deviceplugin/v1beta1): it serves the gRPC DevicePlugin service on a unix socket in
// the kubelet's device plugin directory, registers the resource with the kubelet, and
// translates ListAndWatch, Allocate and GetPreferredAllocation to the slots it holds.
// Its surface is Start, Stop and Devices; restarting it when the kubelet restarts is
// the caller's job.
package server
