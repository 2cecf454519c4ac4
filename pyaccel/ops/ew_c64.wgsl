// requires: ew_f64
// complex64 elementwise library (prefix c64_): a complex64 element is a vec2<f32>, x = real,
// y = imag (NumPy's little-endian bytes). Op functions are named c64_<op-table name>; real
// results (abs, real, imag) are f32, predicates bool. Private helpers are c64__<name>.
//
// Special values follow C99 Annex G and the Array API 2023.12 special cases (branch cuts,
// signed zeros, infinities, NaN); arithmetic follows NumPy's complex loops (naive multiply,
// Smith's division, NumPy's integer-power path of pow), so results match NumPy complex64.
// Inverse trig / hyperbolic functions use Kahan's formulas ("Branch cuts for complex
// elementary functions", 1987), which are accurate up to the branch cuts without a wider
// type. No loop runs more than 7 iterations (pow's integer path).
// NaN and inf come from private variables: no constant expression evaluates to them.

var<private> C64_NAN_BITS: u32 = 0x7fc00000u;
var<private> C64_INF_BITS: u32 = 0x7f800000u;

const C64_PI: f32 = 3.14159265358979323846;
const C64_PI_2: f32 = 1.57079632679489661923;
const C64_PI_4: f32 = 0.78539816339744830962;
const C64_3PI_4: f32 = 2.35619449019234492885;
const C64_LN2: f32 = 0.69314718055994530942;

// -- real helpers (f32) -------------------------------------------------------------------
fn c64__nan() -> f32 { return bitcast<f32>(C64_NAN_BITS); }
fn c64__inf() -> f32 { return bitcast<f32>(C64_INF_BITS); }
fn c64__nan2() -> vec2<f32> { return vec2<f32>(c64__nan(), c64__nan()); }
fn c64__isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn c64__isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn c64__isfin(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }
fn c64__signbit(x: f32) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }
fn c64__copysign(x: f32, y: f32) -> f32 {
    return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(y) & 0x80000000u));
}
// +-1 with the sign of x (x may be +-0 or +-inf)
fn c64__sgn1(x: f32) -> f32 { return c64__copysign(1.0, x); }

// x / y with IEEE results for y == 0 (WGSL leaves runtime division by zero indeterminate)
fn c64__div(x: f32, y: f32) -> f32 {
    if (y == 0.0) {
        if (x == 0.0 || c64__isnan(x)) { return c64__nan(); }
        return bitcast<f32>(C64_INF_BITS | ((bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u));
    }
    return x / y;
}

fn c64__exp(x: f32) -> f32 {
    if (c64__isnan(x)) { return x; }
    if (x > 88.72284) { return c64__inf(); }
    if (x < -103.97208) { return 0.0; }
    return exp(x);
}

// log of x >= 0 (subnormals read from the bits: software GPUs flush them inside log)
fn c64__log(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    if ((b & 0x7f800000u) == 0u && (b & 0x007fffffu) != 0u && (b & 0x80000000u) == 0u) {
        return log(f32(b & 0x007fffffu)) - 103.27892990343185;  // m * 2^-149
    }
    if (c64__isnan(x) || x < 0.0) { return c64__nan(); }
    if (x == 0.0) { return -c64__inf(); }
    if (c64__isinf(x)) { return x; }
    return log(x);
}

fn c64__log1p(x: f32) -> f32 {
    if (c64__isnan(x) || x < -1.0) { return c64__nan(); }
    if (x == -1.0) { return -c64__inf(); }
    if (c64__isinf(x)) { return x; }
    if (abs(x) < 0.5) {
        // 2 atanh(s), s = x / (2 + x), |s| < 1/3: the builtin log loses ~1e-7 absolute near 1
        let s = x / (2.0 + x);
        let s2 = s * s;
        let p = 1.0 + s2 * (1.0 / 3.0 + s2 * (0.2 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0 + s2 * (1.0 / 11.0
                + s2 * (1.0 / 13.0 + s2 * (1.0 / 15.0 + s2 * (1.0 / 17.0))))))));
        return 2.0 * s * p;
    }
    return c64__log(1.0 + x);
}

fn c64__expm1(x: f32) -> f32 {
    if (c64__isnan(x)) { return x; }
    if (abs(x) < 0.5) {
        var s = 1.0 + x / 10.0;
        s = 1.0 + x / 9.0 * s;
        s = 1.0 + x / 8.0 * s;
        s = 1.0 + x / 7.0 * s;
        s = 1.0 + x / 6.0 * s;
        s = 1.0 + x / 5.0 * s;
        s = 1.0 + x / 4.0 * s;
        s = 1.0 + x / 3.0 * s;
        s = 1.0 + x / 2.0 * s;
        return x * s;
    }
    return c64__exp(x) - 1.0;
}

