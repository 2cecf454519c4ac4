// IEEE 754 binary64 emulated over vec2<u32> (x = low word, y = high word: NumPy's float64
// bytes, little-endian). Op functions follow the op table (f64_add, f64_less, ...); private
// helpers are f64__name. Arithmetic (+ - * / sqrt, conversions, comparisons, rounding) is
// straight-line code, correctly rounded to nearest even, with subnormals, signed zeros,
// infinities and NaN as NumPy gives them (a NaN result is the quiet NaN 0x7ff8000000000000
// or a propagated input NaN). Division and sqrt use an f32 estimate refined by signed digit
// steps with an exact integer remainder. Only fmod (remainder / floor_divide) loops, at most
// 106 bounded trips. See docs/float64.md.

// ---- 64-bit unsigned integer helpers ------------------------------------------------------

fn f64__u64(lo: u32, hi: u32) -> vec2<u32> { return vec2<u32>(lo, hi); }
fn f64__is0(a: vec2<u32>) -> bool { return (a.x | a.y) == 0u; }
fn f64__b(c: bool) -> u32 { return select(0u, 1u, c); }

fn f64__add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + f64__b(lo < a.x));
}

fn f64__sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x, a.y - b.y - f64__b(a.x < b.x));
}

fn f64__neg64(a: vec2<u32>) -> vec2<u32> { return f64__sub64(vec2<u32>(0u, 0u), a); }

// unsigned a < b
fn f64__lt64(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }

// signed (two's complement) a < 0
fn f64__neg(a: vec2<u32>) -> bool { return (a.y & 0x80000000u) != 0u; }

fn f64__clz64(a: vec2<u32>) -> u32 {
    return select(countLeadingZeros(a.y), 32u + countLeadingZeros(a.x), a.y == 0u);
}

// a << n for any n (0 when n >= 64)
fn f64__shl64(a: vec2<u32>, n: u32) -> vec2<u32> {
    let s = n & 31u;
    let lo = a.x << s;
    let hi = (a.y << s) | select(a.x >> ((32u - s) & 31u), 0u, s == 0u);
    var r = select(vec2<u32>(lo, hi), vec2<u32>(0u, lo), n >= 32u);
    return select(r, vec2<u32>(0u, 0u), n >= 64u);
}

// a >> n (logical) for any n (0 when n >= 64)
fn f64__shr64(a: vec2<u32>, n: u32) -> vec2<u32> {
    let s = n & 31u;
    let hi = a.y >> s;
    let lo = (a.x >> s) | select(a.y << ((32u - s) & 31u), 0u, s == 0u);
    var r = select(vec2<u32>(lo, hi), vec2<u32>(hi, 0u), n >= 32u);
    return select(r, vec2<u32>(0u, 0u), n >= 64u);
}

// a >> n with the bits shifted out OR-ed into bit 0 ("jamming": a sticky bit)
fn f64__shrjam64(a: vec2<u32>, n: u32) -> vec2<u32> {
    let r = f64__shr64(a, n);
    let lost = any(f64__shl64(r, n) != a) || (n >= 64u && !f64__is0(a));
    return vec2<u32>(r.x | f64__b(lost), r.y);
}

// 32 x 32 -> 64-bit product over 16-bit limbs
fn f64__mul32(a: u32, b: u32) -> vec2<u32> {
    let al = a & 0xffffu;
    let ah = a >> 16u;
    let bl = b & 0xffffu;
    let bh = b >> 16u;
    let ll = al * bl;
    let m1 = ah * bl;
    let m2 = al * bh;
    let hh = ah * bh;
    let m = m1 + m2;
    let mc = f64__b(m < m1);
    let lo = ll + (m << 16u);
    let c = f64__b(lo < ll);
    return vec2<u32>(lo, hh + (m >> 16u) + (mc << 16u) + c);
}

// 64 x 64 -> 128-bit product (x lowest word)
fn f64__mul64(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    let p00 = f64__mul32(a.x, b.x);
    let p01 = f64__mul32(a.x, b.y);
    let p10 = f64__mul32(a.y, b.x);
    let p11 = f64__mul32(a.y, b.y);
    let w1 = f64__add64(f64__add64(vec2<u32>(p00.y, 0u), vec2<u32>(p01.x, 0u)), vec2<u32>(p10.x, 0u));
    let hi = f64__add64(f64__add64(f64__add64(p11, vec2<u32>(p01.y, 0u)), vec2<u32>(p10.y, 0u)),
                        vec2<u32>(w1.y, 0u));
    return vec4<u32>(p00.x, w1.x, hi.x, hi.y);
}

// a * b mod 2^64 (a 64-bit, b 32-bit)
fn f64__mul64x32(a: vec2<u32>, b: u32) -> vec2<u32> {
    let p = f64__mul32(a.x, b);
    return vec2<u32>(p.x, p.y + a.y * b);
}

// a * q mod 2^64 for a signed 32-bit q
fn f64__mul64xi(a: vec2<u32>, q: i32) -> vec2<u32> {
    let p = f64__mul64x32(a, u32(abs(q)));
    return select(p, f64__neg64(p), q < 0);
}

// sign-extended i32
fn f64__from_i(q: i32) -> vec2<u32> { return vec2<u32>(bitcast<u32>(q), select(0u, 0xffffffffu, q < 0)); }

// a two's complement 64-bit integer as f32 (absolute error ~2^-24 |a| + 2^8)
fn f64__sf32(a: vec2<u32>) -> f32 { return f32(bitcast<i32>(a.y)) * 4294967296.0 + f32(a.x); }
fn f64__uf32(a: vec2<u32>) -> f32 { return f32(a.y) * 4294967296.0 + f32(a.x); }

// ---- fields, classification ---------------------------------------------------------------

fn f64__ef(x: vec2<u32>) -> u32 { return (x.y >> 20u) & 0x7ffu; }  // biased exponent field
fn f64__sgn(x: vec2<u32>) -> u32 { return x.y & 0x80000000u; }
// significand as an integer (implicit bit included for normal numbers): |x| = sig * 2^exp
fn f64__sig(x: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(x.x, (x.y & 0xfffffu) | select(0x100000u, 0u, f64__ef(x) == 0u));
}
fn f64__exp(x: vec2<u32>) -> i32 { return i32(max(f64__ef(x), 1u)) - 1075; }

fn f64__nan() -> vec2<u32> { return vec2<u32>(0u, 0x7ff80000u); }
fn f64__inf(sign: u32) -> vec2<u32> { return vec2<u32>(0u, sign | 0x7ff00000u); }
fn f64__zero(sign: u32) -> vec2<u32> { return vec2<u32>(0u, sign); }
fn f64__iszero(x: vec2<u32>) -> bool { return ((x.y & 0x7fffffffu) | x.x) == 0u; }

fn f64_isnan(x: vec2<u32>) -> bool {
    let h = x.y & 0x7fffffffu;
    return h > 0x7ff00000u || (h == 0x7ff00000u && x.x != 0u);
}
fn f64_isinf(x: vec2<u32>) -> bool { return (x.y & 0x7fffffffu) == 0x7ff00000u && x.x == 0u; }
fn f64_isfinite(x: vec2<u32>) -> bool { return (x.y & 0x7ff00000u) != 0x7ff00000u; }
fn f64_signbit(x: vec2<u32>) -> bool { return (x.y & 0x80000000u) != 0u; }
fn f64_truthy(x: vec2<u32>) -> bool { return !f64__iszero(x); }  // NaN is true, as in NumPy
fn f64_to_bool(x: vec2<u32>) -> bool { return !f64__iszero(x); }
fn f64_from_bool(b: bool) -> vec2<u32> { return vec2<u32>(0u, select(0u, 0x3ff00000u, b)); }

// ---- sign manipulation ----------------------------------------------------------------------

fn f64_positive(x: vec2<u32>) -> vec2<u32> { return x; }
fn f64_conj(x: vec2<u32>) -> vec2<u32> { return x; }
fn f64_real(x: vec2<u32>) -> vec2<u32> { return x; }
fn f64_imag(x: vec2<u32>) -> vec2<u32> { return vec2<u32>(0u, 0u); }
fn f64_negative(x: vec2<u32>) -> vec2<u32> { return vec2<u32>(x.x, x.y ^ 0x80000000u); }
fn f64_abs(x: vec2<u32>) -> vec2<u32> { return vec2<u32>(x.x, x.y & 0x7fffffffu); }
fn f64_copysign(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(x.x, (x.y & 0x7fffffffu) | (y.y & 0x80000000u));
}

// ---- rounding and packing -------------------------------------------------------------------

// The float64 nearest (ties to even) to sig * 2^e, with sign (0 or 0x80000000); sig's bit 0
// may be a sticky bit (it must lie below the rounding position: callers keep >= 55 bits).
fn f64__round_pack(sign: u32, e: i32, sig: vec2<u32>) -> vec2<u32> {
    if (f64__is0(sig)) { return vec2<u32>(0u, sign); }
    let n = f64__clz64(sig);
    let s = f64__shl64(sig, n);  // leading bit at 63
    let biased = e + 63 - i32(n) + 1023;
    if (biased >= 2047) { return f64__inf(sign); }
    let ee = max(biased, 1);
    let t = f64__shrjam64(s, u32(min(ee - biased, 64)));
    let mant = f64__shr64(t, 11u);
    let rb = t.x & 0x7ffu;
    let up = rb > 0x400u || (rb == 0x400u && (mant.x & 1u) == 1u);
    let r = f64__add64(f64__add64(mant, vec2<u32>(f64__b(up), 0u)), vec2<u32>(0u, u32(ee - 1) << 20u));
    return vec2<u32>(r.x, r.y | sign);
}

// The float32 bits nearest (ties to even) to sig * 2^e (same contract as f64__round_pack).
fn f64__round_pack32(sign: u32, e: i32, sig: vec2<u32>) -> u32 {
    if (f64__is0(sig)) { return sign; }
    let n = f64__clz64(sig);
    let s = f64__shl64(sig, n);
    let biased = e + 63 - i32(n) + 127;
    if (biased >= 255) { return sign | 0x7f800000u; }
    let ee = max(biased, 1);
    let t = f64__shrjam64(s, u32(min(ee - biased, 64)));
    let mant = t.y >> 8u;
    let rhi = t.y & 0xffu;
    let gt = rhi > 0x80u || (rhi == 0x80u && t.x != 0u);
    let tie = rhi == 0x80u && t.x == 0u;
    let up = gt || (tie && (mant & 1u) == 1u);
    return (mant + f64__b(up) + (u32(ee - 1) << 23u)) | sign;
}

// ---- comparisons ------------------------------------------------------------------------------

// an unsigned key ordering every non-NaN float64 (-0 below +0)
fn f64__key(x: vec2<u32>) -> vec2<u32> {
    return select(vec2<u32>(x.x, x.y | 0x80000000u), ~x, f64_signbit(x));
}

