// adm_common.glsl: what the ADM passes share (vmaf adm.go and
// adm_kernels.go; libvmaf integer_adm.c). A band buffer holds one image's
// four DWT bands as planes of `plane` 32-bit words at stride `stride`
// (a, h, v, d); the decoupled buffer holds r (h, v, d) then a (h, v, d);
// a CSF buffer holds the weighted bands (h, v, d) then the masking input.

layout(push_constant) uniform Push {
    int w;        // the pass's input width (DWT) or band width
    int h;
    int stride;   // band row stride, scale 0's band width at every scale
    int plane;    // words per band plane
    int scale;
    int bpc;
    int src;      // CSF and contrast measure: first plane of their input
    int rowsOff;  // den and contrast measure: first word of their rows
    int64_t irf0; // the h, v and d bands' CSF weights (vmaf.ADMWeights): scale 0's
    int64_t irf1; // i_rfactor in Q21, Q21, Q23 (below 2^16), the reciprocal
    int64_t irf2; // quantisation steps of scales 1..3 in Q32 (below 2^32)
    uint64_t eglBits; // the enhancement gain limit, IEEE double bits
    uint64_t cosBits; // cos(1 degree)^2 as float32 widened, double bits
    uint shiftA;
    uint shiftB;
    uint64_t addA;
    uint64_t addB;
    int top;      // the region the pass covers
    int bottom;
    int left;
    int right;
};

const int dwtLo[4] = int[](15826, 27411, 7345, -4240);
const int dwtHi[4] = int[](-4240, -7345, 27411, -15826);

// dwtIndex is dwt2_src_indices_filt: 2i-1+k, reflecting -1 to 1 and n+k to n-1-k.
int dwtIndex(int i, int k, int n) {
    int idx = 2 * i - 1 + k;
    if (idx < 0) {
        return -idx;
    }
    if (idx >= n) {
        return 2 * n - idx - 1;
    }
    return idx;
}

int narrow16(int v) {
    return (v << 16) >> 16;
}

// neighbors is admNeighbors: the rows (columns) around i for the 3x3 window,
// reflected at the start and repeated at the end.
ivec2 neighbors(int i, int n) {
    return ivec2(i == 0 ? 1 : i - 1, i == n - 1 ? n - 1 : i + 1);
}

const int csfShifts0[3] = int[](15, 15, 17);
const int csfAdds0[3] = int[](16384, 16384, 65535);

// csfOne is vmaf csf0 and csfS of one coefficient s of band t (h, v, d) at this
// scale, weighted by the run's contrast sensitivity (irf0..irf2): the weighted
// coefficient and the masking filter's input |csf|/30.
ivec2 csfOne(int s, int t) {
    int64_t irf = t == 0 ? irf0 : t == 1 ? irf1 : irf2;
    int v, f;
    if (scale == 0) {
        // int32 products, as adm_csf's: the weight is below 2^16 and
        // the coefficient an int16.
        v = narrow16((int(irf) * s + csfAdds0[t]) >> csfShifts0[t]);
        f = narrow16((4369 * abs(v) + 2048) >> 12);
    } else {
        v = int((irf * int64_t(s) + (int64_t(1) << 27)) >> 28);
        f = int((int64_t(143165577) * int64_t(abs(v)) + int64_t(-2147483648)) >> 32);
    }
    return ivec2(v, f);
}