fn c64__sinh(x: f32) -> f32 {
    if (!c64__isfin(x)) { return x; }
    let a = abs(x);
    if (a < 0.5) {
        let x2 = x * x;
        return x * (1.0 + x2 / 6.0 * (1.0 + x2 / 20.0 * (1.0 + x2 / 42.0 * (1.0 + x2 / 72.0))));
    }
    if (a > 20.0) { return c64__copysign(c64__exp(a - C64_LN2), x); }
    let e = exp(a);
    return c64__copysign(0.5 * (e - 1.0 / e), x);
}

fn c64__cosh(x: f32) -> f32 {
    if (c64__isnan(x)) { return x; }
    let a = abs(x);
    if (a > 20.0) { return c64__exp(a - C64_LN2); }
    let e = exp(a);
    return 0.5 * (e + 1.0 / e);
}

fn c64__asinh(x: f32) -> f32 {
    if (!c64__isfin(x) || x == 0.0) { return x; }
    let a = abs(x);
    var r: f32;
    if (a > 1.0e15) {
        r = c64__log(a) + C64_LN2;
    } else {
        r = c64__log1p(a + a * a / (1.0 + sqrt(1.0 + a * a)));
    }
    return c64__copysign(r, x);
}

fn c64__atan2(y: f32, x: f32) -> f32 {
    if (c64__isnan(x) || c64__isnan(y)) { return c64__nan(); }
    if (y == 0.0) {
        if (c64__signbit(x)) { return c64__copysign(C64_PI, y); }
        return y;
    }
    if (c64__isinf(x)) {
        if (c64__isinf(y)) { return c64__copysign(select(C64_PI_4, C64_3PI_4, x < 0.0), y); }
        return c64__copysign(select(0.0, C64_PI, x < 0.0), y);
    }
    if (c64__isinf(y) || x == 0.0) { return c64__copysign(C64_PI_2, y); }
    // the builtin atan2 has ~2e-5 relative error for small angles on software GPUs
    let ax = abs(x);
    let ay = abs(y);
    let swap = ay > ax;
    var r = c64__atan01(select(ay / ax, ax / ay, swap));
    if (swap) { r = C64_PI_2 - r; }
    if (x < 0.0) { r = C64_PI - r; }
    return c64__copysign(r, y);
}

// atan(t) for t in [0, 1]: atan(t) = pi/4 + atan((t - 1) / (t + 1)) past tan(pi/8), then the
// odd series to u^21 (|u| <= 0.4143: truncation < 1e-9)
fn c64__atan01(t: f32) -> f32 {
    var u = t;
    var base = 0.0;
    if (t > 0.41421356) {
        u = (t - 1.0) / (t + 1.0);
        base = C64_PI_4;
    }
    let v = u * u;
    let p = 1.0 - v * (1.0 / 3.0 - v * (0.2 - v * (1.0 / 7.0 - v * (1.0 / 9.0 - v * (1.0 / 11.0
            - v * (1.0 / 13.0 - v * (1.0 / 15.0 - v * (1.0 / 17.0 - v * (1.0 / 19.0 - v / 21.0)))))))));
    return base + u * p;
}

// hypot(x, y) without overflow or underflow of the squares (inf wins over NaN, as C99)
fn c64__hypot(x: f32, y: f32) -> f32 {
    let a = abs(x);
    let b = abs(y);
    if (c64__isinf(a) || c64__isinf(b)) { return c64__inf(); }
    if (c64__isnan(a) || c64__isnan(b)) { return c64__nan(); }
    let m = max(a, b);
    if (m == 0.0) { return 0.0; }
    let r = min(a, b) / m;
    return m * sqrt(1.0 + r * r);
}

// log|x + iy| for finite or infinite x, y (not NaN): log1p near |z| = 1, scaled elsewhere
fn c64__logabs(x: f32, y: f32) -> f32 {
    let a = abs(x);
    let b = abs(y);
    let m = max(a, b);
    let n = min(a, b);
    if (c64__isinf(m)) { return c64__inf(); }
    if (m == 0.0) { return -c64__inf(); }
    if (m >= 0.5 && m <= 2.0) { return 0.5 * c64__log1p((m - 1.0) * (m + 1.0) + n * n); }
    let r = n / m;
    return c64__log(m) + 0.5 * c64__log1p(r * r);
}

// cos and sin of a finite angle. WebGPU bounds the builtins' error on [-pi, pi] only, so the
// angle is reduced first: by 2 pi in three parts (Cody-Waite) below 2^17, else by pi / 2 with
// the bits of 2 / pi (Payne-Hanek: a 24 x 96-bit product, 62 bits of the fraction kept).
var<private> C64_2OPI: array<u32, 8> = array<u32, 8>(0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u,
    0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu);

fn c64__reduce(y: f32) -> f32 {
    if (abs(y) <= C64_PI || abs(y) >= 131072.0) { return y; }
    let k = round(y * 0.15915494309189535);
    return ((y - k * 6.28125) - k * 0.0019353071693331003) - k * 1.0253376273028358e-11;
}

