// Package vulkan is a small Vulkan compute runtime for the worker's GPU
// backend: it loads the system's Vulkan loader (libvulkan.so.1) at run time
// with purego, so the worker stays a CGO_ENABLED=0 Go binary, and offers just
// what compute kernels need: a device and queue, buffers, compute pipelines
// from SPIR-V, descriptor sets, command buffers and fences.
//
// Open picks the first physical device (discrete GPUs first) that has a
// compute queue and the shaderInt64 feature the integer VMAF kernels need.
// When none can be used it returns an error wrapping ErrUnavailable that
// names what is missing: the loader, any device, or 64-bit shader integers.
//
// Concurrency: a Device, its Pipelines and their descriptor pools serve
// many goroutines at once (a Score's threads make, use and free their
// workers together); the package serialises what Vulkan leaves to its user
// there, the queue's submissions and each pipeline's descriptor pool. A
// Stream, a Buffer and a DescriptorSet belong to one goroutine.
//
// Structures are laid out as the C headers lay them out on LP64 platforms
// (amd64, arm64); layout_test.go checks the sizes against vulkan_core.h.
package vulkan
