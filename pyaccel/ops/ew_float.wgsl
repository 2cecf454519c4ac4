// Float helpers for elementwise ops (compute type T = f32; float16 data computes in f32,
// as NumPy's float16 loops do). They give NumPy's results for NaN, inf, signed zeros and
// domain errors where WGSL leaves builtins indeterminate (log(-1), pow(-2, 3), x / 0,
// atan2(0, 0), max(x, NaN), tanh(100), ...). NaN and inf come from private variables so
// that no constant expression evaluates to them (a shader-creation error in WGSL).

var<private> F_NAN_BITS: u32 = 0x7fc00000u;
var<private> F_INF_BITS: u32 = 0x7f800000u;

fn f_nan() -> T { return bitcast<T>(F_NAN_BITS); }
fn f_inf() -> T { return bitcast<T>(F_INF_BITS); }
fn f_isnan(x: T) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn f_isinf(x: T) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn f_isfinite(x: T) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }
fn f_signbit(x: T) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }
// NaN-aware equality: Vulkan compilers may fold `x != y` to an ordered compare.
fn f_ne(x: T, y: T) -> bool { return !(x == y); }
fn f_truthy(x: T) -> bool { return !(x == 0.0); }

fn f_copysign(x: T, y: T) -> T {
    return bitcast<T>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(y) & 0x80000000u));
}

fn f_sign(x: T) -> T {
    if (f_isnan(x)) { return x; }
    if (x > 0.0) { return 1.0; }
    if (x < 0.0) { return -1.0; }
    return abs(x);  // +0 for either zero: sign(-0) is +0 (Array API special case)
}

fn f_maximum(x: T, y: T) -> T {
    if (f_isnan(x) || f_isnan(y)) { return f_nan(); }
    return max(x, y);
}

fn f_minimum(x: T, y: T) -> T {
    if (f_isnan(x) || f_isnan(y)) { return f_nan(); }
    return min(x, y);
}

fn f_clip(x: T, lo: T, hi: T) -> T {
    return f_minimum(f_maximum(x, lo), hi);
}

