// adm_cm.comp: the rows of the contrast measure (vmaf cm0, cmS): per
// scored row, each band's sum of the coefficient of the decoupled
// buffer's planes src.., weighted by the run's CSF (irf0..irf2), reduced
// by the 3x3 masking threshold of the CSF buffer, clamped at zero and
// cubed with libvmaf's roundings
// (shiftA/addA for h and v, shiftB/addB for d). One workgroup per row.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "adm_common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Dec { int dec[]; };
layout(std430, binding = 1) readonly buffer Csf { int csf[]; };
layout(std430, binding = 2) writeonly buffer Rows { int64_t rows[]; };

shared int64_t part[3][64];

int64_t cubeAccum(int x, int thr, int64_t addSq, uint shiftSq, int64_t addCub, uint shiftCub) {
    x = abs(x) - thr;
    if (x < 0) {
        x = 0;
    }
    int64_t x64 = int64_t(x);
    int64_t xsq = int64_t(int((x64 * x64 + addSq) >> shiftSq));
    return (xsq * x64 + addCub) >> shiftCub;
}

void main() {
    int i = top + int(gl_WorkGroupID.x);
    int lid = int(gl_LocalInvocationID.x);
    ivec2 ud = neighbors(i, h);
    int ru = ud.x * stride, rc = i * stride, rd = ud.y * stride;
    int64_t s[3] = int64_t[](0l, 0l, 0l);
    for (int j = left + lid; j < right; j += 64) {
        ivec2 lr = neighbors(j, w);
        int lj = lr.x, rj = lr.y;
        int thr = 0;
        for (int t = 0; t < 3; t++) {
            int fo = (3 + t) * plane;
            int ca = abs(csf[t * plane + rc + j]);
            int center = scale == 0 ? narrow16((8738 * ca + 2048) >> 12)
                                    : int((int64_t(286331153) * int64_t(ca) + int64_t(-2147483648)) >> 32);
            thr += csf[fo + ru + lj] + csf[fo + ru + j] + csf[fo + ru + rj] + csf[fo + rc + lj] + center +
                   csf[fo + rc + rj] + csf[fo + rd + lj] + csf[fo + rd + j] + csf[fo + rd + rj];
        }
        int sh = dec[src * plane + rc + j], sv = dec[(src + 1) * plane + rc + j], sd = dec[(src + 2) * plane + rc + j];
        if (scale == 0) {
            // int32 products that wrap, as adm_cm's i_rfactor products do.
            s[0] += cubeAccum(sh * int(irf0), thr << 10, int64_t(1) << 28, 29u, int64_t(addA), shiftA);
            s[1] += cubeAccum(sv * int(irf1), thr << 10, int64_t(1) << 28, 29u, int64_t(addA), shiftA);
            s[2] += cubeAccum(sd * int(irf2), thr << 12, int64_t(1) << 29, 30u, int64_t(addB), shiftB);
        } else {
            int xh = int((int64_t(sh) * irf0 + (int64_t(1) << 27)) >> 28);
            int xv = int((int64_t(sv) * irf1 + (int64_t(1) << 27)) >> 28);
            int xd = int((int64_t(sd) * irf2 + (int64_t(1) << 27)) >> 28);
            s[0] += cubeAccum(xh, thr, int64_t(1) << 29, 30u, int64_t(addA), shiftA);
            s[1] += cubeAccum(xv, thr, int64_t(1) << 29, 30u, int64_t(addA), shiftA);
            s[2] += cubeAccum(xd, thr, int64_t(1) << 29, 30u, int64_t(addA), shiftA);
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
