// vif_common.glsl: what the VIF passes share (vmaf vif.go; libvmaf
// integer_vif.c): the filters of each scale, summing to 2^16, and one push
// constant block for every pass.

// vifWidth is the number of taps of scale's filter: 17, 9, 5, 3.
int vifWidth(int scale) {
    return scale == 0 ? 17 : scale == 1 ? 9 : scale == 2 ? 5 : 3;
}

// The push constants of every VIF pass: the image's size, the filter's
// scale, whether samples are packed 16-bit (scale 0's upload) or one per
// 32-bit word, two rounding shifts and their addends, for the statistic the
// enhancement gain limit and the epsilon as IEEE double bits, and the
// scale's filter (vmaf vifFilters, summing to 2^16). The filter
// travels here rather than as a constant array because drivers such as
// lavapipe copy a dynamically indexed constant array per invocation.
layout(push_constant) uniform Push {
    int w;
    int h;
    int scale;
    int packed;
    uint shiftA;
    uint roundA;
    uint shiftB;
    uint roundB;
    uint64_t eglBits;
    uint64_t epsBits;
    uint taps[17];
};

uint64_t vifTap(int k) {
    return uint64_t(taps[k]);
}

#define PIXEL(buf, idx) (packed != 0 ? uint(SAMPLE(buf, idx)) : (buf)[idx])
