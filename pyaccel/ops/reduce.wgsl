// Axis reductions: x viewed as (outer, n, inner) -> out (outer, nchunks, inner).
//
// Prefix (ops.launch.specialize): T = input storage type, A = accumulator type,
// R = output storage type. Overrides pick the operation and the identities.
// One pass reduces each (outer, chunk of n, inner) block; the Python launcher
// repeats passes (with T = A) until nchunks == 1.
//
// Entry points (bindings: rows/seg x, aux, out, x4; cols x, aux, out; cols4 aux, out, x4):
//   rows : inner == 1. One workgroup per (row, chunk): threads stride over the
//          contiguous chunk (coalesced), then a tree reduction in workgroup memory.
//          The aligned body is read as vec4 (binding 4 aliases x), the unaligned
//          head/tail (< 4 elements each) as scalars.
//   seg  : inner == 1 on software devices: one thread per (row, chunk), sequential.
//   cols : one thread per (outer, chunk, inner) output column, looping over the
//          chunk of n (adjacent threads read adjacent memory when inner > 1);
//   cols4: the same with 4 adjacent columns per thread and vec4 loads (inner % 4 == 0).
//
// OP: 0 sum, 1 prod, 2 min, 3 max, 4 any, 5 all, 6 sum of squared deviations
// from aux[column] (pass 1 of a variance; later passes use OP = 0).
// min/max propagate NaN (first NaN wins, like NumPy). Integer sums/products wrap.

override WG: u32 = 256u;
override OP: u32 = 0u;
override A_FLOAT: bool = true;      // A is f32 (NaN-aware min/max, scale applies)

