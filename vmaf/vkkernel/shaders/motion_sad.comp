// motion_sad.comp: the horizontal pass of the motion feature and its sum:
// one workgroup per row filters the vertical pass's row with the 5-tap
// Gaussian (mirrored columns, rounded to Q16) and sums the absolute values
// into the row's 32-bit SAD, which wraps as libvmaf's uint32_t row sum does.
// The host adds the rows in 64 bits.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer Blur { int blur[]; };
layout(std430, binding = 1) writeonly buffer RowSAD { uint rowsad[]; };
layout(push_constant) uniform Push { int w; int h; };

const int64_t f0 = 3571, f1 = 16004, f2 = 26386;

shared uint partial[256];

void main() {
    int i = int(gl_WorkGroupID.x);
    int lid = int(gl_LocalInvocationID.x);
    int base = i * w;
    uint sum = 0u;
    for (int j = lid; j < w; j += 256) {
        int64_t acc = f0 * (int64_t(blur[base + mirror(j - 2, w)]) + int64_t(blur[base + mirror(j + 2, w)]))
                    + f1 * (int64_t(blur[base + mirror(j - 1, w)]) + int64_t(blur[base + mirror(j + 1, w)]))
                    + f2 * int64_t(blur[base + j]);
        int64_t v = (acc + 32768) >> 16;
        sum += uint(v < 0 ? -v : v);
    }
    partial[lid] = sum;
    barrier();
    for (int s = 128; s > 0; s >>= 1) {
        if (lid < s) {
            partial[lid] += partial[lid + s];
        }
        barrier();
    }
    if (lid == 0) {
        rowsad[i] = partial[0];
    }
}
