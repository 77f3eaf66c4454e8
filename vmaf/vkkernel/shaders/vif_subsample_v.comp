// vif_subsample_v.comp: the vertical pass of VIF's subsampling to the next
// scale (vmaf vifState.subsample): rows 0, 2, 4 ... of the previous
// scale's images filtered with the new scale's filter (mirrored rows),
// rounded by shiftA/roundA.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "vif_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;
layout(std430, binding = 0) readonly buffer Ref { uint ref[]; };
layout(std430, binding = 1) readonly buffer Dis { uint dis[]; };
layout(std430, binding = 2) writeonly buffer TmpRef { uint tmpRef[]; };
layout(std430, binding = 3) writeonly buffer TmpDis { uint tmpDis[]; };

void main() {
    int j = int(gl_GlobalInvocationID.x);
    int oi = int(gl_GlobalInvocationID.y);
    if (j >= w || oi >= h / 2) {
        return;
    }
    int fw = vifWidth(scale);
    int hw = fw / 2;
    int i = 2 * oi;
    uint64_t r = 0, d = 0;
    for (int k = 0; k < fw; k++) {
        int idx = mirror(i - hw + k, h) * w + j;
        uint64_t f = vifTap(k);
        r += f * uint64_t(PIXEL(ref, idx));
        d += f * uint64_t(PIXEL(dis, idx));
    }
    tmpRef[oi * w + j] = uint((r + roundA) >> shiftA);
    tmpDis[oi * w + j] = uint((d + roundA) >> shiftA);
}
