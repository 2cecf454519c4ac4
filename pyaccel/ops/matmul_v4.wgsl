// Batched matrix product with vec4 loads and stores (same contract and Params as
// matmul.wgsl; needs K and N multiples of 4 and batch strides multiples of 4, so that
// every row of a, b and out starts on a vec4). T = A = O-lane type: f32, i32 or u32.
//
//   v4x4 : a workgroup of 64 threads (8 x 8) covers a 32 x 32 output tile; thread (tx, ty)
//          owns rows m0 + ty + 8 i (i < 4) and the 4 adjacent columns n0 + 4 tx ..; each
//          step of its k loop covers 4 values of k: 4 vec4 loads of a (along k), 4 of b
//          (along n), 64 multiply-adds in registers.
//   v8x4 : the same with 8 rows per thread (a 64 x 32 tile): 12 vec4 loads for 128.
//
// No workgroup memory (on CPU-like adapters the caches do its work, and barriers cost).
// Loads past M or N are clamped to the last row / vec4 column (in bounds, never stored), so
// the k loop has no branches. K chunks as in matmul.wgsl: P.kc (a multiple of 4) values of
// k per invocation, i.e. kc / 4 loop iterations.

struct Params {
    M: u32,
    K: u32,
    N: u32,
    batch: u32,
    sa: u32,
    sb: u32,
    tiles_m: u32,
    tiles_n: u32,
    total: u32,
    kc: u32,
    c0: u32,
    s0: u32,
    nkc: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> a: array<vec4<T>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<T>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<O>>;
@group(0) @binding(3) var<uniform> P: Params;

struct Tile {
    arow: u32,   // vec4 index of row m (clamped) of a at k = 0 is arow + m * K / 4
    brow: u32,
    orow: u32,
    k4beg: u32,
    k4end: u32,
    m: u32,
    n4: u32,     // vec4 column of this thread (unclamped)
}

fn tile_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, rows: u32) -> Tile {
    let g = wid.x + wid.y * nwg.x;
    let tn = g % P.tiles_n;
    let r = g / P.tiles_n;
    let tm = r % P.tiles_m;
    let r2 = r / P.tiles_m;
    let bz = r2 % P.batch;
    let ci = r2 / P.batch;
    let kbeg = (P.c0 + ci) * P.kc;
    let kend = min(P.K, kbeg + P.kc);
    return Tile(bz * P.sa / 4u, bz * P.sb / 4u, ((P.s0 + ci) * P.batch + bz) * P.M * P.N / 4u,
                kbeg / 4u, kend / 4u, tm * rows + lid / 8u, tn * 8u + lid % 8u);
}

fn ld_a(t: Tile, m: u32, k4: u32) -> vec4<T> {
    return a[t.arow + min(m, P.M - 1u) * (P.K / 4u) + k4];
}

fn st(t: Tile, m: u32, v: vec4<T>) {
    if m < P.M && t.n4 < P.N / 4u {
        out[t.orow + m * (P.N / 4u) + t.n4] = vec4<O>(v);
    }
}

@compute @workgroup_size(64)
fn v4x4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    if wid.x + wid.y * nwg.x >= P.total {
        return;
    }
    let t = tile_of(wid, nwg, lid, 32u);
    let n4 = P.N / 4u;
    let bcol = t.brow + min(t.n4, n4 - 1u);
    var c0 = vec4<T>(); var c1 = vec4<T>(); var c2 = vec4<T>(); var c3 = vec4<T>();
    for (var k4 = t.k4beg; k4 < t.k4end; k4 += 1u) {
        let bi = bcol + 4u * k4 * n4;
        let b0 = b[bi];
        let b1 = b[bi + n4];
        let b2 = b[bi + 2u * n4];
        let b3 = b[bi + 3u * n4];
        let a0 = ld_a(t, t.m, k4);
        let a1 = ld_a(t, t.m + 8u, k4);
        let a2 = ld_a(t, t.m + 16u, k4);
        let a3 = ld_a(t, t.m + 24u, k4);
        c0 += a0.x * b0 + a0.y * b1 + a0.z * b2 + a0.w * b3;
        c1 += a1.x * b0 + a1.y * b1 + a1.z * b2 + a1.w * b3;
        c2 += a2.x * b0 + a2.y * b1 + a2.z * b2 + a2.w * b3;
        c3 += a3.x * b0 + a3.y * b1 + a3.z * b2 + a3.w * b3;
    }
    st(t, t.m, c0);
    st(t, t.m + 8u, c1);
    st(t, t.m + 16u, c2);
    st(t, t.m + 24u, c3);
}

