// adm_den.comp: the rows of the denominator (vmaf csfDen0, csfDenS):
// per scored row, each band's sum of cubed reference coefficients, with
// scales 1..3's roundings (shiftA/addA for the square, shiftB/addB for the
// cube). One workgroup per row; the host rounds and adds the rows.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "adm_common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Ref { int ref[]; };
layout(std430, binding = 1) writeonly buffer Rows { uint64_t rows[]; };

shared uint64_t part[3][64];

void main() {
    int i = top + int(gl_WorkGroupID.x);
    int lid = int(gl_LocalInvocationID.x);
    uint64_t s[3] = uint64_t[](0ul, 0ul, 0ul);
    for (int j = left + lid; j < right; j += 64) {
        for (int t = 0; t < 3; t++) {
            int c = ref[(1 + t) * plane + i * stride + j];
            if (scale == 0) {
                uint64_t u = uint64_t(uint(abs(c)) & 0xffffu);
                s[t] += u * u * u;
            } else {
                uint64_t u = uint64_t(uint(abs(c)));
                s[t] += ((((u * u) + addA) >> shiftA) * u + addB) >> shiftB;
            }
        }
    }
    for (int t = 0; t < 3; t++) {
        part[t][lid] = s[t];
    }
    barrier();
    for (int k = 32; k > 0; k >>= 1) {
        if (lid < k) {
            for (int t = 0; t < 3; t++) {
                part[t][lid] += part[t][lid + k];
            }
        }
        barrier();
    }
    if (lid == 0) {
        for (int t = 0; t < 3; t++) {
            rows[rowsOff + 3 * i + t] = part[t][0];
        }
    }
}
