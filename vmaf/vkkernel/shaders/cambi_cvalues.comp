// cambi_cvalues.comp: CAMBI's c-values at one scale (vmaf CAMBIConfig): one
// invocation per pixel counts its own histogram row and the NumDiffs rows
// above and below it in the window around it (clipped to the picture), as
// the CPU's sliding histograms do, and keeps the largest
// float32(weight * p0 * p) * reciprocal[p0 + p] over its diffs. The
// conversion to float rounds to nearest with integer operations; the one
// float product is correctly rounded everywhere.
#version 450

layout(local_size_x = 16, local_size_y = 16) in;

layout(push_constant) uniform Push {
    int w, h;  // this scale's size
    int pad;   // half the window
    int nd;    // numDiffs
};

layout(std430, binding = 0) readonly buffer Band { int band[]; };
layout(std430, binding = 1) readonly buffer Diffs { uint diffs[]; };
layout(std430, binding = 2) readonly buffer Weights { int weights[]; };
layout(std430, binding = 3) readonly buffer Recip { float recip[]; };
layout(std430, binding = 4) writeonly buffer Out { float cvals[]; };

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

void main() {
    int j = int(gl_GlobalInvocationID.x);
    int i = int(gl_GlobalInvocationID.y);
    if (j >= w || i >= h) {
        return;
    }
    int r = band[i * w + j];
    uint m = r < 0 ? 0u : diffs[r];
    if (m == 0u) {
        cvals[i * w + j] = 0.0;
        return;
    }
    int cnt[65];
    for (int k = 0; k <= 2 * nd; k++) {
        cnt[k] = 0;
    }
    int i0 = max(i - pad, 0), i1 = min(i + pad, h - 1);
    int j0 = max(j - pad, 0), j1 = min(j + pad, w - 1);
    for (int ii = i0; ii <= i1; ii++) {
        for (int jj = j0; jj <= j1; jj++) {
            int b = band[ii * w + jj];
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
    cvals[i * w + j] = best;
}