@compute @workgroup_size(64)
fn v8x4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    if wid.x + wid.y * nwg.x >= P.total {
        return;
    }
    let t = tile_of(wid, nwg, lid, 64u);
    let n4 = P.N / 4u;
    let bcol = t.brow + min(t.n4, n4 - 1u);
    var c0 = vec4<T>(); var c1 = vec4<T>(); var c2 = vec4<T>(); var c3 = vec4<T>();
    var c4 = vec4<T>(); var c5 = vec4<T>(); var c6 = vec4<T>(); var c7 = vec4<T>();
    for (var k4 = t.k4beg; k4 < t.k4end; k4 += 1u) {
        let bi = bcol + 4u * k4 * n4;
        let b0 = b[bi];
        let b1 = b[bi + n4];
        let b2 = b[bi + 2u * n4];
        let b3 = b[bi + 3u * n4];
        let a0 = ld_a(t, t.m, k4);
        let a1 = ld_a(t, t.m + 8u, k4);
        let a2 = ld_a(t, t.m + 16u, k4);
        let a3 = ld_a(t, t.m + 24u, k4);
        c0 += a0.x * b0 + a0.y * b1 + a0.z * b2 + a0.w * b3;
        c1 += a1.x * b0 + a1.y * b1 + a1.z * b2 + a1.w * b3;
        c2 += a2.x * b0 + a2.y * b1 + a2.z * b2 + a2.w * b3;
        c3 += a3.x * b0 + a3.y * b1 + a3.z * b2 + a3.w * b3;
        let a4 = ld_a(t, t.m + 32u, k4);
        let a5 = ld_a(t, t.m + 40u, k4);
        let a6 = ld_a(t, t.m + 48u, k4);
        let a7 = ld_a(t, t.m + 56u, k4);
        c4 += a4.x * b0 + a4.y * b1 + a4.z * b2 + a4.w * b3;
        c5 += a5.x * b0 + a5.y * b1 + a5.z * b2 + a5.w * b3;
        c6 += a6.x * b0 + a6.y * b1 + a6.z * b2 + a6.w * b3;
        c7 += a7.x * b0 + a7.y * b1 + a7.z * b2 + a7.w * b3;
    }
    st(t, t.m, c0);
    st(t, t.m + 8u, c1);
    st(t, t.m + 16u, c2);
    st(t, t.m + 24u, c3);
    st(t, t.m + 32u, c4);
    st(t, t.m + 40u, c5);
    st(t, t.m + 48u, c6);
    st(t, t.m + 56u, c7);
}

// u16x4: a workgroup of 32 threads covers 16 rows x 128 columns; the rows depend on the
// workgroup only (uniform: the a loads are one scalar load broadcast to the SIMD lanes on
// CPU-like adapters), each thread owns the vec4 column n0 + 4 lid of the 16 rows: per step
// of 4 k, 16 uniform vec4 loads of a and 4 vec4 loads of b for 256 multiply-adds.
@compute @workgroup_size(32)
fn u16x4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if g >= P.total {
        return;
    }
    let tn = g % P.tiles_n;
    let r = g / P.tiles_n;
    let tm = r % P.tiles_m;
    let r2 = r / P.tiles_m;
    let bz = r2 % P.batch;
    let ci = r2 / P.batch;
    let kbeg = (P.c0 + ci) * P.kc;
    let k4beg = kbeg / 4u;
    let k4end = min(P.K, kbeg + P.kc) / 4u;
    let n4 = P.N / 4u;
    let k4n = P.K / 4u;
    let my4 = tn * 32u + lid;
    let bcol = bz * P.sb / 4u + min(my4, n4 - 1u);
    let m0 = tm * 16u;
    let last = P.M - 1u;
    let ar = bz * P.sa / 4u;
    var rows: array<u32, 16>;
    for (var i = 0u; i < 16u; i += 1u) {
        rows[i] = ar + min(m0 + i, last) * k4n;
    }
    var c: array<vec4<T>, 16>;
    for (var k4 = k4beg; k4 < k4end; k4 += 1u) {
        let bi = bcol + 4u * k4 * n4;
        let b0 = b[bi];
        let b1 = b[bi + n4];
        let b2 = b[bi + 2u * n4];
        let b3 = b[bi + 3u * n4];
        for (var i = 0u; i < 16u; i += 1u) {
            let av = a[rows[i] + k4];
            c[i] += av.x * b0 + av.y * b1 + av.z * b2 + av.w * b3;
        }
    }
    if my4 >= n4 {
        return;
    }
    let ob = ((P.s0 + ci) * P.batch + bz) * P.M * n4 + my4;
    for (var i = 0u; i < 16u; i += 1u) {
        if m0 + i < P.M {
            out[ob + (m0 + i) * n4] = vec4<O>(c[i]);
        }
    }
}

