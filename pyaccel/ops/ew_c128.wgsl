// requires: ew_f64
// complex128 elementwise library (prefix c128_): a complex128 element is a vec4<u32>, xy = the
// real part and zw = the imaginary part, each a float64 as ew_f64 stores it (low word, high
// word): NumPy's little-endian bytes. Op functions are named c128_<op-table name>; real
// results (abs, real, imag) are vec2<u32> float64s, predicates bool. Private helpers are
// c128__<name>. Everything is built on ew_f64's public, correctly rounded functions.
//
// Arithmetic follows NumPy's complex loops (naive multiply, Smith's division), sqrt is C99's
// csqrt (Kahan, scaled), abs a scaled hypot; special values follow C99 Annex G and the Array
// API 2023.12 special cases; exp, log, pow and the trigonometric / hyperbolic families use
// ew_f64's transcendental functions with ew_c64.wgsl's algorithms.

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

// -- exp, log, pow, trigonometric and hyperbolic functions (over ew_f64's transcendentals) --------
// The same algorithms as ew_c64.wgsl (C99 Annex G special cases, Kahan's inverse functions),
// in float64. ew_f64's sin / cos give NaN past |x| = 1.65e6, so do the functions built on them.
fn c128__k(lo: u32, hi: u32) -> vec2<u32> { return vec2<u32>(lo, hi); }
fn c128__pi() -> vec2<u32> { return c128__k(0x54442d18u, 0x400921fbu); }
fn c128__pi_2() -> vec2<u32> { return c128__k(0x54442d18u, 0x3ff921fbu); }
fn c128__pi_4() -> vec2<u32> { return c128__k(0x54442d18u, 0x3fe921fbu); }
fn c128__3pi_4() -> vec2<u32> { return c128__k(0x7f3321d2u, 0x4002d97cu); }
fn c128__ln2() -> vec2<u32> { return c128__k(0xfefa39efu, 0x3fe62e42u); }
fn c128__half() -> vec2<u32> { return c128__f(0x3fe00000u); }
fn c128__two() -> vec2<u32> { return c128__f(0x40000000u); }
fn c128__isfin2(z: vec4<u32>) -> bool { return f64_isfinite(z.xy) && f64_isfinite(z.zw); }
fn c128__cs(y: vec2<u32>) -> vec4<u32> { return c128__mk(f64_cos(y), f64_sin(y)); }
fn c128__scale(cs: vec4<u32>, h: vec2<u32>) -> vec4<u32> {
    return c128__mk(c128__mul(cs.xy, h), c128__mul(cs.zw, h));
}
// exp(a) * (c, s) where exp(a) may overflow but the products do not (a < 1400)
fn c128__exp_cis(a: vec2<u32>, cs: vec4<u32>) -> vec4<u32> {
    if (c128__lt(c128__f(0x4085e000u), a)) {  // a > 700
        let h = f64_exp(c128__mul(c128__half(), a));
        return c128__scale(c128__scale(cs, h), h);
    }
    return c128__scale(cs, f64_exp(a));
}
// log|x + iy| (not NaN): log1p near |z| = 1, scaled elsewhere
fn c128__logabs(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
    let a = f64_abs(x);
    let b = f64_abs(y);
    let m = f64_maximum(a, b);
    let n = f64_minimum(a, b);
    if (f64_isinf(m)) { return c128__inf(); }
    if (c128__iszero(m)) { return f64_negative(c128__inf()); }
    if (c128__ge(m, c128__half()) && c128__ge(c128__two(), m)) {
        let t = c128__add(c128__mul(c128__sub(m, c128__one()), c128__add(m, c128__one())), c128__mul(n, n));
        return c128__mul(c128__half(), f64_log1p(t));
    }
    let r = c128__div(n, m);
    return c128__add(f64_log(m), c128__mul(c128__half(), f64_log1p(c128__mul(r, r))));
}