fn f64_equal(x: vec2<u32>, y: vec2<u32>) -> bool {
    if (f64_isnan(x) || f64_isnan(y)) { return false; }
    return all(x == y) || (f64__iszero(x) && f64__iszero(y));
}
fn f64_not_equal(x: vec2<u32>, y: vec2<u32>) -> bool { return !f64_equal(x, y); }
fn f64_less(x: vec2<u32>, y: vec2<u32>) -> bool {
    if (f64_isnan(x) || f64_isnan(y) || (f64__iszero(x) && f64__iszero(y))) { return false; }
    return f64__lt64(f64__key(x), f64__key(y));
}
fn f64_less_equal(x: vec2<u32>, y: vec2<u32>) -> bool { return f64_less(x, y) || f64_equal(x, y); }
fn f64_greater(x: vec2<u32>, y: vec2<u32>) -> bool { return f64_less(y, x); }
fn f64_greater_equal(x: vec2<u32>, y: vec2<u32>) -> bool { return f64_less_equal(y, x); }

// NumPy's maximum / minimum: NaN propagates; between equal values (+0, -0) the second wins.
fn f64_maximum(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    if (f64_isnan(y)) { return y; }
    return select(y, x, f64_less(y, x));
}
fn f64_minimum(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    if (f64_isnan(y)) { return y; }
    return select(y, x, f64_less(x, y));
}
fn f64_clip(x: vec2<u32>, lo: vec2<u32>, hi: vec2<u32>) -> vec2<u32> {
    return f64_minimum(f64_maximum(x, lo), hi);
}

fn f64_sign(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    if (f64__iszero(x)) { return vec2<u32>(0u, 0u); }
    return vec2<u32>(0u, f64__sgn(x) | 0x3ff00000u);
}

// ---- conversions ------------------------------------------------------------------------------

fn f64_from_u64(a: vec2<u32>) -> vec2<u32> { return f64__round_pack(0u, 0, a); }
fn f64_from_i64(a: vec2<u32>) -> vec2<u32> {
    let n = f64__neg(a);
    return f64__round_pack(select(0u, 0x80000000u, n), 0, select(a, f64__neg64(a), n));
}
fn f64_from_u32(a: u32) -> vec2<u32> { return f64__round_pack(0u, 0, vec2<u32>(a, 0u)); }
fn f64_from_i32(a: i32) -> vec2<u32> {
    return f64__round_pack(select(0u, 0x80000000u, a < 0), 0, vec2<u32>(u32(abs(a)), 0u));
}
fn f64_from_f32(v: f32) -> vec2<u32> {
    let b = bitcast<u32>(v);
    let s = b & 0x80000000u;
    let e = (b >> 23u) & 0xffu;
    let f = b & 0x7fffffu;
    if (e == 0xffu) {
        let q = select(0u, 0x80000u, f != 0u);  // NaN: quiet, payload kept
        return vec2<u32>(f << 29u, s | 0x7ff00000u | q | (f >> 3u));
    }
    let sig = select(f | 0x800000u, f, e == 0u);
    return f64__round_pack(s, i32(max(e, 1u)) - 150, vec2<u32>(sig, 0u));
}

fn f64_to_f32(x: vec2<u32>) -> f32 {
    let s = f64__sgn(x);
    if (f64_isnan(x)) { return bitcast<f32>(s | 0x7fc00000u); }
    if (f64_isinf(x)) { return bitcast<f32>(s | 0x7f800000u); }
    return bitcast<f32>(f64__round_pack32(s, f64__exp(x), f64__sig(x)));
}

// |x| truncated to an integer, for |x| < 2^64
fn f64__trunc_mag(x: vec2<u32>) -> vec2<u32> {
    let e = f64__exp(x);
    let m = f64__sig(x);
    return select(f64__shr64(m, u32(min(-e, 64))), f64__shl64(m, u32(max(e, 0))), e >= 0);
}

// NumPy (x86) casts: truncation toward zero; NaN and out-of-range give 0x8000000000000000
fn f64_to_i64(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x) || f64__ef(x) >= 1086u) { return vec2<u32>(0u, 0x80000000u); }
    let m = f64__trunc_mag(x);
    return select(m, f64__neg64(m), f64_signbit(x));
}
// uint64: [2^63, 2^64) exact; >= 2^64 (and +inf) give 0; NaN and < -2^63 give 2^63; negative
// values in int64's range wrap (two's complement), as NumPy 2.4 on x86-64.
fn f64_to_u64(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return vec2<u32>(0u, 0x80000000u); }
    if (!f64_signbit(x) && f64__ef(x) >= 1086u) {
        if (f64__ef(x) >= 1087u) { return vec2<u32>(0u, 0u); }
        return f64__trunc_mag(x);
    }
    return f64_to_i64(x);
}
// int32: out of range and NaN give 0x80000000 (NumPy on x86)
fn f64_to_i32(x: vec2<u32>) -> i32 {
    let t = f64_to_i64(x);
    let ok = (t.y == 0u && t.x < 0x80000000u) || (t.y == 0xffffffffu && t.x >= 0x80000000u);
    return bitcast<i32>(select(0x80000000u, t.x, ok));
}
// uint32: [0, 2^32) exact; >= 2^32 and +inf give 0; values in [-2^31, 0) wrap; NaN and below
// -2^31 give 0x80000000 (NumPy 2.4's vectorised float64 -> uint32 loop on x86-64).
fn f64_to_u32(x: vec2<u32>) -> u32 {
    if (f64_isnan(x)) { return 0x80000000u; }
    let t = f64_to_i64(x);
    if (!f64_signbit(x)) { return select(0u, t.x, t.y == 0u && !f64_isinf(x)); }
    let ok = t.y == 0xffffffffu && t.x >= 0x80000000u;
    return select(0x80000000u, t.x, ok || f64__is0(t));
}

// ---- arithmetic -------------------------------------------------------------------------------

fn f64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let ea = f64__ef(a);
    let eb = f64__ef(b);
    if (ea == 0x7ffu || eb == 0x7ffu) {
        if (f64_isnan(a) || f64_isnan(b)) { return f64__nan(); }
        if (ea == 0x7ffu && eb == 0x7ffu) {
            return select(a, f64__nan(), f64__sgn(a) != f64__sgn(b));
        }
        return select(b, a, ea == 0x7ffu);
    }
    let ma = f64__shl64(f64__sig(a), 10u);
    let mb = f64__shl64(f64__sig(b), 10u);
    let xa = f64__exp(a);
    let xb = f64__exp(b);
    let swap = xb > xa || (xb == xa && f64__lt64(ma, mb));
    let hm = select(ma, mb, swap);
    let lm = select(mb, ma, swap);
    let hx = select(xa, xb, swap);
    let lx = select(xb, xa, swap);
    let hs = select(f64__sgn(a), f64__sgn(b), swap);
    let ls = select(f64__sgn(b), f64__sgn(a), swap);
    let l2 = f64__shrjam64(lm, u32(min(hx - lx, 64)));
    if (hs == ls) { return f64__round_pack(hs, hx - 10, f64__add64(hm, l2)); }
    return f64__round_pack(select(hs, 0u, all(hm == l2)), hx - 10, f64__sub64(hm, l2));
}

fn f64_subtract(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return f64_add(a, f64_negative(b)); }

// normalised significand: |x| = m * 2^e with m's leading bit at 63 (finite nonzero x)
fn f64__norm63(x: vec2<u32>) -> vec3<u32> {
    let m = f64__sig(x);
    let n = f64__clz64(m);
    return vec3<u32>(f64__shl64(m, n), bitcast<u32>(f64__exp(x) - i32(n)));
}

fn f64_multiply(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let s = f64__sgn(a) ^ f64__sgn(b);
    if (f64_isnan(a) || f64_isnan(b)) { return f64__nan(); }
    if (f64_isinf(a) || f64_isinf(b)) {
        if (f64__iszero(a) || f64__iszero(b)) { return f64__nan(); }
        return f64__inf(s);
    }
    if (f64__iszero(a) || f64__iszero(b)) { return f64__zero(s); }
    let na = f64__norm63(a);
    let nb = f64__norm63(b);
    let p = f64__mul64(na.xy, nb.xy);
    let sig = vec2<u32>(p.z | f64__b((p.x | p.y) != 0u), p.w);
    return f64__round_pack(s, bitcast<i32>(na.z) + bitcast<i32>(nb.z) + 64, sig);
}

fn f64_square(x: vec2<u32>) -> vec2<u32> { return f64_multiply(x, x); }

// normalised significand with the leading bit at 52: |x| = m * 2^e
fn f64__norm52(x: vec2<u32>) -> vec3<u32> {
    let m = f64__sig(x);
    let n = f64__clz64(m) - 11u;
    return vec3<u32>(f64__shl64(m, n), bitcast<u32>(f64__exp(x) - i32(n)));
}

// One signed digit step of division by b: r <- r * 2^k - q * b, quot <- quot * 2^k + q,
// with q = round(r * 2^k / b) estimated in f32 (rb ~ 1 / b). Exact modulo 2^64; the true r
// stays below ~2b in magnitude, so the signed 64-bit value is exact.
fn f64__divstep(st: vec4<u32>, b: vec2<u32>, rb: f32, k: u32) -> vec4<u32> {
    let r = st.xy;
    let t = f64__sf32(r) * rb * f32(1u << k);
    let q = i32(round(t));
    let r2 = f64__sub64(f64__shl64(r, k), f64__mul64xi(b, q));
    let q2 = f64__add64(f64__shl64(st.zw, k), f64__from_i(q));
    return vec4<u32>(r2, q2);
}

// Brings a signed digit state (r, quot) to 0 <= r < b (two steps each way suffice).
fn f64__divfix(st: vec4<u32>, b: vec2<u32>) -> vec4<u32> {
    var r = st.xy;
    var q = st.zw;
    if (f64__neg(r)) { r = f64__add64(r, b); q = f64__sub64(q, vec2<u32>(1u, 0u)); }
    if (f64__neg(r)) { r = f64__add64(r, b); q = f64__sub64(q, vec2<u32>(1u, 0u)); }
    if (!f64__lt64(r, b)) { r = f64__sub64(r, b); q = f64__add64(q, vec2<u32>(1u, 0u)); }
    if (!f64__lt64(r, b)) { r = f64__sub64(r, b); q = f64__add64(q, vec2<u32>(1u, 0u)); }
    return vec4<u32>(r, q);
}

fn f64_divide(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let s = f64__sgn(a) ^ f64__sgn(b);
    if (f64_isnan(a) || f64_isnan(b)) { return f64__nan(); }
    if (f64_isinf(a)) { return select(f64__inf(s), f64__nan(), f64_isinf(b)); }
    if (f64_isinf(b)) { return f64__zero(s); }
    if (f64__iszero(b)) { return select(f64__inf(s), f64__nan(), f64__iszero(a)); }
    if (f64__iszero(a)) { return f64__zero(s); }
    let na = f64__norm52(a);
    let nb = f64__norm52(b);
    let bm = nb.xy;
    let rb = 1.0 / f64__uf32(bm);
    var st = f64__divstep(vec4<u32>(na.xy, 0u, 0u), bm, rb, 0u);
    st = f64__divstep(st, bm, rb, 20u);
    st = f64__divstep(st, bm, rb, 20u);
    st = f64__divstep(st, bm, rb, 20u);
    st = f64__divfix(st, bm);  // quot = floor(ma * 2^60 / mb) in (2^59, 2^61)
    let sig = vec2<u32>(st.z | f64__b(!f64__is0(st.xy)), st.w);
    return f64__round_pack(s, bitcast<i32>(na.z) - bitcast<i32>(nb.z) - 60, sig);
}

