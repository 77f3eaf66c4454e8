// speed_aa_h.comp: the anti-alias filter's horizontal pass at the columns
// SpEED keeps (multiples of 16), giving the decimated picture.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "speed_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;

void main() {
    int c = int(gl_GlobalInvocationID.x);
    int r = int(gl_GlobalInvocationID.y);
    int p = int(gl_GlobalInvocationID.z);
    if (c >= dw || r >= dh) {
        return;
    }
    int hw = aw / 2;
    int row = (p * dh + r) * sw;
    precise float acc = 0.0;
    for (int k = 0; k < aw; k++) {
        acc += tabf(oAA + k) * vert[row + mirror((c << 4) - hw + k, sw)];
    }
    img0[(p * dh + r) * dw + c] = acc;
}