fn c128_exp(z: vec4<u32>) -> vec4<u32> {
    let a = z.xy;
    let b = z.zw;
    if (c128__iszero(b)) { return c128__mk(f64_exp(a), b); }
    if (f64_isinf(a)) {
        if (c128__neg(a)) {
            if (!f64_isfinite(b)) { return c128__mk(c128__zero(), c128__zero()); }
            let cs = c128__cs(b);
            return c128__mk(f64_copysign(c128__zero(), cs.xy), f64_copysign(c128__zero(), cs.zw));
        }
        if (!f64_isfinite(b)) { return c128__mk(a, c128__nan()); }
        let cs = c128__cs(b);
        return c128__mk(f64_copysign(a, cs.xy), f64_copysign(a, cs.zw));
    }
    if (f64_isnan(a) || !f64_isfinite(b)) { return c128__nan2(); }
    return c128__exp_cis(a, c128__cs(b));
}

fn c128_expm1(z: vec4<u32>) -> vec4<u32> {
    let a = z.xy;
    let b = z.zw;
    if (!c128__isfin2(z)) {
        let e = c128_exp(z);
        return c128__mk(c128__sub(e.xy, c128__one()), e.zw);
    }
    if (c128__iszero(b)) { return c128__mk(select(f64_expm1(a), c128__zero(), c128__iszero(a)), b); }
    let cs = c128__cs(b);
    let h = f64_sin(c128__mul(c128__half(), b));
    let vers = c128__mul(c128__two(), c128__mul(h, h));  // 1 - cos b without cancellation
    let e = c128__exp_cis(a, cs);
    var re = c128__sub(c128__mul(f64_expm1(a), cs.xy), vers);
    if (c128__lt(c128__f(0x4085e000u), a)) { re = c128__sub(e.xy, c128__one()); }
    return c128__mk(re, e.zw);
}

fn c128_log(z: vec4<u32>) -> vec4<u32> {
    if (c128_isnan(z)) {
        if (c128_isinf(z)) { return c128__mk(c128__inf(), c128__nan()); }
        return c128__nan2();
    }
    return c128__mk(c128__logabs(z.xy, z.zw), f64_atan2(z.zw, z.xy));
}

fn c128_log1p(z: vec4<u32>) -> vec4<u32> {
    let a = z.xy;
    let b = z.zw;
    let u = c128__add(c128__one(), a);
    if (!c128__isfin2(z)) { return c128_log(c128__mk(u, b)); }
    let t = c128__add(c128__mul(a, c128__add(c128__two(), a)), c128__mul(b, b));
    var re = c128__logabs(u, b);
    if (c128__lt(c128__k(0u, 0xbfe80000u), t) && c128__lt(t, c128__f(0x40080000u))) {  // -0.75 < t < 3
        re = c128__mul(c128__half(), f64_log1p(t));
    }
    return c128__mk(re, f64_atan2(b, u));
}

fn c128_log2(z: vec4<u32>) -> vec4<u32> {
    return c128__scale(c128_log(z), c128__k(0x652b82feu, 0x3ff71547u));
}
fn c128_log10(z: vec4<u32>) -> vec4<u32> {
    return c128__scale(c128_log(z), c128__k(0x1526e50du, 0x3fdbcb7bu));
}

// NumPy's complex pow (see ew_c64.wgsl): at most 7 squarings
fn c128_pow(x: vec4<u32>, y: vec4<u32>) -> vec4<u32> {
    if (c128__iszero(y.xy) && c128__iszero(y.zw)) { return c128__mk(c128__one(), c128__zero()); }
    if (c128__iszero(x.xy) && c128__iszero(x.zw)) {
        if (c128__lt(c128__zero(), y.xy)) { return c128__mk(c128__zero(), c128__zero()); }
        return c128__nan2();
    }
    if (c128__iszero(y.zw) && f64_equal(f64_trunc(y.xy), y.xy)
        && c128__lt(f64_abs(y.xy), c128__f(0x40590000u))) {
        let n = f64_to_i32(y.xy);
        if (n == 1) { return x; }
        if (n == 2) { return c128_multiply(x, x); }
        if (n == 3) { return c128_multiply(c128_multiply(x, x), x); }
        var m = u32(abs(n));
        var p = x;
        var r = c128__mk(c128__one(), c128__zero());
        for (var k = 0u; k < 7u; k++) {
            if ((m & 1u) != 0u) { r = c128_multiply(r, p); }
            m = m >> 1u;
            if (m == 0u) { break; }
            p = c128_multiply(p, p);
        }
        if (n < 0) { return c128_reciprocal(r); }
        return r;
    }
    return c128_exp(c128_multiply(y, c128_log(x)));
}

