// Batched matrix product: out[b] (M x N) = a[b] (M x K) @ b[b] (K x N), row-major,
// a[b] starting at b * sa elements, b[b] at b * sb (0: broadcast).
//
// Prefix: T = storage type of a, b and out; A = accumulator (f32 for f16; i32/u32 wrap).
//
//   tiled : a 64 x 64 output tile per workgroup of 64 threads; K in slices of TK = 16
//           staged in workgroup memory (as vec4 along M for a, along N for b); each
//           thread keeps an 8 x 8 block of outputs in registers (16 vec4 accumulators:
//           rows 4ty..4ty+3 and 32+4ty.., columns 4tx..4tx+3 and 32+4tx.., so adjacent
//           threads read adjacent vec4s), one k step is 4 vec4 workgroup loads for
//           64 multiply-adds. Edges (M, N, K not multiples of the tile) load zeros and
//           skip stores.
//   naive : one thread per output element (the reference point for benchmarks).
//
// K chunks (loop cap): one invocation covers at most P.kc values of k (chunk c covers
// [c kc, min(K, (c + 1) kc))), so its loop iterations stay below gpu_kernels.MAX_LOOP
// (Mesa's software GPUs end an invocation after 65,535 loop iterations). The grid
// covers P.nkc chunks c0 .. c0 + nkc - 1; chunk c0 + i writes slice s0 + i of out
// (slices of batch * M * N elements, type O = A), summed by a reduce pass afterwards.
// Unsplit (kc >= K, nkc = 1, s0 = 0): out is the result itself (O = T).

const TM: u32 = 64u;
const TN: u32 = 64u;
override TK: u32 = 16u;  // K slice (8, 16 or 32)

struct Params {
    M: u32,
    K: u32,
    N: u32,
    batch: u32,
    sa: u32,
    sb: u32,
    tiles_m: u32,
    tiles_n: u32,
    total: u32,      // workgroups (tiled) or threads (naive) doing work
    kc: u32,         // K chunk length (a multiple of TK for tiled)
    c0: u32,         // first K chunk of this dispatch
    s0: u32,         // output slice of chunk c0
    nkc: u32,        // K chunks in this dispatch
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> a: array<T>;
@group(0) @binding(1) var<storage, read> b: array<T>;
// <output> the result; ops/fusion_matmul.py replaces this block by an elementwise epilogue
// (sto(i, v) then stores the lazy tree over element i of the product, v its value)
@group(0) @binding(2) var<storage, read_write> out: array<O>;
fn sto(i: u32, v: A) { out[i] = O(v); }
// </output>
@group(0) @binding(3) var<uniform> P: Params;

// As[k * 16 + i] = rows 4i..4i+3 of the a tile at column k; Bs[k * 16 + j] = columns 4j..4j+3.
var<workgroup> As: array<vec4<A>, TK * 16u>;
var<workgroup> Bs: array<vec4<A>, TK * 16u>;

@compute @workgroup_size(64)
fn tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
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
    let ci = r2 / P.batch;              // K chunk of this dispatch
    let kbeg = (P.c0 + ci) * P.kc;
    let kend = min(P.K, kbeg + P.kc);
    let m0 = tm * TM;
    let n0 = tn * TN;
    let abase = bz * P.sa;
    let bbase = bz * P.sb;
    let tx = lid % 8u;         // output columns n0 + 4 tx .., n0 + 32 + 4 tx ..
    let ty = lid / 8u;         // output rows m0 + 4 ty .., m0 + 32 + 4 ty ..
    let la_k = lid % TK;       // a tile loads: column la_k, rows la_m + (64 / TK) q
    let la_m = lid / TK;
    let lb_n = lid;            // b tile loads: column lb_n, rows q
    // acc[2 i + h]: row 4 ty + i (i < 4) or 32 + 4 ty + i - 4, column block h
    var acc: array<vec4<A>, 16>;
    for (var k0 = kbeg; k0 < kend; k0 += TK) {
        let gka = k0 + la_k;
        for (var q = 0u; q < TK; q += 1u) {
            let m = la_m + (64u / TK) * q;
            let gm = m0 + m;
            var v = A(0);
            if gm < P.M && gka < kend {
                v = A(a[abase + gm * P.K + gka]);
            }
            As[la_k * 16u + m / 4u][m % 4u] = v;
        }
        let gn = n0 + lb_n;
        for (var q = 0u; q < TK; q += 1u) {
            let gk = k0 + q;
            var v = A(0);
            if gk < kend && gn < P.N {
                v = A(b[bbase + gk * P.N + gn]);
            }
            Bs[q * 16u + lb_n / 4u][lb_n % 4u] = v;
        }
        workgroupBarrier();
        for (var k = 0u; k < TK; k += 1u) {
            let a0 = As[k * 16u + ty];
            let a1 = As[k * 16u + 8u + ty];
            let b0 = Bs[k * 16u + tx];
            let b1 = Bs[k * 16u + 8u + tx];
            acc[0] += a0.x * b0; acc[1] += a0.x * b1;
            acc[2] += a0.y * b0; acc[3] += a0.y * b1;
            acc[4] += a0.z * b0; acc[5] += a0.z * b1;
            acc[6] += a0.w * b0; acc[7] += a0.w * b1;
            acc[8] += a1.x * b0; acc[9] += a1.x * b1;
            acc[10] += a1.y * b0; acc[11] += a1.y * b1;
            acc[12] += a1.z * b0; acc[13] += a1.z * b1;
            acc[14] += a1.w * b0; acc[15] += a1.w * b1;
        }
        workgroupBarrier();
    }
    let obase = ((P.s0 + ci) * P.batch + bz) * P.M * P.N;
    for (var i = 0u; i < 4u; i += 1u) {
        store_row(obase, m0 + 4u * ty + i, n0 + 4u * tx, acc[2u * i]);
        store_row(obase, m0 + 4u * ty + i, n0 + 32u + 4u * tx, acc[2u * i + 1u]);
        store_row(obase, m0 + 32u + 4u * ty + i, n0 + 4u * tx, acc[8u + 2u * i]);
        store_row(obase, m0 + 32u + 4u * ty + i, n0 + 32u + 4u * tx, acc[8u + 2u * i + 1u]);
    }
}

