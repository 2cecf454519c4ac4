// requires: ew_f64
// complex128 elementwise library (prefix c128_): a complex128 element is a vec4<u32>, xy = the
// real part and zw = the imaginary part, each a float64 as ew_f64 stores it (low word, high
// word): NumPy's little-endian bytes. Op functions are named c128_<op-table name>; real
// results (abs, real, imag) are vec2<u32> float64s, predicates bool. Private helpers are
// c128__<name>. Everything is built on ew_f64's public, correctly rounded functions.
//
// Arithmetic follows NumPy's complex loops (naive multiply, Smith's division), sqrt is C99's
// csqrt (Kahan, scaled), abs a scaled hypot; special values follow C99 Annex G and the Array
// API 2023.12 special cases. Not here yet: exp, log, pow and the trigonometric / hyperbolic
// families, which need ew_f64's transcendental functions (f64_exp, f64_log, f64_sin, ...).

// -- float64 constants and helpers --------------------------------------------------------------
fn c128__f(hi: u32) -> vec2<u32> { return vec2<u32>(0u, hi); }  // a float64 with a zero low word
fn c128__zero() -> vec2<u32> { return vec2<u32>(0u, 0u); }
fn c128__one() -> vec2<u32> { return c128__f(0x3ff00000u); }
fn c128__nan() -> vec2<u32> { return c128__f(0x7ff80000u); }
fn c128__inf() -> vec2<u32> { return c128__f(0x7ff00000u); }
fn c128__nan2() -> vec4<u32> { return vec4<u32>(c128__nan(), c128__nan()); }
fn c128__mk(re: vec2<u32>, im: vec2<u32>) -> vec4<u32> { return vec4<u32>(re, im); }
fn c128__iszero(a: vec2<u32>) -> bool { return ((a.y & 0x7fffffffu) | a.x) == 0u; }
fn c128__neg(a: vec2<u32>) -> bool { return f64_signbit(a); }
fn c128__lt(a: vec2<u32>, b: vec2<u32>) -> bool { return f64_less(a, b); }
fn c128__ge(a: vec2<u32>, b: vec2<u32>) -> bool { return f64_greater_equal(a, b); }
fn c128__mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return f64_multiply(a, b); }
fn c128__add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return f64_add(a, b); }
fn c128__sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return f64_subtract(a, b); }
fn c128__div(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return f64_divide(a, b); }
// +-1 with the sign of a
fn c128__sgn1(a: vec2<u32>) -> vec2<u32> { return f64_copysign(c128__one(), a); }

// hypot without overflow or underflow of the squares (inf wins over NaN, as C99)
fn c128__hypot(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    let a = f64_abs(x);
    let b = f64_abs(y);
    if (f64_isinf(a) || f64_isinf(b)) { return c128__inf(); }
    if (f64_isnan(a) || f64_isnan(b)) { return c128__nan(); }
    let m = f64_maximum(a, b);
    if (c128__iszero(m)) { return c128__zero(); }
    let r = c128__div(f64_minimum(a, b), m);
    return c128__mul(m, f64_sqrt(c128__add(c128__one(), c128__mul(r, r))));
}

