// vif_subsample_h.comp: the horizontal pass of VIF's subsampling: columns
// 0, 2, 4 ... of the vertical pass filtered (mirrored columns) and rounded
// to Q16, giving the next scale's (w/2) x (h/2) images.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "vif_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;
layout(std430, binding = 0) readonly buffer TmpRef { uint tmpRef[]; };
layout(std430, binding = 1) readonly buffer TmpDis { uint tmpDis[]; };
layout(std430, binding = 2) writeonly buffer OutRef { uint outRef[]; };
layout(std430, binding = 3) writeonly buffer OutDis { uint outDis[]; };

void main() {
    int oj = int(gl_GlobalInvocationID.x);
    int oi = int(gl_GlobalInvocationID.y);
    int ow = w / 2;
    if (oj >= ow || oi >= h / 2) {
        return;
    }
    int fw = vifWidth(scale);
    int hw = fw / 2;
    uint64_t r = 0, d = 0;
    for (int k = 0; k < fw; k++) {
        int idx = oi * w + mirror(2 * oj - hw + k, w);
        uint64_t f = vifTap(k);
        r += f * uint64_t(tmpRef[idx]);
        d += f * uint64_t(tmpDis[idx]);
    }
    outRef[oi * ow + oj] = uint((r + 32768) >> 16);
    outDis[oi * ow + oj] = uint((d + 32768) >> 16);
}
