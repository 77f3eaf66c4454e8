// Package selftest checks a Vulkan device before it is trusted with scores:
// it scores a small built-in pair, synthesised in code, once with the device
// computing what vkkernel offloads and once on the CPU kernel, and requires
// every per-frame feature to be identical. Shader compilers of some vendors
// are known to give wrong numbers without any error; a device that fails the
// self-test must not score. The worker's Vulkan backend runs it when it
// opens a device and leaves its verdict for the device plugin, which marks a
// device that failed Unhealthy (docs/worker.md, docs/device-plugin.md). The
// CPU's side needs no device: a worker that expects a GPU scores it while the
// device opens (Prepare).
//
// The pair covers every feature the device computes: vmaf_v0.6.1 at a size
// whose four VIF and ADM scales are all non-trivial, with motion between
// frames, and a VMAF v1 model (SpEED chroma and CAMBI) at CAMBI's smallest
// size. It costs a few hundred milliseconds on lavapipe.
package selftest
