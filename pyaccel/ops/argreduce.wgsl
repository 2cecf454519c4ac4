// argmin / argmax along an axis: x viewed as (outer, n, inner).
//
// Prefix: T = input storage type, A = value type carried between passes
// (f32 for f16 input). Each pass writes (value, index) pairs per
// (outer, chunk, inner); later passes read those pairs (HAS_IDX) until one
// chunk is left. Ties keep the smallest index; NaN beats every number and the
// first NaN wins (NumPy semantics). Same two layouts as reduce.wgsl:
//   rows : inner == 1, one workgroup per (row, chunk) + tree reduction,
//   cols : one thread per output column looping over its chunk of n.

override WG: u32 = 256u;
override IS_MAX: bool = true;
override HAS_IDX: bool = false;     // input is a previous pass (values + indices)
override A_FLOAT: bool = true;

struct Params {
    outer: u32,
    n: u32,
    inner: u32,
    chunk: u32,
    nchunks: u32,
    total: u32,
    id_bits: u32,   // bits of the identity value in A (-inf for max, ...; a runtime value:
                    // WGSL forbids infinite constant / override expressions)
    _pad1: u32,
}

// <input> the elements; ops/fusion_reduce.py replaces this block by a lazy elementwise tree
@group(0) @binding(0) var<storage, read> x: array<T>;
fn ld(i: u32) -> T { return x[i]; }
// </input>
@group(0) @binding(1) var<storage, read> idx_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> out_val: array<A>;
@group(0) @binding(3) var<storage, read_write> out_idx: array<u32>;
@group(0) @binding(4) var<uniform> P: Params;

var<workgroup> shv: array<A, WG>;
var<workgroup> shi: array<u32, WG>;

fn is_nan(v: A) -> bool {
    return A_FLOAT && (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

fn identity() -> A {
    return bitcast<A>(P.id_bits);
}

// true when (vb, ib) should replace (va, ia)
fn better(va: A, ia: u32, vb: A, ib: u32) -> bool {
    let na = is_nan(va);
    let nb = is_nan(vb);
    if na || nb {
        if na && nb {
            return ib < ia;
        }
        return nb;
    }
    if IS_MAX {
        if vb > va { return true; }
        if vb < va { return false; }
    } else {
        if vb < va { return true; }
        if vb > va { return false; }
    }
    return ib < ia;
}

// index along n of element i (flat), position k
fn index_of(i: u32, k: u32) -> u32 {
    if HAS_IDX {
        return idx_in[i];
    }
    return k;
}

@compute @workgroup_size(WG)
fn rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if g >= P.total {
        return;
    }
    let row = g / P.nchunks;
    let c = g - row * P.nchunks;
    let start = c * P.chunk;
    let end = min(start + P.chunk, P.n);
    let base = row * P.n;
    var bv = identity();
    var bi = 0xffffffffu;
    for (var k = start + lid; k < end; k += WG) {
        let v = A(ld(base + k));
        let ii = index_of(base + k, k);
        if better(bv, bi, v, ii) {
            bv = v;
            bi = ii;
        }
    }
    shv[lid] = bv;
    shi[lid] = bi;
    workgroupBarrier();
    var s = WG / 2u;
    loop {
        if s == 0u {
            break;
        }
        if lid < s {
            let v = shv[lid + s];
            let ii = shi[lid + s];
            if better(shv[lid], shi[lid], v, ii) {
                shv[lid] = v;
                shi[lid] = ii;
            }
        }
        workgroupBarrier();
        s = s / 2u;
    }
    if lid == 0u {
        out_val[g] = shv[0];
        out_idx[g] = shi[0];
    }
}

@compute @workgroup_size(WG)
fn cols(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if t >= P.total {
        return;
    }
    let k = column_of(t, P.inner, P.nchunks, P.chunk, P.n);
    let j = k.j; let c = k.c; let o = k.o; let start = k.start; let end = k.end;
    var i = (o * P.n + start) * P.inner + j;
    var bv = identity();
    var bi = 0xffffffffu;
    for (var k = start; k < end; k += 1u) {
        let v = A(ld(i));
        let ii = index_of(i, k);
        if better(bv, bi, v, ii) {
            bv = v;
            bi = ii;
        }
        i += P.inner;
    }
    out_val[t] = bv;
    out_idx[t] = bi;
}