// u16x8, u16x16: u16x4 with more columns per thread, R rows x 4 C columns per
// thread (vec4 columns my4 + 32 j, j < C, my4 = 32 C tn + lid), every accumulator and offset
// a named value (generated code: the rows are workgroup-uniform as in u16x4). On lavapipe
// every storage load, uniform or not, is a loop over the 8 SIMD lanes (about 8 cycles a
// lane: mask test, bounds check, scalar load, insert through the stack; perf profile in
// docs/performance.md), so the time goes with the loaded scalars per multiply-add: per step
// of 4 k a thread loads 4 R (a) + 16 C (b) scalars for 16 R C multiply-adds: u16x4 3.2
// multiply-adds a scalar, u16x8 5.3, u16x16 8 (more accumulators: longer compiles, 1.2 and
// 3 s first call on a loaded 2-core VM; a u32x16, 10.7, ran 2.9x u16x4 but took 8-10 s).
@compute @workgroup_size(32)
fn u16x8(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if g >= P.total {
        return;
    }
    let tn = g % P.tiles_n;
    let r = g / P.tiles_n;
    let tm = r % P.tiles_m;
    let r2 = r / P.tiles_m;
    let bz = r2 % P.batch;
    let ci = r2 / P.batch;
    let kbeg = (P.c0 + ci) * P.kc;
    let k4beg = kbeg / 4u;
    let k4end = min(P.K, kbeg + P.kc) / 4u;
    let n4 = P.N / 4u;
    let k4n = P.K / 4u;
    let my4 = tn * 64u + lid;
    let bb = bz * P.sb / 4u;
    let bc0 = bb + min(my4 + 0u, n4 - 1u);
    let bc1 = bb + min(my4 + 32u, n4 - 1u);
    let m0 = tm * 16u;
    let last = P.M - 1u;
    let ar = bz * P.sa / 4u;
    let ra0 = ar + min(m0 + 0u, last) * k4n;
    let ra1 = ar + min(m0 + 1u, last) * k4n;
    let ra2 = ar + min(m0 + 2u, last) * k4n;
    let ra3 = ar + min(m0 + 3u, last) * k4n;
    let ra4 = ar + min(m0 + 4u, last) * k4n;
    let ra5 = ar + min(m0 + 5u, last) * k4n;
    let ra6 = ar + min(m0 + 6u, last) * k4n;
    let ra7 = ar + min(m0 + 7u, last) * k4n;
    let ra8 = ar + min(m0 + 8u, last) * k4n;
    let ra9 = ar + min(m0 + 9u, last) * k4n;
    let ra10 = ar + min(m0 + 10u, last) * k4n;
    let ra11 = ar + min(m0 + 11u, last) * k4n;
    let ra12 = ar + min(m0 + 12u, last) * k4n;
    let ra13 = ar + min(m0 + 13u, last) * k4n;
    let ra14 = ar + min(m0 + 14u, last) * k4n;
    let ra15 = ar + min(m0 + 15u, last) * k4n;
    var c0_0 = vec4<T>(); var c0_1 = vec4<T>();
    var c1_0 = vec4<T>(); var c1_1 = vec4<T>();
    var c2_0 = vec4<T>(); var c2_1 = vec4<T>();
    var c3_0 = vec4<T>(); var c3_1 = vec4<T>();
    var c4_0 = vec4<T>(); var c4_1 = vec4<T>();
    var c5_0 = vec4<T>(); var c5_1 = vec4<T>();
    var c6_0 = vec4<T>(); var c6_1 = vec4<T>();
    var c7_0 = vec4<T>(); var c7_1 = vec4<T>();
    var c8_0 = vec4<T>(); var c8_1 = vec4<T>();
    var c9_0 = vec4<T>(); var c9_1 = vec4<T>();
    var c10_0 = vec4<T>(); var c10_1 = vec4<T>();
    var c11_0 = vec4<T>(); var c11_1 = vec4<T>();
    var c12_0 = vec4<T>(); var c12_1 = vec4<T>();
    var c13_0 = vec4<T>(); var c13_1 = vec4<T>();
    var c14_0 = vec4<T>(); var c14_1 = vec4<T>();
    var c15_0 = vec4<T>(); var c15_1 = vec4<T>();
    for (var k4 = k4beg; k4 < k4end; k4 += 1u) {
        let kb = 4u * k4 * n4;
        let b0_0 = b[bc0 + kb];
        let b1_0 = b[bc0 + kb + 1u * n4];
        let b2_0 = b[bc0 + kb + 2u * n4];
        let b3_0 = b[bc0 + kb + 3u * n4];
        let b0_1 = b[bc1 + kb];
        let b1_1 = b[bc1 + kb + 1u * n4];
        let b2_1 = b[bc1 + kb + 2u * n4];
        let b3_1 = b[bc1 + kb + 3u * n4];
        let a0 = a[ra0 + k4];
        c0_0 += a0.x * b0_0 + a0.y * b1_0 + a0.z * b2_0 + a0.w * b3_0;
        c0_1 += a0.x * b0_1 + a0.y * b1_1 + a0.z * b2_1 + a0.w * b3_1;
        let a1 = a[ra1 + k4];
        c1_0 += a1.x * b0_0 + a1.y * b1_0 + a1.z * b2_0 + a1.w * b3_0;
        c1_1 += a1.x * b0_1 + a1.y * b1_1 + a1.z * b2_1 + a1.w * b3_1;
        let a2 = a[ra2 + k4];
        c2_0 += a2.x * b0_0 + a2.y * b1_0 + a2.z * b2_0 + a2.w * b3_0;
        c2_1 += a2.x * b0_1 + a2.y * b1_1 + a2.z * b2_1 + a2.w * b3_1;
        let a3 = a[ra3 + k4];
        c3_0 += a3.x * b0_0 + a3.y * b1_0 + a3.z * b2_0 + a3.w * b3_0;
        c3_1 += a3.x * b0_1 + a3.y * b1_1 + a3.z * b2_1 + a3.w * b3_1;
        let a4 = a[ra4 + k4];
        c4_0 += a4.x * b0_0 + a4.y * b1_0 + a4.z * b2_0 + a4.w * b3_0;
        c4_1 += a4.x * b0_1 + a4.y * b1_1 + a4.z * b2_1 + a4.w * b3_1;
        let a5 = a[ra5 + k4];
        c5_0 += a5.x * b0_0 + a5.y * b1_0 + a5.z * b2_0 + a5.w * b3_0;
        c5_1 += a5.x * b0_1 + a5.y * b1_1 + a5.z * b2_1 + a5.w * b3_1;
        let a6 = a[ra6 + k4];
        c6_0 += a6.x * b0_0 + a6.y * b1_0 + a6.z * b2_0 + a6.w * b3_0;
        c6_1 += a6.x * b0_1 + a6.y * b1_1 + a6.z * b2_1 + a6.w * b3_1;
        let a7 = a[ra7 + k4];
        c7_0 += a7.x * b0_0 + a7.y * b1_0 + a7.z * b2_0 + a7.w * b3_0;
        c7_1 += a7.x * b0_1 + a7.y * b1_1 + a7.z * b2_1 + a7.w * b3_1;
        let a8 = a[ra8 + k4];
        c8_0 += a8.x * b0_0 + a8.y * b1_0 + a8.z * b2_0 + a8.w * b3_0;
        c8_1 += a8.x * b0_1 + a8.y * b1_1 + a8.z * b2_1 + a8.w * b3_1;
        let a9 = a[ra9 + k4];
        c9_0 += a9.x * b0_0 + a9.y * b1_0 + a9.z * b2_0 + a9.w * b3_0;
        c9_1 += a9.x * b0_1 + a9.y * b1_1 + a9.z * b2_1 + a9.w * b3_1;
        let a10 = a[ra10 + k4];
        c10_0 += a10.x * b0_0 + a10.y * b1_0 + a10.z * b2_0 + a10.w * b3_0;
        c10_1 += a10.x * b0_1 + a10.y * b1_1 + a10.z * b2_1 + a10.w * b3_1;
        let a11 = a[ra11 + k4];
        c11_0 += a11.x * b0_0 + a11.y * b1_0 + a11.z * b2_0 + a11.w * b3_0;
        c11_1 += a11.x * b0_1 + a11.y * b1_1 + a11.z * b2_1 + a11.w * b3_1;
        let a12 = a[ra12 + k4];
        c12_0 += a12.x * b0_0 + a12.y * b1_0 + a12.z * b2_0 + a12.w * b3_0;
        c12_1 += a12.x * b0_1 + a12.y * b1_1 + a12.z * b2_1 + a12.w * b3_1;
        let a13 = a[ra13 + k4];
        c13_0 += a13.x * b0_0 + a13.y * b1_0 + a13.z * b2_0 + a13.w * b3_0;
        c13_1 += a13.x * b0_1 + a13.y * b1_1 + a13.z * b2_1 + a13.w * b3_1;
        let a14 = a[ra14 + k4];
        c14_0 += a14.x * b0_0 + a14.y * b1_0 + a14.z * b2_0 + a14.w * b3_0;
        c14_1 += a14.x * b0_1 + a14.y * b1_1 + a14.z * b2_1 + a14.w * b3_1;
        let a15 = a[ra15 + k4];
        c15_0 += a15.x * b0_0 + a15.y * b1_0 + a15.z * b2_0 + a15.w * b3_0;
        c15_1 += a15.x * b0_1 + a15.y * b1_1 + a15.z * b2_1 + a15.w * b3_1;
    }
    let ob = ((P.s0 + ci) * P.batch + bz) * P.M * n4;
    let o0 = my4 + 0u;
    if o0 < n4 {
        if m0 + 0u < P.M { out[ob + (m0 + 0u) * n4 + o0] = vec4<O>(c0_0); }
        if m0 + 1u < P.M { out[ob + (m0 + 1u) * n4 + o0] = vec4<O>(c1_0); }
        if m0 + 2u < P.M { out[ob + (m0 + 2u) * n4 + o0] = vec4<O>(c2_0); }
        if m0 + 3u < P.M { out[ob + (m0 + 3u) * n4 + o0] = vec4<O>(c3_0); }
        if m0 + 4u < P.M { out[ob + (m0 + 4u) * n4 + o0] = vec4<O>(c4_0); }
        if m0 + 5u < P.M { out[ob + (m0 + 5u) * n4 + o0] = vec4<O>(c5_0); }
        if m0 + 6u < P.M { out[ob + (m0 + 6u) * n4 + o0] = vec4<O>(c6_0); }
        if m0 + 7u < P.M { out[ob + (m0 + 7u) * n4 + o0] = vec4<O>(c7_0); }
        if m0 + 8u < P.M { out[ob + (m0 + 8u) * n4 + o0] = vec4<O>(c8_0); }
        if m0 + 9u < P.M { out[ob + (m0 + 9u) * n4 + o0] = vec4<O>(c9_0); }
        if m0 + 10u < P.M { out[ob + (m0 + 10u) * n4 + o0] = vec4<O>(c10_0); }
        if m0 + 11u < P.M { out[ob + (m0 + 11u) * n4 + o0] = vec4<O>(c11_0); }
        if m0 + 12u < P.M { out[ob + (m0 + 12u) * n4 + o0] = vec4<O>(c12_0); }
        if m0 + 13u < P.M { out[ob + (m0 + 13u) * n4 + o0] = vec4<O>(c13_0); }
        if m0 + 14u < P.M { out[ob + (m0 + 14u) * n4 + o0] = vec4<O>(c14_0); }
        if m0 + 15u < P.M { out[ob + (m0 + 15u) * n4 + o0] = vec4<O>(c15_0); }
    }
    let o1 = my4 + 32u;
    if o1 < n4 {
        if m0 + 0u < P.M { out[ob + (m0 + 0u) * n4 + o1] = vec4<O>(c0_1); }
        if m0 + 1u < P.M { out[ob + (m0 + 1u) * n4 + o1] = vec4<O>(c1_1); }
        if m0 + 2u < P.M { out[ob + (m0 + 2u) * n4 + o1] = vec4<O>(c2_1); }
        if m0 + 3u < P.M { out[ob + (m0 + 3u) * n4 + o1] = vec4<O>(c3_1); }
        if m0 + 4u < P.M { out[ob + (m0 + 4u) * n4 + o1] = vec4<O>(c4_1); }
        if m0 + 5u < P.M { out[ob + (m0 + 5u) * n4 + o1] = vec4<O>(c5_1); }
        if m0 + 6u < P.M { out[ob + (m0 + 6u) * n4 + o1] = vec4<O>(c6_1); }
        if m0 + 7u < P.M { out[ob + (m0 + 7u) * n4 + o1] = vec4<O>(c7_1); }
        if m0 + 8u < P.M { out[ob + (m0 + 8u) * n4 + o1] = vec4<O>(c8_1); }
        if m0 + 9u < P.M { out[ob + (m0 + 9u) * n4 + o1] = vec4<O>(c9_1); }
        if m0 + 10u < P.M { out[ob + (m0 + 10u) * n4 + o1] = vec4<O>(c10_1); }
        if m0 + 11u < P.M { out[ob + (m0 + 11u) * n4 + o1] = vec4<O>(c11_1); }
        if m0 + 12u < P.M { out[ob + (m0 + 12u) * n4 + o1] = vec4<O>(c12_1); }
        if m0 + 13u < P.M { out[ob + (m0 + 13u) * n4 + o1] = vec4<O>(c13_1); }
        if m0 + 14u < P.M { out[ob + (m0 + 14u) * n4 + o1] = vec4<O>(c14_1); }
        if m0 + 15u < P.M { out[ob + (m0 + 15u) * n4 + o1] = vec4<O>(c15_1); }
    }
}