struct Params {
    outer: u32,
    n: u32,
    inner: u32,
    chunk: u32,     // elements of n per block
    nchunks: u32,   // blocks per (outer, inner) column
    total: u32,     // workgroups (rows) or threads (cols) doing work
    scale: f32,     // multiplies float results on the final pass (mean / var); 1 otherwise
    // Bits of the min / max identities in A (+inf / INT_MAX / UINT_MAX, -inf / INT_MIN / 0).
    // Runtime values: an infinite constant or override expression is a shader/pipeline
    // creation error in WGSL (Tint rejects it).
    id_min: u32,
    id_max: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// <input> the elements reduced; ops/fusion_reduce.py replaces this block by a lazy
// elementwise tree computed in place (ld / ld4 then compute it from the tree's leaves)
@group(0) @binding(0) var<storage, read> x: array<T>;
// the same buffer as x, read 4 elements at a time (16-byte aligned runs)
@group(0) @binding(4) var<storage, read> x4: array<vec4<T>>;
fn ld(i: u32) -> T { return x[i]; }
fn ld4(i4: u32) -> vec4<T> { return x4[i4]; }
// </input>
@group(0) @binding(1) var<storage, read> aux: array<A>;
@group(0) @binding(2) var<storage, read_write> out: array<R>;
@group(0) @binding(3) var<uniform> P: Params;

var<workgroup> sh: array<A, WG>;

fn is_nan(v: A) -> bool {
    return A_FLOAT && (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

fn identity() -> A {
    switch OP {
        case 1u: { return A(1); }
        case 2u, 5u: { return bitcast<A>(P.id_min); }
        case 3u: { return bitcast<A>(P.id_max); }
        default: { return A(0); }
    }
}

fn combine(a: A, b: A) -> A {
    switch OP {
        case 1u: { return a * b; }
        case 2u, 5u: {
            if is_nan(a) { return a; }
            if is_nan(b) { return b; }
            return select(a, b, b < a);
        }
        case 3u, 4u: {
            if is_nan(a) { return a; }
            if is_nan(b) { return b; }
            return select(a, b, b > a);
        }
        default: { return a + b; }
    }
}

// Element i of x as an accumulator value; col indexes aux (the centre for OP 6).
fn load(i: u32, col: u32) -> A {
    let v = ld(i);
    switch OP {
        case 4u, 5u: { return select(A(1), A(0), v == T(0)); }  // NaN counts as true
        case 6u: {
            let d = A(v) - aux[col];
            return d * d;
        }
        default: { return A(v); }
    }
}

fn combine4(a: vec4<A>, b: vec4<A>) -> vec4<A> {
    switch OP {
        case 0u, 6u: { return a + b; }
        case 1u: { return a * b; }
        default: {
            return vec4<A>(combine(a.x, b.x), combine(a.y, b.y), combine(a.z, b.z), combine(a.w, b.w));
        }
    }
}

// Elements 4 i4 .. 4 i4 + 3 of x; centre: the aux values of their columns (OP 6).
fn load4(i4: u32, centre: vec4<A>) -> vec4<A> {
    let v = ld4(i4);
    switch OP {
        case 4u, 5u: { return select(vec4<A>(A(1)), vec4<A>(A(0)), v == vec4<T>(T(0))); }
        case 6u: {
            let d = vec4<A>(v) - centre;
            return d * d;
        }
        default: { return vec4<A>(v); }
    }
}

fn centre_of(col: u32) -> A {
    if OP == 6u {
        return aux[col];
    }
    return A(0);
}

fn fold4(v: vec4<A>) -> A {
    return combine(combine(v.x, v.y), combine(v.z, v.w));
}

fn finish(v: A) -> R {
    if A_FLOAT {
        return R(v * A(P.scale));
    }
    return R(v);
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
    let lo = row * P.n + c * P.chunk;             // flat range [lo, hi) of this block
    let hi = row * P.n + min((c + 1u) * P.chunk, P.n);
    let a0 = min((lo + 3u) & ~3u, hi);            // [a0, a1): whole aligned vec4s
    let a1 = max(hi & ~3u, a0);
    let centre = centre_of(row);
    var acc4 = vec4<A>(identity());
    var acc4b = vec4<A>(identity());
    var q = a0 / 4u + lid;
    let q1 = a1 / 4u;
    for (; q + WG < q1; q += 2u * WG) {  // two loads in flight per thread
        acc4 = combine4(acc4, load4(q, vec4<A>(centre)));
        acc4b = combine4(acc4b, load4(q + WG, vec4<A>(centre)));
    }
    if q < q1 {
        acc4 = combine4(acc4, load4(q, vec4<A>(centre)));
    }
    var acc = fold4(combine4(acc4, acc4b));
    // the unaligned head [lo, a0) and tail [a1, hi): at most 3 elements each
    if lid < 4u {
        if lo + lid < a0 {
            acc = combine(acc, load(lo + lid, row));
        }
    } else if lid < 8u {
        if a1 + lid - 4u < hi {
            acc = combine(acc, load(a1 + lid - 4u, row));
        }
    }
    sh[lid] = acc;
    workgroupBarrier();
    var s = WG / 2u;
    loop {
        if s == 0u {
            break;
        }
        if lid < s {
            sh[lid] = combine(sh[lid], sh[lid + s]);
        }
        workgroupBarrier();
        s = s / 2u;
    }
    if lid == 0u {
        out[g] = finish(sh[0]);
    }
}

// inner == 1, one thread per (row, chunk) reading its contiguous run sequentially
// (vec4 body, scalar head / tail), no workgroup memory. Used on software devices
// (one CPU thread per workgroup, SIMD across invocations), where barriers are costly.
@compute @workgroup_size(WG)
fn seg(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if t >= P.total {
        return;
    }
    let row = t / P.nchunks;
    let c = t - row * P.nchunks;
    let lo = row * P.n + c * P.chunk;
    let hi = row * P.n + min((c + 1u) * P.chunk, P.n);
    let a0 = min((lo + 3u) & ~3u, hi);
    let a1 = max(hi & ~3u, a0);
    let centre = vec4<A>(centre_of(row));
    // four independent accumulators (loads in flight, shorter dependency chains)
    var acc4 = vec4<A>(identity());
    var acc4b = vec4<A>(identity());
    var acc4c = vec4<A>(identity());
    var acc4d = vec4<A>(identity());
    var q = a0 / 4u;
    let q1 = a1 / 4u;
    for (; q + 3u < q1; q += 4u) {
        acc4 = combine4(acc4, load4(q, centre));
        acc4b = combine4(acc4b, load4(q + 1u, centre));
        acc4c = combine4(acc4c, load4(q + 2u, centre));
        acc4d = combine4(acc4d, load4(q + 3u, centre));
    }
    for (; q < q1; q += 1u) {
        acc4 = combine4(acc4, load4(q, centre));
    }
    acc4 = combine4(combine4(acc4, acc4b), combine4(acc4c, acc4d));
    var acc = identity();
    for (var i = lo; i < a0; i += 1u) {
        acc = combine(acc, load(i, row));
    }
    acc = combine(acc, fold4(acc4));
    for (var i = a1; i < hi; i += 1u) {
        acc = combine(acc, load(i, row));
    }
    out[t] = finish(acc);
}

// one thread per output column (scalar loads; any inner)
@compute @workgroup_size(WG)
fn cols(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if t >= P.total {
        return;
    }
    let k = column_of(t, P.inner, P.nchunks, P.chunk, P.n);
    let j = k.j; let c = k.c; let o = k.o; let start = k.start; let end = k.end;
    let col = o * P.inner + j;
    var idx = (o * P.n + start) * P.inner + j;
    var acc = identity();
    for (var k = start; k < end; k += 1u) {
        acc = combine(acc, load(idx, col));
        idx += P.inner;
    }
    out[t] = finish(acc);
}

// one thread per 4 adjacent output columns (inner % 4 == 0): vec4 loads
@compute @workgroup_size(WG)
fn cols4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if t >= P.total {
        return;
    }
    let iq = P.inner / 4u;
    let j4 = t % iq;
    let r = t / iq;
    let c = r % P.nchunks;
    let o = r / P.nchunks;
    let start = c * P.chunk;
    let end = min(start + P.chunk, P.n);
    let col = o * P.inner + 4u * j4;
    var centre = vec4<A>(A(0));
    if OP == 6u {
        centre = vec4<A>(aux[col], aux[col + 1u], aux[col + 2u], aux[col + 3u]);
    }
    var i4 = (o * P.n + start) * iq + j4;
    var acc = vec4<A>(identity());
    for (var k = start; k < end; k += 1u) {
        acc = combine4(acc, load4(i4, centre));
        i4 += iq;
    }
    let ob = (o * P.nchunks + c) * P.inner + 4u * j4;
    out[ob] = finish(acc.x);
    out[ob + 1u] = finish(acc.y);
    out[ob + 2u] = finish(acc.z);
    out[ob + 3u] = finish(acc.w);
}
