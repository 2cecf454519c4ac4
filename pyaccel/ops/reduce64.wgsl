// Integer sums accumulated in 64 bits (int64 / uint64 results): x viewed as (outer, n, inner)
// -> out (outer, nchunks, inner) as vec2<u32> (low word, high word; NumPy's little-endian
// int64 bytes). Sums wrap modulo 2^64 like NumPy's; the signedness of the result does not
// change its bits, only the extension of 32-bit inputs (SIGNED) matters.
//
// x is bound as 32-bit words: one element per word (bool / int8..int32 / uint8..uint32, stored
// widened to 32 bits; SIGNED sign-extends them) or, with WIDE, two words per element (int64 /
// uint64 data, and the partials of an earlier pass). The Python launcher
// (gpu_kernels.sum64_axis) plans passes with the reduce.wgsl planner and repeats them, WIDE,
// until nchunks == 1.
//
// The 64-bit add with carry: lo' = lo + v_lo; hi' = hi + v_hi + (lo' < v_lo).
//
// Entry points (bindings: rows / seg x, out, x4; cols x, out), as in reduce.wgsl:
//   rows : inner == 1. One workgroup per (row, chunk): threads stride over the chunk with
//          vec4 loads (4 narrow or 2 wide elements), then a tree in workgroup memory.
//   seg  : inner == 1 on software devices: one thread per (row, chunk), sequential.
//   cols : one thread per (outer, chunk, inner) output column, looping over the chunk of n.

override WG: u32 = 256u;
override WIDE: bool = false;    // two words per element (64-bit data)
override SIGNED: bool = false;  // one-word elements are i32 (sign-extended to 64 bits)

struct Params {
    outer: u32,
    n: u32,
    inner: u32,
    chunk: u32,     // elements of n per block
    nchunks: u32,   // blocks per (outer, inner) column
    total: u32,     // workgroups (rows) or threads (seg, cols) doing work
    _pad0: u32,
    _pad1: u32,
}

// <input> the words summed; ops/fusion_reduce.py replaces this block by a lazy 32-bit
// elementwise tree computed in place (never WIDE)
@group(0) @binding(0) var<storage, read> x: array<u32>;
// the same buffer as x, 4 words at a time (16-byte aligned runs)
@group(0) @binding(3) var<storage, read> x4: array<vec4<u32>>;
fn ldw(i: u32) -> u32 { return x[i]; }
fn ldw4(q: u32) -> vec4<u32> { return x4[q]; }
// </input>
@group(0) @binding(1) var<storage, read_write> out: array<vec2<u32>>;
@group(0) @binding(2) var<uniform> P: Params;

var<workgroup> sh: array<vec2<u32>, WG>;

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < b.x));
}

// Element i of x as (low word, high word).
fn load(i: u32) -> vec2<u32> {
    if WIDE {
        return vec2<u32>(ldw(2u * i), ldw(2u * i + 1u));
    }
    let w = ldw(i);
    return vec2<u32>(w, select(0u, bitcast<u32>(bitcast<i32>(w) >> 31u), SIGNED));
}

// Four 64-bit accumulators: narrow data, lanes k of (lo, hi); WIDE, two in lo as (lo, hi, lo, hi).
struct Acc4 {
    lo: vec4<u32>,
    hi: vec4<u32>,
}

fn zero4() -> Acc4 {
    return Acc4(vec4<u32>(0u), vec4<u32>(0u));
}

// a plus the elements in the 4 words v
fn add4(a: Acc4, v: vec4<u32>) -> Acc4 {
    if WIDE {
        let s = a.lo + v;
        let c = select(vec2<u32>(0u), vec2<u32>(1u), s.xz < v.xz);
        return Acc4(vec4<u32>(s.x, s.y + c.x, s.z, s.w + c.y), a.hi);
    }
    let lo = a.lo + v;
    var ext = vec4<u32>(0u);
    if SIGNED {
        ext = bitcast<vec4<u32>>(bitcast<vec4<i32>>(v) >> vec4<u32>(31u));
    }
    return Acc4(lo, a.hi + ext + select(vec4<u32>(0u), vec4<u32>(1u), lo < v));
}

