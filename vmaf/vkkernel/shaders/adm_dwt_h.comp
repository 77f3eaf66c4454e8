// adm_dwt_h.comp: the horizontal pass of one DWT level: the vertical pass's
// low and high planes into the four bands (a, h, v, d) at the band stride.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "adm_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;
layout(std430, binding = 0) readonly buffer Tmp { int tmp[]; };
layout(std430, binding = 1) writeonly buffer Bands { int bands[]; };

const int64_t addHS[3] = int64_t[](16384, 32768, 16384);
const uint shiftHS[3] = uint[](15u, 16u, 15u);

void main() {
    int j = int(gl_GlobalInvocationID.x);
    int i = int(gl_GlobalInvocationID.y);
    int hh = (h + 1) / 2;
    int wh = (w + 1) / 2;
    if (j >= wh || i >= hh) {
        return;
    }
    int n = hh * w;
    int row = i * w;
    int j0 = dwtIndex(j, 0, w), j1 = dwtIndex(j, 1, w), j2 = dwtIndex(j, 2, w), j3 = dwtIndex(j, 3, w);
    int l0 = tmp[row + j0], l1 = tmp[row + j1], l2 = tmp[row + j2], l3 = tmp[row + j3];
    int g0 = tmp[n + row + j0], g1 = tmp[n + row + j1], g2 = tmp[n + row + j2], g3 = tmp[n + row + j3];
    int a, v, hb, d;
    if (scale == 0) {
        a = narrow16((dwtLo[0] * l0 + dwtLo[1] * l1 + dwtLo[2] * l2 + dwtLo[3] * l3 + 32768) >> 16);
        v = narrow16((dwtHi[0] * l0 + dwtHi[1] * l1 + dwtHi[2] * l2 + dwtHi[3] * l3 + 32768) >> 16);
        hb = narrow16((dwtLo[0] * g0 + dwtLo[1] * g1 + dwtLo[2] * g2 + dwtLo[3] * g3 + 32768) >> 16);
        d = narrow16((dwtHi[0] * g0 + dwtHi[1] * g1 + dwtHi[2] * g2 + dwtHi[3] * g3 + 32768) >> 16);
    } else {
        int64_t add = addHS[scale - 1];
        uint sh = shiftHS[scale - 1];
        a = int((int64_t(dwtLo[0]) * l0 + int64_t(dwtLo[1]) * l1 + int64_t(dwtLo[2]) * l2 + int64_t(dwtLo[3]) * l3 + add) >> sh);
        v = int((int64_t(dwtHi[0]) * l0 + int64_t(dwtHi[1]) * l1 + int64_t(dwtHi[2]) * l2 + int64_t(dwtHi[3]) * l3 + add) >> sh);
        hb = int((int64_t(dwtLo[0]) * g0 + int64_t(dwtLo[1]) * g1 + int64_t(dwtLo[2]) * g2 + int64_t(dwtLo[3]) * g3 + add) >> sh);
        d = int((int64_t(dwtHi[0]) * g0 + int64_t(dwtHi[1]) * g1 + int64_t(dwtHi[2]) * g2 + int64_t(dwtHi[3]) * g3 + add) >> sh);
    }
    int p = i * stride + j;
    bands[p] = a;
    bands[plane + p] = hb;
    bands[2 * plane + p] = v;
    bands[3 * plane + p] = d;
}
