// Stockham autosort FFT passes over complex64 data (interleaved re/im: vec2<f32>, the
// storage of pyaccel.complex64), batched over every other axis of the array.
//
// The launcher (ops/fft_wgsl.py) prefixes:
//   alias SRC = vec2<f32>;  fn ld_src(i: u32) -> vec2<f32>   (or f32: a real input, imag 0)
//   alias DST = vec2<f32>;  fn st_dst(i: u32, v: vec2<f32>)  (or f32: the real part is kept)
//
// Data of one transform ("line") is element k of the axis at (o * axis_len + k) * inner + c,
// o < outer, c < inner: the array viewed as (outer, axis_len, inner), so any axis of a
// C-contiguous array is transformed in place of the layout, without a transpose.
//
// One dispatch is one pass of radix R over every line: thread i < n / R of a line loads
// x[i + j * n/R] (j < R), multiplies by the twiddles w^(j*k), k = i mod p, does a DFT of
// size R and stores to y[(i - k) * R + k + r * p]; p (the size of the sub-transforms
// already done) grows by R per pass, and the result is in natural order (Stockham). The
// twiddle table tw[m] = exp(-2 pi i m / n) comes from the host (float64 rounded once);
// the inverse conjugates it (sign = +1).
//
// The first pass reads the caller's input: its own axis length (in_axis; zero padding
// past in_valid, trimming by not reading), optionally a half spectrum expanded to its
// Hermitian full length (herm_n > 0: x[n - k]* for k > n/2, the inverse real FFT), then
// conjugated (in_flags bit 0) and multiplied by a table aux_in[k] (bit 1; Bluestein's chirp).
// The last pass writes the caller's output: only k < out_valid, times scale, times
// aux_out[k] (out_flags bit 1), conjugated (bit 0). Passes in between have plain
// parameters. No loops: every invocation does one butterfly.

override WG: u32 = 256;

struct P {
    n: u32,          // FFT length (a power of two)
    t: u32,          // n / R: threads per line
    p: u32,          // span of the sub-transforms done before this pass
    step: u32,       // n / (p * R): stride in the twiddle table
    inner: u32,
    total: u32,      // outer * t * inner threads
    in_axis: u32,
    in_valid: u32,
    herm_n: u32,
    in_flags: u32,
    out_axis: u32,
    out_valid: u32,
    out_flags: u32,
    sign: f32,       // -1 forward, +1 inverse
    scale: f32,
    tshift: u32,     // log2(t)
}

@group(0) @binding(0) var<storage, read> src: array<SRC>;
@group(0) @binding(1) var<storage, read_write> dst: array<DST>;
@group(0) @binding(2) var<storage, read> tw: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> aux_in: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read> aux_out: array<vec2<f32>>;
@group(0) @binding(5) var<uniform> prm: P;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

fn twiddle(m: u32) -> vec2<f32> {
    let w = tw[m];
    return vec2<f32>(w.x, -prm.sign * w.y);
}

fn load(o: u32, c: u32, k: u32) -> vec2<f32> {
    var kk = k;
    var cj = false;
    if (prm.herm_n > 0u) {
        if (k >= prm.herm_n) {
            return vec2<f32>(0.0, 0.0);
        }
        if (2u * k > prm.herm_n) {
            kk = prm.herm_n - k;
            cj = true;
        }
    }
    if (kk >= prm.in_valid) {
        return vec2<f32>(0.0, 0.0);
    }
    var v = ld_src((o * prm.in_axis + kk) * prm.inner + c);
    if (cj != ((prm.in_flags & 1u) != 0u)) {
        v.y = -v.y;
    }
    if ((prm.in_flags & 2u) != 0u) {
        v = cmul(v, aux_in[k]);
    }
    return v;
}

fn store(o: u32, c: u32, k: u32, v: vec2<f32>) {
    if (k >= prm.out_valid) {
        return;
    }
    var w = v * prm.scale;
    if ((prm.out_flags & 2u) != 0u) {
        w = cmul(w, aux_out[k]);
    }
    if ((prm.out_flags & 1u) != 0u) {
        w.y = -w.y;
    }
    st_dst((o * prm.out_axis + k) * prm.inner + c, w);
}

// (o, c, i) of thread g; false past the end
fn coords(gid: vec3<u32>, nwg: vec3<u32>) -> vec4<u32> {
    let g = gid.x + gid.y * (nwg.x * WG);
    if (g >= prm.total) {
        return vec4<u32>(0u, 0u, 0u, 0u);
    }
    var c = 0u;
    var r = g;
    if (prm.inner != 1u) {  // (integer division is slow on software GPUs: only when needed)
        c = g % prm.inner;
        r = g / prm.inner;
    }
    return vec4<u32>(r >> prm.tshift, c, r & (prm.t - 1u), 1u);
}

