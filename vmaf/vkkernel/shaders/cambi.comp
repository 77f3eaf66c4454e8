// cambi.comp: CAMBI's passes up to the c-values (vmaf CAMBIConfig), one
// invocation per pixel, the pass chosen by op; the host records them in
// order for a frame (conversion, anti-dithering, mask, then per scale the
// decimation, the mode filter, the band and the c-values) and pools the
// c-values.
// Pictures and masks live in one work buffer at the offsets pushed, one
// word per pixel. Everything is integer but the c-value, one correctly
// rounded float product of an integer rounded to float by integer
// operations.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(push_constant) uniform Push {
    int op;        // 0 conv, 1 dither, 2 mask, 3 decimate, 4 mode, 5 c-values, 6 band
    int w, h;      // the output's size
    int srcW;      // decimate: the input's width
    int src, dst, srcM, dstM, outOff; // word offsets in work and cvals
    int inW;       // conv: the input plane's width
    int up, down, round; // conv: ((v + round) << up) >> down
    int threshold; // mask
    int base, size, pad, nd; // c-values
    int oCols;     // tab: rows at 0, columns at oCols
};

layout(std430, binding = 0) readonly buffer In { uint inp[]; };
layout(std430, binding = 1) readonly buffer Tab { int tab[]; };
layout(std430, binding = 2) buffer Work { uint work[]; };
layout(std430, binding = 3) readonly buffer Diffs { uint diffs[]; };
layout(std430, binding = 4) readonly buffer Weights { int weights[]; };
layout(std430, binding = 5) readonly buffer Recip { float recip[]; };
layout(std430, binding = 6) writeonly buffer Out { float cvals[]; };

// i2f is float(x) for x >= 0, rounded to nearest, ties to even.
float i2f(int x) {
    if (x < (1 << 24)) {
        return float(x);
    }
    int shift = findMSB(x) - 23;
    int mant = x >> shift;
    int rem = x & ((1 << shift) - 1);
    int halfway = 1 << (shift - 1);
    if (rem > halfway || (rem == halfway && (mant & 1) == 1)) {
        mant++;
    }
    // mant <= 2^24 is exact in float, and so is its product with 2^shift.
    return float(mant) * uintBitsToFloat(uint(127 + shift) << 23);
}

uint px(int off, int i, int j) {
    return work[off + i * w + j];
}

// zd is the zero derivative at (i, j): equal to the right neighbour (the
// last column counts as equal) and to the one below (the last row compares
// with itself).
bool zd(int i, int j) {
    uint c = px(src, i, j);
    uint below = px(src, min(i + 1, h - 1), j);
    return (j == w - 1 || c == px(src, i, j + 1)) && c == below;
}

uint mode3(uint a, uint b, uint c) {
    if (a == b || a == c) {
        return a;
    }
    if (b == c) {
        return b;
    }
    return min(a, min(b, c));
}

// hmode is the mode filter's horizontal pass at (i, j): edge columns kept.
uint hmode(int i, int j) {
    if (j == 0 || j == w - 1) {
        return px(src, i, j);
    }
    return mode3(px(src, i, j - 1), px(src, i, j), px(src, i, j + 1));
}

// band is a pixel's histogram row, or -1 where it counts nothing.
int band(int i, int j) {
    int v = int(px(src, i, j)) - base;
    return px(srcM, i, j) != 0u && v >= 0 && v < size ? v + nd : -1;
}

// cvalue reads the band pass's rows at src.
float cvalue(int i, int j) {
    int r = int(px(src, i, j));
    uint m = r < 0 ? 0u : diffs[r];
    if (m == 0u) {
        return 0.0;
    }
    int cnt[65];
    for (int k = 0; k <= 2 * nd; k++) {
        cnt[k] = 0;
    }
    int i1 = min(i + pad, h - 1), j0 = max(j - pad, 0), j1 = min(j + pad, w - 1);
    for (int ii = max(i - pad, 0); ii <= i1; ii++) {
        for (int jj = j0; jj <= j1; jj++) {
            int b = int(px(src, ii, jj));
            int d = b - r;
            if (b >= 0 && d >= -nd && d <= nd) {
                cnt[d + nd]++;
            }
        }
    }
    int p0 = cnt[nd];
    precise float best = 0.0;
    while (m != 0u) {
        int d = findLSB(m);
        m &= m - 1u;
        int p = max(cnt[nd + d + 1], cnt[nd - d - 1]);
        precise float val = i2f(weights[d] * p0 * p) * recip[p + p0];
        best = max(best, val);
    }
    return best;
}

void main() {
    int j = int(gl_GlobalInvocationID.x);
    int i = int(gl_GlobalInvocationID.y);
    if (j >= w || i >= h) {
        return;
    }
    int o = i * w + j;
    if (op == 0) {
        uint v = uint(SAMPLE(inp, tab[i] * inW + tab[oCols + j]));
        work[dst + o] = ((v + uint(round)) << up) >> down;
    } else if (op == 1) {
        uint a = px(src, i, j);
        if (i < h - 1) {
            uint c = px(src, i + 1, j);
            work[dst + o] = j < w - 1 ? (a + px(src, i, j + 1) + c + px(src, i + 1, j + 1)) >> 2 : (a + c) >> 1;
        } else {
            work[dst + o] = j < w - 1 ? (a + px(src, i, j + 1)) >> 1 : a;
        }
    } else if (op == 2) {
        int n = 0;
        for (int ii = max(i - 3, 0); ii <= min(i + 3, h - 1); ii++) {
            for (int jj = max(j - 3, 0); jj <= min(j + 3, w - 1); jj++) {
                n += zd(ii, jj) ? 1 : 0;
            }
        }
        work[dstM + o] = n > threshold ? 1u : 0u;
    } else if (op == 3) {
        int s = 2 * i * srcW + 2 * j;
        work[dst + o] = work[src + s];
        work[dstM + o] = work[srcM + s];
    } else if (op == 4) {
        if (i == 0 || i == h - 1) {
            work[dst + o] = px(src, i, j);
        } else {
            work[dst + o] = mode3(hmode(i - 1, j), hmode(i, j), hmode(i + 1, j));
        }
    } else if (op == 5) {
        cvals[outOff + o] = cvalue(i, j);
    } else {
        work[dst + o] = uint(band(i, j));
    }
}
