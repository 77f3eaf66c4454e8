// speed_lm.comp: the local-mean filter on the decimated picture (vertical,
// then horizontal) and its subtraction.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "speed_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;

void main() {
    int j = int(gl_GlobalInvocationID.x);
    int i = int(gl_GlobalInvocationID.y);
    int p = int(gl_GlobalInvocationID.z);
    if (j >= dw || i >= dh) {
        return;
    }
    int hw = lw / 2;
    int base = p * dh * dw;
    precise float blur = 0.0;
    for (int kj = 0; kj < lw; kj++) {
        int col = mirror(j - hw + kj, dw);
        precise float t = 0.0;
        for (int ki = 0; ki < lw; ki++) {
            t += tabf(oLP + ki) * img0[base + mirror(i - hw + ki, dh) * dw + col];
        }
        blur += tabf(oLP + kj) * t;
    }
    precise float d = img0[base + i * dw + j] - blur;
    img[base + i * dw + j] = d;
}
