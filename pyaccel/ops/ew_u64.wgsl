// uint64 elementwise library (prefix u64_): each element is a vec2<u32> (x = low word,
// y = high word), bit-identical to NumPy's little-endian uint64. Results wrap modulo 2^64
// like NumPy; // and % by zero give 0 (NumPy's result); shifts by >= 64 give 0; float
// conversions follow NumPy's casts on x86-64 hosts (out of range / NaN: see u64_from_f32).
// Every loop has a fixed trip count (<= 64 iterations). Private helpers: u64__<name>.

// -- helpers --------------------------------------------------------------------------
// full 64-bit product of two u32 (16-bit limbs: WGSL has no widening multiply)
fn u64__mul32(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return vec2<u32>((p00 & 0xffffu) | (mid << 16u), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}

fn u64__clz(x: vec2<u32>) -> u32 {
    return select(countLeadingZeros(x.y), 32u + countLeadingZeros(x.x), x.y == 0u);
}

// x << s and x >> s for s in 0..63
fn u64__shl(x: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) { return x; }
    if (s >= 32u) { return vec2<u32>(0u, x.x << (s - 32u)); }
    return vec2<u32>(x.x << s, (x.y << s) | (x.x >> (32u - s)));
}

fn u64__shr(x: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) { return x; }
    if (s >= 32u) { return vec2<u32>(x.y >> (s - 32u), 0u); }
    return vec2<u32>((x.x >> s) | (x.y << (32u - s)), x.y >> s);
}

// quotient and remainder of x / y (y != 0): restoring division over the significant bits
// of x only (at most 64 steps)
struct u64__QR { q: vec2<u32>, r: vec2<u32> }

fn u64__divmod(x: vec2<u32>, y: vec2<u32>) -> u64__QR {
    if (x.y == 0u && y.y == 0u) {
        return u64__QR(vec2<u32>(x.x / y.x, 0u), vec2<u32>(x.x % y.x, 0u));
    }
    if (u64_less(x, y)) {
        return u64__QR(vec2<u32>(0u), x);
    }
    // shift y up to x's leading bit, then one subtract-and-shift step per bit
    let n = u64__clz(y) - u64__clz(x);
    var d = u64__shl(y, n);
    var q = vec2<u32>(0u);
    var r = x;
    for (var k = 0u; k < 64u; k++) {
        q = u64__shl(q, 1u);
        if (!u64_less(r, d)) {
            r = u64_subtract(r, d);
            q.x = q.x | 1u;
        }
        if (k == n) { break; }
        d = u64__shr(d, 1u);
    }
    return u64__QR(q, r);
}

// truncation of a finite f32 with |v| < 2^64 to its magnitude as a u64
fn u64__trunc_abs_f32(v: f32) -> vec2<u32> {
    let a = abs(v);
    if (a < 4294967296.0) {
        return vec2<u32>(u32(a), 0u);
    }
    let hi = u32(a / 4294967296.0);
    return vec2<u32>(u32(a - f32(hi) * 4294967296.0), hi);
}

// -- arithmetic (wraps modulo 2^64) ------------------------------------------------------
fn u64_add(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    let lo = x.x + y.x;
    return vec2<u32>(lo, x.y + y.y + select(0u, 1u, lo < x.x));
}

fn u64_subtract(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(x.x - y.x, x.y - y.y - select(0u, 1u, x.x < y.x));
}

fn u64_multiply(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    let p = u64__mul32(x.x, y.x);
    return vec2<u32>(p.x, p.y + x.x * y.y + x.y * y.x);
}

fn u64_negative(x: vec2<u32>) -> vec2<u32> {
    return u64_subtract(vec2<u32>(0u), x);
}

fn u64_positive(x: vec2<u32>) -> vec2<u32> {
    return x;
}

fn u64_abs(x: vec2<u32>) -> vec2<u32> {
    return x;
}

fn u64_sign(x: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(select(0u, 1u, any(x != vec2<u32>(0u))), 0u);
}

fn u64_square(x: vec2<u32>) -> vec2<u32> {
    return u64_multiply(x, x);
}

fn u64_floor_divide(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (all(y == vec2<u32>(0u))) { return vec2<u32>(0u); }
    return u64__divmod(x, y).q;
}

fn u64_remainder(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (all(y == vec2<u32>(0u))) { return vec2<u32>(0u); }
    return u64__divmod(x, y).r;
}

// x ** y by squaring (64 steps at most; the result wraps)
fn u64_pow(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    var result = vec2<u32>(1u, 0u);
    var base = x;
    var e = y;
    for (var k = 0u; k < 64u; k++) {
        if (all(e == vec2<u32>(0u))) { break; }
        if ((e.x & 1u) == 1u) { result = u64_multiply(result, base); }
        base = u64_multiply(base, base);
        e = u64__shr(e, 1u);
    }
    return result;
}

