// unpack8.comp: widens the 8-bit planes a frame stages as bytes (half what
// 16-bit samples send over the bus) into the 16-bit planes the other
// kernels read (common.glsl's SAMPLE). Plane p of the byte buffer (p = 0
// the reference, 1 the distorted plane, 2 the previous reference) starts at
// byte p * stride; mask says which planes the frame staged, and prevSlot
// which of the motion history's planes the previous reference goes to.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Ref { uint ref0[]; };
layout(std430, binding = 2) writeonly buffer Dis { uint dis0[]; };
layout(std430, binding = 3) writeonly buffer Hist0 { uint hist0[]; };
layout(std430, binding = 4) writeonly buffer Hist1 { uint hist1[]; };
layout(std430, binding = 5) writeonly buffer Hist2 { uint hist2[]; };
layout(push_constant) uniform Push { int n; int stride; int mask; int prevSlot; };

void main() {
    // One 32-bit word of output: samples 2k and 2k+1.
    int k = int(gl_GlobalInvocationID.x);
    int p = int(gl_GlobalInvocationID.y);
    if (2 * k >= n || (mask & (1 << p)) == 0) {
        return;
    }
    int b = p * stride + 2 * k; // stride is a multiple of 4
    uint w = src[b >> 2] >> ((b & 2) << 3);
    uint v = (w & 0xffu) | ((w & 0xff00u) << 8);
    if (p == 0) {
        ref0[k] = v;
    } else if (p == 1) {
        dis0[k] = v;
    } else if (prevSlot == 0) {
        hist0[k] = v;
    } else if (prevSlot == 1) {
        hist1[k] = v;
    } else {
        hist2[k] = v;
    }
}
