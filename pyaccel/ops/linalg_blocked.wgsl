// Blocked factorizations: a panel kernel per block column, the trailing updates as matmul
// calls (pyaccel.ops.linalg_wgsl), and a subtraction kernel. Block size NB (a constant here,
// BLOCK in linalg_wgsl.py); a block column k0 has nb = min(NB, n - k0) columns.
//
// Prefix: T = f32.
//
// Cholesky (w: working copy (batch, n, n), only its lower triangle read; l: the result,
// zero-filled beforehand):
//  * `chol_panel`, a workgroup per (matrix, chunk of WG rows below the diagonal block):
//    factors the nb x nb diagonal block in workgroup memory (every workgroup of the matrix
//    redundantly: nb^3 / 6 flops), then one thread per row i >= k0 + nb solves
//    x L11^T = w[i, k0:k0+nb] and writes x to l, to pan (batch, m, NB) and to pant
//    (batch, NB, m) (m = n - k0 - nb) for the update matmul(pan, pant). Chunk 0 writes
//    L11 and sets fail[matrix] = 1 when a pivot is <= tiny (not positive definite); a NaN
//    pivot only propagates NaN, as NumPy's cholesky does.
//    The pivots are recomputed as a left-looking dot: w[j, j] - sum_p l[j, p]^2 from the
//    input's diagonal (more robust for matrices PD but tight in float32).
//  * `chol_sub`: w[k0 + nb + r, k0 + nb + c] -= y[r, c] for c < r (y: (batch, m, m)).
//
// Gauss-Jordan with partial pivoting on [A | B] (aug: (batch, n, W)), per block column:
//  * `lu_panel`, a workgroup per matrix: copies aug[k0:, k0:k0+nb] to s (batch, n, NB)
//    and factors it (LU with partial pivoting, LAPACK's pivot choice: the largest |value|,
//    the first on ties); records the pivot row of each step in perm (batch, n) and the
//    pivot (U's diagonal) in piv (batch, n).
//  * `lu_swap_trsm`, a thread per (matrix, column c >= k0): applies the nb interchanges to
//    aug's column c; a panel column is then copied to mcol (batch, n, nb) with the block's
//    rows zeroed (the multipliers of every other row); a column c >= k0 + nb gets
//    aug[k0:k0+nb, c] = A11^-1 of it (unit-lower then upper triangular solves with s), also
//    written to xrow (batch, nb, nc).
//  * `lu_sub`: aug[r, k0 + nb + c] -= y[r, c] (y = mcol @ xrow, zero in the block's rows).
// After the last block the B part holds A^-1 B. lu_panel also keeps the interchange parity
// (sgn, +1 / -1 per matrix, over the blocks so far).
// LU mode (P.chunks = 1: det / slogdet, aug = a copy of A): a right-looking blocked LU, only
// the rows below the block are updated. lu_panel writes every row of the factored panel to
// s; lu_swap_trsm copies the multipliers L21 (s's rows below the block) to mcol
// (batch, n - k0 - nb, nb) and solves only with the unit lower L11 (U12 = L11^-1 A12, no
// division by a pivot, so a zero pivot, skipped as getrf does, leaves the rest finite);
// lu_sub subtracts L21 U12 from the rows below the block. The pivots are U's diagonal. A zero pivot gives inf / NaN in the result
// (and piv records it: the caller's singularity check). Loops per invocation: lu_panel
// (n / WG) nb (nb / 2 + 2) + nb (WG + 4 nb), lu_swap_trsm nb + max(n, nb^2), chol_panel n + 2 nb^2;
// linalg_wgsl.py keeps n within the loop cap.

override WG: u32 = 64u;
const NB: u32 = 32u;

struct Params {
    n: u32,
    w: u32,      // row length of aug (Gauss-Jordan); n for Cholesky
    k0: u32,
    nb: u32,
    batch: u32,
    total: u32,
    m: u32,      // rows below the block (n - k0 - nb) / columns right of it (W - k0 - nb)
    chunks: u32, // workgroups per matrix (chol_panel); the mode of the lu_* kernels (0: Gauss-Jordan, 1: LU)
}

@group(0) @binding(0) var<storage, read_write> a: array<T>;
@group(0) @binding(1) var<storage, read_write> o1: array<T>;
@group(0) @binding(2) var<storage, read_write> o2: array<T>;
@group(0) @binding(3) var<storage, read_write> o3: array<T>;
@group(0) @binding(4) var<storage, read_write> o4: array<T>;
@group(0) @binding(5) var<uniform> P: Params;