// 1 / x (the Array API 2024.12 reciprocal), correctly rounded like f64_divide
fn f64_reciprocal(x: vec2<u32>) -> vec2<u32> { return f64_divide(vec2<u32>(0u, 0x3ff00000u), x); }

fn f64_sqrt(a: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(a)) { return f64__nan(); }
    if (f64__iszero(a)) { return a; }
    if (f64_signbit(a)) { return f64__nan(); }
    if (f64_isinf(a)) { return a; }
    let na = f64__norm52(a);
    let odd = (na.z & 1u) != 0u;
    let m = f64__shl64(na.xy, f64__b(odd));  // [2^52, 2^54), exponent even
    let e = bitcast<i32>(na.z) - i32(f64__b(odd));
    // s0 ~ sqrt(m) (27 bits), then two Newton steps of 14 bits with exact remainders:
    // r = m * 2^(28 k) - s^2.
    let s0 = u32(floor(sqrt(f64__uf32(m))));
    let r0 = f64__sub64(m, f64__mul32(s0, s0));
    let d1 = i32(round(f64__sf32(r0) * 16384.0 / (2.0 * f32(s0))));
    let s1 = f64__add64(vec2<u32>(s0 << 14u, s0 >> 18u), f64__from_i(d1));
    let r1 = f64__sub64(f64__sub64(f64__shl64(r0, 28u), f64__shl64(f64__mul64xi(vec2<u32>(s0, 0u), d1), 15u)),
                        f64__mul32(u32(abs(d1)), u32(abs(d1))));
    let d2 = i32(round(f64__sf32(r1) * 16384.0 / (2.0 * f64__uf32(s1))));
    var s2 = f64__add64(f64__shl64(s1, 14u), f64__from_i(d2));
    var r2 = f64__sub64(f64__sub64(f64__shl64(r1, 28u), f64__shl64(f64__mul64xi(s1, d2), 15u)),
                        f64__mul32(u32(abs(d2)), u32(abs(d2))));
    // exact floor: 0 <= r2 <= 2 s2
    let one = vec2<u32>(1u, 0u);
    if (f64__neg(r2)) { r2 = f64__add64(r2, f64__sub64(f64__shl64(s2, 1u), one)); s2 = f64__sub64(s2, one); }
    if (f64__neg(r2)) { r2 = f64__add64(r2, f64__sub64(f64__shl64(s2, 1u), one)); s2 = f64__sub64(s2, one); }
    var lim = f64__add64(f64__shl64(s2, 1u), one);
    if (!f64__lt64(r2, lim)) { r2 = f64__sub64(r2, lim); s2 = f64__add64(s2, one); }
    lim = f64__add64(f64__shl64(s2, 1u), one);
    if (!f64__lt64(r2, lim)) { r2 = f64__sub64(r2, lim); s2 = f64__add64(s2, one); }
    let sig = vec2<u32>(s2.x | f64__b(!f64__is0(r2)), s2.y);
    return f64__round_pack(0u, e / 2 - 28, sig);
}

// ---- rounding to integers ---------------------------------------------------------------------

fn f64_trunc(x: vec2<u32>) -> vec2<u32> {
    let ef = f64__ef(x);
    if (ef >= 1075u) { return x; }  // integral, inf or NaN
    if (ef < 1023u) { return f64__zero(f64__sgn(x)); }
    let keep = f64__shl64(vec2<u32>(0xffffffffu, 0xffffffffu), 1075u - ef);
    return x & keep;
}

fn f64_floor(x: vec2<u32>) -> vec2<u32> {
    let t = f64_trunc(x);
    if (f64_signbit(x) && any(t != x)) { return f64_subtract(t, vec2<u32>(0u, 0x3ff00000u)); }
    return t;
}

fn f64_ceil(x: vec2<u32>) -> vec2<u32> {
    let t = f64_trunc(x);
    if (!f64_signbit(x) && any(t != x)) { return f64_add(t, vec2<u32>(0u, 0x3ff00000u)); }
    return t;
}

// half to even: (|x| + 2^52) - 2^52 rounds |x| < 2^52 to an integer in round-to-nearest-even
fn f64_round(x: vec2<u32>) -> vec2<u32> {
    if (f64__ef(x) >= 1075u) { return x; }
    let two52 = vec2<u32>(0u, 0x43300000u);
    let r = f64_subtract(f64_add(f64_abs(x), two52), two52);
    return f64_copysign(r, x);
}

fn f64_nextafter(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x) || f64_isnan(y)) { return f64__nan(); }
    if (f64_equal(x, y)) { return y; }
    if (f64__iszero(x)) { return vec2<u32>(1u, f64__sgn(y)); }
    let up = f64_less(x, y) != f64_signbit(x);  // magnitude grows
    return select(f64__sub64(x, vec2<u32>(1u, 0u)), f64__add64(x, vec2<u32>(1u, 0u)), up);
}

// ---- fmod, remainder, floor_divide --------------------------------------------------------------

// fmod(a, b) exactly for finite a and finite nonzero b: the significand of a is reduced modulo
// that of b by signed digit steps of up to 20 bits (at most 106 bounded trips, one per 20 bits
// of exponent difference).
fn f64__fmod(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let sa = f64__sgn(a);
    if (!f64__lt64(f64_abs(b), f64_abs(a))) {
        return select(a, f64__zero(sa), all(f64_abs(a) == f64_abs(b)));
    }
    let na = f64__norm52(a);
    let nb = f64__norm52(b);
    let bm = nb.xy;
    let rb = 1.0 / f64__uf32(bm);
    var d = bitcast<i32>(na.z) - bitcast<i32>(nb.z);
    var st = f64__divstep(vec4<u32>(na.xy, 0u, 0u), bm, rb, 0u);
    for (var k = 0; k < 106; k++) {
        if (d <= 0) { break; }
        let s = min(d, 20);
        st = f64__divstep(vec4<u32>(st.xy, 0u, 0u), bm, rb, u32(s));
        d = d - s;
    }
    st = f64__divfix(vec4<u32>(st.xy, 0u, 0u), bm);
    return f64__round_pack(sa, bitcast<i32>(nb.z), st.xy);
}

fn f64_fmod(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(a) || f64_isnan(b) || f64_isinf(a) || f64__iszero(b)) { return f64__nan(); }
    if (f64_isinf(b)) { return a; }
    return f64__fmod(a, b);
}

// NumPy's npy_divmod for finite a and finite nonzero b: (floor quotient, Python remainder)
fn f64__divmod(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    var m = f64__fmod(a, b);
    var div = f64_divide(f64_subtract(a, m), b);
    if (!f64__iszero(m)) {
        if (f64_signbit(b) != f64_signbit(m)) {
            m = f64_add(m, b);
            div = f64_subtract(div, vec2<u32>(0u, 0x3ff00000u));
        }
    } else {
        m = f64__zero(f64__sgn(b));
    }
    var fd: vec2<u32>;
    if (!f64__iszero(div)) {
        fd = f64_floor(div);
        if (f64_greater(f64_subtract(div, fd), vec2<u32>(0u, 0x3fe00000u))) {
            fd = f64_add(fd, vec2<u32>(0u, 0x3ff00000u));
        }
    } else {
        fd = f64__zero(f64__sgn(a) ^ f64__sgn(b));
    }
    return vec4<u32>(fd, m);
}

// floor(a / b); one infinite operand gives a / b (the Array API; NumPy: nan / -1), as f_floor_divide
fn f64_floor_divide(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(a) || f64_isnan(b)) { return f64__nan(); }
    if (f64__iszero(b)) { return f64_divide(a, b); }
    if (f64_isinf(a)) {
        if (f64_isinf(b)) { return f64__nan(); }
        return f64__inf(f64__sgn(a) ^ f64__sgn(b));
    }
    if (f64_isinf(b)) { return f64__zero(f64__sgn(a) ^ f64__sgn(b)); }
    return f64__divmod(a, b).xy;
}

fn f64_remainder(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(a) || f64_isnan(b) || f64_isinf(a) || f64__iszero(b)) { return f64__nan(); }
    if (f64_isinf(b)) {  // npy_divmod: fmod gives a; a zero takes b's sign
        if (f64__iszero(a)) { return f64__zero(f64__sgn(b)); }
        if (f64_signbit(a) == f64_signbit(b)) { return a; }
        return b;
    }
    return f64__divmod(a, b).zw;
}

// ---- transcendental functions (fdlibm's algorithms over the ops above; no loops) -------------
// Error bounds, measured against NumPy, are in docs/float64.md.

fn f64__one() -> vec2<u32> { return vec2<u32>(0u, 0x3ff00000u); }

// c[0] x^(n-1) + ... + c[n-1] (Horner) over coefficients F64__COEF[start .. start + n), n <= 16:
// one loop keeps a single copy of multiply and add in the compiled shader (drivers inline every
// call, so each call site of an op costs its whole code).
fn f64__t_poly(x: vec2<u32>, start: u32, n: u32) -> vec2<u32> {
    var acc = F64__COEF[start];
    for (var k = 1u; k < 16u; k++) {
        if (k >= n) { break; }
        acc = f64_add(f64_multiply(acc, x), F64__COEF[start + k]);
    }
    return acc;
}

// x * 2^k, correctly rounded (subnormal results included)
fn f64_ldexp(x: vec2<u32>, k: i32) -> vec2<u32> {
    if (!f64_isfinite(x) || f64__iszero(x)) { return x; }
    return f64__round_pack(f64__sgn(x), f64__exp(x) + clamp(k, -4000, 4000), f64__sig(x));
}

fn f64_exp(x: vec2<u32>) -> vec2<u32> { return f64__exp_tail(x, vec2<u32>(0u, 0u)); }

// exp(x + xt) for a tail |xt| <= ulp(x) (pow's double-double argument)
fn f64__exp_tail(x: vec2<u32>, xt: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    if (f64_greater(x, vec2<u32>(0xfefa39efu, 0x40862e42u) /* 709.782712893384 */)) { return f64__inf(0u); }
    if (f64_less(x, vec2<u32>(0xd52d3052u, 0xc0874910u) /* -745.1332191019412 */)) { return vec2<u32>(0u, 0u); }
    if (f64__ef(x) < 0x3e3u) { return f64_add(f64__one(), f64_add(x, xt)); }  // |x| < 2^-28
    let kf = f64_round(f64_multiply(x, vec2<u32>(0x652b82feu, 0x3ff71547u) /* 1.4426950408889634 */));
    let k = f64_to_i32(kf);
    let hi = f64_subtract(x, f64_multiply(kf, vec2<u32>(0xfee00000u, 0x3fe62e42u) /* 6.93147180369123816490e-01 */));
    let lo = f64_subtract(f64_multiply(kf, vec2<u32>(0x35793c76u, 0x3dea39efu) /* 1.90821492927058770002e-10 */), xt);
    let r = f64_subtract(hi, lo);
    let t = f64_multiply(r, r);
    let c = f64_subtract(r, f64_multiply(t, f64__t_poly(t, 0u, 5u)));
    let y = f64_subtract(f64__one(), f64_subtract(f64_subtract(lo, f64_divide(f64_multiply(r, c), f64_subtract(vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, c))), hi));
    return f64_ldexp(y, k);
}

