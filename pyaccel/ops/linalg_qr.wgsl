// Householder QR of a stack of m x n matrices (LAPACK's geqrf conventions), one column
// per step.
//
// Prefix: T = f32. a: (batch, m, n) working copy that becomes R; v: (batch, K, m) the
// Householder vectors (v[k] = 1, zeros above); tau: (batch, K).
//  * `house` (one workgroup per matrix), column k: alpha = a[k, k], xnorm = |a[k+1:, k]|;
//    xnorm == 0 gives tau = 0 (H = I); else beta = -sign(alpha) * hypot(alpha, xnorm),
//    tau = (beta - alpha) / beta, v = a[k+1:, k] / (alpha - beta). Column k of R becomes
//    (beta, 0, ..., 0). sign(0) = +1 (Fortran SIGN), so R's diagonal signs match LAPACK.
//  * `apply` (one workgroup per (matrix, column j >= P.j0)): target[k:, j] -= tau * v
//    (v . target[k:, j]); used on a (columns > k) for R and, backwards over k, on an
//    identity (columns >= k) to accumulate Q = H_0 H_1 ... H_{K-1}.
// Loops per invocation: about 2 (m - k) / WG + log2(WG).
//  * `dots` + `update`, the barrier-free form of `apply` (used when m - k fits the loop
//    cap): `dots` one thread per (matrix, column j >= P.j0): wv[j] = tau * (v . target[k:, j])
//    (threads of a workgroup read consecutive columns of a row); `update` one thread per
//    (matrix, row i >= k, 4 columns): target[i, j] -= v[i] * wv[j].

override WG: u32 = 64u;

struct Params {
    m: u32,
    ncols: u32,  // columns of the target
    k: u32,
    j0: u32,     // first target column `apply` updates
    batch: u32,
    kk: u32,     // K: reflectors per matrix
    groups: u32, // batch * (ncols - j0) for `apply`
    _p0: u32,
}

@group(0) @binding(0) var<storage, read_write> a: array<T>;
@group(0) @binding(1) var<storage, read_write> v: array<T>;
@group(0) @binding(2) var<storage, read_write> tau: array<T>;
@group(0) @binding(3) var<uniform> P: Params;
@group(0) @binding(4) var<storage, read_write> wv: array<T>;  // (batch, ncols): tau * v . column

var<workgroup> red: array<f32, WG>;

fn wg_sum(lid: u32, x: f32) -> f32 {
    red[lid] = x;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
        workgroupBarrier();
    }
    let r = red[0];
    workgroupBarrier();
    return r;
}

@compute @workgroup_size(WG)
fn house(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let b = wid.x + wid.y * nwg.x;
    if (b >= P.batch) { return; }
    let m = P.m;
    let n = P.ncols;
    let k = P.k;
    let base = b * m * n;
    let vb = (b * P.kk + k) * m;
    // read before any barrier: thread 0 overwrites a[k, k] at the end, possibly before other
    // SIMD batches of the workgroup get here
    let alpha = f32(a[base + k * n + k]);
    // scaled sum of squares (the largest |x| first, so squares neither overflow nor underflow)
    var mx = 0.0;
    for (var i = k + 1u + lid; i < m; i += WG) { mx = max(mx, abs(f32(a[base + i * n + k]))); }
    red[lid] = mx;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) { red[lid] = max(red[lid], red[lid + s]); }
        workgroupBarrier();
    }
    let amax = red[0];
    workgroupBarrier();
    var ss = 0.0;
    if (amax > 0.0) {
        for (var i = k + 1u + lid; i < m; i += WG) {
            let x = f32(a[base + i * n + k]) / amax;
            ss = ss + x * x;
        }
    }
    ss = wg_sum(lid, ss);
    let xnorm = amax * sqrt(ss);
    var t = 0.0;
    var beta = alpha;
    var scale = 0.0;
    if (xnorm != 0.0 || amax != amax) {
        let big = max(abs(alpha), xnorm);
        let h = big * sqrt((alpha / big) * (alpha / big) + (xnorm / big) * (xnorm / big));
        beta = select(-h, h, alpha < 0.0);
        t = (beta - alpha) / beta;
        scale = 1.0 / (alpha - beta);
    }
    for (var i = lid; i < m; i += WG) {
        var vi = 0.0;
        if (i == k) { vi = 1.0; }
        if (i > k) {
            vi = f32(a[base + i * n + k]) * scale;
            a[base + i * n + k] = T(0.0);
        }
        v[vb + i] = T(vi);
    }
    if (lid == 0u) {
        tau[b * P.kk + k] = T(t);
        a[base + k * n + k] = T(beta);
    }
}

@compute @workgroup_size(WG)
fn apply(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= P.groups) { return; }
    let m = P.m;
    let n = P.ncols;
    let k = P.k;
    let per = n - P.j0;
    let b = g / per;
    let j = P.j0 + g % per;
    let base = b * m * n;
    let vb = (b * P.kk + k) * m;
    let t = f32(tau[b * P.kk + k]);
    var d = 0.0;
    for (var i = k + lid; i < m; i += WG) { d = d + f32(v[vb + i]) * f32(a[base + i * n + j]); }
    d = wg_sum(lid, d);
    if (t == 0.0) { return; }  // H = I (after the barriers: they need uniform control flow)
    d = d * t;
    for (var i = k + lid; i < m; i += WG) {
        a[base + i * n + j] = T(f32(a[base + i * n + j]) - d * f32(v[vb + i]));
    }
}

@compute @workgroup_size(WG)
fn dots(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if (t >= P.groups) { return; }
    let m = P.m;
    let n = P.ncols;
    let k = P.k;
    let per = n - P.j0;
    let b = t / per;
    let j = P.j0 + t % per;
    let base = b * m * n;
    let vb = (b * P.kk + k) * m;
    let tk = f32(tau[b * P.kk + k]);
    var d = 0.0;
    if (tk != 0.0) {
        for (var i = k; i < m; i++) { d = d + f32(v[vb + i]) * f32(a[base + i * n + j]); }
    }
    wv[b * n + j] = T(d * tk);
}

@compute @workgroup_size(WG)
fn update(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    let m = P.m;
    let n = P.ncols;
    let k = P.k;
    let quads = (n - P.j0 + 3u) / 4u;
    let rows = m - k;
    if (t >= P.batch * rows * quads) { return; }
    let per = rows * quads;
    let b = t / per;
    let r = t - b * per;
    let i = k + r / quads;
    let j0 = P.j0 + 4u * (r % quads);
    if (f32(tau[b * P.kk + k]) == 0.0) { return; }
    let base = b * m * n;
    let vi = f32(v[(b * P.kk + k) * m + i]);
    for (var j = j0; j < min(j0 + 4u, n); j++) {
        a[base + i * n + j] = T(f32(a[base + i * n + j]) - vi * f32(wv[b * n + j]));
    }
}
