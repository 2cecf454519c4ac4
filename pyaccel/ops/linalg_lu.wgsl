// Gauss-Jordan elimination with partial pivoting (an LU factorization with row
// interchanges, fused with the solves) on a stack of augmented matrices [A | B].
//
// Prefix: T = f32. m: (batch, n, W) with W = n + nrhs; after the n steps the B part holds
// A^-1 B. piv: (batch, n) the pivots (U's diagonal, as LAPACK's getrf gives it);
// sgn: (batch) the parity of the row interchanges (+1 / -1); mult: (batch, n) scratch.
// Step k is two dispatches:
//  * `pivot`, one workgroup per matrix: the row p >= k with the largest |m[p, k]| (the
//    first on ties, as LAPACK's idamax), the multipliers m'[r, k] of every row r != k
//    (m' after the interchange), then rows k and p swapped and row k divided by the
//    pivot (columns > k). A zero pivot (singular) is recorded and skips the step: the
//    multipliers are 0 and the row is not scaled, as getrf continues past a zero pivot.
//  * `elim`, one thread per (matrix, row r != k, 4 columns c > k): m[r, c] -= mult[r] * m[k, c]
//    (with P.below = 1 only rows r > k: plain Gaussian elimination, for determinants).
// Columns <= k are never read again, so they are not updated. Loops per invocation:
// (n + 2 W) / WG + log2(WG), far below the loop cap for any n that fits a binding.

override WG: u32 = 64u;

struct Params {
    n: u32,
    w: u32,
    k: u32,
    batch: u32,
    total: u32,
    below: u32,
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<storage, read_write> m: array<T>;
@group(0) @binding(1) var<storage, read_write> piv: array<T>;
@group(0) @binding(2) var<storage, read_write> sgn: array<T>;
@group(0) @binding(3) var<storage, read_write> mult: array<T>;
@group(0) @binding(4) var<uniform> P: Params;

var<workgroup> best_v: array<f32, WG>;
var<workgroup> best_i: array<u32, WG>;

@compute @workgroup_size(WG)
fn pivot(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let b = wid.x + wid.y * nwg.x;
    if (b >= P.batch) { return; }  // uniform per workgroup
    let n = P.n;
    let W = P.w;
    let k = P.k;
    let base = b * n * W;
    // 1. argmax |m[r, k]| over r >= k (first index on ties; NaN never wins)
    var bv = -1.0;
    var bi = k;
    for (var r = k + lid; r < n; r += WG) {
        let v = abs(f32(m[base + r * W + k]));
        if (v > bv) { bv = v; bi = r; }
    }
    best_v[lid] = bv;
    best_i[lid] = bi;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            let ov = best_v[lid + s];
            let oi = best_i[lid + s];
            if (ov > best_v[lid] || (ov == best_v[lid] && oi < best_i[lid])) {
                best_v[lid] = ov;
                best_i[lid] = oi;
            }
        }
        workgroupBarrier();
    }
    let p = best_i[0];
    let pv = m[base + p * W + k];
    let zero = pv == T(0.0);
    if (lid == 0u) {
        piv[b * n + k] = pv;
        if (p != k) { sgn[b] = -sgn[b]; }
    }
    // 2. multipliers from column k after the interchange (rows k and p swapped)
    for (var r = lid; r < n; r += WG) {
        var src = r;
        if (r == p) { src = k; }
        var f = T(0.0);
        if (r != k && !zero) { f = m[base + src * W + k]; }  // row k is scaled by 1 / pivot
        mult[b * n + r] = f;
    }
    storageBarrier();
    workgroupBarrier();
    // 3. swap rows k and p, scale row k by 1 / pivot (columns > k)
    var scale = T(1.0);
    if (!zero) { scale = T(1.0) / pv; }
    for (var c = k + 1u + lid; c < W; c += WG) {
        let rk = m[base + k * W + c];
        let rp = m[base + p * W + c];
        m[base + k * W + c] = rp * scale;
        if (p != k) { m[base + p * W + c] = rk; }
    }
}

@compute @workgroup_size(WG)
fn elim(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    // one thread per (matrix, row, group of 4 columns): fewer, fatter invocations
    let t = gid.x + gid.y * (nwg.x * WG);
    if (t >= P.total) { return; }
    let n = P.n;
    let W = P.w;
    let k = P.k;
    let cols = W - k - 1u;
    let quads = (cols + 3u) / 4u;
    let per = n * quads;
    let b = t / per;
    let rem = t - b * per;
    let r = rem / quads;
    let c0 = k + 1u + 4u * (rem % quads);
    if (r == k || (P.below == 1u && r < k)) { return; }
    let f = mult[b * n + r];
    let base = b * n * W;
    let c1 = min(c0 + 4u, W);
    for (var c = c0; c < c1; c++) {
        m[base + r * W + c] = m[base + r * W + c] - f * m[base + k * W + c];
    }
}