fn f_divide(x: T, y: T) -> T {
    if (y == 0.0) {
        if (x == 0.0 || f_isnan(x)) { return f_nan(); }
        let s = (bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u;
        return bitcast<T>(F_INF_BITS | s);
    }
    if (f_isinf(y)) {
        if (!f_isfinite(x)) { return f_nan(); }
        return f_copysign(0.0, bitcast<T>((bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u));
    }
    return x / y;
}

fn f_sqrt(x: T) -> T {
    if (x < 0.0) { return f_nan(); }
    return sqrt(x);
}

// Subnormal inputs (|x| < 2^-126) as (is_subnormal, mantissa as a float): x = m * 2^-149.
// Software GPUs (lavapipe) flush subnormals inside log / log2 (log(1e-40) gave -88.02, not
// -92.10), and a multiply would flush them too, so they are read from the bits.
fn f_sub_mant(x: T) -> T {
    let b = bitcast<u32>(x);
    if ((b & 0x7f800000u) == 0u && (b & 0x007fffffu) != 0u) {
        if ((b & 0x80000000u) != 0u) { return -1.0; }  // negative subnormal: log is NaN
        return T(b & 0x007fffffu);
    }
    return 0.0;  // not a subnormal
}

// -- float32 transcendentals within 2 ulp (docs/arrays.md): WGSL's built-in exp / log / atan
// are several to 1e6 ulp off on lavapipe and in browsers. Cody-Waite range reduction with
// split constants (hi parts with trailing zero bits, so a contracted or plain multiply is exact)
// and short polynomials; no fma needed, no float64, no loops.

// x * 2^k for v normal and any k (two exact steps; a subnormal result rounded from the bits,
// since software GPUs flush subnormal arithmetic results to zero).
fn f_ldexp(v: T, k: i32) -> T {
    let b = bitcast<u32>(v);
    let e = i32((b >> 23u) & 0xffu) - 127 + k;  // unbiased exponent of the result
    if (e > 127) { return f_copysign(f_inf(), v); }
    if (e >= -126) { return bitcast<T>((b & 0x807fffffu) | (u32(e + 127) << 23u)); }
    let s = -126 - e;  // right shift of the 24-bit significand into a subnormal
    if (s > 24) { return f_copysign(0.0, v); }
    let m = (b & 0x007fffffu) | 0x00800000u;
    let q = (m + (1u << u32(s - 1))) >> u32(s);  // nearest, ties up
    return bitcast<T>((b & 0x80000000u) | q);
}

// expm1(r) for |r| <= 0.35 (Taylor to r^9: 4e-10 relative; the r^2 part is a small correction)
fn f_expm1_poly(r: T) -> T {
    let p = 0.5 + r * (1.6666667163e-1 + r * (4.1666667908e-2 + r * (8.3333337680e-3 + r * (
        1.3888889225e-3 + r * (1.9841270114e-4 + r * (2.4801587642e-5 + r * 2.7557319e-6))))));
    return r + r * r * p;
}

// k = round(x / ln 2), r = x - k ln 2 (ln 2 = 0.693359375 - 2.12194440e-4: hi has 10 bits)
fn f_exp_reduce(x: T) -> vec2<T> {
    let k = round(x * 1.4426950408889634);
    return vec2<T>(k, (x - k * 0.693359375) - k * -2.1219444005469057e-4);
}

// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1] (Cephes' logf polynomial)
fn f_log1p_poly(f: T) -> T {
    let z = f * f;
    var y = 7.0376836292e-2;
    y = y * f - 1.1514610310e-1;
    y = y * f + 1.1676998740e-1;
    y = y * f - 1.2420140846e-1;
    y = y * f + 1.4249322787e-1;
    y = y * f - 1.6668057665e-1;
    y = y * f + 2.0000714765e-1;
    y = y * f - 2.4999993993e-1;
    y = y * f + 3.3333331174e-1;
    return f + (y * f * z - 0.5 * z);
}

// x = m 2^e for finite x > 0 (subnormals from the bits), m in [sqrt(1/2), sqrt(2)): (e, m)
fn f_log_split(x: T) -> vec2<T> {
    var b = bitcast<u32>(x);
    var e0 = 0;
    let sm = f_sub_mant(x);
    if (sm > 0.0) { b = bitcast<u32>(sm); e0 = -149; }
    var e = i32((b >> 23u) & 0xffu) - 126 + e0;
    var m = bitcast<T>((b & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
    if (m < 0.70710678) { m = m + m; e = e - 1; }
    return vec2<T>(T(e), m);
}

// log(x) for finite x > 0: log(m) from a polynomial in f = m - 1 (Cephes' logf
// coefficients). Returns (e, log(m)).
fn f_log_parts(x: T) -> vec2<T> {
    let em = f_log_split(x);
    return vec2<T>(em.x, f_log1p_poly(em.y - 1.0));
}

// -- double-float (hi + lo) pieces for pow and logaddexp. GPU compilers fold the textbook
// compensations ((a + b) - a to b, also with the 1 hidden in a private variable: measured on
// lavapipe and llvmpipe), and WGSL's fma is not fused there (fma(a, b, -a * b) gave 0), so
// high parts are bit masks (12 significant bits: the product of two is exact, and neither
// can be folded away) and f_opq hides a sum from the folding (min with the largest float).
fn f_hi12(v: T) -> T { return bitcast<T>(bitcast<u32>(v) & 0xfffff000u); }
fn f_opq(v: T) -> T { return min(v, T(bitcast<f32>(0x7f7fffffu))); }  // (FLT_MAX exactly: Tint refuses 3.4028235e38)

// ln(m) = (2/3) p, p = s (3 + s^2 + 3 s^4 / 5 + 3 s^6 / 7 + ...), s = (m - 1) / (m + 1), for m in
// [sqrt(1/2), sqrt(2)] (|s| <= 0.172; Taylor to s^13: 2^-36). Returns p as (hi: 12 bits, lo):
// s = sh + sl and 3 + s^2 + ... = wh + wl from exact pieces, relative error about 2^-34.
fn f_log_dd_core(m: T) -> vec2<T> {
    let f = m - 1.0;  // exact
    let dh = f_hi12(2.0 + f);
    let dl = f - (dh - 2.0);  // 2 + f = dh + dl exactly
    let d = 2.0 + f;
    let s = f / d;
    let sh = f_hi12(s);
    let sl = ((f - sh * dh) - sh * dl) / d;  // f - sh dh is exact (Sterbenz)
    let z = s * s;
    let r = sl * (sh + s) + z * z * (0.6 + z * (0.42857142857 + z * (0.33333333333 + z * (
        0.27272727273 + z * 0.23076923077))));
    let zh = sh * sh;  // exact
    let wh = f_hi12((3.0 + zh) + r);
    let wl = r - ((wh - 3.0) - zh);
    let ph = sh * wh;  // exact
    let pl = sl * wh + s * wl;
    let qh = f_hi12(ph + pl);
    return vec2<T>(qh, pl - (qh - ph));
}

// log2(x) = hi + lo (hi: 12 bits) for finite x > 0, relative error about 2^-33
fn f_log2_dd(x: T) -> vec2<T> {
    let em = f_log_split(x);
    let q = f_log_dd_core(em.y);  // log2(m) = 2 / (3 ln 2) q; 2 / (3 ln 2) = 0.961669921875 + tail
    let ch = 0.961669921875 * q.x;  // exact
    let cl = 1.2677205086220056e-4 * q.x + 0.9617967009544373 * q.y;
    let h = f_hi12((em.x + ch) + cl);
    return vec2<T>(h, cl - ((h - em.x) - ch));
}

fn f_log(x: T) -> T {
    if (f_isnan(x) || x < 0.0) { return f_nan(); }
    if (x == 0.0) { return -f_inf(); }
    if (f_isinf(x)) { return x; }
    let p = f_log_parts(x);
    return p.x * 0.693359375 + (p.y + p.x * -2.1219444005469057e-4);
}

fn f_log2(x: T) -> T {
    if (f_isnan(x) || x < 0.0) { return f_nan(); }
    if (x == 0.0) { return -f_inf(); }
    if (f_isinf(x)) { return x; }
    let p = f_log_parts(x);  // log2 e = 1.4375 + 5.1950409e-3 (hi: 5 bits)
    return p.x + (p.y * 1.4375 + p.y * 5.1950408889634e-3);
}

fn f_log10(x: T) -> T {
    if (f_isnan(x) || x < 0.0) { return f_nan(); }
    if (x == 0.0) { return -f_inf(); }
    if (f_isinf(x)) { return x; }
    let p = f_log_parts(x);  // log10 2 and log10 e split (Cephes' L102A/B, L10EA/B)
    return p.x * 3.0078125e-1 + (p.y * 4.3359375e-1 + (p.y * 7.0073190e-4
                                                        + p.x * 2.48745663981195e-4));
}

fn f_log1p(x: T) -> T {
    if (f_isnan(x) || x < -1.0) { return f_nan(); }
    if (x == -1.0) { return -f_inf(); }
    if (f_isinf(x) || x == 0.0) { return x; }  // log1p(-0) is -0
    // 1 + x in [sqrt(1/2), sqrt(2)): the polynomial on x itself (no rounding of 1 + x; GPU
    // compilers fold Goldberg's (1 + x) - 1 back to x)
    if (x > -0.29289322 && x < 0.41421357) { return f_log1p_poly(x); }
    // x in [-1/2, 1 - sqrt(2)/2]: log(2 (1 + x)) - ln 2, and 1 + 2x is exact (Sterbenz)
    if (x >= -0.5 && x < 0.0) {
        return (f_log1p_poly(1.0 + 2.0 * x) - 0.693359375) + 2.1219444005469057e-4;
    }
    let u = f_opq(1.0 + x);
    if (f_isinf(u) || x > 1.0e8) { return f_log(u); }
    // the rounding of 1 + x, c = x - (u - 1) (f_opq: not folded to 0), as c / u
    return f_log(u) + (x - (u - 1.0)) / u;
}

fn f_exp(x: T) -> T {
    if (f_isnan(x)) { return x; }
    if (x > 88.72284) { return f_inf(); }
    if (x < -103.97208) { return 0.0; }
    let kr = f_exp_reduce(x);
    return f_ldexp(1.0 + f_expm1_poly(kr.y), i32(kr.x));
}

fn f_expm1(x: T) -> T {
    if (f_isnan(x) || x == 0.0) { return x; }  // expm1(-0) is -0
    if (x > 88.72284) { return f_inf(); }
    if (x < -17.0) { return -1.0; }  // e^x below half an ulp of 1
    if (abs(x) <= 0.34657359) { return f_expm1_poly(x); }
    let kr = f_exp_reduce(x);
    let k = i32(kr.x);
    let em = f_expm1_poly(kr.y);
    if (k > 24) { return f_ldexp(1.0 + em, k); }
    let t = f_ldexp(1.0, -k);  // 2^-k: 1 - 2^-k is exact for k <= 24
    return f_ldexp(em + (1.0 - t), k);
}

fn f_pow(x: T, y: T) -> T {
    if (y == 0.0 || x == 1.0) { return 1.0; }
    if (y == 1.0) { return x; }
    if (f_isnan(x) || f_isnan(y)) { return f_nan(); }
    let ax = abs(x);
    if (f_isinf(y)) {
        if (ax == 1.0) { return 1.0; }
        if ((ax > 1.0) == (y > 0.0)) { return f_inf(); }
        return 0.0;
    }
    let y_int = floor(y) == y;
    let y_odd = y_int && abs(y) < 16777216.0 && (i32(abs(y)) & 1) == 1;
    if (x < 0.0 && !y_int && !f_isinf(x)) { return f_nan(); }
    var r: T;
    if (x == 0.0) {
        r = select(0.0, f_inf(), y < 0.0);
    } else if (f_isinf(x)) {
        r = select(f_inf(), 0.0, y < 0.0);
    } else {
        // t = y log2|x| = th + tl: log2 as a double-float, y = yh + (y - yh) (exact split)
        let l = f_log2_dd(ax);
        let yh = f_hi12(y);
        let th = yh * l.x;  // exact
        let tl = (y - yh) * l.x + y * l.y;
        let t = th + tl;
        if (f_isnan(t) || t > 128.5) {  // (NaN: inf - inf of a huge y)
            r = select(0.0, f_inf(), (ax > 1.0) == (y > 0.0));
        } else if (t < -151.0) {
            r = 0.0;
        } else {  // 2^t = 2^k e^((rm + c) ln 2), rm = th - k + tl in 12 bits, c its remainder
            let k = round(t);
            let rh = th - k;  // exact
            let rm = f_hi12(rh + tl);
            let c = tl - (rm - rh);
            let ah = rm * 0.693115234375;  // exact (ln 2 = 0.693115234375 + 3.1946183e-5)
            let al = rm * 3.194618329871446e-5 + c * 0.6931471824645996;
            let em = f_expm1_poly(ah);
            r = f_ldexp(1.0 + (em + (1.0 + em) * al), i32(k));  // f_ldexp: subnormal results
        }
    }
    if (y_odd && f_signbit(x)) { r = -r; }
    return r;
}

// fmod(x, y) exactly, for finite x and finite, nonzero y (musl's fmodf over the bits).
// WGSL's x % y is x - y * trunc(x / y), which loses the low bits once |x / y| passes 2^24
// (remainder(1e30, -9) gave -0.0, NumPy -6.0). Loops are bounded: at most 277 + 2 * 23 steps.
fn f_fmod32(x: f32, y: f32) -> f32 {
    let ux = bitcast<u32>(x);
    let uy = bitcast<u32>(y);
    var ex = i32((ux >> 23u) & 0xffu);
    var ey = i32((uy >> 23u) & 0xffu);
    let sx = ux & 0x80000000u;
    if ((uy << 1u) == 0u || ey == 0xff || ex == 0xff) { return x % y; }  // callers' special cases
    if ((ux << 1u) <= (uy << 1u)) {
        if ((ux << 1u) == (uy << 1u)) { return bitcast<f32>(sx); }  // |x| == |y|: a signed zero
        return x;
    }
    var uxi = ux;
    if (ex == 0) {  // subnormal x: normalise
        var i = uxi << 9u;
        loop { if ((i >> 31u) != 0u) { break; } ex = ex - 1; i = i << 1u; }
        uxi = uxi << u32(1 - ex);
    } else {
        uxi = (uxi & 0x7fffffu) | 0x800000u;
    }
    var uyi = uy;
    if (ey == 0) {
        var i = uyi << 9u;
        loop { if ((i >> 31u) != 0u) { break; } ey = ey - 1; i = i << 1u; }
        uyi = uyi << u32(1 - ey);
    } else {
        uyi = (uyi & 0x7fffffu) | 0x800000u;
    }
    loop {  // long division, one bit of the quotient per step
        if (ex <= ey) { break; }
        let d = uxi - uyi;
        if ((d >> 31u) == 0u) {
            if (d == 0u) { return bitcast<f32>(sx); }
            uxi = d;
        }
        uxi = uxi << 1u;
        ex = ex - 1;
    }
    let d = uxi - uyi;
    if ((d >> 31u) == 0u) {
        if (d == 0u) { return bitcast<f32>(sx); }
        uxi = d;
    }
    loop { if ((uxi >> 23u) != 0u) { break; } uxi = uxi << 1u; ex = ex - 1; }
    if (ex > 0) {
        uxi = (uxi - 0x800000u) | (u32(ex) << 23u);
    } else {
        uxi = uxi >> u32(1 - ex);  // a subnormal result
    }
    return bitcast<f32>(uxi | sx);
}

fn f_fmod(a: T, b: T) -> T {
    return T(f_fmod32(f32(a), f32(b)));
}

// fmod with NumPy's divmod conventions (npy_divmod): floor quotient and Python remainder.
fn f_divmod_parts(a: T, b: T) -> vec2<T> {
    let m = f_fmod(a, b);
    if (b == 0.0) { return vec2<T>(a / b, m); }
    var mod_ = m;
    var div = (a - m) / b;
    if (mod_ != 0.0) {
        if ((b < 0.0) != (mod_ < 0.0)) {
            mod_ = mod_ + b;
            div = div - 1.0;
        }
    } else {
        mod_ = f_copysign(0.0, b);
    }
    var fd: T;
    if (div != 0.0) {
        fd = floor(div);
        if (div - fd > 0.5) { fd = fd + 1.0; }
    } else {
        fd = f_copysign(0.0, f_divide(a, b));
    }
    return vec2<T>(fd, mod_);
}

// floor(a / b); where one operand is infinite (the Array API's special cases) that is a / b
// itself: inf // 5 is inf, 5 // -inf is -0 (NumPy gives nan and -1 there, as Python does)
fn f_floor_divide(a: T, b: T) -> T {
    if (f_isnan(a) || f_isnan(b)) { return f_nan(); }
    if (b == 0.0) { return f_divide(a, b); }
    if (f_isinf(a)) {
        if (f_isinf(b)) { return f_nan(); }
        return f_divide(a, b);
    }
    if (f_isinf(b)) { return f_divide(a, b); }
    return f_divmod_parts(a, b).x;
}

fn f_remainder(a: T, b: T) -> T {
    if (f_isnan(a) || f_isnan(b) || f_isinf(a) || b == 0.0) { return f_nan(); }
    if (f_isinf(b)) {
        if (a == 0.0 || (a < 0.0) == (b < 0.0)) { return a; }
        return b;
    }
    return f_divmod_parts(a, b).y;
}

fn f_hypot(x: T, y: T) -> T {
    let a = abs(x);
    let b = abs(y);
    if (f_isinf(a) || f_isinf(b)) { return f_inf(); }
    if (f_isnan(a) || f_isnan(b)) { return f_nan(); }
    let m = max(a, b);
    if (m == 0.0) { return 0.0; }
    let r = min(a, b) / m;
    return m * sqrt(1.0 + r * r);
}

// e^(vh + vl) for vh in [-20.5, 0] and |vl| below an ulp of vh, as hi + lo (relative error
// about 2^-35): v = k ln2/8 + b, |b| <= ln2/16 (ln 2 / 8 in two 16-bit parts and a tail),
// e^v = 2^(k >> 3) 2^((k & 7) / 8) e^b with 2^(j/8) = th + tl (th: 12 bits) and 1 + E(b) as
// gh (12 bits) + gl, so th gh is exact.
fn f_exp_dd(vh: T, vl: T) -> vec2<T> {
    let k = round(vh * 11.541560327111707);
    let b0 = vh - k * 0.08664321899414062;  // exact
    let p2 = k * 1.7857382772490382e-7;  // exact
    let bh = f_opq(b0 - p2);
    let bl = ((b0 - bh) - p2) + (vl - k * 2.024813693449201e-12);
    let hh = f_hi12(bh);
    let hl = bh - hh;
    let sq = 0.5 * (hh * hh);  // exact: b^2 / 2 = sq + (hl (hh + bh) / 2 + bh bl)
    let e3 = bh * bh * bh * (0.16666666666666666 + bh * (0.041666666666666664 + bh * (
        0.008333333333333333 + bh * 0.001388888888888889)));
    let r = (bl + (0.5 * hl * (hh + bh) + bh * bl)) + e3;  // e^b = 1 + bh + sq + r
    let gh = f_hi12((1.0 + bh) + (sq + r));
    let gl = (((1.0 - gh) + bh) + sq) + r;
    let ki = i32(k);
    let j = ki & 7;
    var th = 1.0;
    var tl = 0.0;
    if (j == 1) { th = 1.09033203125; tl = 0.00017570141062606126; }
    if (j == 2) { th = 1.18896484375; tl = 0.00024227125686593354; }
    if (j == 3) { th = 1.29638671875; tl = 0.0004528358986135572; }
    if (j == 4) { th = 1.4140625; tl = 0.00015106236969586462; }
    if (j == 5) { th = 1.5419921875; tl = 0.00021863791334908456; }
    if (j == 6) { th = 1.681640625; tl = 0.0001522055099485442; }
    if (j == 7) { th = 1.833984375; tl = 2.371140908508096e-05; }
    let sc = bitcast<T>(u32((ki >> 3u) + 127) << 23u);  // 2^(k >> 3), normal here
    return vec2<T>(th * gh * sc, (th * gl + tl * (gh + gl)) * sc);
}

// logaddexp = m + log(1 + u), u = e^-(m - n) as hi + lo (m - n by TwoSum), 1 + u = wh + wl,
// log(wh) from f_log_dd_core: a double-float sum, so the result keeps its accuracy where m and
// the log cancel (results near 0). Past m - n = 20, m + e^(n - m).
fn f_logaddexp(x: T, y: T) -> T {
    if (f_isnan(x) || f_isnan(y)) { return f_nan(); }
    if (x == y) { return x + 0.69314718055994531; }
    let m = max(x, y);
    let n = min(x, y);
    if (f_isinf(m)) { return m; }
    let dh = f_opq(m - n);
    if (dh > 20.0) { return m + f_exp(-dh); }
    let db = f_opq(dh - m);
    let dl = (m - (dh - db)) + (-n - db);  // m - n = dh + dl exactly
    let u = f_exp_dd(-dh, -dl);
    let uf = f_opq(u.x + u.y);
    let ur = u.y - (uf - u.x);
    let wh = f_opq(1.0 + uf);
    let wl = (((1.0 - wh) + uf) + ur) / wh;  // log(1 + u) = log(wh) + wl
    let e = select(0.0, 1.0, wh > 1.4142135);
    let q = f_log_dd_core(select(wh, 0.5 * wh, wh > 1.4142135));
    // log(wh) = e ln 2 + (2/3) q: 2/3 = 0.66650390625 + 1.6276042e-4, ln 2 = 0.693115234375 + 3.1946183e-5
    let lh = 0.66650390625 * q.x;  // exact
    let eh = e * 0.693115234375;
    let sh = f_opq(eh + lh);
    let lr = ((eh - sh) + lh) + (e * 3.194618329871446e-5 + (1.6276042151730508e-4 * q.x
                                                           + 0.6666666865348816 * q.y) + wl);
    let rh = f_opq(m + sh);
    let rb = f_opq(rh - m);
    return rh + (((m - (rh - rb)) + (sh - rb)) + lr);
}

// x = k pi/2 + r, |r| <= pi/4, for |x| <= 1e5 (k < 2^16): pi/2 in five 8-bit parts (each
// k * part exact) and a float32 tail, subtracted in turn; the first two differences are exact,
// the roundings of the others are kept (Fast2Sum: each subtrahend is smaller, or the
// difference exact). Returns (k mod 4, r as hi + lo).
fn f_trig_reduce(x: T) -> vec3<T> {
    let k = round(x * 0.63661977236758134);
    let a = (x - k * 1.5703125) - k * 4.825592041015625e-4;
    let p3 = k * 1.2665987014770508e-6;
    let h3 = f_opq(a - p3);
    let p4 = k * 9.89530235528946e-10;
    let h4 = f_opq(h3 - p4);
    let p5 = k * 2.5579538487363607e-12;
    let h5 = f_opq(h4 - p5);
    let p6 = k * 5.390302953474238e-15;
    let h6 = f_opq(h5 - p6);
    let lo = (((a - h3) - p3) + ((h3 - h4) - p4)) + (((h4 - h5) - p5) + ((h5 - h6) - p6));
    return vec3<T>(T(i32(k) & 3), h6, lo);
}

// sin and cos of |r| <= pi/4 (Cephes' sinf / cosf polynomials)
fn f_sin_poly(r: T) -> T {
    let z = r * r;
    return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
}
fn f_cos_poly(r: T) -> T {
    let z = r * r;
    let hz = 0.5 * z;
    let w = f_opq(1.0 - hz);  // with the rounding of 1 - z/2 added back (f_opq: not folded)
    return w + (((1.0 - w) - hz) + ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z
                                    + 4.166664568298827e-2) * z * z);
}

// sin / cos of r = h + l: sin(h) + l cos(h), cos(h) - l sin(h) (l is below an ulp of h)
fn f_sin_dd(h: T, l: T) -> T {
    let z = h * h;
    return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * h
           + l * (1.0 - 0.5 * z) + h;
}
fn f_cos_dd(h: T, l: T) -> T { return f_cos_poly(h) - l * h; }

fn f_sin(x: T) -> T {
    if (!f_isfinite(x)) { return f_nan(); }
    if (abs(x) > 1.0e5) { return sin(x); }
    if (abs(x) < 1.0e-4) { return x; }  // sin(x) = x (-0 stays -0)
    let kr = f_trig_reduce(x);
    let q = i32(kr.x);
    var v = select(f_sin_dd(kr.y, kr.z), f_cos_dd(kr.y, kr.z), (q & 1) == 1);
    if (q >= 2) { v = -v; }
    return v;
}

fn f_cos(x: T) -> T {
    if (!f_isfinite(x)) { return f_nan(); }
    if (abs(x) > 1.0e5) { return cos(x); }
    let kr = f_trig_reduce(x);
    let q = i32(kr.x);
    var v = select(f_cos_dd(kr.y, kr.z), f_sin_dd(kr.y, kr.z), (q & 1) == 1);
    if (q == 1 || q == 2) { v = -v; }
    return v;
}

// tan(r = h + l) for |r| <= pi/4 (Cephes' tanf polynomial) and -1 / tan(r) for odd k: the
// quotient q0 corrected by q0 (1 + q0 t), the residual from 12-bit pieces (exact products)
fn f_tan(x: T) -> T {
    if (!f_isfinite(x)) { return f_nan(); }
    if (abs(x) > 1.0e5) { return tan(x); }
    if (abs(x) < 1.0e-4) { return x; }  // tan(x) = x (-0 stays -0)
    let kr = f_trig_reduce(x);
    let h = kr.y;
    let z = h * h;
    let p = (((((9.38540185543e-3 * z + 3.11992232697e-3) * z + 2.44301354525e-2) * z
               + 5.34112807005e-2) * z + 1.33387994085e-1) * z + 3.33331568548e-1) * z * h;
    let t0 = h + p;
    let tl = p + kr.z * (1.0 + t0 * t0);  // tan(h + l) = h + tl
    if ((i32(kr.x) & 1) == 0) { return h + tl; }
    let q0 = -1.0 / (h + tl);
    let qh = f_hi12(q0);
    let ql = q0 - qh;
    let hh = f_hi12(h);
    let hl = h - hh;
    let rho = (1.0 + qh * hh) + ((qh * hl + ql * hh) + ql * hl + q0 * tl);  // 1 + q0 t
    return q0 + q0 * rho;
}

// asin / acos through atan2 (more accurate than llvmpipe's asin: 2e-4 absolute at 0.5).
// asin(a) for 0 <= a <= 0.5 (Cephes' asinf polynomial)
fn f_asin_small(a: T) -> T {
    let z = a * a;
    return ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z
             + 7.4953002686e-2) * z + 1.6666752422e-1) * z * a + a;
}

fn f_asin(x: T) -> T {
    if (f_isnan(x) || abs(x) > 1.0) { return f_nan(); }
    let a = abs(x);
    if (a <= 0.5) { return f_copysign(f_asin_small(a), x); }
    // pi/2 - 2 asin(sqrt((1 - a) / 2)); 1 - a is exact here
    let r = 1.5707963705062866 + (-4.3711388286737929e-8 - 2.0 * f_asin_small(sqrt(0.5 * (1.0 - a))));
    return f_copysign(r, x);
}

fn f_acos(x: T) -> T {
    if (f_isnan(x) || abs(x) > 1.0) { return f_nan(); }
    if (x > 0.5) { return 2.0 * f_asin_small(sqrt(0.5 * (1.0 - x))); }
    if (x < -0.5) {
        return 3.1415927410125732 + (-8.7422776573475858e-8 - 2.0 * f_asin_small(sqrt(0.5 * (1.0 + x))));
    }
    return 1.5707963705062866 + (-4.3711388286737929e-8 - f_copysign(f_asin_small(abs(x)), x));
}

// atan(a) for a >= 0 as (hi, lo) of the octant offset plus the reduced argument's polynomial
// (Cephes' atanf): 0, pi/4 or pi/2 with split constants.
fn f_atan_pos(a: T) -> T {
    var off_hi = 0.0;
    var off_lo = 0.0;
    var t = a;
    if (a > 2.4142135623730950) {
        off_hi = 1.5707963705062866; off_lo = -4.3711388286737929e-8; t = -1.0 / a;
    } else if (a > 0.41421356237309503) {
        off_hi = 0.78539818525314331; off_lo = -2.1855694143368964e-8; t = (a - 1.0) / (a + 1.0);
    }
    let z = t * t;
    let p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z
             - 3.33329491539e-1) * z * t;
    return off_hi + (off_lo + (t + p));
}

