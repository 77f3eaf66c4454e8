// Package vkkernel computes worker/vmaf's features on a Vulkan device, with
// GLSL compute shaders (shaders/*.comp, compiled to SPIR-V by `make
// generate` and embedded) that reproduce the CPU kernel's integers exactly:
// integer arithmetic only, 64-bit accumulators where the CPU path has them.
//
// Kernel implements vmaf.Offload. Today it offloads the motion feature
// (blur and SAD); VIF and ADM still run on the CPU (TODO(issue 17): port
// them), and Kernel.Features says which features ran where, so a result
// never claims the GPU for work it did not do.
//
// Each scoring goroutine gets its own worker: a command stream, a staging
// buffer it writes frames into, device-local frame buffers the stream
// copies them to, and a readback buffer. Goroutines share the device's
// queue, so one goroutine's upload and compute overlap the others' (and the
// CPU features'); see docs/worker.md for the memory this takes.
package vkkernel