fn c128_sinh(z: vec4<u32>) -> vec4<u32> {
    let x = z.xy;
    let y = z.zw;
    if (c128__isfin2(z)) {
        if (c128__iszero(y)) { return c128__mk(f64_sinh(x), y); }
        let cs = c128__cs(y);
        let ax = f64_abs(x);
        if (c128__lt(ax, c128__f(0x40340000u))) {  // |x| < 20
            return c128__mk(c128__mul(f64_sinh(x), cs.xy), c128__mul(f64_cosh(x), cs.zw));
        }
        let h = c128__exp_cis(c128__sub(ax, c128__ln2()), cs);
        return c128__mk(c128__mul(c128__sgn1(x), h.xy), h.zw);
    }
    if (c128__iszero(x)) { return c128__mk(x, c128__nan()); }
    if (f64_isnan(x)) {
        if (c128__iszero(y)) { return z; }
        return c128__nan2();
    }
    if (f64_isinf(x)) {
        if (c128__iszero(y)) { return z; }
        if (f64_isfinite(y)) {
            let cs = c128__cs(y);
            return c128__mk(c128__mul(x, cs.xy), c128__mul(c128__inf(), cs.zw));
        }
        return c128__mk(x, c128__nan());
    }
    return c128__nan2();
}

fn c128_cosh(z: vec4<u32>) -> vec4<u32> {
    let x = z.xy;
    let y = z.zw;
    if (c128__isfin2(z)) {
        if (c128__iszero(y)) {
            return c128__mk(f64_cosh(x), select(y, f64_negative(y), c128__neg(x)));
        }
        let cs = c128__cs(y);
        let ax = f64_abs(x);
        if (c128__lt(ax, c128__f(0x40340000u))) {
            return c128__mk(c128__mul(f64_cosh(x), cs.xy), c128__mul(f64_sinh(x), cs.zw));
        }
        let h = c128__exp_cis(c128__sub(ax, c128__ln2()), cs);
        return c128__mk(h.xy, c128__mul(c128__sgn1(x), h.zw));
    }
    if (c128__iszero(x)) { return c128__mk(c128__nan(), c128__zero()); }
    if (f64_isnan(x)) {
        if (c128__iszero(y)) { return z; }
        return c128__nan2();
    }
    if (f64_isinf(x)) {
        if (c128__iszero(y)) { return c128__mk(c128__inf(), select(y, f64_negative(y), c128__neg(x))); }
        if (f64_isfinite(y)) {
            let cs = c128__cs(y);
            return c128__mk(c128__mul(c128__inf(), cs.xy), c128__mul(x, cs.zw));
        }
        return c128__mk(c128__inf(), c128__nan());
    }
    return c128__nan2();
}

fn c128_tanh(z: vec4<u32>) -> vec4<u32> {
    let x = z.xy;
    let y = z.zw;
    if (!f64_isfinite(x)) {
        if (f64_isnan(x)) {
            if (c128__iszero(y)) { return z; }
            return c128__nan2();
        }
        return c128__mk(c128__sgn1(x), f64_copysign(c128__zero(), y));
    }
    if (!f64_isfinite(y)) {
        if (c128__iszero(x)) { return c128__mk(x, c128__nan()); }
        return c128__nan2();
    }
    if (c128__iszero(y)) { return c128__mk(f64_tanh(x), y); }
    let cs = c128__cs(y);
    let ax = f64_abs(x);
    if (c128__ge(ax, c128__f(0x40360000u))) {  // |x| >= 22
        let e = f64_exp(f64_negative(ax));
        return c128__mk(c128__sgn1(x), c128__mul(c128__mul(c128__f(0x40100000u), c128__mul(cs.zw, cs.xy)), c128__mul(e, e)));
    }
    let t = c128__div(cs.zw, cs.xy);
    let beta = c128__add(c128__one(), c128__mul(t, t));
    let s = f64_sinh(x);
    let rho = f64_sqrt(c128__add(c128__one(), c128__mul(s, s)));
    let den = c128__add(c128__one(), c128__mul(beta, c128__mul(s, s)));
    return c128__mk(c128__div(c128__mul(c128__mul(beta, rho), s), den), c128__div(t, den));
}