@compute @workgroup_size(WG)
fn pass4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let q = coords(gid, nwg);
    if (q.w == 0u) {
        return;
    }
    let o = q.x;
    let c = q.y;
    let i = q.z;
    let t = prm.t;
    let k = i & (prm.p - 1u);
    let a0 = load(o, c, i);
    var a1 = load(o, c, i + t);
    var a2 = load(o, c, i + 2u * t);
    var a3 = load(o, c, i + 3u * t);
    if (k != 0u) {
        let m = k * prm.step;
        a1 = cmul(a1, twiddle(m));
        a2 = cmul(a2, twiddle(2u * m));
        a3 = cmul(a3, twiddle(3u * m));
    }
    let s0 = a0 + a2;
    let s1 = a0 - a2;
    let s2 = a1 + a3;
    let d = a1 - a3;
    let s3 = vec2<f32>(-d.y, d.x) * prm.sign;  // sign * i * (a1 - a3)
    let base = (i - k) * 4u + k;
    let p = prm.p;
    store(o, c, base, s0 + s2);
    store(o, c, base + p, s1 + s3);
    store(o, c, base + 2u * p, s0 - s2);
    store(o, c, base + 3u * p, s1 - s3);
}

@compute @workgroup_size(WG)
fn pass2(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let q = coords(gid, nwg);
    if (q.w == 0u) {
        return;
    }
    let o = q.x;
    let c = q.y;
    let i = q.z;
    let k = i & (prm.p - 1u);
    let a0 = load(o, c, i);
    var a1 = load(o, c, i + prm.t);
    if (k != 0u) {
        a1 = cmul(a1, twiddle(k * prm.step));
    }
    let base = (i - k) * 2u + k;
    store(o, c, base, a0 + a1);
    store(o, c, base + prm.p, a0 - a1);
}

fn dft4(a: array<vec2<f32>, 4>) -> array<vec2<f32>, 4> {
    let s0 = a[0] + a[2];
    let s1 = a[0] - a[2];
    let s2 = a[1] + a[3];
    let d = a[1] - a[3];
    let s3 = vec2<f32>(-d.y, d.x) * prm.sign;
    return array<vec2<f32>, 4>(s0 + s2, s1 + s3, s0 - s2, s1 - s3);
}

// cos / sin of 2 pi m / 16 for m = j2 * r1 (j2, r1 < 4), float64 values rounded once
const W16_RE = array<f32, 10>(1.0, 0.92387953251128674, 0.70710678118654752, 0.38268343236508978, 0.0,
                              0.0, -0.70710678118654752, 0.0, 0.0, -0.92387953251128674);
const W16_IM = array<f32, 10>(0.0, 0.38268343236508978, 0.70710678118654752, 0.92387953251128674, 1.0,
                              0.0, 0.70710678118654752, 0.0, 0.0, -0.38268343236508978);

// radix 16 as 4 x 4: j = 4 j1 + j2, r = r1 + 4 r2; DFT4 over j1, the internal twiddles
// W16^(j2 r1), DFT4 over j2 (fixed 4- and 16-trip loops: 56 iterations per invocation)
@compute @workgroup_size(WG)
fn pass16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let q = coords(gid, nwg);
    if (q.w == 0u) {
        return;
    }
    let o = q.x;
    let c = q.y;
    let i = q.z;
    let t = prm.t;
    let k = i & (prm.p - 1u);
    var a: array<vec2<f32>, 16>;
    for (var j = 0u; j < 16u; j++) {
        a[j] = load(o, c, i + j * t);
    }
    if (k != 0u) {
        let m = k * prm.step;
        for (var j = 1u; j < 16u; j++) {
            a[j] = cmul(a[j], twiddle(j * m));
        }
    }
    var b: array<array<vec2<f32>, 4>, 4>;
    for (var j2 = 0u; j2 < 4u; j2++) {
        b[j2] = dft4(array<vec2<f32>, 4>(a[j2], a[4u + j2], a[8u + j2], a[12u + j2]));
        for (var r1 = 1u; r1 < 4u; r1++) {
            let mm = j2 * r1;
            b[j2][r1] = cmul(b[j2][r1], vec2<f32>(W16_RE[mm], prm.sign * W16_IM[mm]));
        }
    }
    let base = (i - k) * 16u + k;
    let p = prm.p;
    for (var r1 = 0u; r1 < 4u; r1++) {
        let x = dft4(array<vec2<f32>, 4>(b[0][r1], b[1][r1], b[2][r1], b[3][r1]));
        for (var r2 = 0u; r2 < 4u; r2++) {
            store(o, c, base + (r1 + 4u * r2) * p, x[r2]);
        }
    }
}

// n == 1: copy (padding, conjugation, tables and scale as configured)
@compute @workgroup_size(WG)
fn pass1(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let q = coords(gid, nwg);
    if (q.w == 0u) {
        return;
    }
    _ = tw[0];  // keeps the binding layout of the other passes
    store(q.x, q.y, 0u, load(q.x, q.y, 0u));
}