// log pieces: log(u) = k ln2 + log(1 + f) + c with sqrt(2)/2 <= 1 + f < sqrt(2) (fdlibm's e_log
// and s_log1p). For log1p (is1p, u = 1 + v): c is the rounding error of 1 + v divided by u, and
// f = v itself when 1 + v already lies in that range.
struct f64__LogParts { dk: vec2<u32>, f: vec2<u32>, hfsq: vec2<u32>, sr: vec2<u32>, c: vec2<u32> }

fn f64__log_parts1(v: vec2<u32>, u: vec2<u32>, is1p: bool) -> f64__LogParts {
    let direct = is1p && f64_less(vec2<u32>(0x33018866u, 0xbfd2bec3u) /* -0.2928932188134524 */, v) && f64_less(v, vec2<u32>(0x99fcef32u, 0x3fda8279u) /* 0.41421356237309503 */);
    var cc = vec2<u32>(0u, 0u);
    if (is1p && !direct) {  // the exact error of u = 1 + v (Fast2Sum order), over u
        let big = !f64_less(u, vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */);
        let err = select(f64_subtract(v, f64_subtract(u, f64__one())),
                         f64_subtract(f64__one(), f64_subtract(u, v)), big);
        cc = f64_divide(err, u);
    }
    let n = f64__norm52(u);
    var k = bitcast<i32>(n.z) + 52;
    var m = vec2<u32>(n.x, (n.y & 0xfffffu) | 0x3ff00000u);  // in [1, 2)
    if (f64__lt64(vec2<u32>(0x667f3bcdu, 0x3ff6a09eu), m)) { m.y = m.y - 0x100000u; k = k + 1; }
    let f = select(f64_subtract(m, f64__one()), v, direct);
    k = select(k, 0, direct);
    let s = f64_divide(f, f64_add(vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, f));
    let z = f64_multiply(s, s);
    let w = f64_multiply(z, z);
    let t1 = f64_multiply(w, f64__t_poly(w, 5u, 3u));
    let t2 = f64_multiply(z, f64__t_poly(w, 8u, 4u));
    let r = f64_add(t2, t1);
    let hfsq = f64_multiply(f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, f), f);
    return f64__LogParts(f64_from_i32(k), f, hfsq, f64_multiply(s, f64_add(hfsq, r)), cc);
}

fn f64__log_parts(x: vec2<u32>) -> f64__LogParts { return f64__log_parts1(x, x, false); }

// special cases of log-like functions at x: 0 -> -inf, < 0 -> NaN, +inf -> +inf, NaN
fn f64__log_special(x: vec2<u32>) -> bool {
    return f64_isnan(x) || f64__iszero(x) || f64_signbit(x) || f64_isinf(x);
}
fn f64__log_special_value(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    if (f64__iszero(x)) { return f64__inf(0x80000000u); }
    if (f64_signbit(x)) { return f64__nan(); }
    return x;
}

fn f64_log(x: vec2<u32>) -> vec2<u32> { return f64__log_or_log1p(x, false); }

fn f64_log2(x: vec2<u32>) -> vec2<u32> {
    if (f64__log_special(x)) { return f64__log_special_value(x); }
    let p = f64__log_parts(x);
    // log(1 + f) = hi + lo with hi = f - hfsq rounded to 32 bits (as fdlibm's e_log2)
    let hi0 = f64_subtract(p.f, p.hfsq);
    let hi = vec2<u32>(0u, hi0.y);
    let lo = f64_add(f64_subtract(f64_subtract(p.f, hi), p.hfsq), p.sr);
    let vhi = f64_multiply(hi, vec2<u32>(0x65200000u, 0x3ff71547u) /* 1.44269504072144627571e+00 */);
    let vlo = f64_add(f64_multiply(f64_add(lo, hi), vec2<u32>(0x2eefa200u, 0x3de705fcu) /* 1.67517131648865118353e-10 */), f64_multiply(lo, vec2<u32>(0x65200000u, 0x3ff71547u) /* 1.44269504072144627571e+00 */));
    let y = p.dk;
    let w = f64_add(y, vhi);
    return f64_add(w, f64_add(vlo, f64_add(f64_subtract(y, w), vhi)));
}

fn f64_log10(x: vec2<u32>) -> vec2<u32> {
    if (f64__log_special(x)) { return f64__log_special_value(x); }
    let p = f64__log_parts(x);
    let hi0 = f64_subtract(p.f, p.hfsq);
    let hi = vec2<u32>(0u, hi0.y);
    let lo = f64_add(f64_subtract(f64_subtract(p.f, hi), p.hfsq), p.sr);
    let vhi = f64_multiply(hi, vec2<u32>(0x15200000u, 0x3fdbcb7bu) /* 4.34294481878168880939e-01 */);
    let vlo = f64_add(f64_multiply(f64_add(lo, hi), vec2<u32>(0xca9aadd5u, 0x3dbb9438u) /* 2.50829467116452752298e-11 */), f64_multiply(lo, vec2<u32>(0x15200000u, 0x3fdbcb7bu) /* 4.34294481878168880939e-01 */));
    let y2 = f64_multiply(p.dk, vec2<u32>(0x509f6000u, 0x3fd34413u) /* 3.01029995663611771306e-01 */);
    let vlo2 = f64_add(vlo, f64_multiply(p.dk, vec2<u32>(0x11f12b36u, 0x3d59fef3u) /* 3.69423907715893078616e-13 */));
    let w = f64_add(y2, vhi);
    return f64_add(w, f64_add(vlo2, f64_add(f64_subtract(y2, w), vhi)));
}

// log(v), or log1p(v) when is1p (fdlibm's e_log / s_log1p): one copy of the log core
fn f64__log_or_log1p(v: vec2<u32>, is1p: bool) -> vec2<u32> {
    let u = select(v, f64_add(f64__one(), v), is1p);
    if (f64_isnan(v)) { return v; }
    if (f64__log_special(u)) { return f64__log_special_value(u); }
    if (is1p && f64__ef(v) < 0x3c9u) { return v; }  // |v| < 2^-54
    let p = f64__log_parts1(v, u, is1p);
    return f64_subtract(f64_multiply(p.dk, vec2<u32>(0xfee00000u, 0x3fe62e42u) /* 0.6931471803691238 */),
        f64_subtract(f64_subtract(p.hfsq, f64_add(p.sr, f64_add(f64_multiply(p.dk, vec2<u32>(0x35793c76u, 0x3dea39efu) /* 1.9082149292705877e-10 */), p.c))), p.f));
}

fn f64_log1p(x: vec2<u32>) -> vec2<u32> { return f64__log_or_log1p(x, true); }

// expm1: fdlibm's s_expm1 (argument reduction by k ln2, a rational approximation, exact
// reconstruction)
fn f64_expm1(x0: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x0)) { return x0; }
    if (f64_greater(x0, vec2<u32>(0xfefa39efu, 0x40862e42u) /* 709.782712893384 */)) { return f64__inf(0u); }
    if (f64_less(x0, vec2<u32>(0x9f1af2b1u, 0xc043687au) /* -38.816242111356935 */)) { return vec2<u32>(0x00000000u, 0xbff00000u) /* -1.0 */; }  // 56 ln2: expm1 rounds to -1
    if (f64__ef(x0) < 0x3c9u) { return x0; }  // |x| < 2^-54
    let ax = f64_abs(x0);
    var k = 0;
    var x = x0;
    var c = vec2<u32>(0u, 0u);
    if (f64_greater(ax, vec2<u32>(0xfefa39efu, 0x3fd62e42u) /* 0.34657359027997264 */)) {  // |x| > ln2 / 2: x = k ln2 + hi - lo
        let kf = f64_round(f64_multiply(x0, vec2<u32>(0x652b82feu, 0x3ff71547u) /* 1.4426950408889634 */));
        k = f64_to_i32(kf);
        let hi = f64_subtract(x0, f64_multiply(kf, vec2<u32>(0xfee00000u, 0x3fe62e42u) /* 6.93147180369123816490e-01 */));
        let lo = f64_multiply(kf, vec2<u32>(0x35793c76u, 0x3dea39efu) /* 1.90821492927058770002e-10 */);
        x = f64_subtract(hi, lo);
        c = f64_subtract(f64_subtract(hi, x), lo);
    }
    let hfx = f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, x);
    let hxs = f64_multiply(x, hfx);
    let r1 = f64__t_poly(hxs, 34u, 6u);
    let t = f64_subtract(vec2<u32>(0x00000000u, 0x40080000u) /* 3.0 */, f64_multiply(r1, hfx));
    var e = f64_multiply(hxs, f64_divide(f64_subtract(r1, t), f64_subtract(vec2<u32>(0x00000000u, 0x40180000u) /* 6.0 */, f64_multiply(x, t))));
    if (k == 0) { return f64_subtract(x, f64_subtract(f64_multiply(x, e), hxs)); }
    e = f64_subtract(f64_subtract(f64_multiply(x, f64_subtract(e, c)), c), hxs);
    if (k == -1) { return f64_subtract(f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, f64_subtract(x, e)), vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */); }
    if (k == 1) {
        if (f64_less(x, vec2<u32>(0x00000000u, 0xbfd00000u) /* -0.25 */)) { return f64_multiply(vec2<u32>(0x00000000u, 0xc0000000u) /* -2.0 */, f64_subtract(e, f64_add(x, vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */))); }
        return f64_add(f64__one(), f64_multiply(vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, f64_subtract(x, e)));
    }
    if (k <= -2 || k > 56) {
        let y = f64_subtract(f64__one(), f64_subtract(e, x));
        return f64_subtract(f64_ldexp(y, k), f64__one());
    }
    if (k < 20) {
        let t2 = vec2<u32>(0u, 0x3ff00000u - (0x200000u >> u32(k)));  // 1 - 2^-k
        return f64_ldexp(f64_subtract(t2, f64_subtract(e, x)), k);
    }
    let t3 = vec2<u32>(0u, u32(0x3ff - k) << 20u);  // 2^-k
    return f64_ldexp(f64_add(f64_subtract(x, f64_add(e, t3)), f64__one()), k);
}

// cosh, sinh, tanh: fdlibm's case split, each with one exp and/or one expm1 call site
fn f64_cosh(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    let a = f64_abs(x);
    if (f64_less(a, vec2<u32>(0xfefa39efu, 0x3fd62e42u) /* 0.34657359027997264 */)) {  // ln2 / 2: 1 + t^2 / (2 (1 + t)), t = expm1(|x|)
        let t = f64_expm1(a);
        let w = f64_add(f64__one(), t);
        return f64_add(f64__one(), f64_divide(f64_multiply(t, t), f64_add(w, w)));
    }
    let big = !f64_less(a, vec2<u32>(0xfefa39efu, 0x40862e42u) /* 709.782712893384 */);
    let e = f64_exp(select(a, f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, a), big));
    if (f64_less(a, vec2<u32>(0x00000000u, 0x40360000u) /* 22.0 */)) { return f64_add(f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, e), f64_divide(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, e)); }
    if (!big) { return f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, e); }
    return f64_multiply(f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, e), e);
}