fn c128__i(z: vec4<u32>) -> vec4<u32> { return c128__mk(f64_negative(z.zw), z.xy); }   // iz
fn c128__mi(w: vec4<u32>) -> vec4<u32> { return c128__mk(w.zw, f64_negative(w.xy)); }  // -iw
fn c128_sin(z: vec4<u32>) -> vec4<u32> { return c128__mi(c128_sinh(c128__i(z))); }
fn c128_cos(z: vec4<u32>) -> vec4<u32> { return c128_cosh(c128__i(z)); }
fn c128_tan(z: vec4<u32>) -> vec4<u32> { return c128__mi(c128_tanh(c128__i(z))); }

fn c128__asin_fin(z: vec4<u32>) -> vec4<u32> {
    let s1 = c128_sqrt(c128__mk(c128__sub(c128__one(), z.xy), f64_negative(z.zw)));
    let s2 = c128_sqrt(c128__mk(c128__add(c128__one(), z.xy), z.zw));
    return c128__mk(f64_atan2(z.xy, c128__sub(c128__mul(s1.xy, s2.xy), c128__mul(s1.zw, s2.zw))),
                    f64_asinh(c128__sub(c128__mul(s1.xy, s2.zw), c128__mul(s1.zw, s2.xy))));
}

fn c128_asinh(z: vec4<u32>) -> vec4<u32> {
    let a = z.xy;
    let b = z.zw;
    if (c128__isfin2(z)) { return c128__mi(c128__asin_fin(c128__i(z))); }
    let x = f64_abs(a);
    let y = f64_abs(b);
    var r: vec4<u32>;
    if (f64_isnan(x)) {
        if (c128__iszero(y)) { return z; }
        if (f64_isinf(y)) { return c128__mk(c128__inf(), c128__nan()); }
        return c128__nan2();
    }
    if (f64_isinf(x)) {
        if (f64_isnan(y)) { r = c128__mk(c128__inf(), c128__nan()); }
        else if (f64_isinf(y)) { r = c128__mk(c128__inf(), c128__pi_4()); }
        else { r = c128__mk(c128__inf(), c128__zero()); }
    } else {
        if (f64_isnan(y)) { return c128__nan2(); }
        r = c128__mk(c128__inf(), c128__pi_2());
    }
    return c128__mk(f64_copysign(r.xy, a), f64_copysign(r.zw, b));
}

fn c128_asin(z: vec4<u32>) -> vec4<u32> {
    if (c128__isfin2(z)) { return c128__asin_fin(z); }
    return c128__mi(c128_asinh(c128__i(z)));
}

fn c128_acos(z: vec4<u32>) -> vec4<u32> {
    let a = z.xy;
    let b = z.zw;
    if (c128__isfin2(z)) {
        let s1 = c128_sqrt(c128__mk(c128__sub(c128__one(), a), f64_negative(b)));
        let s2 = c128_sqrt(c128__mk(c128__add(c128__one(), a), b));
        return c128__mk(c128__mul(c128__two(), f64_atan2(s1.xy, s2.xy)),
                        f64_asinh(c128__sub(c128__mul(s2.xy, s1.zw), c128__mul(s2.zw, s1.xy))));
    }
    if (f64_isnan(a)) {
        if (f64_isinf(b)) { return c128__mk(c128__nan(), f64_negative(b)); }
        return c128__nan2();
    }
    if (f64_isnan(b)) {
        if (f64_isinf(a)) { return c128__mk(c128__nan(), c128__inf()); }
        if (c128__iszero(a)) { return c128__mk(c128__pi_2(), b); }
        return c128__nan2();
    }
    if (f64_isinf(b)) {
        if (f64_isinf(a)) { return c128__mk(select(c128__pi_4(), c128__3pi_4(), c128__neg(a)), f64_negative(b)); }
        return c128__mk(c128__pi_2(), f64_negative(b));
    }
    return c128__mk(select(c128__zero(), c128__pi(), c128__neg(a)), f64_copysign(c128__inf(), f64_negative(b)));
}