@compute @workgroup_size(32)
fn u16x16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if g >= P.total {
        return;
    }
    let tn = g % P.tiles_n;
    let r = g / P.tiles_n;
    let tm = r % P.tiles_m;
    let r2 = r / P.tiles_m;
    let bz = r2 % P.batch;
    let ci = r2 / P.batch;
    let kbeg = (P.c0 + ci) * P.kc;
    let k4beg = kbeg / 4u;
    let k4end = min(P.K, kbeg + P.kc) / 4u;
    let n4 = P.N / 4u;
    let k4n = P.K / 4u;
    let my4 = tn * 128u + lid;
    let bb = bz * P.sb / 4u;
    let bc0 = bb + min(my4 + 0u, n4 - 1u);
    let bc1 = bb + min(my4 + 32u, n4 - 1u);
    let bc2 = bb + min(my4 + 64u, n4 - 1u);
    let bc3 = bb + min(my4 + 96u, n4 - 1u);
    let m0 = tm * 16u;
    let last = P.M - 1u;
    let ar = bz * P.sa / 4u;
    let ra0 = ar + min(m0 + 0u, last) * k4n;
    let ra1 = ar + min(m0 + 1u, last) * k4n;
    let ra2 = ar + min(m0 + 2u, last) * k4n;
    let ra3 = ar + min(m0 + 3u, last) * k4n;
    let ra4 = ar + min(m0 + 4u, last) * k4n;
    let ra5 = ar + min(m0 + 5u, last) * k4n;
    let ra6 = ar + min(m0 + 6u, last) * k4n;
    let ra7 = ar + min(m0 + 7u, last) * k4n;
    let ra8 = ar + min(m0 + 8u, last) * k4n;
    let ra9 = ar + min(m0 + 9u, last) * k4n;
    let ra10 = ar + min(m0 + 10u, last) * k4n;
    let ra11 = ar + min(m0 + 11u, last) * k4n;
    let ra12 = ar + min(m0 + 12u, last) * k4n;
    let ra13 = ar + min(m0 + 13u, last) * k4n;
    let ra14 = ar + min(m0 + 14u, last) * k4n;
    let ra15 = ar + min(m0 + 15u, last) * k4n;
    var c0_0 = vec4<T>(); var c0_1 = vec4<T>(); var c0_2 = vec4<T>(); var c0_3 = vec4<T>();
    var c1_0 = vec4<T>(); var c1_1 = vec4<T>(); var c1_2 = vec4<T>(); var c1_3 = vec4<T>();
    var c2_0 = vec4<T>(); var c2_1 = vec4<T>(); var c2_2 = vec4<T>(); var c2_3 = vec4<T>();
    var c3_0 = vec4<T>(); var c3_1 = vec4<T>(); var c3_2 = vec4<T>(); var c3_3 = vec4<T>();
    var c4_0 = vec4<T>(); var c4_1 = vec4<T>(); var c4_2 = vec4<T>(); var c4_3 = vec4<T>();
    var c5_0 = vec4<T>(); var c5_1 = vec4<T>(); var c5_2 = vec4<T>(); var c5_3 = vec4<T>();
    var c6_0 = vec4<T>(); var c6_1 = vec4<T>(); var c6_2 = vec4<T>(); var c6_3 = vec4<T>();
    var c7_0 = vec4<T>(); var c7_1 = vec4<T>(); var c7_2 = vec4<T>(); var c7_3 = vec4<T>();
    var c8_0 = vec4<T>(); var c8_1 = vec4<T>(); var c8_2 = vec4<T>(); var c8_3 = vec4<T>();
    var c9_0 = vec4<T>(); var c9_1 = vec4<T>(); var c9_2 = vec4<T>(); var c9_3 = vec4<T>();
    var c10_0 = vec4<T>(); var c10_1 = vec4<T>(); var c10_2 = vec4<T>(); var c10_3 = vec4<T>();
    var c11_0 = vec4<T>(); var c11_1 = vec4<T>(); var c11_2 = vec4<T>(); var c11_3 = vec4<T>();
    var c12_0 = vec4<T>(); var c12_1 = vec4<T>(); var c12_2 = vec4<T>(); var c12_3 = vec4<T>();
    var c13_0 = vec4<T>(); var c13_1 = vec4<T>(); var c13_2 = vec4<T>(); var c13_3 = vec4<T>();
    var c14_0 = vec4<T>(); var c14_1 = vec4<T>(); var c14_2 = vec4<T>(); var c14_3 = vec4<T>();
    var c15_0 = vec4<T>(); var c15_1 = vec4<T>(); var c15_2 = vec4<T>(); var c15_3 = vec4<T>();
    for (var k4 = k4beg; k4 < k4end; k4 += 1u) {
        let kb = 4u * k4 * n4;
        let b0_0 = b[bc0 + kb];
        let b1_0 = b[bc0 + kb + 1u * n4];
        let b2_0 = b[bc0 + kb + 2u * n4];
        let b3_0 = b[bc0 + kb + 3u * n4];
        let b0_1 = b[bc1 + kb];
        let b1_1 = b[bc1 + kb + 1u * n4];
        let b2_1 = b[bc1 + kb + 2u * n4];
        let b3_1 = b[bc1 + kb + 3u * n4];
        let b0_2 = b[bc2 + kb];
        let b1_2 = b[bc2 + kb + 1u * n4];
        let b2_2 = b[bc2 + kb + 2u * n4];
        let b3_2 = b[bc2 + kb + 3u * n4];
        let b0_3 = b[bc3 + kb];
        let b1_3 = b[bc3 + kb + 1u * n4];
        let b2_3 = b[bc3 + kb + 2u * n4];
        let b3_3 = b[bc3 + kb + 3u * n4];
        let a0 = a[ra0 + k4];
        c0_0 += a0.x * b0_0 + a0.y * b1_0 + a0.z * b2_0 + a0.w * b3_0;
        c0_1 += a0.x * b0_1 + a0.y * b1_1 + a0.z * b2_1 + a0.w * b3_1;
        c0_2 += a0.x * b0_2 + a0.y * b1_2 + a0.z * b2_2 + a0.w * b3_2;
        c0_3 += a0.x * b0_3 + a0.y * b1_3 + a0.z * b2_3 + a0.w * b3_3;
        let a1 = a[ra1 + k4];
        c1_0 += a1.x * b0_0 + a1.y * b1_0 + a1.z * b2_0 + a1.w * b3_0;
        c1_1 += a1.x * b0_1 + a1.y * b1_1 + a1.z * b2_1 + a1.w * b3_1;
        c1_2 += a1.x * b0_2 + a1.y * b1_2 + a1.z * b2_2 + a1.w * b3_2;
        c1_3 += a1.x * b0_3 + a1.y * b1_3 + a1.z * b2_3 + a1.w * b3_3;
        let a2 = a[ra2 + k4];
        c2_0 += a2.x * b0_0 + a2.y * b1_0 + a2.z * b2_0 + a2.w * b3_0;
        c2_1 += a2.x * b0_1 + a2.y * b1_1 + a2.z * b2_1 + a2.w * b3_1;
        c2_2 += a2.x * b0_2 + a2.y * b1_2 + a2.z * b2_2 + a2.w * b3_2;
        c2_3 += a2.x * b0_3 + a2.y * b1_3 + a2.z * b2_3 + a2.w * b3_3;
        let a3 = a[ra3 + k4];
        c3_0 += a3.x * b0_0 + a3.y * b1_0 + a3.z * b2_0 + a3.w * b3_0;
        c3_1 += a3.x * b0_1 + a3.y * b1_1 + a3.z * b2_1 + a3.w * b3_1;
        c3_2 += a3.x * b0_2 + a3.y * b1_2 + a3.z * b2_2 + a3.w * b3_2;
        c3_3 += a3.x * b0_3 + a3.y * b1_3 + a3.z * b2_3 + a3.w * b3_3;
        let a4 = a[ra4 + k4];
        c4_0 += a4.x * b0_0 + a4.y * b1_0 + a4.z * b2_0 + a4.w * b3_0;
        c4_1 += a4.x * b0_1 + a4.y * b1_1 + a4.z * b2_1 + a4.w * b3_1;
        c4_2 += a4.x * b0_2 + a4.y * b1_2 + a4.z * b2_2 + a4.w * b3_2;
        c4_3 += a4.x * b0_3 + a4.y * b1_3 + a4.z * b2_3 + a4.w * b3_3;
        let a5 = a[ra5 + k4];
        c5_0 += a5.x * b0_0 + a5.y * b1_0 + a5.z * b2_0 + a5.w * b3_0;
        c5_1 += a5.x * b0_1 + a5.y * b1_1 + a5.z * b2_1 + a5.w * b3_1;
        c5_2 += a5.x * b0_2 + a5.y * b1_2 + a5.z * b2_2 + a5.w * b3_2;
        c5_3 += a5.x * b0_3 + a5.y * b1_3 + a5.z * b2_3 + a5.w * b3_3;
        let a6 = a[ra6 + k4];
        c6_0 += a6.x * b0_0 + a6.y * b1_0 + a6.z * b2_0 + a6.w * b3_0;
        c6_1 += a6.x * b0_1 + a6.y * b1_1 + a6.z * b2_1 + a6.w * b3_1;
        c6_2 += a6.x * b0_2 + a6.y * b1_2 + a6.z * b2_2 + a6.w * b3_2;
        c6_3 += a6.x * b0_3 + a6.y * b1_3 + a6.z * b2_3 + a6.w * b3_3;
        let a7 = a[ra7 + k4];
        c7_0 += a7.x * b0_0 + a7.y * b1_0 + a7.z * b2_0 + a7.w * b3_0;
        c7_1 += a7.x * b0_1 + a7.y * b1_1 + a7.z * b2_1 + a7.w * b3_1;
        c7_2 += a7.x * b0_2 + a7.y * b1_2 + a7.z * b2_2 + a7.w * b3_2;
        c7_3 += a7.x * b0_3 + a7.y * b1_3 + a7.z * b2_3 + a7.w * b3_3;
        let a8 = a[ra8 + k4];
        c8_0 += a8.x * b0_0 + a8.y * b1_0 + a8.z * b2_0 + a8.w * b3_0;
        c8_1 += a8.x * b0_1 + a8.y * b1_1 + a8.z * b2_1 + a8.w * b3_1;
        c8_2 += a8.x * b0_2 + a8.y * b1_2 + a8.z * b2_2 + a8.w * b3_2;
        c8_3 += a8.x * b0_3 + a8.y * b1_3 + a8.z * b2_3 + a8.w * b3_3;
        let a9 = a[ra9 + k4];
        c9_0 += a9.x * b0_0 + a9.y * b1_0 + a9.z * b2_0 + a9.w * b3_0;
        c9_1 += a9.x * b0_1 + a9.y * b1_1 + a9.z * b2_1 + a9.w * b3_1;
        c9_2 += a9.x * b0_2 + a9.y * b1_2 + a9.z * b2_2 + a9.w * b3_2;
        c9_3 += a9.x * b0_3 + a9.y * b1_3 + a9.z * b2_3 + a9.w * b3_3;
        let a10 = a[ra10 + k4];
        c10_0 += a10.x * b0_0 + a10.y * b1_0 + a10.z * b2_0 + a10.w * b3_0;
        c10_1 += a10.x * b0_1 + a10.y * b1_1 + a10.z * b2_1 + a10.w * b3_1;
        c10_2 += a10.x * b0_2 + a10.y * b1_2 + a10.z * b2_2 + a10.w * b3_2;
        c10_3 += a10.x * b0_3 + a10.y * b1_3 + a10.z * b2_3 + a10.w * b3_3;
        let a11 = a[ra11 + k4];
        c11_0 += a11.x * b0_0 + a11.y * b1_0 + a11.z * b2_0 + a11.w * b3_0;
        c11_1 += a11.x * b0_1 + a11.y * b1_1 + a11.z * b2_1 + a11.w * b3_1;
        c11_2 += a11.x * b0_2 + a11.y * b1_2 + a11.z * b2_2 + a11.w * b3_2;
        c11_3 += a11.x * b0_3 + a11.y * b1_3 + a11.z * b2_3 + a11.w * b3_3;
        let a12 = a[ra12 + k4];
        c12_0 += a12.x * b0_0 + a12.y * b1_0 + a12.z * b2_0 + a12.w * b3_0;
        c12_1 += a12.x * b0_1 + a12.y * b1_1 + a12.z * b2_1 + a12.w * b3_1;
        c12_2 += a12.x * b0_2 + a12.y * b1_2 + a12.z * b2_2 + a12.w * b3_2;
        c12_3 += a12.x * b0_3 + a12.y * b1_3 + a12.z * b2_3 + a12.w * b3_3;
        let a13 = a[ra13 + k4];
        c13_0 += a13.x * b0_0 + a13.y * b1_0 + a13.z * b2_0 + a13.w * b3_0;
        c13_1 += a13.x * b0_1 + a13.y * b1_1 + a13.z * b2_1 + a13.w * b3_1;
        c13_2 += a13.x * b0_2 + a13.y * b1_2 + a13.z * b2_2 + a13.w * b3_2;
        c13_3 += a13.x * b0_3 + a13.y * b1_3 + a13.z * b2_3 + a13.w * b3_3;
        let a14 = a[ra14 + k4];
        c14_0 += a14.x * b0_0 + a14.y * b1_0 + a14.z * b2_0 + a14.w * b3_0;
        c14_1 += a14.x * b0_1 + a14.y * b1_1 + a14.z * b2_1 + a14.w * b3_1;
        c14_2 += a14.x * b0_2 + a14.y * b1_2 + a14.z * b2_2 + a14.w * b3_2;
        c14_3 += a14.x * b0_3 + a14.y * b1_3 + a14.z * b2_3 + a14.w * b3_3;
        let a15 = a[ra15 + k4];
        c15_0 += a15.x * b0_0 + a15.y * b1_0 + a15.z * b2_0 + a15.w * b3_0;
        c15_1 += a15.x * b0_1 + a15.y * b1_1 + a15.z * b2_1 + a15.w * b3_1;
        c15_2 += a15.x * b0_2 + a15.y * b1_2 + a15.z * b2_2 + a15.w * b3_2;
        c15_3 += a15.x * b0_3 + a15.y * b1_3 + a15.z * b2_3 + a15.w * b3_3;
    }
    let ob = ((P.s0 + ci) * P.batch + bz) * P.M * n4;
    let o0 = my4 + 0u;
    if o0 < n4 {
        if m0 + 0u < P.M { out[ob + (m0 + 0u) * n4 + o0] = vec4<O>(c0_0); }
        if m0 + 1u < P.M { out[ob + (m0 + 1u) * n4 + o0] = vec4<O>(c1_0); }
        if m0 + 2u < P.M { out[ob + (m0 + 2u) * n4 + o0] = vec4<O>(c2_0); }
        if m0 + 3u < P.M { out[ob + (m0 + 3u) * n4 + o0] = vec4<O>(c3_0); }
        if m0 + 4u < P.M { out[ob + (m0 + 4u) * n4 + o0] = vec4<O>(c4_0); }
        if m0 + 5u < P.M { out[ob + (m0 + 5u) * n4 + o0] = vec4<O>(c5_0); }
        if m0 + 6u < P.M { out[ob + (m0 + 6u) * n4 + o0] = vec4<O>(c6_0); }
        if m0 + 7u < P.M { out[ob + (m0 + 7u) * n4 + o0] = vec4<O>(c7_0); }
        if m0 + 8u < P.M { out[ob + (m0 + 8u) * n4 + o0] = vec4<O>(c8_0); }
        if m0 + 9u < P.M { out[ob + (m0 + 9u) * n4 + o0] = vec4<O>(c9_0); }
        if m0 + 10u < P.M { out[ob + (m0 + 10u) * n4 + o0] = vec4<O>(c10_0); }
        if m0 + 11u < P.M { out[ob + (m0 + 11u) * n4 + o0] = vec4<O>(c11_0); }
        if m0 + 12u < P.M { out[ob + (m0 + 12u) * n4 + o0] = vec4<O>(c12_0); }
        if m0 + 13u < P.M { out[ob + (m0 + 13u) * n4 + o0] = vec4<O>(c13_0); }
        if m0 + 14u < P.M { out[ob + (m0 + 14u) * n4 + o0] = vec4<O>(c14_0); }
        if m0 + 15u < P.M { out[ob + (m0 + 15u) * n4 + o0] = vec4<O>(c15_0); }
    }
    let o1 = my4 + 32u;
    if o1 < n4 {
        if m0 + 0u < P.M { out[ob + (m0 + 0u) * n4 + o1] = vec4<O>(c0_1); }
        if m0 + 1u < P.M { out[ob + (m0 + 1u) * n4 + o1] = vec4<O>(c1_1); }
        if m0 + 2u < P.M { out[ob + (m0 + 2u) * n4 + o1] = vec4<O>(c2_1); }
        if m0 + 3u < P.M { out[ob + (m0 + 3u) * n4 + o1] = vec4<O>(c3_1); }
        if m0 + 4u < P.M { out[ob + (m0 + 4u) * n4 + o1] = vec4<O>(c4_1); }
        if m0 + 5u < P.M { out[ob + (m0 + 5u) * n4 + o1] = vec4<O>(c5_1); }
        if m0 + 6u < P.M { out[ob + (m0 + 6u) * n4 + o1] = vec4<O>(c6_1); }
        if m0 + 7u < P.M { out[ob + (m0 + 7u) * n4 + o1] = vec4<O>(c7_1); }
        if m0 + 8u < P.M { out[ob + (m0 + 8u) * n4 + o1] = vec4<O>(c8_1); }
        if m0 + 9u < P.M { out[ob + (m0 + 9u) * n4 + o1] = vec4<O>(c9_1); }
        if m0 + 10u < P.M { out[ob + (m0 + 10u) * n4 + o1] = vec4<O>(c10_1); }
        if m0 + 11u < P.M { out[ob + (m0 + 11u) * n4 + o1] = vec4<O>(c11_1); }
        if m0 + 12u < P.M { out[ob + (m0 + 12u) * n4 + o1] = vec4<O>(c12_1); }
        if m0 + 13u < P.M { out[ob + (m0 + 13u) * n4 + o1] = vec4<O>(c13_1); }
        if m0 + 14u < P.M { out[ob + (m0 + 14u) * n4 + o1] = vec4<O>(c14_1); }
        if m0 + 15u < P.M { out[ob + (m0 + 15u) * n4 + o1] = vec4<O>(c15_1); }
    }
    let o2 = my4 + 64u;
    if o2 < n4 {
        if m0 + 0u < P.M { out[ob + (m0 + 0u) * n4 + o2] = vec4<O>(c0_2); }
        if m0 + 1u < P.M { out[ob + (m0 + 1u) * n4 + o2] = vec4<O>(c1_2); }
        if m0 + 2u < P.M { out[ob + (m0 + 2u) * n4 + o2] = vec4<O>(c2_2); }
        if m0 + 3u < P.M { out[ob + (m0 + 3u) * n4 + o2] = vec4<O>(c3_2); }
        if m0 + 4u < P.M { out[ob + (m0 + 4u) * n4 + o2] = vec4<O>(c4_2); }
        if m0 + 5u < P.M { out[ob + (m0 + 5u) * n4 + o2] = vec4<O>(c5_2); }
        if m0 + 6u < P.M { out[ob + (m0 + 6u) * n4 + o2] = vec4<O>(c6_2); }
        if m0 + 7u < P.M { out[ob + (m0 + 7u) * n4 + o2] = vec4<O>(c7_2); }
        if m0 + 8u < P.M { out[ob + (m0 + 8u) * n4 + o2] = vec4<O>(c8_2); }
        if m0 + 9u < P.M { out[ob + (m0 + 9u) * n4 + o2] = vec4<O>(c9_2); }
        if m0 + 10u < P.M { out[ob + (m0 + 10u) * n4 + o2] = vec4<O>(c10_2); }
        if m0 + 11u < P.M { out[ob + (m0 + 11u) * n4 + o2] = vec4<O>(c11_2); }
        if m0 + 12u < P.M { out[ob + (m0 + 12u) * n4 + o2] = vec4<O>(c12_2); }
        if m0 + 13u < P.M { out[ob + (m0 + 13u) * n4 + o2] = vec4<O>(c13_2); }
        if m0 + 14u < P.M { out[ob + (m0 + 14u) * n4 + o2] = vec4<O>(c14_2); }
        if m0 + 15u < P.M { out[ob + (m0 + 15u) * n4 + o2] = vec4<O>(c15_2); }
    }
    let o3 = my4 + 96u;
    if o3 < n4 {
        if m0 + 0u < P.M { out[ob + (m0 + 0u) * n4 + o3] = vec4<O>(c0_3); }
        if m0 + 1u < P.M { out[ob + (m0 + 1u) * n4 + o3] = vec4<O>(c1_3); }
        if m0 + 2u < P.M { out[ob + (m0 + 2u) * n4 + o3] = vec4<O>(c2_3); }
        if m0 + 3u < P.M { out[ob + (m0 + 3u) * n4 + o3] = vec4<O>(c3_3); }
        if m0 + 4u < P.M { out[ob + (m0 + 4u) * n4 + o3] = vec4<O>(c4_3); }
        if m0 + 5u < P.M { out[ob + (m0 + 5u) * n4 + o3] = vec4<O>(c5_3); }
        if m0 + 6u < P.M { out[ob + (m0 + 6u) * n4 + o3] = vec4<O>(c6_3); }
        if m0 + 7u < P.M { out[ob + (m0 + 7u) * n4 + o3] = vec4<O>(c7_3); }
        if m0 + 8u < P.M { out[ob + (m0 + 8u) * n4 + o3] = vec4<O>(c8_3); }
        if m0 + 9u < P.M { out[ob + (m0 + 9u) * n4 + o3] = vec4<O>(c9_3); }
        if m0 + 10u < P.M { out[ob + (m0 + 10u) * n4 + o3] = vec4<O>(c10_3); }
        if m0 + 11u < P.M { out[ob + (m0 + 11u) * n4 + o3] = vec4<O>(c11_3); }
        if m0 + 12u < P.M { out[ob + (m0 + 12u) * n4 + o3] = vec4<O>(c12_3); }
        if m0 + 13u < P.M { out[ob + (m0 + 13u) * n4 + o3] = vec4<O>(c13_3); }
        if m0 + 14u < P.M { out[ob + (m0 + 14u) * n4 + o3] = vec4<O>(c14_3); }
        if m0 + 15u < P.M { out[ob + (m0 + 15u) * n4 + o3] = vec4<O>(c15_3); }
    }
}