// the full 64-bit product of two u32 (lo, hi)
fn c64__mul32(a: u32, b: u32) -> vec2<u32> {
    let al = a & 0xffffu;
    let ah = a >> 16u;
    let bl = b & 0xffffu;
    let bh = b >> 16u;
    let ll = al * bl;
    let lh = al * bh;
    let hl = ah * bl;
    let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
    let lo = (ll & 0xffffu) | (mid << 16u);
    return vec2<u32>(lo, ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u));
}

// 32 bits of 2 / pi (after a leading zero word) from bit `s` on
fn c64__opi_word(w: u32, sh: u32) -> u32 {
    if (sh == 0u) { return C64_2OPI[w]; }
    return (C64_2OPI[w] << sh) | (C64_2OPI[w + 1u] >> (32u - sh));
}

// |y| >= 2^17 (finite): (r, q) with |y| = r + q pi / 2 (mod 2 pi), |r| <= pi / 4
fn c64__reduce_big(ay: f32) -> vec2<f32> {
    let bits = bitcast<u32>(ay);
    let m = (bits & 0x007fffffu) | 0x00800000u;
    let e = i32((bits >> 23u) & 0xffu) - 150;  // ay = m * 2^e, e >= -6
    let sp = u32(e - 2 + 32);                   // bits of 2/pi below 2^-(e-2) only matter mod 4
    let w = sp / 32u;
    let sh = sp % 32u;
    let c2 = c64__opi_word(w, sh);
    let c1 = c64__opi_word(w + 1u, sh);
    let c0 = c64__opi_word(w + 2u, sh);
    // P = m * (c2, c1, c0) mod 2^96; ay * 2 / pi mod 4 = P / 2^94
    let p0 = c64__mul32(m, c0);
    let p1 = c64__mul32(m, c1);
    let w1 = p0.y + p1.x;
    let w2 = p1.y + m * c2 + select(0u, 1u, w1 < p0.y);
    var q = w2 >> 30u;
    var hi = (w2 << 2u) | (w1 >> 30u);
    var lo = (w1 << 2u) | (p0.x >> 30u);
    var sgn = 1.0;
    if (hi >= 0x80000000u) {  // fraction >= 1/2: round the quadrant up, negative remainder
        q = q + 1u;
        lo = ~lo + 1u;
        hi = ~hi + select(0u, 1u, lo == 0u);
        sgn = -1.0;
    }
    let f = (f32(hi) + f32(lo) * 2.3283064365386963e-10) * 2.3283064365386963e-10;
    return vec2<f32>(sgn * f * C64_PI_2, f32(q & 3u));
}

fn c64__cis(y: f32) -> vec2<f32> {
    if (abs(y) < 131072.0) {
        let r = c64__reduce(y);
        return vec2<f32>(cos(r), sin(r));
    }
    let rq = c64__reduce_big(abs(y));
    let c = cos(rq.x);
    let s = sin(rq.x);
    var cs: vec2<f32>;
    switch u32(rq.y) {
        case 0u: { cs = vec2<f32>(c, s); }
        case 1u: { cs = vec2<f32>(-s, c); }
        case 2u: { cs = vec2<f32>(-c, -s); }
        default: { cs = vec2<f32>(s, -c); }
    }
    return vec2<f32>(cs.x, c64__copysign(1.0, y) * cs.y);
}

// m * (c, s) where m = exp(a) may overflow but the products do not (a < 177)
fn c64__exp_cis(a: f32, cs: vec2<f32>) -> vec2<f32> {
    if (a > 88.0) {
        let h = c64__exp(0.5 * a);
        return (cs * h) * h;
    }
    return cs * c64__exp(a);
}

// -- conversions ----------------------------------------------------------------------------
// u32 -> f32 rounded to nearest even (both halves exact, one rounding in the add)
fn c64__u32_f32(x: u32) -> f32 { return f32(x & 0xffffff00u) + f32(x & 0xffu); }
fn c64__i32_f32(x: i32) -> f32 { return f32(x & i32(-256)) + f32(x & 255); }
// u64 (lo, hi) -> f32 rounded to nearest even: the top 32 bits with a sticky bit, scaled
fn c64__u64_f32(lo: u32, hi: u32) -> f32 {
    if (hi == 0u) { return c64__u32_f32(lo); }
    let lz = countLeadingZeros(hi);
    let top = select((hi << lz) | (lo >> ((32u - lz) & 31u)), hi, lz == 0u);
    let rest = select(lo << lz, lo, lz == 0u);
    let f = c64__u32_f32(top | select(0u, 1u, rest != 0u));
    return f * bitcast<f32>((159u - lz) << 23u);  // 2^(32 - lz), exact
}
// f32 -> 64-bit two's complement words (truncation; NaN / out of range: 0x8000000000000000)
fn c64__f32_u64(x: f32, signed: bool) -> vec2<u32> {
    let t = trunc(x);
    let lim = select(18446744073709551616.0, 9223372036854775808.0, signed);
    if (c64__isnan(x) || t >= lim || t < select(0.0, -9223372036854775808.0, signed)
        || (!signed && t < 0.0)) {
        return vec2<u32>(0u, 0x80000000u);
    }
    let a = abs(t);
    var w: vec2<u32>;
    if (a < 4294967296.0) {
        w = vec2<u32>(u32(a), 0u);
    } else {
        let hi = trunc(a / 4294967296.0);
        w = vec2<u32>(u32(a - hi * 4294967296.0), u32(hi));
    }
    if (t < 0.0) {  // two's complement negation
        let lo = ~w.x + 1u;
        w = vec2<u32>(lo, ~w.y + select(0u, 1u, lo == 0u));
    }
    return w;
}

