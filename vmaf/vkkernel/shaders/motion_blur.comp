// motion_blur.comp: the vertical pass of the motion feature
// (vmaf motionSAD; libvmaf integer_motion.c): the difference prev-cur
// filtered by the 5-tap Gaussian with mirrored rows, rounded to the bit depth.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;
layout(std430, binding = 0) readonly buffer Prev { uint prev[]; };
layout(std430, binding = 1) readonly buffer Cur { uint cur[]; };
layout(std430, binding = 2) writeonly buffer Blur { int blur[]; };
layout(push_constant) uniform Push { int w; int h; int bpc; };

const int64_t f0 = 3571, f1 = 16004, f2 = 26386;

int64_t diff(int row, int j) {
    int idx = row * w + j;
    return int64_t(SAMPLE(prev, idx) - SAMPLE(cur, idx));
}

void main() {
    int j = int(gl_GlobalInvocationID.x);
    int i = int(gl_GlobalInvocationID.y);
    if (j >= w || i >= h) {
        return;
    }
    int64_t d0 = diff(mirror(i - 2, h), j);
    int64_t d1 = diff(mirror(i - 1, h), j);
    int64_t d2 = diff(i, j);
    int64_t d3 = diff(mirror(i + 1, h), j);
    int64_t d4 = diff(mirror(i + 2, h), j);
    int64_t roundY = int64_t(1) << (bpc - 1);
    blur[i * w + j] = int((f0 * (d0 + d4) + f1 * (d1 + d3) + f2 * d2 + roundY) >> bpc);
}