fn f_atan(x: T) -> T {
    if (f_isnan(x) || x == 0.0) { return x; }  // atan(-0) is -0
    if (f_isinf(x)) { return f_copysign(1.5707963267948966, x); }
    return f_copysign(f_atan_pos(abs(x)), x);
}

fn f_atan2(y: T, x: T) -> T {
    if (f_isnan(x) || f_isnan(y)) { return f_nan(); }
    let pi = 3.14159265358979323846;
    if (y == 0.0) {
        if (f_signbit(x)) { return f_copysign(pi, y); }
        return y;
    }
    if (f_isinf(x)) {
        if (f_isinf(y)) { return f_copysign(select(0.78539816339744831, 2.35619449019234492, x < 0.0), y); }
        return f_copysign(select(0.0, pi, x < 0.0), y);
    }
    if (f_isinf(y) || x == 0.0) { return f_copysign(1.5707963267948966, y); }
    let ay = abs(y);
    let ax = abs(x);
    var r: T;
    if (ay <= ax) {
        r = f_atan_pos(ay / ax);
    } else {  // pi/2 - atan(ax / ay)
        r = 1.5707963705062866 + (-4.3711388286737929e-8 - f_atan_pos(ax / ay));
    }
    if (x < 0.0) { r = 3.1415927410125732 + (-8.7422776573475858e-8 - r); }
    return f_copysign(r, y);
}

