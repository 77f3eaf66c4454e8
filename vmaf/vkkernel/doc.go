// Package vkkernel computes vmaf's features on a Vulkan device, with
// GLSL compute shaders (shaders/*.comp, compiled to SPIR-V by `make
// generate` and embedded) that reproduce the CPU kernel's integers exactly:
// integer arithmetic with 64-bit accumulators where the CPU path has them,
// and, in the two places libvmaf computes in double precision (VIF's log
// numerator, ADM's decoupling), the same IEEE double operations.
//
// Kernel implements vmaf.Offload: motion, VIF and ADM run on the device,
// and SpEED chroma's per-pixel stages (vmaf.SpeedOffloader: float32
// filters and double covariance sums in the CPU's order, every operation
// precise, the divisions rounded by integer operations; speed.go), and
// CAMBI up to its pooling (vmaf.CAMBIOffloader; cambi.go); on a device
// without shaderFloat64 only motion and CAMBI do, and Kernel.Features
// says which features ran where, so a result never claims the device for
// work it did not do. The passes write per-row integer sums; vmaf
// adds them with its own roundings and finishes the scores.
//
// Each scoring goroutine gets its own worker: per feature a command stream,
// a staging buffer it writes frames into, device-local buffers the stream
// copies them to, and a readback buffer. Goroutines share the device's
// queue, so one goroutine's upload and compute overlap the others'; see
// docs/worker.md for the memory this takes.
package vkkernel