// -- conversions --------------------------------------------------------------------------------
fn c128_from_f32(x: f32) -> vec4<u32> { return c128__mk(f64_from_f32(x), c128__zero()); }
fn c128_from_i32(x: i32) -> vec4<u32> { return c128__mk(f64_from_i32(x), c128__zero()); }
fn c128_from_u32(x: u32) -> vec4<u32> { return c128__mk(f64_from_u32(x), c128__zero()); }
fn c128_from_bool(x: bool) -> vec4<u32> {
    return c128__mk(select(c128__zero(), c128__one(), x), c128__zero());
}
fn c128_from_i64(x: vec2<u32>) -> vec4<u32> { return c128__mk(f64_from_i64(x), c128__zero()); }
fn c128_from_u64(x: vec2<u32>) -> vec4<u32> { return c128__mk(f64_from_u64(x), c128__zero()); }
fn c128_from_f64(x: vec2<u32>) -> vec4<u32> { return c128__mk(x, c128__zero()); }
fn c128_from_c64(x: vec2<f32>) -> vec4<u32> { return c128__mk(f64_from_f32(x.x), f64_from_f32(x.y)); }
// complex -> real casts keep the real part (NumPy's astype; the namespace refuses them)
fn c128_to_f32(x: vec4<u32>) -> f32 { return f64_to_f32(x.xy); }
fn c128_to_i32(x: vec4<u32>) -> i32 { return f64_to_i32(x.xy); }
fn c128_to_u32(x: vec4<u32>) -> u32 { return f64_to_u32(x.xy); }
fn c128_to_i64(x: vec4<u32>) -> vec2<u32> { return f64_to_i64(x.xy); }
fn c128_to_u64(x: vec4<u32>) -> vec2<u32> { return f64_to_u64(x.xy); }
fn c128_to_f64(x: vec4<u32>) -> vec2<u32> { return x.xy; }
fn c128_to_c64(x: vec4<u32>) -> vec2<f32> { return vec2<f32>(f64_to_f32(x.xy), f64_to_f32(x.zw)); }
fn c128_to_bool(x: vec4<u32>) -> bool { return !(c128__iszero(x.xy) && c128__iszero(x.zw)); }
fn c128_truthy(x: vec4<u32>) -> bool { return c128_to_bool(x); }

// -- parts, predicates --------------------------------------------------------------------------
fn c128_real(x: vec4<u32>) -> vec2<u32> { return x.xy; }
fn c128_imag(x: vec4<u32>) -> vec2<u32> { return x.zw; }
fn c128_conj(x: vec4<u32>) -> vec4<u32> { return c128__mk(x.xy, f64_negative(x.zw)); }
fn c128_positive(x: vec4<u32>) -> vec4<u32> { return x; }
fn c128_negative(x: vec4<u32>) -> vec4<u32> { return c128__mk(f64_negative(x.xy), f64_negative(x.zw)); }
fn c128_equal(x: vec4<u32>, y: vec4<u32>) -> bool { return f64_equal(x.xy, y.xy) && f64_equal(x.zw, y.zw); }
fn c128_not_equal(x: vec4<u32>, y: vec4<u32>) -> bool { return !c128_equal(x, y); }
fn c128_isnan(x: vec4<u32>) -> bool { return f64_isnan(x.xy) || f64_isnan(x.zw); }
fn c128_isinf(x: vec4<u32>) -> bool { return f64_isinf(x.xy) || f64_isinf(x.zw); }
fn c128_isfinite(x: vec4<u32>) -> bool { return f64_isfinite(x.xy) && f64_isfinite(x.zw); }
fn c128_round(x: vec4<u32>) -> vec4<u32> { return c128__mk(f64_round(x.xy), f64_round(x.zw)); }

// -- arithmetic (NumPy's complex loops) -----------------------------------------------------------
fn c128_add(x: vec4<u32>, y: vec4<u32>) -> vec4<u32> {
    return c128__mk(c128__add(x.xy, y.xy), c128__add(x.zw, y.zw));
}
fn c128_subtract(x: vec4<u32>, y: vec4<u32>) -> vec4<u32> {
    return c128__mk(c128__sub(x.xy, y.xy), c128__sub(x.zw, y.zw));
}
fn c128_multiply(x: vec4<u32>, y: vec4<u32>) -> vec4<u32> {
    return c128__mk(c128__sub(c128__mul(x.xy, y.xy), c128__mul(x.zw, y.zw)),
                    c128__add(c128__mul(x.xy, y.zw), c128__mul(x.zw, y.xy)));
}
fn c128_square(x: vec4<u32>) -> vec4<u32> { return c128_multiply(x, x); }

