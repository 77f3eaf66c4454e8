// vif_common.glsl: what the VIF passes share (worker/vmaf vif.go; libvmaf
// integer_vif.c): the filters of each scale, summing to 2^16, and one push
// constant block for every pass.

const uint vifFilt0[17] = uint[](489u, 935u, 1640u, 2640u, 3896u, 5274u, 6547u, 7455u, 7784u, 7455u, 6547u, 5274u, 3896u, 2640u, 1640u, 935u, 489u);
const uint vifFilt1[9] = uint[](1244u, 3663u, 7925u, 12590u, 14692u, 12590u, 7925u, 3663u, 1244u);
const uint vifFilt2[5] = uint[](3571u, 16004u, 26386u, 16004u, 3571u);
const uint vifFilt3[3] = uint[](10904u, 43728u, 10904u);

// vifWidth is the number of taps of scale's filter.
int vifWidth(int scale) {
    return scale == 0 ? 17 : scale == 1 ? 9 : scale == 2 ? 5 : 3;
}

uint64_t vifTap(int scale, int k) {
    switch (scale) {
    case 0:
        return uint64_t(vifFilt0[k]);
    case 1:
        return uint64_t(vifFilt1[k]);
    case 2:
        return uint64_t(vifFilt2[k]);
    }
    return uint64_t(vifFilt3[k]);
}

// The push constants of every VIF pass: the image's size, the filter's
// scale, whether samples are packed 16-bit (scale 0's upload) or one per
// 32-bit word, two rounding shifts and their addends, and for the
// statistic the enhancement gain limit and the epsilon as IEEE double bits.
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
};

#define PIXEL(buf, idx) (packed != 0 ? uint(SAMPLE(buf, idx)) : (buf)[idx])