var<workgroup> d: array<f32, 1024>;  // NB x NB
var<workgroup> dsq: array<f32, NB>;
var<workgroup> dg0: array<f32, NB>;
var<workgroup> prow: array<f32, NB>;
var<workgroup> jrow: array<f32, NB>;
var<workgroup> best_v: array<f32, 256>;  // WG <= 256
var<workgroup> best_i: array<u32, 256>;

// -- Cholesky --------------------------------------------------------------------------------
// bindings: a = w, o1 = l, o2 = pan, o3 = pant, o4 = fail
@compute @workgroup_size(WG)
fn chol_panel(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let b = g / P.chunks;
    if (b >= P.batch) { return; }  // uniform per workgroup
    let chunk = g - b * P.chunks;
    let n = P.n;
    let k0 = P.k0;
    let nb = P.nb;
    let base = b * n * n;
    for (var e = lid; e < nb * nb; e += WG) {
        let r = e / nb;
        let c = e - r * nb;
        var v = 0.0;
        if (c <= r) { v = f32(a[base + (k0 + r) * n + k0 + c]); }
        d[r * NB + c] = v;
    }
    // the pivots again from the diagonal of the input (chol_sub leaves it) and the rows of
    // L left of the block, summed in runs of 16: a left-looking dot, as LAPACK's potf2, less
    // rounding than the right-looking updates (matrices PD but tight in float32)
    if (lid < nb) {
        let i = k0 + lid;
        var outer = 0.0;
        for (var p0 = 0u; p0 < k0; p0 += 16u) {
            var inner = 0.0;
            for (var p = p0; p < min(p0 + 16u, k0); p++) {
                let v = f32(o1[base + i * n + p]);
                inner = inner + v * v;
            }
            outer = outer + inner;
        }
        dsq[lid] = outer;
        dg0[lid] = f32(a[base + i * n + i]);
    }
    workgroupBarrier();
    var bad = false;
    for (var j = 0u; j < nb; j++) {
        if (lid == 0u) {
            var inner = 0.0;
            for (var p = 0u; p < j; p++) { inner = inner + d[j * NB + p] * d[j * NB + p]; }
            d[j * NB + j] = dg0[j] - (dsq[j] + inner);
        }
        workgroupBarrier();
        let piv = d[j * NB + j];
        var s = sqrt(piv);
        if (!(piv > 0.0) && piv == piv) {  // <= 0 (not NaN): not positive definite
            bad = true;
            s = bitcast<f32>(0x7fc00000u);  // NaN from this column on
        }
        workgroupBarrier();
        for (var r = j + lid; r < nb; r += WG) { d[r * NB + j] = d[r * NB + j] / s; }
        workgroupBarrier();
        let left = nb - j - 1u;
        for (var e = lid; e < left * left; e += WG) {
            let r = j + 1u + e / left;
            let c = j + 1u + e % left;
            if (c < r) { d[r * NB + c] = d[r * NB + c] - d[r * NB + j] * d[c * NB + j]; }
        }
        workgroupBarrier();
    }
    if (chunk == 0u) {
        for (var e = lid; e < nb * nb; e += WG) {
            let r = e / nb;
            let c = e - r * nb;
            if (c <= r) { o1[base + (k0 + r) * n + k0 + c] = T(d[r * NB + c]); }
        }
        if (lid == 0u && bad) { o4[b] = T(1.0); }
    }
    let m = P.m;
    let row = chunk * WG + lid;
    if (row >= m) { return; }
    let i = k0 + nb + row;
    var x: array<f32, NB>;
    for (var j = 0u; j < nb; j++) {
        var v = f32(a[base + i * n + k0 + j]);
        for (var p = 0u; p < j; p++) { v = v - x[p] * d[j * NB + p]; }
        v = v / d[j * NB + j];
        x[j] = v;
        o1[base + i * n + k0 + j] = T(v);
        o2[(b * m + row) * NB + j] = T(v);
        o3[(b * NB + j) * m + row] = T(v);
    }
}

// bindings: a = w, o1 = y
@compute @workgroup_size(WG)
fn chol_sub(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if (t >= P.total) { return; }
    let m = P.m;
    let quads = (m + 3u) / 4u;
    let per = m * quads;
    let b = t / per;
    let rem = t - b * per;
    let r = rem / quads;
    let c0 = 4u * (rem % quads);
    if (c0 >= r) { return; }  // the diagonal stays the input's (chol_panel reads it)
    let n = P.n;
    let off = P.k0 + P.nb;
    let base = b * n * n + (off + r) * n + off;
    let ybase = (b * m + r) * m;
    for (var c = c0; c < min(c0 + 4u, r); c++) {
        a[base + c] = a[base + c] - o1[ybase + c];
    }
}