fn f64_sinh(x: vec2<u32>) -> vec2<u32> {
    if (!f64_isfinite(x)) { return x; }
    let h = f64_copysign(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, x);
    let a = f64_abs(x);
    if (f64_less(a, vec2<u32>(0x00000000u, 0x40360000u) /* 22.0 */)) {
        if (f64__ef(x) < 0x3e3u) { return x; }
        let t = f64_expm1(a);
        if (f64_less(a, f64__one())) { return f64_multiply(h, f64_subtract(f64_multiply(vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, t), f64_divide(f64_multiply(t, t), f64_add(t, f64__one())))); }
        return f64_multiply(h, f64_add(t, f64_divide(t, f64_add(t, f64__one()))));
    }
    let big = !f64_less(a, vec2<u32>(0xfefa39efu, 0x40862e42u) /* 709.782712893384 */);
    let e = f64_exp(select(a, f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, a), big));
    if (!big) { return f64_multiply(h, e); }
    return f64_multiply(f64_multiply(h, e), e);
}

fn f64_tanh(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    let a = f64_abs(x);
    if (!f64_less(a, vec2<u32>(0x00000000u, 0x40360000u) /* 22.0 */)) { return f64_copysign(f64__one(), x); }
    if (f64__ef(x) < 0x3c8u) { return x; }
    let ge1 = !f64_less(a, f64__one());
    let t = f64_expm1(f64_multiply(select(vec2<u32>(0x00000000u, 0xc0000000u) /* -2.0 */, vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, ge1), a));
    var z: vec2<u32>;
    if (ge1) { z = f64_subtract(f64__one(), f64_divide(vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, f64_add(t, vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */))); }
    else { z = f64_divide(f64_negative(t), f64_add(t, vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */)); }
    return f64_copysign(z, x);
}

fn f64_asinh(x: vec2<u32>) -> vec2<u32> {
    if (!f64_isfinite(x) || f64__ef(x) < 0x3e3u) { return x; }
    let a = f64_abs(x);
    let two = vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */;
    if (!f64_greater(a, two)) {  // log(a + sqrt(a^2 + 1)) in double-double
        return f64_copysign(f64__log_sum_sqrt(a, f64__sq_plus(a, f64__one())), x);
    }
    let huge = f64_greater(a, vec2<u32>(0x00000000u, 0x41b00000u) /* 268435456.0 */);
    let q = f64_sqrt(f64_add(f64_multiply(a, a), f64__one()));
    let v = select(f64_add(f64_multiply(two, a), f64_divide(f64__one(), f64_add(q, a))), a, huge);
    let w = f64__log_or_log1p(v, false);
    return f64_copysign(select(w, f64_add(w, vec2<u32>(0xfefa39efu, 0x3fe62e42u) /* 6.93147180559945286227e-01 */), huge), x);
}

fn f64_acosh(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    if (f64_less(x, f64__one())) { return f64__nan(); }
    if (f64_isinf(x)) { return x; }
    let two = vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */;
    if (!f64_greater(x, two)) {  // log(x + sqrt(s)), s = 2t + t^2 = x^2 - 1 (t = x - 1, exact)
        let t = f64_subtract(x, f64__one());
        if (f64__iszero(t)) { return f64__zero(0u); }
        return f64__log_sum_sqrt(x, f64__sq_plus(t, f64_add(t, t)));
    }
    let huge = f64_greater(x, vec2<u32>(0x00000000u, 0x41b00000u) /* 268435456.0 */);
    let q = f64_sqrt(f64_subtract(f64_multiply(x, x), f64__one()));
    let v = select(f64_subtract(f64_multiply(two, x), f64_divide(f64__one(), f64_add(x, q))), x, huge);
    let w = f64__log_or_log1p(v, false);
    return select(w, f64_add(w, vec2<u32>(0xfefa39efu, 0x3fe62e42u) /* 6.93147180559945286227e-01 */), huge);
}

// atanh(x) = log1p(q) / 2, q = 2a / (1 - a): q from the exact 1 - a (TwoSum) with its division
// tail, and log(1 + q) through the double-double log (f64__log_dd), so only the final rounding
// is visible (fdlibm's log1p of the rounded quotient was 2 ulp from NumPy for ~0.002 % of x)
fn f64_atanh(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    let a = f64_abs(x);
    if (f64_greater(a, f64__one())) { return f64__nan(); }
    if (f64_equal(a, f64__one())) { return f64__inf(f64__sgn(x)); }
    if (f64__ef(x) < 0x3e3u) { return x; }
    let d = f64__two_sum(f64__one(), f64_negative(a));  // 1 - a = d.xy + d.zw exactly
    let n = f64_add(a, a);
    let qh = f64_divide(n, d.xy);
    let p = f64__two_prod(qh, d.xy);
    let ql = f64_divide(f64_subtract(f64_subtract(f64_subtract(n, p.xy), p.zw), f64_multiply(qh, d.zw)), d.xy);
    let w = f64__two_sum(f64__one(), qh);
    let l = f64__log_dd(w.xy);
    let r = f64_add(l.xy, f64_add(l.zw, f64_divide(f64_add(w.zw, ql), w.xy)));
    return f64_copysign(f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, r), x);
}

// NumPy's logaddexp: max(x, y) + log1p(exp(-|x - y|))
fn f64_logaddexp(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (f64_equal(x, y)) { return f64_add(x, vec2<u32>(0xfefa39efu, 0x3fe62e42u) /* 6.93147180559945286227e-01 */); }
    let d = f64_subtract(x, y);
    if (f64_isnan(d)) { return f64__nan(); }
    let m = select(y, x, f64_greater(d, vec2<u32>(0u, 0u)));
    return f64_add(m, f64_log1p(f64_exp(f64_negative(f64_abs(d)))));
}

// hypot: sqrt(a^2 + b^2) scaled by a power of two so that nothing overflows or underflows
fn f64_hypot(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (f64_isinf(x) || f64_isinf(y)) { return f64__inf(0u); }
    if (f64_isnan(x) || f64_isnan(y)) { return f64__nan(); }
    var a = f64_abs(x);
    var b = f64_abs(y);
    if (f64_less(a, b)) { let t = a; a = b; b = t; }
    if (f64__iszero(b)) { return a; }
    let e = f64__exp(a) + 52 - i32(f64__clz64(f64__sig(a))) + 11;  // a in [2^e, 2^(e+1))
    let as_ = f64_ldexp(a, -e);
    let bs = f64_ldexp(b, -e);
    return f64_ldexp(f64_sqrt(f64_add(f64_multiply(as_, as_), f64_multiply(bs, bs))), e);
}

// ---- double-double helpers (pow) --------------------------------------------------------------

// a + b = s + e exactly (Knuth's TwoSum), as vec4(s, e)
fn f64__two_sum(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    let s = f64_add(a, b);
    let bb = f64_subtract(s, a);
    return vec4<u32>(s, f64_add(f64_subtract(a, f64_subtract(s, bb)), f64_subtract(b, bb)));
}

fn f64__split(a: vec2<u32>) -> vec4<u32> {  // Veltkamp: a = hi + lo, 26-bit halves
    let t = f64_multiply(vec2<u32>(0x02000000u, 0x41a00000u) /* 134217729.0 */, a);
    let hi = f64_subtract(t, f64_subtract(t, a));
    return vec4<u32>(hi, f64_subtract(a, hi));
}

// a * b = p + e exactly (Dekker), as vec4(p, e); |a|, |b| < 2^995
fn f64__two_prod(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    let p = f64_multiply(a, b);
    let sa = f64__split(a);
    let sb = f64__split(b);
    let e = f64_add(f64_add(f64_add(f64_subtract(f64_multiply(sa.xy, sb.xy), p), f64_multiply(sa.xy, sb.zw)),
                            f64_multiply(sa.zw, sb.xy)), f64_multiply(sa.zw, sb.zw));
    return vec4<u32>(p, e);
}

// log(x) for finite positive x as a double-double hi + lo (relative error ~2^-64):
// x = 2^k m, sqrt(2)/2 <= m < sqrt(2), c = j / 64 nearest m (log(c) from a double-double table),
// log(m / c) = 2 atanh(s), s = (m - c) / (m + c) in double-double, |s| < 2^-7.
fn f64__log_dd(x: vec2<u32>) -> vec4<u32> {
    let n = f64__norm52(x);
    var k = bitcast<i32>(n.z) + 52;
    var m = vec2<u32>(n.x, (n.y & 0xfffffu) | 0x3ff00000u);  // in [1, 2)
    if (f64__lt64(vec2<u32>(0x667f3bcdu, 0x3ff6a09eu), m)) { m.y = m.y - 0x100000u; k = k + 1; }
    let j = f64_to_i32(f64_round(f64_multiply(m, vec2<u32>(0x00000000u, 0x40500000u) /* 64.0 */)));  // 45 ..= 91
    let cc = f64_multiply(f64_from_i32(j), vec2<u32>(0x00000000u, 0x3f900000u) /* 0.015625 */);
    let num = f64_subtract(m, cc);  // exact (Sterbenz)
    let den = f64__two_sum(m, cc);
    let sh = f64_divide(num, den.xy);
    let pr = f64__two_prod(sh, den.xy);
    let sl = f64_divide(f64_subtract(f64_subtract(f64_subtract(num, pr.xy), pr.zw), f64_multiply(sh, den.zw)), den.xy);
    let z = f64_multiply(sh, sh);
    let tail = f64_multiply(f64_multiply(sh, z), f64__t_poly(z, 40u, 4u));  // 2 (s^3/3 + ...)
    let dk = f64_from_i32(k);
    let idx = 44u + 2u * u32(j - 45);
    let a1 = f64__two_sum(f64_multiply(dk, vec2<u32>(0xfee00000u, 0x3fe62e42u) /* 0.6931471803691238 */), F64__COEF[idx]);
    let a2 = f64__two_sum(a1.xy, f64_multiply(vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, sh));
    let lo = f64_add(f64_add(f64_add(a1.zw, a2.zw), f64_add(f64_multiply(dk, vec2<u32>(0x35793c76u, 0x3dea39efu) /* 1.9082149292705877e-10 */), F64__COEF[idx + 1u])),
                     f64_add(f64_multiply(vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, sl), tail));
    let hi = f64_add(a2.xy, lo);
    return vec4<u32>(hi, f64_subtract(lo, f64_subtract(hi, a2.xy)));
}

// log(a + sqrt(s)) for a >= 0 and s = s.xy + s.zw > 0 given in double-double, with the sum
// a + sqrt(s) carried in double-double (one Newton step for the square root's tail) and its log
// through f64__log_dd: log(w_hi) + w_lo / w_hi. asinh and acosh use it for |x| <= 2, where
// fdlibm's log1p of the rounded sum was 2 ulp off for ~0.01-0.07 % of inputs (the log amplifies
// the sum's rounding error near 1).
fn f64__log_sum_sqrt(a: vec2<u32>, s: vec4<u32>) -> vec2<u32> {
    let q0 = f64_sqrt(s.xy);
    let qq = f64__two_prod(q0, q0);
    let d = f64_add(f64_subtract(f64_subtract(s.xy, qq.xy), qq.zw), s.zw);
    let qlo = f64_divide(d, f64_add(q0, q0));
    let w = f64__two_sum(a, q0);
    let l = f64__log_dd(w.xy);
    return f64_add(l.xy, f64_add(l.zw, f64_divide(f64_add(w.zw, qlo), w.xy)));
}

// x^2 + c in double-double (c exact): TwoProd, then TwoSum with c
fn f64__sq_plus(x: vec2<u32>, c: vec2<u32>) -> vec4<u32> {
    let p = f64__two_prod(x, x);
    let s = f64__two_sum(p.xy, c);
    return vec4<u32>(s.xy, f64_add(s.zw, p.zw));
}

