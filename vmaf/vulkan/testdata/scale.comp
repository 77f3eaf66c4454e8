// scale.comp is the runtime test's shader: out[i] = (in[i] * k) >> 3 in
// 64-bit integers, so the test also proves shaderInt64 works.
#version 450
#extension GL_ARB_gpu_shader_int64 : require

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { uint src[]; };
layout(std430, binding = 1) writeonly buffer Out { uint64_t dst[]; };
layout(push_constant) uniform Push { uint n; uint k; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= n) {
        return;
    }
    dst[i] = (uint64_t(src[i]) * uint64_t(k)) >> 3;
}
