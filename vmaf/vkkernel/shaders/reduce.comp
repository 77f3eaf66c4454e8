// reduce.comp: adds per-row sums on the device, so that a few numbers a
// frame come back rather than every row's. Workgroup g adds lane g of rows
// first..first+n-1: the value at off + i*stride + g, in 64-bit words (wide)
// or 32-bit unsigned ones, each row's value rounded first as vmaf rounds a
// row before adding it ((v + add) >> shift, arithmetic when sgn), into
// out[dst + g]. The sums are 64-bit integers, which wrap alike whatever the
// order of the additions: the CPU's row loop gives the same number.
#version 450
#extension GL_ARB_gpu_shader_int64 : require

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) buffer Out { uint64_t outv[]; };
layout(push_constant) uniform Push {
    int off;
    int n;
    int stride;
    int wide;
    int sgn;
    uint shift;
    int dst;
    int pad;
    uint64_t add;
};

shared uint64_t partial[256];

uint64_t row(int i, int g) {
    int e = off + i * stride + g;
    if (wide == 0) {
        return uint64_t(src[e]);
    }
    uint64_t v = uint64_t(src[2 * e]) | (uint64_t(src[2 * e + 1]) << 32);
    if (sgn != 0) {
        return uint64_t((int64_t(v) + int64_t(add)) >> shift);
    }
    return (v + add) >> shift;
}

void main() {
    int g = int(gl_WorkGroupID.x);
    int lid = int(gl_LocalInvocationID.x);
    uint64_t sum = 0ul;
    for (int i = lid; i < n; i += 256) {
        sum += row(i, g);
    }
    partial[lid] = sum;
    barrier();
    for (int s = 128; s > 0; s >>= 1) {
        if (lid < s) {
            partial[lid] += partial[lid + s];
        }
        barrier();
    }
    if (lid == 0) {
        outv[dst + g] = partial[0];
    }
}