fn f_sinh(x: T) -> T {
    if (!f_isfinite(x)) { return x; }
    let a = abs(x);
    if (a < 1.0) {  // Cephes' sinhf polynomial
        let z = x * x;
        return ((2.03721912945e-4 * z + 8.33028376239e-3) * z + 1.66667160211e-1) * z * x + x;
    }
    if (a > 89.41599) { return f_copysign(f_inf(), x); }  // past log(2 FLT_MAX)
    if (a > 88.0) {  // e^a / 2 without overflowing e^a
        let kr = f_exp_reduce(a);
        return f_copysign(f_ldexp(1.0 + f_expm1_poly(kr.y), i32(kr.x) - 1), x);
    }
    let e = f_expm1(a);
    return f_copysign(0.5 * (e + e / (e + 1.0)), x);
}

fn f_cosh(x: T) -> T {
    if (f_isnan(x)) { return x; }
    let a = abs(x);
    if (a > 89.41599) { return f_inf(); }  // past log(2 FLT_MAX), and inf
    if (a > 88.0) {
        let kr = f_exp_reduce(a);
        return f_ldexp(1.0 + f_expm1_poly(kr.y), i32(kr.x) - 1);
    }
    let e = f_exp(a);
    return 0.5 * e + 0.5 / e;
}