// -- Gauss-Jordan ----------------------------------------------------------------------------
// bindings: a = aug, o1 = s, o2 = perm, o3 = piv, o4 = sgn (batch,). Thread lid owns the rows r = lid + q WG of
// the panel (q = 0, 1, ...) and keeps the first RP of them in private memory (the rest in s):
// it searches, scales and updates only those; the pivot row and row j pass through workgroup
// memory, so a step needs three barriers and no thread reads another's rows. Only rows < nb
// (the L11 \ U11 block, for lu_swap_trsm) are written back to s.
const RP: u32 = 8u;

@compute @workgroup_size(WG)
fn lu_panel(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    let b = wid.x + wid.y * nwg.x;
    if (b >= P.batch) { return; }  // uniform per workgroup
    let n = P.n;
    let W = P.w;
    let k0 = P.k0;
    let nb = P.nb;
    let m = n - k0;
    let sb = b * n * NB;
    let ab = b * n * W + k0 * W + k0;
    var pr: array<f32, 256>;  // RP x NB
    for (var q = 0u; q * WG + lid < m; q++) {
        let r = q * WG + lid;
        for (var c = 0u; c < nb; c++) {
            let v = f32(a[ab + r * W + c]);
            if (q < RP) { pr[q * NB + c] = v; } else { o1[sb + r * NB + c] = T(v); }
        }
    }
    var flips = 0u;
    for (var j = 0u; j < nb; j++) {
        // 1. the largest |s[r, j]| over r >= j (the first on ties; NaN never wins)
        var bv = -1.0;
        var bi = j;
        for (var q = 0u; q * WG + lid < m; q++) {
            let r = q * WG + lid;
            if (r >= j) {
                var v = 0.0;
                if (q < RP) { v = pr[q * NB + j]; } else { v = f32(o1[sb + r * NB + j]); }
                v = abs(v);
                if (v > bv) { bv = v; bi = r; }
            }
        }
        best_v[lid] = bv;
        best_i[lid] = bi;
        workgroupBarrier();
        if (lid == 0u) {
            var v0 = best_v[0];
            var i0 = best_i[0];
            for (var t = 1u; t < WG; t++) {
                let ov = best_v[t];
                let oi = best_i[t];
                if (ov > v0 || (ov == v0 && oi < i0)) { v0 = ov; i0 = oi; }
            }
            best_i[0] = i0;
        }
        workgroupBarrier();
        // 2. rows p (the pivot row) and j to workgroup memory, then swapped by their owners
        let p = best_i[0];
        let qp = p / WG;
        let qj = j / WG;
        if (lid == p % WG) {
            for (var c = 0u; c < nb; c++) {
                if (qp < RP) { prow[c] = pr[qp * NB + c]; } else { prow[c] = f32(o1[sb + p * NB + c]); }
            }
        }
        if (lid == j % WG) {
            for (var c = 0u; c < nb; c++) {
                if (qj < RP) { jrow[c] = pr[qj * NB + c]; } else { jrow[c] = f32(o1[sb + j * NB + c]); }
            }
        }
        workgroupBarrier();
        if (p != j && lid == p % WG) {
            for (var c = 0u; c < nb; c++) {
                if (qp < RP) { pr[qp * NB + c] = jrow[c]; } else { o1[sb + p * NB + c] = T(jrow[c]); }
            }
        }
        if (lid == j % WG) {
            for (var c = 0u; c < nb; c++) {
                if (qj < RP) { pr[qj * NB + c] = prow[c]; } else { o1[sb + j * NB + c] = T(prow[c]); }
            }
        }
        let pv = prow[j];
        if (p != j) { flips++; }
        if (lid == 0u) {
            o2[b * n + k0 + j] = T(f32(k0 + p));
            o3[b * n + k0 + j] = T(pv);
        }
        var inv = 0.0;
        if (pv != 0.0) { inv = 1.0 / pv; }
        // 3. own rows below j: multiplier, then the rest of the row
        for (var q = 0u; q * WG + lid < m; q++) {
            let r = q * WG + lid;
            if (r > j) {
                if (q < RP) {
                    let l = pr[q * NB + j] * inv;
                    pr[q * NB + j] = l;
                    for (var c = j + 1u; c < nb; c++) { pr[q * NB + c] = pr[q * NB + c] - l * prow[c]; }
                } else {
                    let l = f32(o1[sb + r * NB + j]) * inv;
                    o1[sb + r * NB + j] = T(l);
                    for (var c = j + 1u; c < nb; c++) {
                        o1[sb + r * NB + c] = T(f32(o1[sb + r * NB + c]) - l * prow[c]);
                    }
                }
            }
        }
        workgroupBarrier();  // prow, jrow and best_i are rewritten by the next step
    }
    // rows < nb (q = 0, WG >= NB): L11 \ U11 for lu_swap_trsm; in LU mode every row kept in
    // private memory (the multipliers L21 too, lu_swap_trsm copies them to mcol)
    for (var q = 0u; q < RP && q * WG + lid < m; q++) {
        let r = q * WG + lid;
        if (r < nb || P.chunks == 1u) {
            for (var c = 0u; c < nb; c++) { o1[sb + r * NB + c] = T(pr[q * NB + c]); }
        }
    }
    if (lid == 0u) {  // the interchange parity so far (o4: (batch,))
        var sg = 1.0;
        if (k0 > 0u) { sg = f32(o4[b]); }
        if ((flips & 1u) == 1u) { sg = -sg; }
        o4[b] = T(sg);
    }
}

