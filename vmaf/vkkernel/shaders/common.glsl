// common.glsl: helpers shared by the kernels. Frames arrive as packed 16-bit
// samples, two per 32-bit word, little end first, as vmaf keeps them
// ([]uint16): no 16-bit storage feature is needed.

// mirror reflects an index into [0, n) without repeating the edge sample,
// as vmaf's mirror does.
int mirror(int i, int n) {
    if (i < 0) {
        return -i;
    }
    if (i >= n) {
        return 2 * n - i - 2;
    }
    return i;
}

#define SAMPLE(buf, idx) int(((buf)[(idx) >> 1] >> (((idx) & 1) << 4)) & 0xffffu)
