// vif_stat_v.comp: the vertical pass of VIF's statistic (vmaf
// vifState.statistic): Gaussian-weighted sums of ref, dis, ref^2, dis^2 and
// ref*dis over mirrored rows; the means are rounded by shiftA/roundA, the
// second moments by shiftB/roundB. Each fits 32 bits (see vif.go), so the
// five results are stored as five planes of 32-bit words, one buffer each
// (one buffer of all five would pass maxStorageBufferRange sooner).
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "vif_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;
layout(std430, binding = 0) readonly buffer Ref { uint ref[]; };
layout(std430, binding = 1) readonly buffer Dis { uint dis[]; };
layout(std430, binding = 2) writeonly buffer Mu1 { uint vmu1[]; };
layout(std430, binding = 3) writeonly buffer Mu2 { uint vmu2[]; };
layout(std430, binding = 4) writeonly buffer XX { uint vxx[]; };
layout(std430, binding = 5) writeonly buffer YY { uint vyy[]; };
layout(std430, binding = 6) writeonly buffer XY { uint vxy[]; };

void main() {
    int j = int(gl_GlobalInvocationID.x);
    int i = int(gl_GlobalInvocationID.y);
    if (j >= w || i >= h) {
        return;
    }
    int fw = vifWidth(scale);
    int hw = fw / 2;
    uint64_t mu1 = 0, mu2 = 0, xx = 0, yy = 0, xy = 0;
    for (int k = 0; k < fw; k++) {
        int idx = mirror(i - hw + k, h) * w + j;
        uint64_t f = vifTap(k);
        uint64_t a = uint64_t(PIXEL(ref, idx));
        uint64_t b = uint64_t(PIXEL(dis, idx));
        mu1 += f * a;
        mu2 += f * b;
        xx += f * (a * a);
        yy += f * (b * b);
        xy += f * (a * b);
    }
    int p = i * w + j;
    vmu1[p] = uint((mu1 + roundA) >> shiftA);
    vmu2[p] = uint((mu2 + roundA) >> shiftA);
    vxx[p] = uint((xx + roundB) >> shiftB);
    vyy[p] = uint((yy + roundB) >> shiftB);
    vxy[p] = uint((xy + roundB) >> shiftB);
}
