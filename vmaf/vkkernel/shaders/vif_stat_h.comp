// vif_stat_h.comp: the horizontal pass of VIF's statistic and its per-pixel
// information terms (vmaf vifPixel, vifNumLog), summed per row: one
// workgroup per row writes the row's numLog, denLog, numNonLog and denNonLog
// (int64); the host adds the rows.
//
// The log-domain numerator is computed in double precision exactly as the
// CPU kernel (and libvmaf) computes it: IEEE double division, products and
// differences, each rounded once (precise: no fused multiply-add), and
// truncations to integers. This pass therefore needs shaderFloat64 and a
// device whose double arithmetic is correctly rounded.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "vif_common.glsl"

layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer Mu1 { uint vmu1[]; };
layout(std430, binding = 1) readonly buffer Mu2 { uint vmu2[]; };
layout(std430, binding = 2) readonly buffer XX { uint vxx[]; };
layout(std430, binding = 3) readonly buffer YY { uint vyy[]; };
layout(std430, binding = 4) readonly buffer XY { uint vxy[]; };
layout(std430, binding = 5) readonly buffer Log2 { uint log2t[]; };
layout(std430, binding = 6) writeonly buffer Rows { int64_t rows[]; };

const int sigmaNsq = 65536 << 1;

shared int64_t sNumLog[128];
shared int64_t sDenLog[128];
shared int64_t sNumNonLog[128];
shared int64_t sDenNonLog[128];

int msb64(uint64_t x) {
    uint hi = uint(x >> 32);
    return hi != 0u ? 32 + findMSB(hi) : findMSB(uint(x));
}

// log2of32 and log2of64 are vif.go's: log2(x)*2048 from the table's best 16 bits.
int64_t log2of32(uint x) {
    int k = findMSB(x) - 15;
    return int64_t(log2t[x >> k]) + 2048 * int64_t(k);
}

int64_t log2of64(uint64_t x) {
    int k = msb64(x) - 15;
    return int64_t(log2t[uint(x >> k)]) + 2048 * int64_t(k);
}

int64_t numLogTerm(int sigma1Sq, int sigma2Sq, int sigma12) {
    double egl = uint64BitsToDouble(eglBits);
    double eps = uint64BitsToDouble(epsBits);
    precise double g = double(sigma12) / (double(sigma1Sq) + eps);
    precise double sv = double(sigma2Sq) - g * double(sigma12);
    int svSq = max(int(sv), 0);
    g = min(g, egl);
    uint numer1 = uint(svSq + sigmaNsq);
    precise double gg = g * g;
    precise double t = gg * double(sigma1Sq);
    int64_t numer1Tmp = int64_t(t) + int64_t(numer1);
    return log2of64(uint64_t(numer1Tmp)) - log2of64(uint64_t(numer1));
}

void main() {
    int i = int(gl_WorkGroupID.x);
    int lid = int(gl_LocalInvocationID.x);
    int fw = vifWidth(scale);
    int hw = fw / 2;
    int base = i * w;
    int64_t numLog = 0, denLog = 0, numNonLog = 0, denNonLog = 0;
    for (int j = lid; j < w; j += 128) {
        uint64_t m1 = 0, m2 = 0, sxx = 0, syy = 0, sxy = 0;
        for (int k = 0; k < fw; k++) {
            int p = base + mirror(j - hw + k, w);
            uint64_t f = vifTap(k);
            m1 += f * uint64_t(vmu1[p]);
            m2 += f * uint64_t(vmu2[p]);
            sxx += f * uint64_t(vxx[p]);
            syy += f * uint64_t(vyy[p]);
            sxy += f * uint64_t(vxy[p]);
        }
        uint mu1Sq = uint((m1 * m1 + 0x80000000ul) >> 32);
        uint mu2Sq = uint((m2 * m2 + 0x80000000ul) >> 32);
        uint mu1mu2 = uint((m1 * m2 + 0x80000000ul) >> 32);
        int sigma1Sq = int(uint((sxx + 32768ul) >> 16) - mu1Sq);
        int sigma2Sq = max(int(uint((syy + 32768ul) >> 16) - mu2Sq), 0);
        int sigma12 = int(uint((sxy + 32768ul) >> 16) - mu1mu2);
        if (sigma1Sq >= sigmaNsq) {
            denLog += log2of32(uint(sigmaNsq + sigma1Sq)) - 2048 * 17;
            if (sigma12 > 0 && sigma2Sq > 0) {
                numLog += numLogTerm(sigma1Sq, sigma2Sq, sigma12);
            }
        } else {
            numNonLog += int64_t(sigma2Sq);
            denNonLog += 1;
        }
    }
    sNumLog[lid] = numLog;
    sDenLog[lid] = denLog;
    sNumNonLog[lid] = numNonLog;
    sDenNonLog[lid] = denNonLog;
    barrier();
    for (int s = 64; s > 0; s >>= 1) {
        if (lid < s) {
            sNumLog[lid] += sNumLog[lid + s];
            sDenLog[lid] += sDenLog[lid + s];
            sNumNonLog[lid] += sNumNonLog[lid + s];
            sDenNonLog[lid] += sDenNonLog[lid + s];
        }
        barrier();
    }
    if (lid == 0) {
        rows[4 * i] = sNumLog[0];
        rows[4 * i + 1] = sDenLog[0];
        rows[4 * i + 2] = sNumNonLog[0];
        rows[4 * i + 3] = sDenNonLog[0];
    }
}
