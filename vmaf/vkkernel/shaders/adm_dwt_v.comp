// adm_dwt_v.comp: the vertical pass of one DWT level (vmaf dwt0 for
// scale 0 on the packed luma plane, dwtS for scales 1..3 on band a), into
// two planes (low, high) of w words per row.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "adm_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;
layout(std430, binding = 0) readonly buffer Src { uint srcw[]; };
layout(std430, binding = 1) writeonly buffer Tmp { int tmp[]; };

const int64_t addVS[3] = int64_t[](0, 32768, 32768);
const uint shiftVS[3] = uint[](0u, 16u, 16u);

int srcAt(int row, int j) {
    if (scale == 0) {
        return SAMPLE(srcw, row * w + j);
    }
    return int(srcw[row * stride + j]);
}

void main() {
    int j = int(gl_GlobalInvocationID.x);
    int i = int(gl_GlobalInvocationID.y);
    int hh = (h + 1) / 2;
    if (j >= w || i >= hh) {
        return;
    }
    int u0 = srcAt(dwtIndex(i, 0, h), j), u1 = srcAt(dwtIndex(i, 1, h), j);
    int u2 = srcAt(dwtIndex(i, 2, h), j), u3 = srcAt(dwtIndex(i, 3, h), j);
    int lo, hi;
    if (scale == 0) {
        int addVP = 1 << (bpc - 1);
        int l = dwtLo[0] * u0 + dwtLo[1] * u1 + dwtLo[2] * u2 + dwtLo[3] * u3 - 46342 * addVP;
        int g = dwtHi[0] * u0 + dwtHi[1] * u1 + dwtHi[2] * u2 + dwtHi[3] * u3;
        lo = narrow16((l + addVP) >> bpc);
        hi = narrow16((g + addVP) >> bpc);
    } else {
        int64_t add = addVS[scale - 1];
        uint sh = shiftVS[scale - 1];
        int64_t l = int64_t(dwtLo[0]) * u0 + int64_t(dwtLo[1]) * u1 + int64_t(dwtLo[2]) * u2 + int64_t(dwtLo[3]) * u3;
        int64_t g = int64_t(dwtHi[0]) * u0 + int64_t(dwtHi[1]) * u1 + int64_t(dwtHi[2]) * u2 + int64_t(dwtHi[3]) * u3;
        lo = int((l + add) >> sh);
        hi = int((g + add) >> sh);
    }
    int n = hh * w;
    tmp[i * w + j] = lo;
    tmp[n + i * w + j] = hi;
}
