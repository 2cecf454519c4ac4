// Stable sort of the rows of x (rows x n) by a bitonic network over (key, index) pairs.
//
// Prefix: T = storage type. Each row is padded to L = next power of two >= n.
// Keys are u32 with the order of the values: floats map through the usual
// sign-flip (-0.0 as +0.0, every NaN to 0xffffffff so NaNs go last), i32 flips the
// sign bit, u32 is itself; DESCENDING complements the key (NaNs first, like a
// reversed ascending sort). Ties are broken by the original index, so the order is
// total and the sort is stable. Pads carry (0xffffffff, 0xffffffff) and end last.
//
//   local       : one workgroup per block of LB = 4 * WG consecutive elements, all
//                 compare-exchange steps with partner distance < LB in workgroup
//                 memory; with P.init it builds the keys from x and sorts blocks fully
//                 (stages k = 2 .. min(L, LB)), otherwise it finishes stage P.k.
//   global_step : one compare-exchange per thread for stage P.k, distance P.j >= LB.
//   gather_vals : values out[r, p] = x[r, idx[r, p]];  gather_idx : out[r, p] = idx[r, p].

override WG: u32 = 256u;
override KIND: u32 = 0u;          // 0 float, 1 signed int, 2 unsigned int
override DESCENDING: bool = false;

struct Params {
    rows: u32,
    n: u32,
    len: u32,       // L, a power of two >= n
    total: u32,     // rows * L
    k: u32,         // bitonic stage (sequence length being merged)
    j: u32,         // compare distance (global_step)
    init: u32,      // local: 1 = build keys from x and sort blocks
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> idx: array<u32>;
@group(0) @binding(3) var<storage, read_write> vals_out: array<T>;
@group(0) @binding(4) var<storage, read_write> idx_out: array<u32>;
@group(0) @binding(5) var<uniform> P: Params;

var<workgroup> sk: array<u32, 4u * WG>;
var<workgroup> si: array<u32, 4u * WG>;

fn key_of(v: T) -> u32 {
    var b: u32;
    switch KIND {
        case 0u: {
            b = bitcast<u32>(f32(v));
            if (b & 0x7fffffffu) > 0x7f800000u {
                b = 0xffffffffu;
            } else {
                if b == 0x80000000u {
                    b = 0u;
                }
                b = select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
            }
        }
        case 1u: {
            b = u32(v) ^ 0x80000000u;
        }
        default: {
            b = u32(v);
        }
    }
    if DESCENDING {
        b = ~b;
    }
    return b;
}

// (ka, ia) sorts after (kb, ib)
fn after(ka: u32, ia: u32, kb: u32, ib: u32) -> bool {
    return ka > kb || (ka == kb && ia > ib);
}

// one compare-exchange step (k, j) on the block in workgroup memory
fn local_step(blk: u32, lid: u32, k: u32, j: u32) {
    for (var q = 0u; q < 2u; q += 1u) {
        let p = lid + q * WG;                       // pair 0 .. 2 WG - 1
        let i = (p / j) * 2u * j + (p % j);         // lower element of the pair
        let up = ((blk + i) & (P.len - 1u) & k) == 0u;
        let ka = sk[i];
        let kb = sk[i + j];
        let ia = si[i];
        let ib = si[i + j];
        if after(ka, ia, kb, ib) == up {
            sk[i] = kb;
            sk[i + j] = ka;
            si[i] = ib;
            si[i + j] = ia;
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(WG)
fn local(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let LB = 4u * WG;
    let g = wid.x + wid.y * nwg.x;
    let blk = g * LB;
    if blk >= P.total {
        return;
    }
    for (var q = 0u; q < 4u; q += 1u) {
        let e = lid + q * WG;
        let f = blk + e;
        var kk = 0xffffffffu;
        var ii = 0xffffffffu;
        if f < P.total {
            if P.init != 0u {
                let r = f / P.len;
                let p = f - r * P.len;
                if p < P.n {
                    kk = key_of(x[r * P.n + p]);
                    ii = p;
                }
            } else {
                kk = keys[f];
                ii = idx[f];
            }
        }
        sk[e] = kk;
        si[e] = ii;
    }
    workgroupBarrier();
    if P.init != 0u {
        let kmax = min(P.len, LB);
        for (var k = 2u; k <= kmax; k = k * 2u) {
            for (var j = k / 2u; j > 0u; j = j / 2u) {
                local_step(blk, lid, k, j);
            }
        }
    } else {
        for (var j = LB / 2u; j > 0u; j = j / 2u) {
            local_step(blk, lid, P.k, j);
        }
    }
    for (var q = 0u; q < 4u; q += 1u) {
        let e = lid + q * WG;
        let f = blk + e;
        if f < P.total {
            keys[f] = sk[e];
            idx[f] = si[e];
        }
    }
}

@compute @workgroup_size(WG)
fn global_step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if t >= P.total / 2u {
        return;
    }
    let j = P.j;
    let i = (t / j) * 2u * j + (t % j);
    let up = (i & (P.len - 1u) & P.k) == 0u;
    let ka = keys[i];
    let kb = keys[i + j];
    let ia = idx[i];
    let ib = idx[i + j];
    if after(ka, ia, kb, ib) == up {
        keys[i] = kb;
        keys[i + j] = ka;
        idx[i] = ib;
        idx[i + j] = ia;
    }
}

@compute @workgroup_size(WG)
fn gather_vals(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if t >= P.rows * P.n {
        return;
    }
    let r = t / P.n;
    let p = t - r * P.n;
    vals_out[t] = x[r * P.n + idx[r * P.len + p]];
}

@compute @workgroup_size(WG)
fn gather_idx(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * (nwg.x * WG);
    if t >= P.rows * P.n {
        return;
    }
    let r = t / P.n;
    let p = t - r * P.n;
    idx_out[t] = idx[r * P.len + p];
}
