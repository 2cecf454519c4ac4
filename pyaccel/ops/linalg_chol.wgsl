// Right-looking Cholesky of a stack of n x n matrices, one dispatch per column k.
//
// Prefix: T = f32 (the storage and arithmetic type).
// w: a working copy of the input (batch, n, n), only its lower triangle is read;
// l: the result (batch, n, n). Dispatch k runs one thread per (matrix, i, 4 columns j) of
// the trailing (n - k) x (n - k) block:
//   j == k, i >= k : l[i, k] = w[i, k] / sqrt(w[k, k])            (column k of L)
//   k < j <= i     : w[i, j] -= w[i, k] * w[j, k] / w[k, k]        (trailing update)
//   i == k, j > k  : l[k, j] = 0                                   (upper triangle)
// Column k of w is only read in dispatch k and columns > k only written, so threads
// never race. At most 4 loop iterations per invocation. A pivot w[k, k] <= 0 sets
// fail[matrix] = 1 (not positive definite) and gives NaN in L; a NaN pivot (NaN input) only
// propagates NaN, without a flag, as NumPy's cholesky (OpenBLAS) does.

override WG: u32 = 256u;

struct Params {
    n: u32,
    k: u32,
    m: u32,      // n - k
    total: u32,  // batch * m * ceil(m / 4)
}

@group(0) @binding(0) var<storage, read_write> w: array<T>;
@group(0) @binding(1) var<storage, read_write> l: array<T>;
@group(0) @binding(2) var<storage, read_write> fail: array<T>;
@group(0) @binding(3) var<uniform> P: Params;

@compute @workgroup_size(WG)
fn chol_step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    // one thread per (matrix, row i >= k, group of 4 columns j >= k)
    let t = gid.x + gid.y * (nwg.x * WG);
    if (t >= P.total) { return; }
    let quads = (P.m + 3u) / 4u;
    let per = P.m * quads;
    let b = t / per;
    let r = t - b * per;
    let i = P.k + r / quads;
    let j0 = P.k + 4u * (r % quads);
    let n = P.n;
    let base = b * n * n;
    let k = P.k;
    let dkk = w[base + k * n + k];
    let wik = w[base + i * n + k];
    for (var j = j0; j < min(j0 + 4u, n); j++) {
        if (j > i) {
            if (i == k) { l[base + k * n + j] = T(0.0); }
        } else if (j == k) {
            if (i == k && dkk <= T(0.0)) { fail[b] = T(1.0); }
            l[base + i * n + k] = wik / sqrt(dkk);
        } else {
            w[base + i * n + j] = w[base + i * n + j] - wik * (w[base + j * n + k] / dkk);
        }
    }
}
