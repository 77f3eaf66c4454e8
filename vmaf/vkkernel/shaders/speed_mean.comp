// speed_mean.comp: the means of the 25 block positions' submatrices
// (compute_covariance_matrix), one invocation each, summed in order.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "speed_common.glsl"

layout(local_size_x = 32) in;

void main() {
    int q = int(gl_GlobalInvocationID.x);
    int p = int(gl_GlobalInvocationID.z);
    if (q >= 25) {
        return;
    }
    int o = p * dh * dw + (q / 5) * dw + q % 5;
    precise float sum = 0.0;
    for (int i = 0; i < subH; i++) {
        for (int j = 0; j < subW; j++) {
            sum += img[o + i * dw + j];
        }
    }
    means[p * 25 + q] = divf(sum, float(subW * subH));
}