// pow: NumPy's (C99) special cases; |x|^y = exp(y log|x|) with log|x| and the product in
// double-double (f64__log_dd, f64__two_prod), the tail fed into exp's reduction
fn f64__is_int(x: vec2<u32>) -> bool { return f64_isfinite(x) && all(f64_trunc(x) == x); }
fn f64__is_odd_int(x: vec2<u32>) -> bool {
    if (!f64__is_int(x) || f64__ef(x) > 1075u || f64__ef(x) < 1023u) { return false; }
    return (f64__shr64(f64__sig(x), u32(1075 - i32(f64__ef(x)))).x & 1u) == 1u;
}

fn f64_pow(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    if (f64__iszero(y)) { return f64__one(); }
    if (all(x == f64__one())) { return f64__one(); }
    if (f64_isnan(x) || f64_isnan(y)) { return f64__nan(); }
    let odd = f64__is_odd_int(y);
    let ax = f64_abs(x);
    if (f64_isinf(y)) {
        if (f64_equal(ax, f64__one())) { return f64__one(); }
        let big = f64_less(f64__one(), ax);
        return select(vec2<u32>(0u, 0u), f64__inf(0u), big != f64_signbit(y));
    }
    let rs = select(0u, f64__sgn(x), odd);
    if (f64__iszero(x) || f64_isinf(x)) {
        let inf_result = f64__iszero(x) == f64_signbit(y);
        return select(f64__zero(rs), f64__inf(rs), inf_result);
    }
    if (f64_signbit(x) && !f64__is_int(y)) { return f64__nan(); }
    // exact (correctly rounded) cases, as NumPy's pow gives them
    if (all(y == vec2<u32>(0u, 0x40000000u))) { return f64_multiply(x, x); }
    if (all(y == vec2<u32>(0u, 0x3fe00000u))) { return f64_sqrt(x); }
    if (all(y == vec2<u32>(0u, 0x3ff00000u))) { return x; }
    if (all(y == vec2<u32>(0u, 0xbff00000u))) { return f64_divide(f64__one(), x); }
    if (f64__ef(y) > 1923u) {  // |y| > 2^900 (an even integer): |y log x| overflows unless |x| = 1
        if (f64_equal(ax, f64__one())) { return f64__one(); }
        return select(f64__zero(rs), f64__inf(rs), f64_less(f64__one(), ax) != f64_signbit(y));
    }
    let l = f64__log_dd(ax);
    let p = f64__two_prod(y, l.xy);
    let r = f64__exp_tail(p.xy, f64_add(p.zw, f64_multiply(y, l.zw)));
    return vec2<u32>(r.x, r.y | rs);
}

// ---- trigonometric ------------------------------------------------------------------------------

// x - n pi/2 as y0 + y1 (a double-double, |y0 + y1| <= pi/4 up to rounding) and the quadrant
// n (only n mod 4 is used): fdlibm's medium Cody-Waite case (33 + 33 + 33 bits of pi/2) for
// |x| < 2^20 pi/2, Payne-Hanek (f64__rem_pio2_large) above.
struct f64__Rem { y0: vec2<u32>, y1: vec2<u32>, n: i32 }

// The bits of 2/pi after two zero words: F64__2OPI[k + 2] holds bits 32k + 1 .. 32k + 32 of
// the binary fraction of 2/pi (0xa2f9836e: 2/pi = 0.a2f9836e4e44...h), 37 words, enough for
// every float64 exponent. Generated with Python integers: floor(2^1185 / pi), pi * 2^1248 from
// Machin's formula (16 atan(1/5) - 4 atan(1/239)) with guard bits, the floor checked for both
// ends of its error bound; tests/unit/test_f64_pio2_table.py regenerates and compares them.
var<private> F64__2OPI: array<u32, 39> = array<u32, 39>(
    0u, 0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u,
    0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu,
    0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu,
    0x1ff897ffu, 0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, 0x9e5fea2du,
    0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u, 0x1f8d5d08u, 0x56033046u
);

// 32 bits of F64__2OPI from bit 32 w + sh on (sh < 32)
fn f64__opi_word(w: u32, sh: u32) -> u32 {
    return (F64__2OPI[w] << sh) | select(F64__2OPI[w + 1u] >> ((32u - sh) & 31u), 0u, sh == 0u);
}

// c + a + b + d + e as (sum mod 2^32, carry): one column of a multiword product
fn f64__col(c: u32, a: u32, b: u32, d: u32, e: u32) -> vec2<u32> {
    let s1 = c + a;
    let s2 = s1 + b;
    let s3 = s2 + d;
    let s4 = s3 + e;
    return vec2<u32>(s4, f64__b(s1 < a) + f64__b(s2 < b) + f64__b(s3 < d) + f64__b(s4 < e));
}

// p + c for a 128-bit p and a 64-bit c (mod 2^128)
fn f64__add128(p: vec4<u32>, c: vec2<u32>) -> vec4<u32> {
    let lo = f64__add64(p.xy, c);
    return vec4<u32>(lo, f64__add64(p.zw, vec2<u32>(f64__b(f64__lt64(lo, c)), 0u)));
}

// Payne-Hanek for finite |x| >= 2^20 pi/2 (no loop): |x| = m 2^E, m the 53-bit significand,
// E in [-32, 971]. Bits of 2/pi of weight >= 2^(32-E) add multiples of 2^32 to m 2^E 2/pi and
// are skipped; the next 224 bits W (7 words from bit E + 32 of F64__2OPI) give
// R = m W mod 2^224 = |x| 2/pi mod 2^32 in units of 2^-192 (the omitted tail is < 2^-139):
// the quadrant is R's bits 192-193, the fraction f its low 192 bits (>= 1/2: quadrant + 1,
// f <- 1 - f, negative remainder). f's top 128 bits, normalised (no float64 comes nearer than
// ~2^-62 to a multiple of pi/2, so >= 66 bits remain), times floor(pi/2 2^63) (plus the two
// largest cross terms of the next 64 bits of pi/2 and of f) give a 128-bit Y = y 2^(127+n);
// y0 + y1 is Y rounded to a double-double (relative error < 2^-68 over the hard cases).
fn f64__rem_pio2_large(x: vec2<u32>) -> f64__Rem {
    let m = f64__sig(x);
    let sp = u32(f64__exp(x) + 32);
    let w = sp >> 5u;
    let sh = sp & 31u;
    let w6 = f64__opi_word(w, sh);
    let w5 = f64__opi_word(w + 1u, sh);
    let w4 = f64__opi_word(w + 2u, sh);
    let w3 = f64__opi_word(w + 3u, sh);
    let w2 = f64__opi_word(w + 4u, sh);
    let w1 = f64__opi_word(w + 5u, sh);
    let w0 = f64__opi_word(w + 6u, sh);
    let a0 = f64__mul32(m.x, w0);
    let a1 = f64__mul32(m.x, w1);
    let a2 = f64__mul32(m.x, w2);
    let a3 = f64__mul32(m.x, w3);
    let a4 = f64__mul32(m.x, w4);
    let a5 = f64__mul32(m.x, w5);
    let b0 = f64__mul32(m.y, w0);
    let b1 = f64__mul32(m.y, w1);
    let b2 = f64__mul32(m.y, w2);
    let b3 = f64__mul32(m.y, w3);
    let b4 = f64__mul32(m.y, w4);
    var c = f64__col(0u, a1.x, a0.y, b0.x, 0u);  // column 1 (column 0 is a0.x, no carry)
    c = f64__col(c.y, a2.x, a1.y, b1.x, b0.y);
    let r2 = c.x;
    c = f64__col(c.y, a3.x, a2.y, b2.x, b1.y);
    let r3 = c.x;
    c = f64__col(c.y, a4.x, a3.y, b3.x, b2.y);
    let r4 = c.x;
    c = f64__col(c.y, a5.x, a4.y, b4.x, b3.y);
    let r5 = c.x;
    var q = c.y + m.x * w6 + a5.y + m.y * w5 + b4.y;  // R's word 6, mod 2^32
    var hi = vec2<u32>(r4, r5);
    var lo = vec2<u32>(r2, r3);
    var sign = f64__sgn(x);
    if (r5 >= 0x80000000u) {
        q = q + 1u;
        hi = ~hi;
        lo = ~lo;
        sign = sign ^ 0x80000000u;
    }
    let n = select(f64__clz64(hi), 64u + f64__clz64(lo), f64__is0(hi));
    let h = f64__shl64(hi, n) | f64__shr64(lo, 64u - n) | f64__shl64(lo, n - 64u);
    let l = f64__shl64(lo, n);
    let pio2 = vec2<u32>(0x2168c234u, 0xc90fdaa2u);  // floor(pi/2 2^63); next word 0xc4c6628b
    let y = f64__add128(f64__add128(f64__mul64(h, pio2), f64__mul32(h.y, 0xc4c6628bu)),
                        f64__mul32(l.y, 0xc90fdaa2u));
    let e = -63 - i32(n);  // y * 2^-64 has weight 2^e
    let yh = f64__round_pack(sign, e, vec2<u32>(y.z & 0xfffff800u, y.w));  // exact
    let yl = f64__round_pack(sign, e - 53, f64__shl64(vec2<u32>(y.z & 0x7ffu, 0u), 53u) | f64__shr64(y.xy, 11u));
    let y0 = f64_add(yh, yl);
    let nq = i32(q & 3u);
    return f64__Rem(y0, f64_subtract(yl, f64_subtract(y0, yh)), select(nq, -nq, f64_signbit(x)));
}

fn f64__rem_pio2(x: vec2<u32>) -> f64__Rem {
    if (!f64_less(f64_abs(x), vec2<u32>(0x54442d18u, 0x413921fbu) /* 2^20 pi/2 */)) { return f64__rem_pio2_large(x); }
    let fnv = f64_round(f64_multiply(x, vec2<u32>(0x6dc9c883u, 0x3fe45f30u) /* 6.36619772367581382433e-01 */));
    let n = f64_to_i32(fnv);
    var r = f64_subtract(x, f64_multiply(fnv, vec2<u32>(0x54400000u, 0x3ff921fbu) /* 1.57079632673412561417e+00 */));
    var w = f64_multiply(fnv, vec2<u32>(0x1a626331u, 0x3dd0b461u) /* 6.07710050650619224932e-11 */);
    var y0 = f64_subtract(r, w);
    let j = i32(f64__ef(x));
    if (j - i32(f64__ef(y0)) > 16) {
        let t = r;
        w = f64_multiply(fnv, vec2<u32>(0x1a600000u, 0x3dd0b461u) /* 6.07710050630396597660e-11 */);
        r = f64_subtract(t, w);
        w = f64_subtract(f64_multiply(fnv, vec2<u32>(0x2e037073u, 0x3ba3198au) /* 2.02226624879595063154e-21 */), f64_subtract(f64_subtract(t, r), w));
        y0 = f64_subtract(r, w);
        if (j - i32(f64__ef(y0)) > 49) {
            let t2 = r;
            w = f64_multiply(fnv, vec2<u32>(0x2e000000u, 0x3ba3198au) /* 2.02226624871116645580e-21 */);
            r = f64_subtract(t2, w);
            w = f64_subtract(f64_multiply(fnv, vec2<u32>(0x252049c1u, 0x397b839au) /* 8.47842766036889956997e-32 */), f64_subtract(f64_subtract(t2, r), w));
            y0 = f64_subtract(r, w);
        }
    }
    let y1 = f64_subtract(f64_subtract(r, y0), w);
    return f64__Rem(y0, y1, n);
}