fn store_row(obase: u32, row: u32, col0: u32, v: vec4<A>) {
    if row >= P.M {
        return;
    }
    let o = obase + row * P.N + col0;
    if col0 + 3u < P.N {
        sto(o, v.x);
        sto(o + 1u, v.y);
        sto(o + 2u, v.z);
        sto(o + 3u, v.w);
        return;
    }
    for (var j = 0u; j < 4u; j += 1u) {
        if col0 + j < P.N {
            sto(o + j, v[j]);
        }
    }
}

@compute @workgroup_size(256)
fn naive(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * 256u);
    if t >= P.total {
        return;
    }
    let n = t % P.N;
    let r = t / P.N;
    let m = r % P.M;
    let r2 = r / P.M;
    let bz = r2 % P.batch;
    let ci = r2 / P.batch;
    let kbeg = (P.c0 + ci) * P.kc;
    let kend = min(P.K, kbeg + P.kc);
    var acc = A(0);
    var ia = bz * P.sa + m * P.K + kbeg;
    var ib = bz * P.sb + kbeg * P.N + n;
    for (var k = kbeg; k < kend; k += 1u) {
        acc += A(a[ia]) * A(b[ib]);
        ia += 1u;
        ib += P.N;
    }
    sto(t + P.s0 * P.batch * P.M * P.N, acc);
}

// reg4x4 / reg8x4: no workgroup memory (on CPU-like adapters the caches do what it would);
// a workgroup of 64 threads (8 x 8) covers a (8 R) x 32 output tile, thread (tx, ty) the R
// rows m0 + ty + 8 i (i < R) and the 4 columns n0 + tx + 8 j (j < 4), so adjacent threads
// read and write adjacent columns. Loads past M or N are clamped to the last row / column
// (in bounds, never stored), so the k loop has no branches; one iteration per k.
fn rd_a(base: u32, m: u32, k: u32) -> A {
    return A(a[base + min(m, P.M - 1u) * P.K + k]);
}