fn merge4(a: Acc4, b: Acc4) -> Acc4 {
    if WIDE {
        return add4(a, b.lo);
    }
    let lo = a.lo + b.lo;
    return Acc4(lo, a.hi + b.hi + select(vec4<u32>(0u), vec4<u32>(1u), lo < b.lo));
}

fn fold4(a: Acc4) -> vec2<u32> {
    if WIDE {
        return add64(a.lo.xy, a.lo.zw);
    }
    return add64(add64(vec2<u32>(a.lo.x, a.hi.x), vec2<u32>(a.lo.y, a.hi.y)),
                 add64(vec2<u32>(a.lo.z, a.hi.z), vec2<u32>(a.lo.w, a.hi.w)));
}

// elements per vec4 of words
fn per4() -> u32 {
    return select(4u, 2u, WIDE);
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
    let lo = row * P.n + c * P.chunk;             // element range [lo, hi) of this block
    let hi = row * P.n + min((c + 1u) * P.chunk, P.n);
    let e4 = per4();
    let a0 = min((lo + e4 - 1u) / e4 * e4, hi);   // [a0, a1): whole aligned vec4s
    let a1 = max(hi / e4 * e4, a0);
    var acc = zero4();
    var accb = zero4();
    var q = a0 / e4 + lid;
    let q1 = a1 / e4;
    for (; q + WG < q1; q += 2u * WG) {  // two loads in flight per thread
        acc = add4(acc, ldw4(q));
        accb = add4(accb, ldw4(q + WG));
    }
    if q < q1 {
        acc = add4(acc, ldw4(q));
    }
    var s = fold4(merge4(acc, accb));
    // the unaligned head [lo, a0) and tail [a1, hi): at most 3 elements each
    if lid < 4u {
        if lo + lid < a0 {
            s = add64(s, load(lo + lid));
        }
    } else if lid < 8u {
        if a1 + lid - 4u < hi {
            s = add64(s, load(a1 + lid - 4u));
        }
    }
    sh[lid] = s;
    workgroupBarrier();
    var h = WG / 2u;
    loop {
        if h == 0u {
            break;
        }
        if lid < h {
            sh[lid] = add64(sh[lid], sh[lid + h]);
        }
        workgroupBarrier();
        h = h / 2u;
    }
    if lid == 0u {
        out[g] = sh[0];
    }
}

// inner == 1, one thread per (row, chunk) reading its run sequentially (vec4 body, scalar
// head / tail), no workgroup memory: software devices (barriers are costly there).
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
    let e4 = per4();
    let a0 = min((lo + e4 - 1u) / e4 * e4, hi);
    let a1 = max(hi / e4 * e4, a0);
    // four independent accumulators (loads in flight, shorter dependency chains)
    var acc = zero4();
    var accb = zero4();
    var accc = zero4();
    var accd = zero4();
    var q = a0 / e4;
    let q1 = a1 / e4;
    for (; q + 3u < q1; q += 4u) {
        acc = add4(acc, ldw4(q));
        accb = add4(accb, ldw4(q + 1u));
        accc = add4(accc, ldw4(q + 2u));
        accd = add4(accd, ldw4(q + 3u));
    }
    for (; q < q1; q += 1u) {
        acc = add4(acc, ldw4(q));
    }
    var s = fold4(merge4(merge4(acc, accb), merge4(accc, accd)));
    for (var i = lo; i < a0; i += 1u) {
        s = add64(s, load(i));
    }
    for (var i = a1; i < hi; i += 1u) {
        s = add64(s, load(i));
    }
    out[t] = s;
}

// one thread per output column (any inner; adjacent threads read adjacent elements)
@compute @workgroup_size(WG)
fn cols(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if t >= P.total {
        return;
    }
    let k = column_of(t, P.inner, P.nchunks, P.chunk, P.n);
    var idx = (k.o * P.n + k.start) * P.inner + k.j;
    var s = vec2<u32>(0u);
    for (var m = k.start; m < k.end; m += 1u) {
        s = add64(s, load(idx));
        idx += P.inner;
    }
    out[t] = s;
}