fn f64__ksin(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    let z = f64_multiply(x, x);
    let v = f64_multiply(z, x);
    let r = f64__t_poly(z, 12u, 5u);
    return f64_subtract(x, f64_subtract(f64_subtract(f64_multiply(z, f64_subtract(f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, y), f64_multiply(v, r))), y), f64_multiply(v, vec2<u32>(0x55555549u, 0xbfc55555u) /* -1.66666666666666324348e-01 */)));
}

fn f64__kcos(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    let z = f64_multiply(x, x);
    let r = f64_multiply(z, f64__t_poly(z, 17u, 6u));
    let hz = f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, z);
    let w = f64_subtract(f64__one(), hz);
    return f64_add(w, f64_add(f64_subtract(f64_subtract(f64__one(), w), hz), f64_subtract(f64_multiply(z, r), f64_multiply(x, y))));
}

fn f64__reduce(x: vec2<u32>) -> f64__Rem {
    if (f64_less(f64_abs(x), vec2<u32>(0x54442d18u, 0x3fe921fbu) /* 0.7853981633974483 */)) {
        return f64__Rem(x, vec2<u32>(0u, 0u), 0);
    }
    return f64__rem_pio2(x);
}

fn f64_sin(x: vec2<u32>) -> vec2<u32> {
    if (!f64_isfinite(x)) { return f64__nan(); }
    if (f64__ef(x) < 0x3e4u) { return x; }  // |x| < 2^-27
    let r = f64__reduce(x);
    let q = r.n & 3;
    let v = select(f64__ksin(r.y0, r.y1), f64__kcos(r.y0, r.y1), (q & 1) == 1);
    return select(v, f64_negative(v), q >= 2);
}

fn f64_cos(x: vec2<u32>) -> vec2<u32> {
    if (!f64_isfinite(x)) { return f64__nan(); }
    if (f64__ef(x) < 0x3e4u) { return f64__one(); }
    let r = f64__reduce(x);
    let q = r.n & 3;
    let v = select(f64__kcos(r.y0, r.y1), f64__ksin(r.y0, r.y1), (q & 1) == 1);
    return select(v, f64_negative(v), q == 1 || q == 2);
}

fn f64_tan(x: vec2<u32>) -> vec2<u32> {
    if (!f64_isfinite(x)) { return f64__nan(); }
    if (f64__ef(x) < 0x3e4u) { return x; }
    let r = f64__reduce(x);
    let s = f64__ksin(r.y0, r.y1);
    let c = f64__kcos(r.y0, r.y1);
    return select(f64_divide(s, c), f64_negative(f64_divide(c, s)), (r.n & 1) == 1);
}

fn f64_atan(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    let a = f64_abs(x);
    if (f64__ef(x) >= 0x441u) { return f64_copysign(vec2<u32>(0x54442d18u, 0x3ff921fbu) /* 1.57079632679489655800e+00 */, x); }
    if (f64__ef(x) < 0x3e3u) { return x; }
    var id = -1;
    var t = a;
    if (!f64_less(a, vec2<u32>(0x00000000u, 0x3fdc0000u) /* 0.4375 */)) {
        if (f64_less(a, vec2<u32>(0x00000000u, 0x3ff30000u) /* 1.1875 */)) {
            if (f64_less(a, vec2<u32>(0x00000000u, 0x3fe60000u) /* 0.6875 */)) { id = 0; t = f64_divide(f64_subtract(f64_multiply(vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, a), f64__one()), f64_add(vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, a)); }
            else { id = 1; t = f64_divide(f64_subtract(a, f64__one()), f64_add(a, f64__one())); }
        } else {
            if (f64_less(a, vec2<u32>(0x00000000u, 0x40038000u) /* 2.4375 */)) { id = 2; t = f64_divide(f64_subtract(a, vec2<u32>(0x00000000u, 0x3ff80000u) /* 1.5 */), f64_add(f64__one(), f64_multiply(vec2<u32>(0x00000000u, 0x3ff80000u) /* 1.5 */, a))); }
            else { id = 3; t = f64_divide(vec2<u32>(0x00000000u, 0xbff00000u) /* -1.0 */, a); }
        }
    }
    let z = f64_multiply(t, t);
    let w = f64_multiply(z, z);
    let s1 = f64_multiply(z, f64__t_poly(w, 23u, 6u));
    let s2 = f64_multiply(w, f64__t_poly(w, 29u, 5u));
    if (id < 0) { return f64_copysign(f64_subtract(t, f64_multiply(t, f64_add(s1, s2))), x); }
    var hi = vec2<u32>(0x0561bb4fu, 0x3fddac67u) /* 4.63647609000806093515e-01 */;
    var lo = vec2<u32>(0x222f65e2u, 0x3c7a2b7fu) /* 2.26987774529616870924e-17 */;
    if (id == 1) { hi = vec2<u32>(0x54442d18u, 0x3fe921fbu) /* 7.85398163397448278999e-01 */; lo = vec2<u32>(0x33145c07u, 0x3c81a626u) /* 3.06161699786838301793e-17 */; }
    if (id == 2) { hi = vec2<u32>(0xd281f69bu, 0x3fef730bu) /* 9.82793723247329054082e-01 */; lo = vec2<u32>(0x7af0cbbdu, 0x3c700788u) /* 1.39033110312309984516e-17 */; }
    if (id == 3) { hi = vec2<u32>(0x54442d18u, 0x3ff921fbu) /* 1.57079632679489655800e+00 */; lo = vec2<u32>(0x33145c07u, 0x3c91a626u) /* 6.12323399573676603587e-17 */; }
    let zz = f64_subtract(hi, f64_subtract(f64_subtract(f64_multiply(t, f64_add(s1, s2)), lo), t));
    return f64_copysign(zz, x);
}

fn f64_atan2(y: vec2<u32>, x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x) || f64_isnan(y)) { return f64__nan(); }
    let pi = vec2<u32>(0x54442d18u, 0x400921fbu) /* 3.1415926535897931160e+00 */;
    let pi_lo = vec2<u32>(0x33145c07u, 0x3ca1a626u) /* 1.2246467991473531772e-16 */;
    let pi2 = vec2<u32>(0x54442d18u, 0x3ff921fbu) /* 1.5707963267948965580e+00 */;
    let sy = f64__sgn(y);
    let m = select(0u, 1u, sy != 0u) | select(0u, 2u, f64_signbit(x));
    if (f64__iszero(y)) {
        if (m < 2u) { return y; }
        return f64_copysign(pi, y);
    }
    if (f64__iszero(x)) { return f64_copysign(pi2, y); }
    if (f64_isinf(x)) {
        if (f64_isinf(y)) {
            let v = select(vec2<u32>(0x54442d18u, 0x3fe921fbu) /* 7.8539816339744827900e-01 */, vec2<u32>(0x7f3321d2u, 0x4002d97cu) /* 2.3561944901923448370e+00 */, m >= 2u);
            return f64_copysign(v, y);
        }
        return select(f64__zero(sy), f64_copysign(pi, y), m >= 2u);
    }
    if (f64_isinf(y)) { return f64_copysign(pi2, y); }
    let k = i32(f64__ef(y)) - i32(f64__ef(x));
    var z: vec2<u32>;
    var mm = m;
    if (k > 60) {
        z = f64_add(pi2, f64_multiply(vec2<u32>(0x00000000u, 0x3fe00000u) /* 0.5 */, pi_lo));
        mm = m & 1u;
    } else if (m >= 2u && k < -60) {
        z = vec2<u32>(0u, 0u);
    } else {
        z = f64_atan(f64_abs(f64_divide(y, x)));
    }
    if (mm == 0u) { return z; }
    if (mm == 1u) { return f64_negative(z); }
    if (mm == 2u) { return f64_subtract(pi, f64_subtract(z, pi_lo)); }
    return f64_subtract(f64_subtract(z, pi_lo), pi);
}

fn f64_asin(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    if (f64_greater(f64_abs(x), f64__one())) { return f64__nan(); }
    if (f64__ef(x) < 0x3e3u) { return x; }
    return f64_atan2(x, f64_sqrt(f64_multiply(f64_subtract(f64__one(), x), f64_add(f64__one(), x))));
}

fn f64_acos(x: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(x)) { return x; }
    if (f64_greater(f64_abs(x), f64__one())) { return f64__nan(); }
    return f64_multiply(vec2<u32>(0x00000000u, 0x40000000u) /* 2.0 */, f64_atan2(f64_sqrt(f64_subtract(f64__one(), x)), f64_sqrt(f64_add(f64__one(), x))));
}