fn c128_acosh(z: vec4<u32>) -> vec4<u32> {
    let a = z.xy;
    let b = z.zw;
    if (c128__isfin2(z)) {
        let s1 = c128_sqrt(c128__mk(c128__sub(a, c128__one()), b));
        let s2 = c128_sqrt(c128__mk(c128__add(a, c128__one()), b));
        return c128__mk(f64_asinh(c128__add(c128__mul(s1.xy, s2.xy), c128__mul(s1.zw, s2.zw))),
                        c128__mul(c128__two(), f64_atan2(s1.zw, s2.xy)));
    }
    if (f64_isnan(a)) {
        if (f64_isinf(b)) { return c128__mk(c128__inf(), c128__nan()); }
        return c128__nan2();
    }
    if (f64_isnan(b)) {
        if (f64_isinf(a)) { return c128__mk(c128__inf(), c128__nan()); }
        if (c128__iszero(a)) { return c128__mk(c128__nan(), c128__pi_2()); }
        return c128__nan2();
    }
    if (f64_isinf(b)) {
        if (f64_isinf(a)) {
            return c128__mk(c128__inf(), f64_copysign(select(c128__pi_4(), c128__3pi_4(), c128__neg(a)), b));
        }
        return c128__mk(c128__inf(), f64_copysign(c128__pi_2(), b));
    }
    return c128__mk(c128__inf(), f64_copysign(select(c128__zero(), c128__pi(), c128__neg(a)), b));
}

fn c128_atanh(z: vec4<u32>) -> vec4<u32> {
    let a = z.xy;
    let b = z.zw;
    let x = f64_abs(a);
    let y = f64_abs(b);
    var r: vec4<u32>;
    if (f64_isnan(x)) {
        if (f64_isinf(y)) { r = c128__mk(c128__zero(), c128__pi_2()); } else { return c128__nan2(); }
    } else if (f64_isnan(y)) {
        if (f64_isinf(x) || c128__iszero(x)) { r = c128__mk(c128__zero(), c128__nan()); } else { return c128__nan2(); }
    } else if (f64_isinf(x) || f64_isinf(y)) {
        r = c128__mk(c128__zero(), c128__pi_2());
    } else if (f64_equal(x, c128__one()) && c128__iszero(y)) {
        r = c128__mk(c128__inf(), c128__zero());
    } else if (c128__lt(c128__k(0x2e5096afu, 0x5f138d35u), f64_maximum(x, y))) {  // > 1e150: 1 / z
        let m = f64_maximum(x, y);
        let xs = c128__div(x, m);
        let ys = c128__div(y, m);
        r = c128__mk(c128__div(c128__div(xs, c128__add(c128__mul(xs, xs), c128__mul(ys, ys))), m), c128__pi_2());
    } else {
        let omx = c128__sub(c128__one(), x);
        let d = c128__add(c128__mul(omx, omx), c128__mul(y, y));
        var re = c128__mul(c128__f(0x3fd00000u), f64_log1p(c128__div(c128__mul(c128__f(0x40100000u), x), d)));
        if (c128__lt(d, c128__k(0xa0b5ed8du, 0x3eb0c6f7u))) {  // d < 1e-6: log(4x) - 2 log|1 - z|
            re = c128__mul(c128__f(0x3fd00000u), c128__sub(f64_log(c128__mul(c128__f(0x40100000u), x)),
                                                           c128__mul(c128__two(), c128__logabs(omx, y))));
        }
        let im = c128__mul(c128__half(), f64_atan2(c128__add(y, y),
                                                   c128__sub(c128__mul(omx, c128__add(c128__one(), x)), c128__mul(y, y))));
        r = c128__mk(re, im);
    }
    return c128__mk(f64_copysign(r.xy, a), f64_copysign(r.zw, b));
}

fn c128_atan(z: vec4<u32>) -> vec4<u32> { return c128__mi(c128_atanh(c128__i(z))); }