// -- comparison / selection ----------------------------------------------------------------
fn u64_equal(x: vec2<u32>, y: vec2<u32>) -> bool {
    return all(x == y);
}

fn u64_not_equal(x: vec2<u32>, y: vec2<u32>) -> bool {
    return any(x != y);
}

fn u64_less(x: vec2<u32>, y: vec2<u32>) -> bool {
    return x.y < y.y || (x.y == y.y && x.x < y.x);
}

fn u64_less_equal(x: vec2<u32>, y: vec2<u32>) -> bool {
    return !u64_less(y, x);
}

fn u64_greater(x: vec2<u32>, y: vec2<u32>) -> bool {
    return u64_less(y, x);
}

fn u64_greater_equal(x: vec2<u32>, y: vec2<u32>) -> bool {
    return !u64_less(x, y);
}

fn u64_maximum(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    return select(x, y, u64_less(x, y));
}

fn u64_minimum(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    return select(x, y, u64_less(y, x));
}

fn u64_clip(x: vec2<u32>, lo: vec2<u32>, hi: vec2<u32>) -> vec2<u32> {
    return u64_minimum(u64_maximum(x, lo), hi);
}

// rounding and float predicates of integer data (the standard defines them as identities)
fn u64_floor(x: vec2<u32>) -> vec2<u32> { return x; }
fn u64_ceil(x: vec2<u32>) -> vec2<u32> { return x; }
fn u64_trunc(x: vec2<u32>) -> vec2<u32> { return x; }
fn u64_round(x: vec2<u32>) -> vec2<u32> { return x; }
fn u64_isnan(x: vec2<u32>) -> bool { return false; }
fn u64_isinf(x: vec2<u32>) -> bool { return false; }
fn u64_isfinite(x: vec2<u32>) -> bool { return true; }
fn u64_conj(x: vec2<u32>) -> vec2<u32> { return x; }
fn u64_real(x: vec2<u32>) -> vec2<u32> { return x; }
fn u64_imag(x: vec2<u32>) -> vec2<u32> { return vec2<u32>(0u); }

// -- bitwise ---------------------------------------------------------------------------------
fn u64_bitwise_and(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> { return x & y; }
fn u64_bitwise_or(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> { return x | y; }
fn u64_bitwise_xor(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> { return x ^ y; }
fn u64_bitwise_invert(x: vec2<u32>) -> vec2<u32> { return ~x; }

fn u64_bitwise_left_shift(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (y.y != 0u || y.x >= 64u) { return vec2<u32>(0u); }
    return u64__shl(x, y.x);
}

fn u64_bitwise_right_shift(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (y.y != 0u || y.x >= 64u) { return vec2<u32>(0u); }
    return u64__shr(x, y.x);
}

// -- conversions (NumPy's astype) --------------------------------------------------------------
fn u64_from_u32(x: u32) -> vec2<u32> {
    return vec2<u32>(x, 0u);
}

fn u64_from_i32(x: i32) -> vec2<u32> {
    return vec2<u32>(bitcast<u32>(x), select(0u, 0xffffffffu, x < 0));
}

// NumPy on x86-64: values >= 2^63 convert (x - 2^63) and set the top bit; below that the
// signed conversion applies (negative values wrap; NaN, -inf and < -2^63 give 2^63; past
// 2^64 and +inf give 0)
fn u64_from_f32(x: f32) -> vec2<u32> {
    if (x >= 9223372036854775808.0) {
        let d = x - 9223372036854775808.0;
        if (!(d < 9223372036854775808.0)) { return vec2<u32>(0u); }
        let m = u64__trunc_abs_f32(d);
        return vec2<u32>(m.x, m.y ^ 0x80000000u);
    }
    if (!(abs(x) < 9223372036854775808.0)) { return vec2<u32>(0u, 0x80000000u); }
    let m = u64__trunc_abs_f32(x);
    return select(m, u64_negative(m), x < 0.0);
}

fn u64_to_u32(x: vec2<u32>) -> u32 {
    return x.x;
}

fn u64_to_i32(x: vec2<u32>) -> i32 {
    return bitcast<i32>(x.x);
}

// correctly rounded (to nearest even): the top 32 significant bits, with the bits below
// them folded into a sticky bit 0, rounded by the u32 -> f32 conversion, then scaled
fn u64_to_f32(x: vec2<u32>) -> f32 {
    if (x.y == 0u) { return f32(x.x); }
    let n = countLeadingZeros(x.y);
    let top = u64__shl(x, n);
    let sticky = select(0u, 1u, top.x != 0u);
    return ldexp(f32(top.y | sticky), i32(32u - n));
}
