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
// work it did not do.
//
// Kernel is also a vmaf.FrameOffload: each scoring goroutine's worker
// records whole frames (motion, VIF and ADM together, from one upload of
// the pair into persistently mapped staging, and the v1 models' SpEED
// chroma and CAMBI with them) into a ring of two batches of up to eight
// frames, one command buffer and one submission a batch, and waits on a
// batch's fence only when its frames' numbers are wanted. The passes write
// per-row integer sums and reduce passes add them on the device (ADM's rows
// rounded first as vmaf rounds them), so 53 integers a frame come back,
// with SpEED's decimated pictures and CAMBI's c-values where the model has
// them; vmaf derives the scores from them in its own float and double
// steps. A frame's reference stays on the device for the next frames'
// motion. Workers are kept by the Kernel for the next Score of the same
// configuration. See docs/worker.md for the design and the memory it
// takes.
package vkkernel
