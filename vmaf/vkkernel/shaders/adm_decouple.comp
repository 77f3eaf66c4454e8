// adm_decouple.comp: vmaf decouple and admDecoupleOne over the
// decoupling region: the distorted bands split into the restored part r
// and the additive part a. The angle test and the gain limit use double
// precision exactly as the CPU kernel does (precise: no fused operations).
// It also weighs both parts by the contrast sensitivity (vmaf csf0 and
// csfS, csfOne), which reads each coefficient alone: done here, where the
// coefficient is made, it needs no pass and no barrier of its own (one
// phase fewer a scale, docs/benchmarks.md, "On the H200 again").
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "adm_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;
layout(std430, binding = 0) readonly buffer Ref { int ref[]; };
layout(std430, binding = 1) readonly buffer Dis { int dis[]; };
layout(std430, binding = 2) writeonly buffer Dec { int dec[]; };
// The CSF of a (for DLM's masking) and of r (for AIM's).
layout(std430, binding = 3) writeonly buffer CsfA { int csfA[]; };
layout(std430, binding = 4) writeonly buffer CsfR { int csfR[]; };

ivec2 decoupleOne(int o, int t, bool angle) {
    bool nar = scale == 0;
    int64_t k = 32768;
    if (o != 0) {
        uint ab = uint(o < 0 ? -o : o);
        int64_t sign = o < 0 ? -1 : 1;
        int shift = 0;
        uint msb = ab;
        if (ab >= 32768u) {
            shift = findMSB(ab) - 14;
            msb = (ab + (1u << (shift - 1))) >> shift;
        }
        int64_t div = int64_t((1u << 30) / msb);
        k = (div * int64_t(t) * sign + (int64_t(1) << (14 + shift))) >> (15 + shift);
        k = min(max(k, int64_t(0)), int64_t(32768));
    }
    int r = int((k * int64_t(o) + 16384) >> 15);
    if (nar) {
        r = narrow16(r);
    }
    if (angle && k > 0 && o != 0) {
        precise double v = double(r) * uint64BitsToDouble(eglBits);
        double td = double(t);
        if (o > 0) {
            if (!(v < td)) {
                v = td;
            }
        } else if (!(v > td)) {
            v = td;
        }
        r = int(v);
        if (nar) {
            r = narrow16(r);
        }
    }
    int a = t - r;
    if (nar) {
        a = narrow16(a);
    }
    return ivec2(r, a);
}

void main() {
    int j = left + int(gl_GlobalInvocationID.x);
    int i = top + int(gl_GlobalInvocationID.y);
    if (j >= right || i >= bottom) {
        return;
    }
    int x = i * stride + j;
    int oh = ref[plane + x], ov = ref[2 * plane + x], od = ref[3 * plane + x];
    int th = dis[plane + x], tv = dis[2 * plane + x], td = dis[3 * plane + x];
    int64_t otDp = int64_t(oh) * th + int64_t(ov) * tv;
    int64_t oMag = int64_t(oh) * oh + int64_t(ov) * ov;
    int64_t tMag = int64_t(th) * th + int64_t(tv) * tv;
    precise double dp = double(float(otDp)) / 4096.0;
    precise double om = double(float(oMag)) / 4096.0;
    precise double tm = double(float(tMag)) / 4096.0;
    precise double lhs = dp * dp;
    precise double rhs = uint64BitsToDouble(cosBits) * om * tm;
    bool angle = dp >= 0 && lhs >= rhs;
    ivec2 rh = decoupleOne(oh, th, angle);
    ivec2 rv = decoupleOne(ov, tv, angle);
    ivec2 rd = decoupleOne(od, td, angle);
    dec[x] = rh.x;
    dec[plane + x] = rv.x;
    dec[2 * plane + x] = rd.x;
    dec[3 * plane + x] = rh.y;
    dec[4 * plane + x] = rv.y;
    dec[5 * plane + x] = rd.y;
    ivec2 parts[3] = ivec2[](rh, rv, rd);
    for (int t = 0; t < 3; t++) {
        ivec2 cr = csfOne(parts[t].x, t);
        ivec2 ca = csfOne(parts[t].y, t);
        csfR[t * plane + x] = cr.x;
        csfR[(3 + t) * plane + x] = cr.y;
        csfA[t * plane + x] = ca.x;
        csfA[(3 + t) * plane + x] = ca.y;
    }
}