// Polynomial coefficients (fdlibm's), highest degree first; see f64__t_poly.
var<private> F64__COEF: array<vec2<u32>, 138> = array<vec2<u32>, 138>(
    vec2<u32>(0x72bea4d0u, 0x3e663769u),  // EXP[0] 4.1381367970572385e-08
    vec2<u32>(0xc5d26bf1u, 0xbebbbd41u),  // EXP[1] -1.6533902205465252e-06
    vec2<u32>(0xaf25de2cu, 0x3f11566au),  // EXP[2] 6.613756321437934e-05
    vec2<u32>(0x16bebd93u, 0xbf66c16cu),  // EXP[3] -0.0027777777777015593
    vec2<u32>(0x5555553eu, 0x3fc55555u),  // EXP[4] 0.16666666666666602
    vec2<u32>(0xd078c69fu, 0x3fc39a09u),  // LG_EVEN[0] 0.15313837699209373
    vec2<u32>(0x1d8e78afu, 0x3fcc71c5u),  // LG_EVEN[1] 0.22222198432149784
    vec2<u32>(0x9997fa04u, 0x3fd99999u),  // LG_EVEN[2] 0.3999999999940942
    vec2<u32>(0xdf3e5244u, 0x3fc2f112u),  // LG_ODD[0] 0.14798198605116586
    vec2<u32>(0x96cb03deu, 0x3fc74664u),  // LG_ODD[1] 0.1818357216161805
    vec2<u32>(0x94229359u, 0x3fd24924u),  // LG_ODD[2] 0.2857142874366239
    vec2<u32>(0x55555593u, 0x3fe55555u),  // LG_ODD[3] 0.6666666666666735
    vec2<u32>(0x5acfd57cu, 0x3de5d93au),  // SIN[0] 1.58969099521155e-10
    vec2<u32>(0x8a2b9cebu, 0xbe5ae5e6u),  // SIN[1] -2.5050760253406863e-08
    vec2<u32>(0x57b1fe7du, 0x3ec71de3u),  // SIN[2] 2.7557313707070068e-06
    vec2<u32>(0x19c161d5u, 0xbf2a01a0u),  // SIN[3] -0.0001984126982985795
    vec2<u32>(0x1110f8a6u, 0x3f811111u),  // SIN[4] 0.00833333333332249
    vec2<u32>(0xbe8838d4u, 0xbda8fae9u),  // COS[0] -1.1359647557788195e-11
    vec2<u32>(0xbdb4b1c4u, 0x3e21ee9eu),  // COS[1] 2.087572321298175e-09
    vec2<u32>(0x809c52adu, 0xbe927e4fu),  // COS[2] -2.7557314351390663e-07
    vec2<u32>(0x19cb1590u, 0x3efa01a0u),  // COS[3] 2.480158728947673e-05
    vec2<u32>(0x16c15177u, 0xbf56c16cu),  // COS[4] -0.001388888888887411
    vec2<u32>(0x5555554cu, 0x3fa55555u),  // COS[5] 0.0416666666666666
    vec2<u32>(0xe322da11u, 0x3f90ad3au),  // ATAN_EVEN[0] 0.016285820115365782
    vec2<u32>(0x24760debu, 0x3fa97b4bu),  // ATAN_EVEN[1] 0.049768779946159324
    vec2<u32>(0xa0d03d51u, 0x3fb10d66u),  // ATAN_EVEN[2] 0.06661073137387531
    vec2<u32>(0xc54c206eu, 0x3fb745cdu),  // ATAN_EVEN[3] 0.09090887133436507
    vec2<u32>(0x920083ffu, 0x3fc24924u),  // ATAN_EVEN[4] 0.14285714272503466
    vec2<u32>(0x5555550du, 0x3fd55555u),  // ATAN_EVEN[5] 0.3333333333333293
    vec2<u32>(0x2c6a6c2fu, 0xbfa2b444u),  // ATAN_ODD[0] -0.036531572744216916
    vec2<u32>(0x52defd9au, 0xbfadde2du),  // ATAN_ODD[1] -0.058335701337905735
    vec2<u32>(0xaf749a6du, 0xbfb3b0f2u),  // ATAN_ODD[2] -0.0769187620504483
    vec2<u32>(0xfe231671u, 0xbfbc71c6u),  // ATAN_ODD[3] -0.11111110405462356
    vec2<u32>(0x9998ebc4u, 0xbfc99999u),  // ATAN_ODD[4] -0.19999999999876483
    vec2<u32>(0x6e09c32du, 0xbe8afdb7u),  // EXPM1[0] -2.0109921818362437e-07
    vec2<u32>(0x86e65239u, 0x3ed0cfcau),  // EXPM1[1] 4.008217827329362e-06
    vec2<u32>(0x9eaadbb7u, 0xbf14ce19u),  // EXPM1[2] -7.93650757867488e-05
    vec2<u32>(0x19fe5585u, 0x3f5a01a0u),  // EXPM1[3] 0.0015873015872548146
    vec2<u32>(0x111110f4u, 0xbfa11111u),  // EXPM1[4] -0.03333333333333313
    vec2<u32>(0x00000000u, 0x3ff00000u),  // EXPM1[5] 1.0
    vec2<u32>(0x1c71c71cu, 0x3fcc71c7u),  // LOG_DD[0] 0.2222222222222222
    vec2<u32>(0x92492492u, 0x3fd24924u),  // LOG_DD[1] 0.2857142857142857
    vec2<u32>(0x9999999au, 0x3fd99999u),  // LOG_DD[2] 0.4
    vec2<u32>(0x55555555u, 0x3fe55555u),  // LOG_DD[3] 0.6666666666666666
    vec2<u32>(0x3e9c6a14u, 0xbfd68ac8u), vec2<u32>(0xdd740178u, 0xbc5a64eau),  // log(45/64) hi, lo
    vec2<u32>(0x0738a3d8u, 0xbfd522aeu), vec2<u32>(0xb38a6979u, 0x3c68f7e9u),  // log(46/64) hi, lo
    vec2<u32>(0x77333184u, 0xbfd3c252u), vec2<u32>(0xe50a8ec6u, 0x3c72ad27u),  // log(47/64) hi, lo
    vec2<u32>(0x1134db92u, 0xbfd26962u), vec2<u32>(0xdd9db02bu, 0xbc7e0efau),  // log(48/64) hi, lo
    vec2<u32>(0x8227e47cu, 0xbfd1178eu), vec2<u32>(0x5f01c691u, 0x3c60e63au),  // log(49/64) hi, lo
    vec2<u32>(0x6cb3b379u, 0xbfcf991cu), vec2<u32>(0x66f980a2u, 0xbc6f6650u),  // log(50/64) hi, lo
    vec2<u32>(0xf2655e7bu, 0xbfcd1037u), vec2<u32>(0x242471a2u, 0xbc660629u),  // log(51/64) hi, lo
    vec2<u32>(0x3c8ad9e3u, 0xbfca93edu), vec2<u32>(0x9de97203u, 0xbc6bcafau),  // log(52/64) hi, lo
    vec2<u32>(0x6551a3c2u, 0xbfc823c1u), vec2<u32>(0xe70be781u, 0x3c61232cu),  // log(53/64) hi, lo
    vec2<u32>(0x6b543db2u, 0xbfc5bf40u), vec2<u32>(0x4c0df7e7u, 0x3c21f5b4u),  // log(54/64) hi, lo
    vec2<u32>(0xb0159016u, 0xbfc365fcu), vec2<u32>(0xa5b944adu, 0xbc57d411u),  // log(55/64) hi, lo
    vec2<u32>(0x8227e47cu, 0xbfc1178eu), vec2<u32>(0x5f01c691u, 0x3c50e63au),  // log(56/64) hi, lo
    vec2<u32>(0x638446a2u, 0xbfbda727u), vec2<u32>(0x71733019u, 0xbc5401fau),  // log(57/64) hi, lo
    vec2<u32>(0x5d594989u, 0xbfb9335eu), vec2<u32>(0x5704ccb7u, 0x3c5478a8u),  // log(58/64) hi, lo
    vec2<u32>(0x5d207eacu, 0xbfb4d311u), vec2<u32>(0x2c7842ccu, 0xbc5769f4u),  // log(59/64) hi, lo
    vec2<u32>(0xb59e3a07u, 0xbfb08598u), vec2<u32>(0x9902bf32u, 0x3c5dd700u),  // log(60/64) hi, lo
    vec2<u32>(0x149fb343u, 0xbfa894aau), vec2<u32>(0x7660a23du, 0xbc3a8be9u),  // log(61/64) hi, lo
    vec2<u32>(0x89e74444u, 0xbfa0415du), vec2<u32>(0x1d753622u, 0xbc4c05cfu),  // log(62/64) hi, lo
    vec2<u32>(0x58935847u, 0xbf902056u), vec2<u32>(0x8416e71fu, 0xbc327c8eu),  // log(63/64) hi, lo
    vec2<u32>(0x00000000u, 0x00000000u), vec2<u32>(0x00000000u, 0x00000000u),  // log(64/64) hi, lo
    vec2<u32>(0xb0fc03e4u, 0x3f8fc0a8u), vec2<u32>(0xc59642a1u, 0xbc183092u),  // log(65/64) hi, lo
    vec2<u32>(0x0e783300u, 0x3f9f829bu), vec2<u32>(0x04f1ef23u, 0x3c333e3fu),  // log(66/64) hi, lo
    vec2<u32>(0xf632dcfcu, 0x3fa77458u), vec2<u32>(0xa87b9296u, 0x3c418d3cu),  // log(67/64) hi, lo
    vec2<u32>(0xc01162a6u, 0x3faf0a30u), vec2<u32>(0x5c5bbacdu, 0x3c485f32u),  // log(68/64) hi, lo
    vec2<u32>(0x961bd1d1u, 0x3fb341d7u), vec2<u32>(0x227becbbu, 0xbc5b599fu),  // log(69/64) hi, lo
    vec2<u32>(0x8ae56b4cu, 0x3fb6f0d2u), vec2<u32>(0x9184b992u, 0xbc5906d9u),  // log(70/64) hi, lo
    vec2<u32>(0x3a4ad563u, 0x3fba926du), vec2<u32>(0x8aa70ea9u, 0x3c5942f4u),  // log(71/64) hi, lo
    vec2<u32>(0x6e2af2e6u, 0x3fbe2707u), vec2<u32>(0x001e0162u, 0xbc361578u),  // log(72/64) hi, lo
    vec2<u32>(0x7cd08e59u, 0x3fc0d77eu), vec2<u32>(0x5e9030acu, 0x3c69a5dcu),  // log(73/64) hi, lo
    vec2<u32>(0xf81ff523u, 0x3fc29552u), vec2<u32>(0x1c407dbfu, 0x3c630177u),  // log(74/64) hi, lo
    vec2<u32>(0x6ccb7d1eu, 0x3fc44d2bu), vec2<u32>(0x543e1f88u, 0x3c69f4f6u),  // log(75/64) hi, lo
    vec2<u32>(0x70a793d4u, 0x3fc5ff30u), vec2<u32>(0xfafc6f6eu, 0xbc5bc60eu),  // log(76/64) hi, lo
    vec2<u32>(0x0210d909u, 0x3fc7ab89u), vec2<u32>(0x2d6a0608u, 0x3c4be36bu),  // log(77/64) hi, lo
    vec2<u32>(0x9cf456b4u, 0x3fc9525au), vec2<u32>(0x1d4e2e26u, 0x3c6d904cu),  // log(78/64) hi, lo
    vec2<u32>(0x4e80bff3u, 0x3fcaf3c9u), vec2<u32>(0xf3641985u, 0xbc5398cfu),  // log(79/64) hi, lo
    vec2<u32>(0xc79a9a22u, 0x3fcc8ff7u), vec2<u32>(0xf8434012u, 0xbc64f689u),  // log(80/64) hi, lo
    vec2<u32>(0x6e2af2e6u, 0x3fce2707u), vec2<u32>(0x001e0162u, 0xbc461578u),  // log(81/64) hi, lo
    vec2<u32>(0x6d5e3e2bu, 0x3fcfb918u), vec2<u32>(0x64f21acbu, 0xbc6caaaeu),  // log(82/64) hi, lo
    vec2<u32>(0xe27390e3u, 0x3fd0a324u), vec2<u32>(0xe8061c03u, 0x3c77dcfdu),  // log(83/64) hi, lo
    vec2<u32>(0xababa60eu, 0x3fd1675cu), vec2<u32>(0xab883717u, 0x3c2ce63eu),  // log(84/64) hi, lo
    vec2<u32>(0xfbcf7966u, 0x3fd22941u), vec2<u32>(0xb09628afu, 0xbc776f5eu),  // log(85/64) hi, lo
    vec2<u32>(0xbae11d31u, 0x3fd2e8e2u), vec2<u32>(0xb95ebdf9u, 0xbc78f4cdu),  // log(86/64) hi, lo
    vec2<u32>(0x556945eau, 0x3fd3a64cu), vec2<u32>(0x1945f97cu, 0xbc6c6865u),  // log(87/64) hi, lo
    vec2<u32>(0xc21c5ec2u, 0x3fd4618bu), vec2<u32>(0xcdeccf1du, 0x3c7f42deu),  // log(88/64) hi, lo
    vec2<u32>(0x872df82du, 0x3fd51aadu), vec2<u32>(0xc19f55e3u, 0x3c43927au),  // log(89/64) hi, lo
    vec2<u32>(0xbf5809cau, 0x3fd5d1bdu), vec2<u32>(0x83dc7fe1u, 0x3c742363u),  // log(90/64) hi, lo
    vec2<u32>(0x1e9b14afu, 0x3fd686c8u), vec2<u32>(0xf7f58e3du, 0xbc6ddea0u),  // log(91/64) hi, lo
);
