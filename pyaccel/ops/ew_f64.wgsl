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

fn f64_floor_divide(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (f64_isnan(a) || f64_isnan(b)) { return f64__nan(); }
    if (f64__iszero(b)) { return f64_divide(a, b); }
    if (f64_isinf(a)) { return f64__nan(); }
    if (f64_isinf(b)) {
        if (f64__iszero(a) || f64_signbit(a) == f64_signbit(b)) {
            return f64__zero(f64__sgn(a) ^ f64__sgn(b));
        }
        return vec2<u32>(0u, 0xbff00000u);
    }
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