// bindings: a = aug, o1 = s, o2 = perm, o3 = xrow, o4 = mcol. A thread per (matrix, column
// c >= k0): the block's interchanges on column c, then for a panel column its multipliers to
// mcol, for a column right of the panel the block triangular solve (into aug and xrow).
@compute @workgroup_size(WG)
fn lu_swap_trsm(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if (t >= P.total) { return; }
    let n = P.n;
    let W = P.w;
    let k0 = P.k0;
    let nb = P.nb;
    let cols = W - k0;
    let b = t / cols;
    let c = k0 + (t - b * cols);
    let base = b * n * W + c;
    let lu = P.chunks == 1u;
    if (lu && c < k0 + nb) {  // LU: the multipliers L21 (rows below the block) from s
        let rows = n - k0 - nb;
        let sb = b * n * NB + nb * NB + (c - k0);
        let mb = b * rows * nb + (c - k0);
        for (var r = 0u; r < rows; r++) { o4[mb + r * nb] = o1[sb + r * NB]; }
        return;
    }
    for (var j = 0u; j < nb; j++) {
        let p = u32(o2[b * n + k0 + j]);
        let r = k0 + j;
        if (p != r) {
            let v = a[base + r * W];
            a[base + r * W] = a[base + p * W];
            a[base + p * W] = v;
        }
    }
    if (c < k0 + nb) {
        let mb = b * n * nb + (c - k0);
        for (var r = 0u; r < n; r++) {
            var v = a[base + r * W];
            if (r >= k0 && r < k0 + nb) { v = T(0.0); }
            o4[mb + r * nb] = v;
        }
        return;
    }
    let nc = P.m;
    let cc = c - k0 - nb;
    let sb = b * n * NB;
    var x: array<f32, NB>;
    for (var j = 0u; j < nb; j++) {
        var v = f32(a[base + (k0 + j) * W]);
        for (var p = 0u; p < j; p++) { v = v - f32(o1[sb + j * NB + p]) * x[p]; }
        x[j] = v;
    }
    if (lu) {  // U12 = L11^-1 A12 (the Schur complement is A22 - L21 U12)
        for (var j = 0u; j < nb; j++) { o3[(b * nb + j) * nc + cc] = T(x[j]); }
        return;
    }
    for (var jj = 0u; jj < nb; jj++) {
        let j = nb - 1u - jj;
        var v = x[j];
        for (var p = j + 1u; p < nb; p++) { v = v - f32(o1[sb + j * NB + p]) * x[p]; }
        v = v / f32(o1[sb + j * NB + j]);
        x[j] = v;
        a[base + (k0 + j) * W] = T(v);
        o3[(b * nb + j) * nc + cc] = T(v);
    }
}

// bindings: a = aug, o1 = y
@compute @workgroup_size(WG)
fn lu_sub(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if (t >= P.total) { return; }
    let n = P.n;
    let W = P.w;
    let nc = P.m;
    let quads = (nc + 3u) / 4u;
    let off = P.k0 + P.nb;
    var r0 = 0u;  // Gauss-Jordan: every row; LU: the rows below the block
    if (P.chunks == 1u) { r0 = off; }
    let rows = n - r0;
    let per = rows * quads;
    let b = t / per;
    let rem = t - b * per;
    let r = rem / quads;
    let c0 = 4u * (rem % quads);
    let base = b * n * W + (r0 + r) * W + off;
    let ybase = (b * rows + r) * nc;
    for (var c = c0; c < min(c0 + 4u, nc); c++) {
        a[base + c] = a[base + c] - o1[ybase + c];
    }
}