fn f_tanh(x: T) -> T {
    if (f_isnan(x) || x == 0.0) { return x; }  // tanh(-0) is -0
    let a = abs(x);
    if (a > 9.5) { return f_copysign(1.0, x); }
    if (a < 0.625) {  // Cephes' tanhf polynomial
        let z = x * x;
        return ((((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z
                 + 1.33314422036e-1) * z - 3.33332819422e-1) * z * x + x;
    }
    let e = f_expm1(2.0 * a);
    return f_copysign(1.0 - 2.0 / (e + 2.0), x);
}

fn f_asinh(x: T) -> T {
    if (!f_isfinite(x)) { return x; }
    let a = abs(x);
    var r: T;
    if (a > 1.0e15) {
        r = f_log(a) + 0.69314718055994531;
    } else if (a < 0.5) {  // Cephes' asinhf polynomial
        let z = a * a;
        r = (((2.0122003309e-2 * z - 4.2699340972e-2) * z + 7.4847586088e-2) * z
             - 1.6666288134e-1) * z * a + a;
    } else {
        r = f_log1p(a + a * a / (1.0 + sqrt(1.0 + a * a)));
    }
    return f_copysign(r, x);
}

fn f_acosh(x: T) -> T {
    if (f_isnan(x) || x < 1.0) { return f_nan(); }
    if (f_isinf(x)) { return x; }
    if (x > 1.0e15) { return f_log(x) + 0.69314718055994531; }
    let t = x - 1.0;
    if (t < 0.5) {  // Cephes' acoshf polynomial in sqrt(x - 1)
        return ((((1.7596881071e-3 * t - 7.5272886713e-3) * t + 2.6454905019e-2) * t
                 - 1.1784741703e-1) * t + 1.4142135263) * sqrt(t);
    }
    return f_log1p(t + sqrt(2.0 * t + t * t));
}

fn f_atanh(x: T) -> T {
    let a = abs(x);
    if (f_isnan(x) || a > 1.0) { return f_nan(); }
    if (a == 1.0) { return f_copysign(f_inf(), x); }
    if (a < 0.5) {  // Cephes' atanhf polynomial
        let z = x * x;
        return ((((1.81740078349e-1 * z + 8.24370301058e-2) * z + 1.46691431730e-1) * z
                 + 1.99782164500e-1) * z + 3.33337300303e-1) * z * x + x;
    }
    return f_copysign(0.5 * f_log1p(2.0 * a / (1.0 - a)), x);
}

// Floats of magnitude >= 2^23 are already integers: return them unchanged (lavapipe's ceil /
// floor / trunc of such values went through a 32-bit integer and came back wrong).
fn f_is_integral(x: T) -> bool { return !f_isfinite(x) || abs(x) >= 8388608.0; }
fn f_floor(x: T) -> T { if (f_is_integral(x)) { return x; } return floor(x); }
fn f_ceil(x: T) -> T { if (f_is_integral(x)) { return x; } return ceil(x); }
fn f_trunc(x: T) -> T { if (f_is_integral(x)) { return x; } return trunc(x); }

fn f_round(x: T) -> T {
    if (!f_isfinite(x)) { return x; }
    return round(x);
}

fn f_nextafter(x: T, y: T) -> T {
    if (f_isnan(x) || f_isnan(y)) { return f_nan(); }
    if (x == y) { return y; }
    if (x == 0.0) { return bitcast<T>((bitcast<u32>(y) & 0x80000000u) | 1u); }
    let b = bitcast<u32>(x);
    if ((x < y) == (x > 0.0)) { return bitcast<T>(b + 1u); }
    return bitcast<T>(b - 1u);
}

// nextafter in float16 steps for float16 data (computed in f32; pack2x16float gives the
// f16 bits without the f16 extension).
fn f_nextafter16(x: T, y: T) -> T {
    if (f_isnan(x) || f_isnan(y)) { return f_nan(); }
    if (x == y) { return y; }
    if (x == 0.0) { return unpack2x16float(((bitcast<u32>(y) >> 16u) & 0x8000u) | 1u).x; }
    let b = pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
    if ((x < y) == (x > 0.0)) { return unpack2x16float(b + 1u).x; }
    return unpack2x16float(b - 1u).x;
}
