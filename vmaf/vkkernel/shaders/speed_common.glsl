// speed_common.glsl: SpEED chroma's per-pixel stages (vmaf SpeedConfig):
// four pictures a dispatch (z: U reference, U distorted, V reference, V
// distorted), float32 arithmetic in the CPU's order with every operation
// precise (no fused multiply-add), the divisions in double and rounded to
// float by f32rne, the covariance sums in double.
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_GOOGLE_include_directive : require

layout(push_constant) uniform Push {
    int stride;  // the chroma planes' stride, in samples
    int planeN;  // samples per uploaded plane; plane p starts at sample p*planeN
    int sw, sh;  // the picture SpEED filters (after speed_prescale)
    int dw, dh;  // decimated by 16
    int subW, subH; // the covariance's submatrices
    int method, taps; // SpeedMethod and taps per axis
    int aw, lw;  // anti-alias and local-mean filter sizes
    int oCols, oColW, oRows, oRowW, oAA, oLP; // word offsets in tab
    int shift;   // bit depth - 8
};

layout(std430, binding = 0) readonly buffer Planes { uint planes[]; };
layout(std430, binding = 1) readonly buffer Tab { uint tab[]; };
layout(std430, binding = 2) buffer Vert { float vert[]; };
layout(std430, binding = 3) buffer Img0 { float img0[]; };
layout(std430, binding = 4) buffer Img { float img[]; };
layout(std430, binding = 5) buffer Means { float means[]; };
layout(std430, binding = 6) buffer Cov { double cov[]; };

float tabf(int i) {
    return uintBitsToFloat(tab[i]);
}

// f32rne rounds a double to the nearest float, ties to even, with integer
// operations, so that no driver's conversion rounding mode matters. Float
// subnormals, overflow, infinities and NaN take the hardware's conversion.
float f32rne(double d) {
    uint64_t b = doubleBitsToUint64(d);
    uint sign = uint(b >> 63) << 31;
    int e = int((b >> 52) & 0x7fful);
    if (e == 0) {
        return uintBitsToFloat(sign);
    }
    int fe = e - 1023 + 127;
    if (fe < 1 || fe > 254) {
        return float(d);
    }
    uint64_t m = b & 0xffffffffffffful;
    uint mant = uint(m >> 29);
    uint rem = uint(m & 0x1ffffffful);
    uint bits = (uint(fe) << 23) + mant;
    if (rem > 0x10000000u || (rem == 0x10000000u && (mant & 1u) == 1u)) {
        bits += 1u;
    }
    return uintBitsToFloat(sign | bits);
}

// divf is the correctly rounded float quotient a/b. The double quotient
// rounded to float is, where the double division is correctly rounded
// (53 >= 2*24+2 bits); Vulkan promises less for divisions, so the candidate
// is checked against its neighbour toward the exact quotient by the
// remainders a - q*b, which are exact in double (q*b has 48 bits, and the
// difference of two nearly equal values fits too): the closer one wins
// (a quotient of floats is never halfway between two floats).
float divf(float a, float b) {
    precise double q0 = double(a) / double(b);
    float q = f32rne(q0);
    if (q == 0.0 || isinf(q) || isnan(q) || isinf(a) || isinf(b)) {
        return q;
    }
    precise double r = double(a) - double(q) * double(b);
    if (r == 0.0) {
        return q;
    }
    // a/b - q = r/b: the exact quotient lies above q where r and b share a sign.
    bool above = (r > 0.0) == (b > 0.0);
    uint qb = floatBitsToUint(q);
    uint nb = above == (q > 0.0) ? qb + 1u : qb - 1u;
    float q2 = uintBitsToFloat(nb);
    precise double r2 = double(a) - double(q2) * double(b);
    if (abs(r2) < abs(r)) {
        return q2;
    }
    return q;
}