// -- Householder QR, blocked (compact WY) ----------------------------------------------------
// `qr_panel`, a workgroup of QW = 256 threads per matrix, factors the panel
// a[k0:m, k0:k0+nb] (a: (batch, m, ncols); P.n = m, P.w = ncols, P.m = mp = m - k0) with the
// conventions of linalg_qr.wgsl's `house` (LAPACK's geqrf: beta = -sign(alpha) hypot(alpha,
// xnorm) from a scaled norm, tau = (beta - alpha) / beta, xnorm == 0 gives tau = 0). The
// panel is worked on in o1 = V (batch, m, NB): step j reduces column j (norm: all threads;
// the dots with v_j: thread (g, c) = (t / NB, t % NB) sums the rows j + g + 8 i of column c,
// then the 8 partial sums are added), updates the columns c > j and builds column j of the
// upper triangular T (T[:j, j] = -tau_j T[:j, :j] (V[:, :j]^T v_j), T[j, j] = tau_j), so
// H_0 ... H_{nb-1} = I - V T V^T. Then R's panel columns go to a (zeros below the
// diagonal), V (unit diagonal, zeros above) stays in o1 and is also written transposed to
// o2 = Vt (batch, NB, mp); o3 = T and o4 = Tt (batch, NB, NB). Columns c >= nb of V are 0.
// Loops per invocation: about nb (mp / 4 + 3 mp / QW + 40), so mp <= linalg_wgsl.QR_BLOCKED_MAX_M.
// The trailing update A2 -= V (T^T (V^T A2)) and Q's blockwise accumulation are matmul calls
// around `qr_gather` (o1[b, r, c] = a[b, r0 + r, c0 + c]) and `qr_sub` (a[b, r0 + r, c0 + c] -=
// o1[b, r, c]): P.n = rows of a per matrix, P.w = its row length, P.k0 = r0, P.nb = c0,
// P.m = rows, P.chunks = columns; a thread per (matrix, row, 4 columns).
const QW: u32 = 256u;
const QG: u32 = 8u;  // QW / NB row groups

var<workgroup> qred: array<f32, QW>;
var<workgroup> qpart: array<f32, QW>;
var<workgroup> qdot: array<f32, NB>;
var<workgroup> qt: array<f32, 1024>;  // T, NB x NB

fn qr_reduce(t: u32, x: f32, is_max: bool) -> f32 {
    qred[t] = x;
    workgroupBarrier();
    for (var s = QW / 2u; s > 0u; s = s / 2u) {
        if (t < s) {
            if (is_max) { qred[t] = max(qred[t], qred[t + s]); } else { qred[t] = qred[t] + qred[t + s]; }
        }
        workgroupBarrier();
    }
    let r = qred[0];
    workgroupBarrier();
    return r;
}

