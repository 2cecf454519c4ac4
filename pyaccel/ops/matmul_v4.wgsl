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
// <output> the result; ops/fusion_matmul.py replaces this block by an elementwise epilogue
// (sto4(q, v) then stores elements 4 q .. 4 q + 3 of the lazy tree, v the product's values)
@group(0) @binding(2) var<storage, read_write> out: array<vec4<O>>;
fn sto4(q: u32, v: vec4<T>) { out[q] = vec4<O>(v); }
// </output>
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
        sto4(t.orow + m * (P.N / 4u) + t.n4, v);
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
            sto4(ob + (m0 + i) * n4, c[i]);
        }
    }
}

// u16x8, u16x16: u16x4 with more columns per thread, R rows x 4 C columns per
// thread (vec4 columns my4 + 32 j, j < C, my4 = 32 C tn + lid), every accumulator and offset
// a named value (the rows are workgroup-uniform as in u16x4). Their entry points are written
// by pyaccel/ops/gpu_kernels.py (_u16_entry: 16 rows x C vec4 columns, unrolled) and appended
// to this file's text when the family is loaded. On lavapipe
// every storage load, uniform or not, is a loop over the 8 SIMD lanes (about 8 cycles a
// lane: mask test, bounds check, scalar load, insert through the stack; perf profile in
// docs/performance.md), so the time goes with the loaded scalars per multiply-add: per step
// of 4 k a thread loads 4 R (a) + 16 C (b) scalars for 16 R C multiply-adds: u16x4 3.2
// multiply-adds a scalar, u16x8 5.3, u16x16 8 (more accumulators: longer compiles, 1.2 and
// 3 s first call on a loaded 2-core VM; a u32x16, 10.7, ran 2.9x u16x4 but took 8-10 s).