fn c64_from_f32(x: f32) -> vec2<f32> { return vec2<f32>(x, 0.0); }
fn c64_from_i32(x: i32) -> vec2<f32> { return vec2<f32>(c64__i32_f32(x), 0.0); }
fn c64_from_u32(x: u32) -> vec2<f32> { return vec2<f32>(c64__u32_f32(x), 0.0); }
fn c64_from_bool(x: bool) -> vec2<f32> { return vec2<f32>(select(0.0, 1.0, x), 0.0); }
fn c64_from_u64(x: vec2<u32>) -> vec2<f32> { return vec2<f32>(c64__u64_f32(x.x, x.y), 0.0); }
fn c64_from_i64(x: vec2<u32>) -> vec2<f32> {
    if ((x.y & 0x80000000u) == 0u) { return c64_from_u64(x); }
    let lo = ~x.x + 1u;
    let hi = ~x.y + select(0u, 1u, lo == 0u);
    return vec2<f32>(-c64__u64_f32(lo, hi), 0.0);
}
fn c64_from_f64(x: vec2<u32>) -> vec2<f32> { return vec2<f32>(f64_to_f32(x), 0.0); }
// complex -> real casts keep the real part (NumPy's astype; the namespace refuses them,
// the Array API leaves them out); -> bool: nonzero
fn c64_to_f32(x: vec2<f32>) -> f32 { return x.x; }
fn c64_to_i32(x: vec2<f32>) -> i32 { return i32(x.x); }
fn c64_to_u32(x: vec2<f32>) -> u32 { return u32(x.x); }
fn c64_to_bool(x: vec2<f32>) -> bool { return !(x.x == 0.0 && x.y == 0.0); }
fn c64_to_i64(x: vec2<f32>) -> vec2<u32> { return c64__f32_u64(x.x, true); }
fn c64_to_u64(x: vec2<f32>) -> vec2<u32> { return c64__f32_u64(x.x, false); }
fn c64_to_f64(x: vec2<f32>) -> vec2<u32> { return f64_from_f32(x.x); }

// -- parts, predicates ------------------------------------------------------------------------
fn c64_real(x: vec2<f32>) -> f32 { return x.x; }
fn c64_imag(x: vec2<f32>) -> f32 { return x.y; }
fn c64_conj(x: vec2<f32>) -> vec2<f32> { return vec2<f32>(x.x, -x.y); }
fn c64_positive(x: vec2<f32>) -> vec2<f32> { return x; }
fn c64_negative(x: vec2<f32>) -> vec2<f32> { return -x; }
fn c64_equal(x: vec2<f32>, y: vec2<f32>) -> bool { return x.x == y.x && x.y == y.y; }
fn c64_not_equal(x: vec2<f32>, y: vec2<f32>) -> bool { return !(x.x == y.x && x.y == y.y); }
fn c64_isnan(x: vec2<f32>) -> bool { return c64__isnan(x.x) || c64__isnan(x.y); }
fn c64_isinf(x: vec2<f32>) -> bool { return c64__isinf(x.x) || c64__isinf(x.y); }
fn c64_isfinite(x: vec2<f32>) -> bool { return c64__isfin(x.x) && c64__isfin(x.y); }
fn c64_truthy(x: vec2<f32>) -> bool { return c64_to_bool(x); }

// round half to even, per component (values >= 2^23 are integers already)
fn c64__round1(x: f32) -> f32 {
    if (!c64__isfin(x) || abs(x) >= 8388608.0) { return x; }
    return round(x);
}
fn c64_round(x: vec2<f32>) -> vec2<f32> { return vec2<f32>(c64__round1(x.x), c64__round1(x.y)); }