fn rd_b4(base: u32, k: u32, n0: u32) -> vec4<A> {
    let r = base + k * P.N;
    let last = P.N - 1u;
    return vec4<A>(A(b[r + min(n0, last)]), A(b[r + min(n0 + 8u, last)]),
                   A(b[r + min(n0 + 16u, last)]), A(b[r + min(n0 + 24u, last)]));
}

fn st4(obase: u32, m: u32, n0: u32, v: vec4<A>) {
    if m >= P.M {
        return;
    }
    let o = obase + m * P.N;
    if n0 < P.N { sto(o + n0, v.x); }
    if n0 + 8u < P.N { sto(o + n0 + 8u, v.y); }
    if n0 + 16u < P.N { sto(o + n0 + 16u, v.z); }
    if n0 + 24u < P.N { sto(o + n0 + 24u, v.w); }
}

struct Tile {
    m0: u32,
    n0: u32,
    abase: u32,
    bbase: u32,
    obase: u32,
    kbeg: u32,
    kend: u32,
}

fn tile_of(g: u32, tm_rows: u32) -> Tile {
    let tn = g % P.tiles_n;
    let r = g / P.tiles_n;
    let tm = r % P.tiles_m;
    let r2 = r / P.tiles_m;
    let bz = r2 % P.batch;
    let ci = r2 / P.batch;
    let kbeg = (P.c0 + ci) * P.kc;
    return Tile(tm * tm_rows, tn * 32u, bz * P.sa, bz * P.sb,
                ((P.s0 + ci) * P.batch + bz) * P.M * P.N, kbeg, min(P.K, kbeg + P.kc));
}

@compute @workgroup_size(64)
fn reg4x4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if g >= P.total {
        return;
    }
    let t = tile_of(g, 32u);
    let m = t.m0 + lid / 8u;
    let n = t.n0 + lid % 8u;
    var c0 = vec4<A>(); var c1 = vec4<A>(); var c2 = vec4<A>(); var c3 = vec4<A>();
    for (var k = t.kbeg; k < t.kend; k += 1u) {
        let bv = rd_b4(t.bbase, k, n);
        c0 += rd_a(t.abase, m, k) * bv;
        c1 += rd_a(t.abase, m + 8u, k) * bv;
        c2 += rd_a(t.abase, m + 16u, k) * bv;
        c3 += rd_a(t.abase, m + 24u, k) * bv;
    }
    st4(t.obase, m, n, c0);
    st4(t.obase, m + 8u, n, c1);
    st4(t.obase, m + 16u, n, c2);
    st4(t.obase, m + 24u, n, c3);
}

@compute @workgroup_size(64)
fn reg8x4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if g >= P.total {
        return;
    }
    let t = tile_of(g, 64u);
    let m = t.m0 + lid / 8u;
    let n = t.n0 + lid % 8u;
    var c0 = vec4<A>(); var c1 = vec4<A>(); var c2 = vec4<A>(); var c3 = vec4<A>();
    var c4 = vec4<A>(); var c5 = vec4<A>(); var c6 = vec4<A>(); var c7 = vec4<A>();
    for (var k = t.kbeg; k < t.kend; k += 1u) {
        let bv = rd_b4(t.bbase, k, n);
        c0 += rd_a(t.abase, m, k) * bv;
        c1 += rd_a(t.abase, m + 8u, k) * bv;
        c2 += rd_a(t.abase, m + 16u, k) * bv;
        c3 += rd_a(t.abase, m + 24u, k) * bv;
        c4 += rd_a(t.abase, m + 32u, k) * bv;
        c5 += rd_a(t.abase, m + 40u, k) * bv;
        c6 += rd_a(t.abase, m + 48u, k) * bv;
        c7 += rd_a(t.abase, m + 56u, k) * bv;
    }
    st4(t.obase, m, n, c0);
    st4(t.obase, m + 8u, n, c1);
    st4(t.obase, m + 16u, n, c2);
    st4(t.obase, m + 24u, n, c3);
    st4(t.obase, m + 32u, n, c4);
    st4(t.obase, m + 40u, n, c5);
    st4(t.obase, m + 48u, n, c6);
    st4(t.obase, m + 56u, n, c7);
}
