// adm_csf.comp: vmaf csf0 and csfS over the decoupling region: three
// bands of the decoupled buffer (from plane src) weighted by the contrast
// sensitivity of the run's options (irf0..irf2), and the masking filter's
// input |csf|/30, into a CSF buffer.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "adm_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;
layout(std430, binding = 0) readonly buffer Dec { int dec[]; };
layout(std430, binding = 1) writeonly buffer Csf { int csf[]; };

const int shifts0[3] = int[](15, 15, 17);
const int adds0[3] = int[](16384, 16384, 65535);

void main() {
    int j = left + int(gl_GlobalInvocationID.x);
    int i = top + int(gl_GlobalInvocationID.y);
    if (j >= right || i >= bottom) {
        return;
    }
    int x = i * stride + j;
    for (int t = 0; t < 3; t++) {
        int s = dec[(src + t) * plane + x];
        int v, f;
        int64_t irf = t == 0 ? irf0 : t == 1 ? irf1 : irf2;
        if (scale == 0) {
            // int32 products, as adm_csf's: the weight is below 2^16 and
            // the coefficient an int16.
            v = narrow16((int(irf) * s + adds0[t]) >> shifts0[t]);
            f = narrow16((4369 * abs(v) + 2048) >> 12);
        } else {
            v = int((irf * int64_t(s) + (int64_t(1) << 27)) >> 28);
            f = int((int64_t(143165577) * int64_t(abs(v)) + int64_t(-2147483648)) >> 32);
        }
        csf[t * plane + x] = v;
        csf[(3 + t) * plane + x] = f;
    }
}
