// Row-wise softmax and logsumexp of x (rows x n), numerically stable.
//
// Prefix: T = float storage type (f32 / f16); arithmetic in f32.
// One workgroup per row (WG threads: 256 on GPUs, 8 = one SIMD batch on software
// devices, where workgroup barriers are costly). Each thread keeps an online (max, sum of exp(x - max)) pair
// over its strided elements (one read pass), the pairs are merged by a tree
// reduction in workgroup memory, then softmax writes exp(x - max) / sum (second
// read pass). NaN anywhere in a row makes the row NaN; +inf gives NaN like the
// textbook formula exp(x - max(x)) / sum(...); logsumexp of a row of -inf is -inf,
// with a +inf (and no NaN) it is +inf.
//
// Long rows (loop cap: Mesa's software GPUs end an invocation after 65,535 loop
// iterations, see gpu_kernels.MAX_LOOP) are split into P.nchunks chunks of P.chunk
// elements: `chunk_stats` writes each (row, chunk)'s (max, sum) pair to stats, then
// `softmax_chunks` (one workgroup per (row, chunk)) or `logsumexp_chunks` (one thread per
// row) merge the row's pairs and finish. Unsplit rows use `softmax` / `logsumexp`.

override WG: u32 = 256u;

struct Params {
    rows: u32,
    n: u32,
    total: u32,
    ninf: f32,  // -inf, passed at run time (WGSL forbids infinite constant expressions)
    chunk: u32,
    nchunks: u32,
    _pad0: u32,
    _pad1: u32,
}

// <input> the elements; ops/fusion_reduce.py replaces this block by a lazy elementwise tree
@group(0) @binding(0) var<storage, read> x: array<T>;
fn ld(i: u32) -> T { return x[i]; }
// </input>
@group(0) @binding(1) var<storage, read_write> out: array<T>;
@group(0) @binding(2) var<uniform> P: Params;
@group(0) @binding(3) var<storage, read_write> stats: array<vec2<f32>>;  // (rows, nchunks)
@group(0) @binding(4) var<storage, read> stats_in: array<vec2<f32>>;

var<workgroup> shm: array<f32, WG>;
var<workgroup> shs: array<f32, WG>;

fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

fn nan_max(a: f32, b: f32) -> f32 {
    if is_nan(a) { return a; }
    if is_nan(b) { return b; }
    return select(a, b, b > a);
}

// sum-weight of a partial (m1, s1) re-based to max m; an empty partial (s1 == 0) adds 0
fn rebase(m1: f32, s1: f32, m: f32) -> f32 {
    if s1 == 0.0 {
        return 0.0;
    }
    return s1 * exp(m1 - m);
}

// online update of (m, s) with one element v
fn push(ms: vec2<f32>, v: f32) -> vec2<f32> {
    if v == P.ninf {
        return ms;  // exp(-inf - max) = 0 (an all -inf row keeps m = -inf, s = 0)
    }
    if v <= ms.x {
        return vec2<f32>(ms.x, ms.y + exp(v - ms.x));  // the usual case: max unchanged
    }
    let nm = nan_max(ms.x, v);
    return vec2<f32>(nm, rebase(ms.x, ms.y, nm) + exp(v - nm));
}

fn lse(m: f32, s: f32) -> f32 {
    if !is_nan(m) && (m == -P.ninf || m == P.ninf) {
        return m;
    }
    return m + log(s);
}

// (max, sum) of the row, left in shm[0], shs[0]
fn row_stats(base: u32, lid: u32) {
    range_stats(base, base + P.n, lid);
}

// merge of two (max, sum) pairs
fn merge_ms(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let nm = nan_max(a.x, b.x);
    return vec2<f32>(nm, rebase(a.x, a.y, nm) + rebase(b.x, b.y, nm));
}

// (max, sum) of the flat range [lo, hi), left in shm[0], shs[0]
fn range_stats(lo: u32, hi: u32, lid: u32) {
    var ms = vec2<f32>(P.ninf, 0.0);
    for (var k = lo + lid; k < hi; k += WG) {
        ms = push(ms, f32(ld(k)));
    }
    shm[lid] = ms.x;
    shs[lid] = ms.y;
    workgroupBarrier();
    var st = WG / 2u;
    loop {
        if st == 0u {
            break;
        }
        if lid < st {
            let m1 = shm[lid];
            let m2 = shm[lid + st];
            let nm = nan_max(m1, m2);
            shs[lid] = rebase(m1, shs[lid], nm) + rebase(m2, shs[lid + st], nm);
            shm[lid] = nm;
        }
        workgroupBarrier();
        st = st / 2u;
    }
}

@compute @workgroup_size(WG)
fn softmax(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if row >= P.total {
        return;
    }
    let base = row * P.n;
    row_stats(base, lid);
    let m = shm[0];
    let s = shs[0];
    for (var k = lid; k < P.n; k += WG) {
        out[base + k] = T(exp(f32(ld(base + k)) - m) / s);
    }
}

@compute @workgroup_size(WG)
fn logsumexp(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if row >= P.total {
        return;
    }
    row_stats(row * P.n, lid);
    if lid == 0u {
        out[row] = T(lse(shm[0], shs[0]));
    }
}

// (max, sum) of a row from its chunk pairs
fn row_ms(row: u32) -> vec2<f32> {
    var ms = vec2<f32>(P.ninf, 0.0);
    for (var c = 0u; c < P.nchunks; c += 1u) {
        ms = merge_ms(ms, stats_in[row * P.nchunks + c]);
    }
    return ms;
}

@compute @workgroup_size(WG)
fn chunk_stats(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if g >= P.total {
        return;
    }
    let row = g / P.nchunks;
    let c = g - row * P.nchunks;
    let lo = row * P.n + c * P.chunk;
    range_stats(lo, row * P.n + min((c + 1u) * P.chunk, P.n), lid);
    if lid == 0u {
        stats[g] = vec2<f32>(shm[0], shs[0]);
    }
}

@compute @workgroup_size(WG)
fn softmax_chunks(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if g >= P.total {
        return;
    }
    let row = g / P.nchunks;
    let c = g - row * P.nchunks;
    let ms = row_ms(row);
    let hi = row * P.n + min((c + 1u) * P.chunk, P.n);
    for (var k = row * P.n + c * P.chunk + lid; k < hi; k += WG) {
        out[k] = T(exp(f32(ld(k)) - ms.x) / ms.y);
    }
}

@compute @workgroup_size(WG)
fn logsumexp_chunks(@builtin(global_invocation_id) gid: vec3<u32>,
                    @builtin(num_workgroups) nwg: vec3<u32>) {
    let row = gid.x + gid.y * (nwg.x * WG);
    if row >= P.rows {
        return;
    }
    let ms = row_ms(row);
    out[row] = T(lse(ms.x, ms.y));
}
