// Elementwise skeleton: one invocation per output element, up to 3 inputs.
//
// Used by every elementwise op, astype, the creation ops (fill, arange, linspace,
// eye, tril/triu) and the gather/scatter copies behind indexing and manipulation.
// The Python generator (pyaccel/ops/elementwise.py) prepends, with
// ops.launch.specialize, the aliases
//     A0, A1, A2 : storage types of x0, x1, x2 (u32 when unused),
//     R          : storage type of the output,
//     T          : compute type of the op (f32 / i32 / u32; vec2<u32> / vec2<f32> /
//                  vec4<u32> for the multi-lane dtypes int64, uint64, float64, complex),
// one helper library (ew_float / ew_sint / ew_uint.wgsl), the multi-lane libraries the
// generated code calls (ew_i64, ew_f64, ... with their `// requires:` closure) and two
// generated functions:
//     fn compute(i: u32, o: vec4<i32>) -> R   // loads the inputs, applies the op row
//     fn dst(i: u32, o: vec4<i32>) -> i32     // where element i is stored
// `o` holds the element offsets of x0, x1, x2 and out for output element i, from a
// shape and per-operand strides (in elements; 0 broadcasts, negative flips), so one
// kernel covers contiguous, broadcast, strided and permuted operands.

override WG: u32 = 256u;

struct Params {
    n: u32,                      // elements to produce
    ndim: u32,                   // dims of the iteration shape (<= 8)
    pad0: u32,
    pad1: u32,
    aux: vec4<u32>,              // scalar operands (bits), slot k for operand k
    prm: vec4<u32>,              // op parameters (eye/tri: columns, rows, k)
    off: vec4<i32>,              // base offsets of x0, x1, x2, out
    shape: array<vec4<u32>, 8>,  // iteration shape: dim d in shape[d].x
    st: array<vec4<i32>, 8>,     // strides of dim d for (x0, x1, x2, out) in st[d]
    wide: array<vec4<u32>, 3>,   // multi-lane scalar operands (64-bit words, complex parts)
}

@group(0) @binding(0) var<storage, read_write> out: array<R>;
@group(0) @binding(1) var<uniform> p: Params;
@group(0) @binding(2) var<storage, read> x0: array<A0>;
@group(0) @binding(3) var<storage, read> x1: array<A1>;
@group(0) @binding(4) var<storage, read> x2: array<A2>;

fn offsets(i: u32) -> vec4<i32> {
    if (p.ndim == 1u) {  // contiguous / broadcast-scalar operands after dim merging
        return p.off + i32(i) * p.st[0];
    }
    var rem = i;
    var o = p.off;
    for (var d = i32(p.ndim) - 1; d >= 0; d = d - 1) {
        let s = p.shape[d].x;
        o = o + i32(rem % s) * p.st[d];
        rem = rem / s;
    }
    return o;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * (nwg.x * WG);
    if (i >= p.n) {
        return;
    }
    let o = offsets(i);
    out[dst(i, o)] = compute(i, o);
}
