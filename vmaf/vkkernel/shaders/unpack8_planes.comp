// unpack8_planes.comp: widens the 8-bit chroma planes SpEED stages as bytes
// (half what 16-bit samples send over the bus) into its planes of packed
// 16-bit samples (common.glsl's SAMPLE), one after another, n samples each:
// sample g of the output is sample g % n of plane g / n, whose bytes start at
// (g / n) * stride of the source (stride a multiple of 4).
#version 450

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { int n; int stride; int planes; };

uint byteAt(int g) {
    int b = (g / n) * stride + g % n;
    return (src[b >> 2] >> ((b & 3) << 3)) & 0xffu;
}

void main() {
    // One 32-bit word of output: samples 2k and 2k+1.
    int k = int(gl_GlobalInvocationID.x);
    int total = n * planes;
    if (2 * k >= total) {
        return;
    }
    uint v = byteAt(2 * k);
    if (2 * k + 1 < total) {
        v |= byteAt(2 * k + 1) << 16;
    }
    dst[k] = v;
}
