// speed_cov.comp: the covariance matrix's 325 double sums
// (compute_cov_kernel_scalar), one invocation each, summed in order; the
// host divides by the count.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "speed_common.glsl"

layout(local_size_x = 64) in;

void main() {
    int t = int(gl_GlobalInvocationID.x);
    int p = int(gl_GlobalInvocationID.z);
    if (t >= 325) {
        return;
    }
    int x = 0;
    int y = t;
    while (y > x) {
        y -= x + 1;
        x++;
    }
    int base = p * dh * dw;
    int ox = base + (x / 5) * dw + x % 5;
    int oy = base + (y / 5) * dw + y % 5;
    double mx = double(means[p * 25 + x]);
    double my = double(means[p * 25 + y]);
    precise double sum = 0.0;
    for (int i = 0; i < subH; i++) {
        for (int j = 0; j < subW; j++) {
            sum += (double(img[ox + i * dw + j]) - mx) * (double(img[oy + i * dw + j]) - my);
        }
    }
    cov[p * 325 + t] = sum;
}
