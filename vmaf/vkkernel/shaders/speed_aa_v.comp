// speed_aa_v.comp: picture_copy, the speed_prescale rescale and the
// anti-alias filter's vertical pass, at the rows SpEED keeps (multiples of
// 16): one invocation per (kept row, scaled column, picture).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "speed_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;

// conv is picture_copy: v / 2^shift - 128 (the scaling by a power of two
// is exact).
float conv(int base, int idx) {
    precise float v = float(SAMPLE(planes, base + idx)) * uintBitsToFloat(uint(127 - shift) << 23);
    precise float r = v + -128.0;
    return r;
}

// source is sample (x, y) of the picture SpEED filters (vmaf speedScaleRow
// through SpeedConfig's tables).
float source(int base, int y, int x) {
    if (method == 0) {
        return conv(base, y * stride + x);
    }
    if (method == 1) {
        return conv(base, int(tab[oRows + y]) * stride + int(tab[oCols + x]));
    }
    precise float v = 0.0;
    precise float sum = 0.0;
    for (int j = 0; j < taps; j++) {
        int yi = int(tab[oRows + y * taps + j]);
        float wy = tabf(oRowW + y * taps + j);
        for (int i = 0; i < taps; i++) {
            precise float wt = wy * tabf(oColW + x * taps + i);
            precise float term = wt * conv(base, yi * stride + int(tab[oCols + x * taps + i]));
            sum += wt;
            if (method == 2 && j == 0 && i == 0) {
                v = term; // bilinear_interpolation adds its four terms, not to 0
            } else {
                v += term;
            }
        }
    }
    if (method == 4) {
        return divf(v, sum);
    }
    return v;
}

void main() {
    int j = int(gl_GlobalInvocationID.x);
    int r = int(gl_GlobalInvocationID.y);
    int p = int(gl_GlobalInvocationID.z);
    if (j >= sw || r >= dh) {
        return;
    }
    int hw = aw / 2;
    int i = r << 4;
    int base = p * planeN;
    precise float acc = 0.0;
    for (int k = 0; k < aw; k++) {
        acc += tabf(oAA + k) * source(base, mirror(i - hw + k, sh), j);
    }
    vert[(p * dh + r) * sw + j] = acc;
}
