// adm_reduce.comp: adds ADM's per-row sums of every scale on the device in
// one dispatch (reduce.comp's work for ADM's 36 sums, which would take it
// twelve). Workgroup g is scale g/9, measure (g%9)/3 (den, num, aim) and
// band g%3 (h, v, d); it adds the measure's scored rows of the band, each
// rounded first as vmaf rounds a row before adding it ((v + add) >> shift:
// the denominator's unsigned with ShiftAccum and AddAccum, the contrast
// measures' arithmetic with ShiftInner and AddInner), into out[dst + g].
// 64-bit integer sums, which wrap alike in any order: the CPU's row loop
// (vmaf.ADMRows.Sums) gives the same numbers.
#version 450
#extension GL_ARB_gpu_shader_int64 : require

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer Rows { uint rows[]; };
layout(std430, binding = 1) buffer Out { uint64_t outv[]; };
layout(push_constant) uniform Push {
    int dst;
    int bh3;         // 64-bit words between a scale's measures: 3 bands x scale 0's band rows
    int first[4];    // each scale's first scored den row, in 64-bit words
    int n[4];        // each scale's scored rows
    uint shifts[4];  // each scale's den shift | cm shift << 16
    uint64_t adds[8]; // each scale's den add, cm add
};

shared uint64_t partial[256];

void main() {
    int g = int(gl_WorkGroupID.x);
    int sc = g / 9, m = (g % 9) / 3, t = g % 3;
    int lid = int(gl_LocalInvocationID.x);
    int off = first[sc] + m * bh3 + t;
    uint shift = m == 0 ? (shifts[sc] & 0xffffu) : (shifts[sc] >> 16);
    uint64_t add = adds[2 * sc + (m == 0 ? 0 : 1)];
    uint64_t sum = 0ul;
    for (int i = lid; i < n[sc]; i += 256) {
        int e = off + 3 * i;
        uint64_t v = uint64_t(rows[2 * e]) | (uint64_t(rows[2 * e + 1]) << 32);
        if (m == 0) {
            sum += (v + add) >> shift;
        } else {
            sum += uint64_t((int64_t(v) + int64_t(add)) >> shift);
        }
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
