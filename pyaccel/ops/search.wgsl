// searchsorted: for each value v[j] the insertion index into the sorted a[0..n) (NumPy's
// searchsorted; the Array API's; isin builds on it). One thread per value, a binary search
// of at most 33 steps (n < 2^32), so no invocation loops long.
//
// Prefix (ops.gpu_kernels.searchsorted): S = storage type of a and v, K = the compute type
// the keys compare in, and the generated functions
//   key(s: S) -> K            the storage element as a key (f16 / narrow ints widened),
//   before(p: K, q: K) -> bool  p sorts strictly before q (NaN after every number, as NumPy),
// with the multi-lane library they call (f64_less, i64_less, ...).
// P.right = 0: the first index i with !(a[i] before v) (side="left"); 1: the first i with
// (v before a[i]) (side="right").

override WG: u32 = 256u;

struct Params {
    n: u32,
    m: u32,
    right: u32,
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> a: array<S>;
@group(0) @binding(1) var<storage, read> v: array<S>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> P: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = gid.x + gid.y * (nwg.x * WG);
    if j >= P.m {
        return;
    }
    let x = key(v[j]);
    var lo = 0u;
    var hi = P.n;
    for (var step = 0u; step < 33u && lo < hi; step += 1u) {
        let mid = lo + (hi - lo) / 2u;
        let y = key(a[mid]);
        var go_right: bool;
        if P.right != 0u {
            go_right = !before(x, y);
        } else {
            go_right = before(y, x);
        }
        if go_right {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    out[j] = lo;
}