// -- arithmetic (NumPy's complex loops) ---------------------------------------------------
fn c64_add(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> { return x + y; }
fn c64_subtract(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> { return x - y; }
fn c64_multiply(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
}
fn c64_square(x: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(x.x * x.x - x.y * x.y, x.x * x.y + x.y * x.x);
}
// Smith's algorithm, as NumPy's complex divide (division by 0 gives inf / NaN per component)
fn c64_divide(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let br = abs(b.x);
    let bi = abs(b.y);
    if (br >= bi) {
        if (br == 0.0 && bi == 0.0) { return vec2<f32>(c64__div(a.x, br), c64__div(a.y, br)); }
        let rat = b.y / b.x;
        let scl = 1.0 / (b.x + b.y * rat);
        return vec2<f32>((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
    }
    if (!(br < bi)) { return c64__nan2(); }  // a NaN in b
    let rat = b.x / b.y;
    let scl = 1.0 / (b.y + b.x * rat);
    return vec2<f32>((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
fn c64_reciprocal(x: vec2<f32>) -> vec2<f32> { return c64_divide(vec2<f32>(1.0, 0.0), x); }

fn c64_abs(x: vec2<f32>) -> f32 { return c64__hypot(x.x, x.y); }

// x / |x| (NumPy 2): NaN for NaN parts, 0 for 0, the unit direction of an infinite part
fn c64_sign(x: vec2<f32>) -> vec2<f32> {
    if (c64_isnan(x)) { return c64__nan2(); }
    if (c64__isinf(x.x) || c64__isinf(x.y)) {
        if (c64__isinf(x.x) && c64__isinf(x.y)) { return c64__nan2(); }
        if (c64__isinf(x.x)) { return vec2<f32>(c64__sgn1(x.x), 0.0); }
        return vec2<f32>(0.0, c64__sgn1(x.y));
    }
    let m = c64__hypot(x.x, x.y);
    if (m == 0.0) { return vec2<f32>(0.0, 0.0); }
    return vec2<f32>(x.x / m, x.y / m);
}

// -- sqrt, exp, log -----------------------------------------------------------------------------
// C99 csqrt (Kahan): sqrt((|a| + |z|) / 2) on the side without cancellation, scaled
fn c64_sqrt(z: vec2<f32>) -> vec2<f32> {
    let a = z.x;
    let b = z.y;
    if (c64__isinf(b)) { return vec2<f32>(c64__inf(), b); }
    if (c64__isnan(a)) { return c64__nan2(); }
    if (c64__isinf(a)) {
        if (c64__isnan(b)) {
            if (a < 0.0) { return vec2<f32>(c64__nan(), c64__inf()); }
            return vec2<f32>(a, b);
        }
        if (a < 0.0) { return vec2<f32>(0.0, c64__copysign(c64__inf(), b)); }
        return vec2<f32>(a, c64__copysign(0.0, b));
    }
    if (c64__isnan(b)) { return c64__nan2(); }
    if (a == 0.0 && b == 0.0) { return vec2<f32>(0.0, b); }
    // scale into range: |z| / 4 for huge values, |z| * 2^50 for tiny ones
    let m = max(abs(a), abs(b));
    var s = 1.0;
    var aa = a;
    var bb = b;
    if (m > 1.0e37) {
        aa = a * 0.25;
        bb = b * 0.25;
        s = 2.0;
    } else if (m < 1.0e-30) {
        aa = a * 1125899906842624.0;
        bb = b * 1125899906842624.0;
        s = 2.98023223876953125e-8;  // 2^-25
    }
    let t = sqrt(0.5 * (abs(aa) + c64__hypot(aa, bb)));
    if (aa >= 0.0) {
        return vec2<f32>(t * s, (bb / (2.0 * t)) * s);
    }
    return vec2<f32>((abs(bb) / (2.0 * t)) * s, c64__copysign(t, bb) * s);
}

fn c64_exp(z: vec2<f32>) -> vec2<f32> {
    let a = z.x;
    let b = z.y;
    if (b == 0.0) { return vec2<f32>(c64__exp(a), b); }
    if (c64__isinf(a)) {
        if (a < 0.0) {
            if (!c64__isfin(b)) { return vec2<f32>(0.0, 0.0); }
            let cs = c64__cis(b);
            return vec2<f32>(c64__copysign(0.0, cs.x), c64__copysign(0.0, cs.y));
        }
        if (!c64__isfin(b)) { return vec2<f32>(a, c64__nan()); }
        let cs = c64__cis(b);
        return vec2<f32>(c64__copysign(a, cs.x), c64__copysign(a, cs.y));
    }
    if (c64__isnan(a) || !c64__isfin(b)) { return c64__nan2(); }
    return c64__exp_cis(a, c64__cis(b));
}

// exp(z) - 1 without cancellation near 0: expm1(a) cos(b) - 2 sin(b/2)^2 + i exp(a) sin(b)
fn c64_expm1(z: vec2<f32>) -> vec2<f32> {
    let a = z.x;
    let b = z.y;
    if (!c64__isfin(a) || !c64__isfin(b)) {
        let e = c64_exp(z);
        return vec2<f32>(e.x - 1.0, e.y);
    }
    if (b == 0.0) { return vec2<f32>(select(c64__expm1(a), 0.0, a == 0.0), b); }
    let cs = c64__cis(b);
    var vers = 1.0 - cs.x;  // 2 sin(b/2)^2, without cancellation for small b
    if (abs(b) < 1.0) {
        let h = sin(0.5 * b);
        vers = 2.0 * h * h;
    }
    var re: f32;
    if (a > 88.0) {
        re = c64__exp_cis(a, cs).x - 1.0;
    } else {
        re = c64__expm1(a) * cs.x - vers;
    }
    return vec2<f32>(re, c64__exp_cis(a, cs).y);
}

fn c64_log(z: vec2<f32>) -> vec2<f32> {
    let a = z.x;
    let b = z.y;
    if (c64__isnan(a) || c64__isnan(b)) {
        if (c64__isinf(a) || c64__isinf(b)) { return vec2<f32>(c64__inf(), c64__nan()); }
        return c64__nan2();
    }
    return vec2<f32>(c64__logabs(a, b), c64__atan2(b, a));
}

// log(1 + z): log1p of |1 + z|^2 - 1 = a (2 + a) + b^2 where that is small
fn c64_log1p(z: vec2<f32>) -> vec2<f32> {
    let a = z.x;
    let b = z.y;
    if (!c64__isfin(a) || !c64__isfin(b)) { return c64_log(vec2<f32>(1.0 + a, b)); }
    let u = 1.0 + a;
    let t = a * (2.0 + a) + b * b;
    var re: f32;
    if (t > -0.75 && t < 3.0) {
        re = 0.5 * c64__log1p(t);
    } else {
        re = c64__logabs(u, b);
    }
    return vec2<f32>(re, c64__atan2(b, u));
}

fn c64_log2(z: vec2<f32>) -> vec2<f32> { return c64_log(z) * 1.44269504088896340736; }
fn c64_log10(z: vec2<f32>) -> vec2<f32> { return c64_log(z) * 0.43429448190325182765; }

// NumPy's complex pow: 1 for y == 0; 0 ** y: 0 for Re y > 0, else NaN; integer y in
// (-100, 100): repeated squaring (7 steps at most); otherwise exp(y log x)
fn c64_pow(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
    if (y.x == 0.0 && y.y == 0.0) { return vec2<f32>(1.0, 0.0); }
    if (x.x == 0.0 && x.y == 0.0) {
        if (y.x > 0.0) { return vec2<f32>(0.0, 0.0); }
        return c64__nan2();
    }
    if (y.y == 0.0 && y.x == trunc(y.x) && abs(y.x) < 100.0) {
        let n = i32(y.x);
        if (n == 1) { return x; }
        if (n == 2) { return c64_multiply(x, x); }
        if (n == 3) { return c64_multiply(c64_multiply(x, x), x); }
        var m = u32(abs(n));
        var p = x;
        var r = vec2<f32>(1.0, 0.0);
        for (var k = 0u; k < 7u; k++) {
            if ((m & 1u) != 0u) { r = c64_multiply(r, p); }
            m = m >> 1u;
            if (m == 0u) { break; }
            p = c64_multiply(p, p);
        }
        if (n < 0) { return c64_divide(vec2<f32>(1.0, 0.0), r); }
        return r;
    }
    return c64_exp(c64_multiply(y, c64_log(x)));
}

// -- hyperbolic and trigonometric ------------------------------------------------------------
fn c64_sinh(z: vec2<f32>) -> vec2<f32> {
    let x = z.x;
    let y = z.y;
    if (c64__isfin(x) && c64__isfin(y)) {
        if (y == 0.0) { return vec2<f32>(c64__sinh(x), y); }
        let cs = c64__cis(y);
        let ax = abs(x);
        if (ax < 9.0) { return vec2<f32>(c64__sinh(x) * cs.x, c64__cosh(x) * cs.y); }
        let h = c64__exp_cis(ax - C64_LN2, cs);  // cosh = |sinh| = exp(|x|) / 2 here
        return vec2<f32>(c64__copysign(1.0, x) * h.x, h.y);
    }
    if (x == 0.0) { return vec2<f32>(x, c64__nan()); }
    if (c64__isnan(x)) {
        if (y == 0.0) { return vec2<f32>(x, y); }
        return c64__nan2();
    }
    if (c64__isinf(x)) {
        if (y == 0.0) { return vec2<f32>(x, y); }
        if (c64__isfin(y)) {
            let cs = c64__cis(y);
            return vec2<f32>(x * cs.x, c64__inf() * cs.y);
        }
        return vec2<f32>(x, c64__nan());
    }
    return c64__nan2();
}

fn c64_cosh(z: vec2<f32>) -> vec2<f32> {
    let x = z.x;
    let y = z.y;
    if (c64__isfin(x) && c64__isfin(y)) {
        if (y == 0.0) { return vec2<f32>(c64__cosh(x), select(y, -y, c64__signbit(x))); }
        let cs = c64__cis(y);
        let ax = abs(x);
        if (ax < 9.0) { return vec2<f32>(c64__cosh(x) * cs.x, c64__sinh(x) * cs.y); }
        let h = c64__exp_cis(ax - C64_LN2, cs);
        return vec2<f32>(h.x, c64__copysign(1.0, x) * h.y);
    }
    if (x == 0.0) { return vec2<f32>(c64__nan(), 0.0); }
    if (c64__isnan(x)) {
        if (y == 0.0) { return vec2<f32>(x, y); }
        return c64__nan2();
    }
    if (c64__isinf(x)) {
        if (y == 0.0) { return vec2<f32>(c64__inf(), select(y, -y, x < 0.0)); }
        if (c64__isfin(y)) {
            let cs = c64__cis(y);
            return vec2<f32>(c64__inf() * cs.x, x * cs.y);
        }
        return vec2<f32>(c64__inf(), c64__nan());
    }
    return c64__nan2();
}

// ctanh (Kahan; FreeBSD's ctanhf): tanh x -> +-1 past |x| = 9 with an exp(-2|x|) imaginary part
fn c64_tanh(z: vec2<f32>) -> vec2<f32> {
    let x = z.x;
    let y = z.y;
    if (!c64__isfin(x)) {
        if (c64__isnan(x)) {
            if (y == 0.0) { return vec2<f32>(x, y); }
            return c64__nan2();
        }
        // tanh(+-inf + iy) = +-1 + 0j with the sign of y (the Array API; C99's sin(2y) sign aside)
        return vec2<f32>(c64__sgn1(x), c64__copysign(0.0, y));
    }
    if (!c64__isfin(y)) {
        if (x == 0.0) { return vec2<f32>(x, c64__nan()); }
        return c64__nan2();
    }
    if (y == 0.0) {  // real tanh
        let a = abs(x);
        if (a > 9.5) { return vec2<f32>(c64__sgn1(x), y); }
        let e = c64__expm1(2.0 * a);
        return vec2<f32>(c64__copysign(e / (e + 2.0), x), y);
    }
    let cs = c64__cis(y);
    if (abs(x) >= 9.01) {
        let e = c64__exp(-abs(x));
        return vec2<f32>(c64__sgn1(x), 4.0 * cs.y * cs.x * e * e);
    }
    let t = cs.y / cs.x;
    let beta = 1.0 + t * t;
    let s = c64__sinh(x);
    let rho = sqrt(1.0 + s * s);
    let den = 1.0 + beta * s * s;
    return vec2<f32>(beta * rho * s / den, t / den);
}

// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz)
fn c64_sin(z: vec2<f32>) -> vec2<f32> {
    let w = c64_sinh(vec2<f32>(-z.y, z.x));
    return vec2<f32>(w.y, -w.x);
}
fn c64_cos(z: vec2<f32>) -> vec2<f32> { return c64_cosh(vec2<f32>(-z.y, z.x)); }
fn c64_tan(z: vec2<f32>) -> vec2<f32> {
    let w = c64_tanh(vec2<f32>(-z.y, z.x));
    return vec2<f32>(w.y, -w.x);
}

// -- inverse functions (Kahan) ------------------------------------------------------------------
// casin of a finite z: atan(a / Re(sqrt(1 - z) sqrt(1 + z))) + i asinh(Im(conj(sqrt(1 - z)) sqrt(1 + z)))
fn c64__asin_fin(z: vec2<f32>) -> vec2<f32> {
    let s1 = c64_sqrt(vec2<f32>(1.0 - z.x, -z.y));
    let s2 = c64_sqrt(vec2<f32>(1.0 + z.x, z.y));
    let re = c64__atan2(z.x, s1.x * s2.x - s1.y * s2.y);
    let im = c64__asinh(s1.x * s2.y - s1.y * s2.x);
    return vec2<f32>(re, im);
}

fn c64_asinh(z: vec2<f32>) -> vec2<f32> {
    let a = z.x;
    let b = z.y;
    if (c64__isfin(a) && c64__isfin(b)) {
        let w = c64__asin_fin(vec2<f32>(-b, a));  // asinh z = -i asin(iz)
        return vec2<f32>(w.y, -w.x);
    }
    let x = abs(a);
    let y = abs(b);
    var r: vec2<f32>;
    if (c64__isnan(x)) {
        if (y == 0.0) { return vec2<f32>(a, b); }
        if (c64__isinf(y)) { return vec2<f32>(c64__inf(), c64__nan()); }
        return c64__nan2();
    }
    if (c64__isinf(x)) {
        if (c64__isnan(y)) { r = vec2<f32>(c64__inf(), c64__nan()); }
        else if (c64__isinf(y)) { r = vec2<f32>(c64__inf(), C64_PI_4); }
        else { r = vec2<f32>(c64__inf(), 0.0); }
    } else {  // x finite, y inf or NaN
        if (c64__isnan(y)) { return c64__nan2(); }
        r = vec2<f32>(c64__inf(), C64_PI_2);
    }
    return vec2<f32>(c64__copysign(r.x, a), c64__copysign(r.y, b));
}

fn c64_asin(z: vec2<f32>) -> vec2<f32> {
    if (c64__isfin(z.x) && c64__isfin(z.y)) { return c64__asin_fin(z); }
    let w = c64_asinh(vec2<f32>(-z.y, z.x));  // asin z = -i asinh(iz)
    return vec2<f32>(w.y, -w.x);
}

// cacos: 2 atan(Re sqrt(1 - z) / Re sqrt(1 + z)) + i asinh(Im(conj(sqrt(1 + z)) sqrt(1 - z)))
fn c64_acos(z: vec2<f32>) -> vec2<f32> {
    let a = z.x;
    let b = z.y;
    if (c64__isfin(a) && c64__isfin(b)) {
        let s1 = c64_sqrt(vec2<f32>(1.0 - a, -b));
        let s2 = c64_sqrt(vec2<f32>(1.0 + a, b));
        return vec2<f32>(2.0 * c64__atan2(s1.x, s2.x), c64__asinh(s2.x * s1.y - s2.y * s1.x));
    }
    if (c64__isnan(a)) {
        if (c64__isinf(b)) { return vec2<f32>(c64__nan(), -b); }
        return c64__nan2();
    }
    if (c64__isnan(b)) {
        if (c64__isinf(a)) { return vec2<f32>(c64__nan(), c64__inf()); }
        if (a == 0.0) { return vec2<f32>(C64_PI_2, b); }
        return c64__nan2();
    }
    if (c64__isinf(b)) {
        if (c64__isinf(a)) { return vec2<f32>(select(C64_PI_4, C64_3PI_4, a < 0.0), -b); }
        return vec2<f32>(C64_PI_2, -b);
    }
    // a infinite, b finite
    return vec2<f32>(select(0.0, C64_PI, a < 0.0), c64__copysign(c64__inf(), -b));
}

// cacosh: asinh(Re(conj(sqrt(z - 1)) sqrt(z + 1))) + i 2 atan(Im sqrt(z - 1) / Re sqrt(z + 1))
fn c64_acosh(z: vec2<f32>) -> vec2<f32> {
    let a = z.x;
    let b = z.y;
    if (c64__isfin(a) && c64__isfin(b)) {
        let s1 = c64_sqrt(vec2<f32>(a - 1.0, b));
        let s2 = c64_sqrt(vec2<f32>(a + 1.0, b));
        return vec2<f32>(c64__asinh(s1.x * s2.x + s1.y * s2.y), 2.0 * c64__atan2(s1.y, s2.x));
    }
    if (c64__isnan(a)) {
        if (c64__isinf(b)) { return vec2<f32>(c64__inf(), c64__nan()); }
        return c64__nan2();
    }
    if (c64__isnan(b)) {
        if (c64__isinf(a)) { return vec2<f32>(c64__inf(), c64__nan()); }
        if (a == 0.0) { return vec2<f32>(c64__nan(), C64_PI_2); }
        return c64__nan2();
    }
    if (c64__isinf(b)) {
        if (c64__isinf(a)) { return vec2<f32>(c64__inf(), c64__copysign(select(C64_PI_4, C64_3PI_4, a < 0.0), b)); }
        return vec2<f32>(c64__inf(), c64__copysign(C64_PI_2, b));
    }
    return vec2<f32>(c64__inf(), c64__copysign(select(0.0, C64_PI, a < 0.0), b));
}

// catanh (first quadrant, then the signs of z): log1p(4x / ((1 - x)^2 + y^2)) / 4 +
// i atan2(2y, (1 - x)(1 + x) - y^2) / 2; 1 / z past |z| = 1e10
fn c64_atanh(z: vec2<f32>) -> vec2<f32> {
    let a = z.x;
    let b = z.y;
    let x = abs(a);
    let y = abs(b);
    var r: vec2<f32>;
    if (c64__isnan(x)) {
        if (c64__isinf(y)) { r = vec2<f32>(0.0, C64_PI_2); } else { return c64__nan2(); }
    } else if (c64__isnan(y)) {
        if (c64__isinf(x) || x == 0.0) { r = vec2<f32>(0.0, c64__nan()); } else { return c64__nan2(); }
    } else if (c64__isinf(x) || c64__isinf(y)) {
        r = vec2<f32>(0.0, C64_PI_2);
    } else if (x == 1.0 && y == 0.0) {
        r = vec2<f32>(c64__inf(), 0.0);
    } else if (x > 1.0e10 || y > 1.0e10) {
        let m = max(x, y);
        let xs = x / m;
        let ys = y / m;
        r = vec2<f32>((xs / (xs * xs + ys * ys)) / m, C64_PI_2);
    } else {
        let d = (1.0 - x) * (1.0 - x) + y * y;
        var re = 0.25 * c64__log1p(4.0 * x / d);
        if (d < 1.0e-6) {  // near 1 (d may underflow): log(4x) - 2 log|1 - z|
            re = 0.25 * (c64__log(4.0 * x) - 2.0 * c64__logabs(1.0 - x, y));
        }
        r = vec2<f32>(re, 0.5 * c64__atan2(2.0 * y, (1.0 - x) * (1.0 + x) - y * y));
    }
    return vec2<f32>(c64__copysign(r.x, a), c64__copysign(r.y, b));
}

fn c64_atan(z: vec2<f32>) -> vec2<f32> {
    let w = c64_atanh(vec2<f32>(-z.y, z.x));  // atan z = -i atanh(iz)
    return vec2<f32>(w.y, -w.x);
}
