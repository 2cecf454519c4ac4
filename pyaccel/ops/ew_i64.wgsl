// requires: ew_u64
// int64 elementwise library (prefix i64_): each element is a vec2<u32> (x = low word,
// y = high word, two's complement), bit-identical to NumPy's little-endian int64.
// Overflow wraps like NumPy; // and % follow Python's floor rules, and by zero give 0
// (NumPy's result); INT64_MIN // -1 wraps to INT64_MIN. Shifts by >= 64 (or negative)
// give 0 (left) or the sign fill (right), as NumPy does. pow with a negative exponent
// (NumPy raises) gives 1 / x truncated, as the 32-bit kernels do. Loops have fixed trip
// counts (<= 64). Private helpers: i64__<name>.

fn i64__neg(x: vec2<u32>) -> bool {
    return (x.y & 0x80000000u) != 0u;
}

fn i64__is_zero(x: vec2<u32>) -> bool {
    return all(x == vec2<u32>(0u));
}

// -- arithmetic ------------------------------------------------------------------------------
fn i64_add(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> { return u64_add(x, y); }
fn i64_subtract(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> { return u64_subtract(x, y); }
fn i64_multiply(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> { return u64_multiply(x, y); }
fn i64_negative(x: vec2<u32>) -> vec2<u32> { return u64_negative(x); }
fn i64_positive(x: vec2<u32>) -> vec2<u32> { return x; }
fn i64_square(x: vec2<u32>) -> vec2<u32> { return u64_multiply(x, x); }

fn i64_abs(x: vec2<u32>) -> vec2<u32> {
    return select(x, u64_negative(x), i64__neg(x));
}

fn i64_sign(x: vec2<u32>) -> vec2<u32> {
    if (i64__neg(x)) { return vec2<u32>(0xffffffffu); }
    return vec2<u32>(select(0u, 1u, !i64__is_zero(x)), 0u);
}

// Python's floor division on the magnitudes' unsigned quotient
fn i64_floor_divide(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (i64__is_zero(y)) { return vec2<u32>(0u); }
    let nx = i64__neg(x);
    let ny = i64__neg(y);
    let qr = u64__divmod(i64_abs(x), i64_abs(y));
    if (nx == ny) { return qr.q; }
    let q = u64_negative(qr.q);
    return select(q, u64_subtract(q, vec2<u32>(1u, 0u)), !i64__is_zero(qr.r));
}

// Python's remainder: the sign of the divisor
fn i64_remainder(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (i64__is_zero(y)) { return vec2<u32>(0u); }
    let nx = i64__neg(x);
    let ny = i64__neg(y);
    let r0 = u64__divmod(i64_abs(x), i64_abs(y)).r;  // |x| mod |y|
    if (i64__is_zero(r0)) { return vec2<u32>(0u); }
    let r = select(r0, u64_negative(r0), nx);  // truncated remainder (sign of x)
    if (nx != ny) { return u64_add(r, y); }
    return r;
}

fn i64_pow(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (i64__neg(y)) {
        if (all(x == vec2<u32>(1u, 0u))) { return x; }
        if (all(x == vec2<u32>(0xffffffffu))) {
            return select(vec2<u32>(1u, 0u), x, (y.x & 1u) == 1u);
        }
        return vec2<u32>(0u);
    }
    return u64_pow(x, y);
}

// -- comparison / selection ----------------------------------------------------------------
fn i64_equal(x: vec2<u32>, y: vec2<u32>) -> bool { return all(x == y); }
fn i64_not_equal(x: vec2<u32>, y: vec2<u32>) -> bool { return any(x != y); }

fn i64_less(x: vec2<u32>, y: vec2<u32>) -> bool {
    let hx = bitcast<i32>(x.y);
    let hy = bitcast<i32>(y.y);
    return hx < hy || (hx == hy && x.x < y.x);
}

fn i64_less_equal(x: vec2<u32>, y: vec2<u32>) -> bool { return !i64_less(y, x); }
fn i64_greater(x: vec2<u32>, y: vec2<u32>) -> bool { return i64_less(y, x); }
fn i64_greater_equal(x: vec2<u32>, y: vec2<u32>) -> bool { return !i64_less(x, y); }

fn i64_maximum(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    return select(x, y, i64_less(x, y));
}

fn i64_minimum(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    return select(x, y, i64_less(y, x));
}

fn i64_clip(x: vec2<u32>, lo: vec2<u32>, hi: vec2<u32>) -> vec2<u32> {
    return i64_minimum(i64_maximum(x, lo), hi);
}

fn i64_floor(x: vec2<u32>) -> vec2<u32> { return x; }
fn i64_ceil(x: vec2<u32>) -> vec2<u32> { return x; }
fn i64_trunc(x: vec2<u32>) -> vec2<u32> { return x; }
fn i64_round(x: vec2<u32>) -> vec2<u32> { return x; }
fn i64_isnan(x: vec2<u32>) -> bool { return false; }
fn i64_isinf(x: vec2<u32>) -> bool { return false; }
fn i64_isfinite(x: vec2<u32>) -> bool { return true; }
fn i64_conj(x: vec2<u32>) -> vec2<u32> { return x; }
fn i64_real(x: vec2<u32>) -> vec2<u32> { return x; }
fn i64_imag(x: vec2<u32>) -> vec2<u32> { return vec2<u32>(0u); }

// -- bitwise ---------------------------------------------------------------------------------
fn i64_bitwise_and(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> { return x & y; }
fn i64_bitwise_or(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> { return x | y; }
fn i64_bitwise_xor(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> { return x ^ y; }
fn i64_bitwise_invert(x: vec2<u32>) -> vec2<u32> { return ~x; }

fn i64_bitwise_left_shift(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (y.y != 0u || y.x >= 64u) { return vec2<u32>(0u); }  // also y < 0
    return u64__shl(x, y.x);
}

fn i64_bitwise_right_shift(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    let fill = select(0u, 0xffffffffu, i64__neg(x));
    if (y.y != 0u || y.x >= 64u) { return vec2<u32>(fill); }
    let s = y.x;
    if (s == 0u) { return x; }
    if (s >= 32u) { return vec2<u32>(bitcast<u32>(bitcast<i32>(x.y) >> (s - 32u)), fill); }
    return vec2<u32>((x.x >> s) | (x.y << (32u - s)), bitcast<u32>(bitcast<i32>(x.y) >> s));
}

// -- conversions (NumPy's astype) --------------------------------------------------------------
fn i64_from_i32(x: i32) -> vec2<u32> { return u64_from_i32(x); }
fn i64_from_u32(x: u32) -> vec2<u32> { return vec2<u32>(x, 0u); }

// truncation toward zero; NaN, +-inf and |x| >= 2^63 give INT64_MIN (NumPy on x86-64)
fn i64_from_f32(x: f32) -> vec2<u32> {
    if (!(abs(x) < 9223372036854775808.0)) { return vec2<u32>(0u, 0x80000000u); }
    let m = u64__trunc_abs_f32(x);
    return select(m, u64_negative(m), x < 0.0);
}

fn i64_to_i32(x: vec2<u32>) -> i32 { return bitcast<i32>(x.x); }
fn i64_to_u32(x: vec2<u32>) -> u32 { return x.x; }

fn i64_to_f32(x: vec2<u32>) -> f32 {
    let m = u64_to_f32(i64_abs(x));  // INT64_MIN: |x| is 2^63 as a u64
    return select(m, -m, i64__neg(x));
}

fn i64_from_u64(x: vec2<u32>) -> vec2<u32> { return x; }
fn i64_to_u64(x: vec2<u32>) -> vec2<u32> { return x; }
