// Package slots is the device plugin's resource manager: it turns discovered devices
// into slots (<vendor>-<index>-slot-<k>), keeps their health, validates allocation
// requests and answers them from responses precomputed per device, and chooses
// preferred allocations. It knows nothing of gRPC or the kubelet; the server package
// translates.
package slots
