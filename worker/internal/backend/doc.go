// Package backend chooses the compute backend that scores a job.
//
// The device plugin tells the worker which backend its slot offers through
// VMAFX_BACKEND (cuda, hip, sycl, vulkan, cpu or auto). This build has the
// CPU backend, the Go kernel in vmaf, and the Vulkan backend, the
// same kernel with its features on a Vulkan device (vmaf/vkkernel),
// which also serves cuda, hip and sycl slots: there are no vendor-specific
// kernels. Select falls back to the CPU, with a reason naming what is
// missing, when the backend asked for cannot run, so a result always names
// the backend that really ran.
package backend