@compute @workgroup_size(256)
fn qr_panel(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) t: u32) {
    let b = wid.x + wid.y * nwg.x;
    if (b >= P.batch) { return; }  // uniform per workgroup
    let m = P.n;
    let nc = P.w;
    let k0 = P.k0;
    let nb = P.nb;
    let mp = P.m;
    let ab = b * m * nc + k0 * nc + k0;
    let vb = b * mp * NB;
    let g = t / NB;
    let c = t % NB;
    for (var e = t; e < mp * NB; e += QW) {
        let r = e / NB;
        let cc = e - r * NB;
        var v = 0.0;
        if (cc < nb) { v = f32(a[ab + r * nc + cc]); }
        o1[vb + e] = T(v);
    }
    for (var e = t; e < NB * NB; e += QW) { qt[e] = 0.0; }
    storageBarrier();
    workgroupBarrier();
    for (var j = 0u; j < nb; j++) {
        let alpha = f32(o1[vb + j * NB + j]);
        var mx = 0.0;
        for (var r = j + 1u + t; r < mp; r += QW) { mx = max(mx, abs(f32(o1[vb + r * NB + j]))); }
        let amax = qr_reduce(t, mx, true);
        var ss = 0.0;
        if (amax > 0.0) {
            for (var r = j + 1u + t; r < mp; r += QW) {
                let x = f32(o1[vb + r * NB + j]) / amax;
                ss = ss + x * x;
            }
        }
        ss = qr_reduce(t, ss, false);
        let xnorm = amax * sqrt(ss);
        var tau = 0.0;
        var beta = alpha;
        var scale = 0.0;
        if (xnorm != 0.0 || amax != amax) {
            let big = max(abs(alpha), xnorm);
            let h = big * sqrt((alpha / big) * (alpha / big) + (xnorm / big) * (xnorm / big));
            beta = select(-h, h, alpha < 0.0);
            tau = (beta - alpha) / beta;
            scale = 1.0 / (alpha - beta);
        }
        for (var r = j + 1u + t; r < mp; r += QW) { o1[vb + r * NB + j] = T(f32(o1[vb + r * NB + j]) * scale); }
        storageBarrier();
        workgroupBarrier();
        // dots of v_j (1 at row j) with every other column: c < j gives V^T v_j (for T),
        // c > j the reflector's coefficients
        var part = 0.0;
        if (c != j && c < nb) {
            for (var r = j + g; r < mp; r += QG) {
                var vr = 1.0;
                if (r > j) { vr = f32(o1[vb + r * NB + j]); }
                part = part + vr * f32(o1[vb + r * NB + c]);
            }
        }
        qpart[g * NB + c] = part;
        workgroupBarrier();
        if (t < NB) {
            var s = 0.0;
            for (var i = 0u; i < QG; i++) { s = s + qpart[i * NB + t]; }
            qdot[t] = s;
        }
        workgroupBarrier();
        if (c > j && c < nb) {
            let f = tau * qdot[c];
            for (var r = j + g; r < mp; r += QG) {
                var vr = 1.0;
                if (r > j) { vr = f32(o1[vb + r * NB + j]); }
                o1[vb + r * NB + c] = T(f32(o1[vb + r * NB + c]) - vr * f);
            }
        }
        if (t < j) {  // T[t, j] = -tau sum_{l = t}^{j-1} T[t, l] z_l
            var s = 0.0;
            for (var l = t; l < j; l++) { s = s + qt[t * NB + l] * qdot[l]; }
            qt[t * NB + j] = -tau * s;
        }
        if (t == 0u) {
            qt[j * NB + j] = tau;
            o1[vb + j * NB + j] = T(beta);
        }
        storageBarrier();
        workgroupBarrier();
    }
    // R's panel columns to a (zeros below the diagonal); V with its unit diagonal, and Vt
    for (var e = t; e < mp * NB; e += QW) {
        let r = e / NB;
        let cc = e - r * NB;
        let x = f32(o1[vb + e]);
        var v = 0.0;
        if (cc < nb) {
            var ra = 0.0;
            if (r <= cc) { ra = x; }
            a[ab + r * nc + cc] = T(ra);
            if (r == cc) { v = 1.0; }
            if (r > cc) { v = x; }
        }
        o1[vb + e] = T(v);
        o2[(b * NB + cc) * mp + r] = T(v);
    }
    for (var e = t; e < NB * NB; e += QW) {
        let i = e / NB;
        let l = e - i * NB;
        o3[b * NB * NB + e] = T(qt[e]);
        o4[b * NB * NB + l * NB + i] = T(qt[e]);
    }
}

// bindings: a = the matrix, o1 = the contiguous block
@compute @workgroup_size(WG)
fn qr_gather(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if (t >= P.total) { return; }
    let rows = P.m;
    let cols = P.chunks;
    let quads = (cols + 3u) / 4u;
    let per = rows * quads;
    let b = t / per;
    let rem = t - b * per;
    let r = rem / quads;
    let c0 = 4u * (rem % quads);
    let src = b * P.n * P.w + (P.k0 + r) * P.w + P.nb;
    let dst = (b * rows + r) * cols;
    for (var c = c0; c < min(c0 + 4u, cols); c++) { o1[dst + c] = a[src + c]; }
}

@compute @workgroup_size(WG)
fn qr_sub(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if (t >= P.total) { return; }
    let rows = P.m;
    let cols = P.chunks;
    let quads = (cols + 3u) / 4u;
    let per = rows * quads;
    let b = t / per;
    let rem = t - b * per;
    let r = rem / quads;
    let c0 = 4u * (rem % quads);
    let dst = b * P.n * P.w + (P.k0 + r) * P.w + P.nb;
    let src = (b * rows + r) * cols;
    for (var c = c0; c < min(c0 + 4u, cols); c++) { a[dst + c] = a[dst + c] - o1[src + c]; }
}