// Smith's algorithm, as NumPy's complex divide
fn c128_divide(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    let br = f64_abs(b.xy);
    let bi = f64_abs(b.zw);
    if (c128__ge(br, bi)) {
        if (c128__iszero(br) && c128__iszero(bi)) {
            return c128__mk(c128__div(a.xy, br), c128__div(a.zw, br));
        }
        let rat = c128__div(b.zw, b.xy);
        let scl = c128__div(c128__one(), c128__add(b.xy, c128__mul(b.zw, rat)));
        return c128__mk(c128__mul(c128__add(a.xy, c128__mul(a.zw, rat)), scl),
                        c128__mul(c128__sub(a.zw, c128__mul(a.xy, rat)), scl));
    }
    let rat = c128__div(b.xy, b.zw);
    let scl = c128__div(c128__one(), c128__add(b.zw, c128__mul(b.xy, rat)));
    return c128__mk(c128__mul(c128__add(c128__mul(a.xy, rat), a.zw), scl),
                    c128__mul(c128__sub(c128__mul(a.zw, rat), a.xy), scl));
}
fn c128_reciprocal(x: vec4<u32>) -> vec4<u32> {
    return c128_divide(c128__mk(c128__one(), c128__zero()), x);
}

fn c128_abs(x: vec4<u32>) -> vec2<u32> { return c128__hypot(x.xy, x.zw); }

// x / |x| (NumPy 2), NaN + NaN j where a part is NaN (the Array API)
fn c128_sign(x: vec4<u32>) -> vec4<u32> {
    if (c128_isnan(x)) { return c128__nan2(); }
    let ri = f64_isinf(x.xy);
    let ii = f64_isinf(x.zw);
    if (ri || ii) {
        if (ri && ii) { return c128__nan2(); }
        if (ri) { return c128__mk(c128__sgn1(x.xy), c128__zero()); }
        return c128__mk(c128__zero(), c128__sgn1(x.zw));
    }
    let m = c128__hypot(x.xy, x.zw);
    if (c128__iszero(m)) { return c128__mk(c128__zero(), c128__zero()); }
    return c128__mk(c128__div(x.xy, m), c128__div(x.zw, m));
}

// C99 csqrt (Kahan): sqrt((|a| + |z|) / 2) on the side without cancellation, scaled
fn c128_sqrt(z: vec4<u32>) -> vec4<u32> {
    let a = z.xy;
    let b = z.zw;
    if (f64_isinf(b)) { return c128__mk(c128__inf(), b); }
    if (f64_isnan(a)) { return c128__nan2(); }
    if (f64_isinf(a)) {
        if (f64_isnan(b)) {
            if (c128__neg(a)) { return c128__mk(c128__nan(), c128__inf()); }
            return c128__mk(a, b);
        }
        if (c128__neg(a)) { return c128__mk(c128__zero(), f64_copysign(c128__inf(), b)); }
        return c128__mk(a, f64_copysign(c128__zero(), b));
    }
    if (f64_isnan(b)) { return c128__nan2(); }
    if (c128__iszero(a) && c128__iszero(b)) { return c128__mk(c128__zero(), b); }
    let m = f64_maximum(f64_abs(a), f64_abs(b));
    var aa = a;
    var bb = b;
    var s = c128__one();
    if (c128__lt(c128__f(0x7e300000u), m)) {         // m > 2^996: |z| / 4
        aa = c128__mul(a, c128__f(0x3fd00000u));
        bb = c128__mul(b, c128__f(0x3fd00000u));
        s = c128__f(0x40000000u);                      // 2
    } else if (c128__lt(m, c128__f(0x01000000u))) {  // m < 2^-1007: |z| * 2^100
        aa = c128__mul(a, c128__f(0x46300000u));
        bb = c128__mul(b, c128__f(0x46300000u));
        s = c128__f(0x3cd00000u);                      // 2^-50
    }
    let t = f64_sqrt(c128__mul(c128__f(0x3fe00000u), c128__add(f64_abs(aa), c128__hypot(aa, bb))));
    let t2 = c128__add(t, t);
    if (!c128__neg(aa)) {
        return c128__mk(c128__mul(t, s), c128__mul(c128__div(bb, t2), s));
    }
    return c128__mk(c128__mul(c128__div(f64_abs(bb), t2), s), c128__mul(f64_copysign(t, bb), s));
}
