// Inclusive prefix sums (OP = 0) or products (OP = 1) along an axis: x viewed as
// (outer, n, inner) -> out (outer, m, inner) with m = n + P.inc (P.inc = 1: a leading
// identity, 0 or 1: the Array API include_initial).
//
// Prefix: T = input storage type, A = accumulator type (f32 for f16), R = output type.
// Long rows are split into tiles (rows) or chunks (cols); the launcher computes the
// per-tile totals (reduce.wgsl), scans them exclusively (this kernel, recursively)
// and passes them as offs, so every tile starts from its offset (P.has_offs).
//
//   rows : inner == 1. One workgroup per (row, tile of WG*ITEMS elements): a coalesced
//          load into workgroup memory, a sequential scan of ITEMS elements per thread,
//          a Hillis-Steele scan of the WG thread totals, a coalesced store.
//   cols : one thread per (outer, chunk, inner) column, sequential over the chunk
//          (inner > 1, short rows, and every row on software devices, where the
//          barriers of the tile scan are costly).

override WG: u32 = 256u;
override ITEMS: u32 = 4u;
override OP: u32 = 0u;  // 0: sum (cumulative_sum), 1: product (cumulative_prod)

fn ident() -> A { return select(A(0), A(1), OP == 1u); }

fn comb(a: A, b: A) -> A {
    if OP == 1u { return a * b; }
    return a + b;
}

struct Params {
    outer: u32,
    n: u32,
    inner: u32,
    chunk: u32,     // tile / chunk length along n
    nchunks: u32,
    total: u32,     // workgroups (rows) or threads (cols)
    m: u32,         // output length along the axis (n + INC)
    inc: u32,       // 1: write a leading zero
    has_offs: u32,  // 1: add offs[(outer, chunk, inner)] (shape (outer, nchunks + 1, inner))
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// <input> the elements; ops/fusion_reduce.py replaces this block by a lazy elementwise tree
@group(0) @binding(0) var<storage, read> x: array<T>;
fn ld(i: u32) -> T { return x[i]; }
// </input>
@group(0) @binding(1) var<storage, read> offs: array<A>;
@group(0) @binding(2) var<storage, read_write> out: array<R>;
@group(0) @binding(3) var<uniform> P: Params;

var<workgroup> buf: array<A, WG * ITEMS>;
var<workgroup> tsum: array<A, WG>;

@compute @workgroup_size(WG)
fn rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if g >= P.total {
        return;
    }
    let row = g / P.nchunks;
    let c = g - row * P.nchunks;
    let start = c * WG * ITEMS;
    let src = row * P.n + start;
    let valid = min(WG * ITEMS, P.n - start);
    for (var r = 0u; r < ITEMS; r += 1u) {
        let k = r * WG + lid;
        var v = ident();
        if k < valid {
            v = A(ld(src + k));
        }
        buf[k] = v;
    }
    workgroupBarrier();
    var s = ident();
    for (var r = 0u; r < ITEMS; r += 1u) {
        s = comb(s, buf[lid * ITEMS + r]);
        buf[lid * ITEMS + r] = s;
    }
    tsum[lid] = s;
    workgroupBarrier();
    for (var d = 1u; d < WG; d = d * 2u) {
        var v = ident();
        if lid >= d {
            v = tsum[lid - d];
        }
        workgroupBarrier();
        tsum[lid] = comb(v, tsum[lid]);
        workgroupBarrier();
    }
    var prefix = ident();
    if lid > 0u {
        prefix = tsum[lid - 1u];
    }
    if P.has_offs != 0u {
        prefix = comb(offs[row * (P.nchunks + 1u) + c], prefix);
    }
    for (var r = 0u; r < ITEMS; r += 1u) {
        buf[lid * ITEMS + r] = comb(prefix, buf[lid * ITEMS + r]);
    }
    workgroupBarrier();
    let dst = row * P.m + P.inc + start;
    for (var r = 0u; r < ITEMS; r += 1u) {
        let k = r * WG + lid;
        if k < valid {
            out[dst + k] = R(buf[k]);
        }
    }
    if P.inc != 0u && c == 0u && lid == 0u {
        out[row * P.m] = R(ident());
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
    var acc = ident();
    if P.has_offs != 0u {
        acc = offs[(o * (P.nchunks + 1u) + c) * P.inner + j];
    }
    var i = (o * P.n + start) * P.inner + j;
    var d = (o * P.m + P.inc + start) * P.inner + j;
    for (var k = start; k < end; k += 1u) {
        acc = comb(acc, A(ld(i)));
        out[d] = R(acc);
        i += P.inner;
        d += P.inner;
    }
    if P.inc != 0u && c == 0u {
        out[o * P.m * P.inner + j] = R(ident());
    }
}
