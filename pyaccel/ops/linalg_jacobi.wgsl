// Cyclic Jacobi methods with the parallel (round-robin) ordering: eigh (two-sided) and
// the SVD (one-sided, Hestenes).
//
// Prefix: T = f32. n columns are padded to an even count np (index n is a dummy when n is
// odd); a sweep is np - 1 rounds; round r pairs index np - 1 with r and (r + i) mod (np - 1)
// with (r - i) mod (np - 1), i = 1 .. np/2 - 1, so the np/2 pairs of a round are disjoint
// and every pair meets once per sweep. One workgroup per (matrix, pair).
//  * eigh, two dispatches per round: `eig_rows` computes the rotation (c, s) that zeroes
//    a[p, q] (Golub & Van Loan, sym.schur2) from rows p, q (which it owns), stores it in
//    rot and rotates rows p and q; `eig_cols` rotates columns p and q of a and of the
//    eigenvector matrix v (so a <- J^T a J, v <- v J) and sets a[p, q] = a[q, p] = 0.
//  * SVD, one dispatch per round: `svd_round` rotates columns p and q of u (m x n) so that
//    they become orthogonal, and the same columns of v (n x n); it stores
//    |u_p . u_q| / (|u_p| |u_q|) in conv[(matrix, round, pair)] for the host's
//    convergence check (rotations below P.tol are skipped).
// Rotations use Rutishauser's form x' = x - s (y + r x), y' = y + s (x - r y), r = s / (1 + c):
// a small correction to x and y, so that c^2 + s^2 rounding above 1 (c rounds to 1 for small
// angles) does not make column norms drift over thousands of rotations.
// Loops per invocation: a few (m / WG) + log2(WG).
//
// Small matrices (n <= 256): `eig_fused` / `svd_fused` run P.nrounds consecutive rounds in
// one dispatch, one workgroup (WGF threads) per matrix: P.tpp threads per pair split the
// rows / columns, workgroup and storage barriers separate the phases and the rounds. The
// host picks nrounds so that an invocation stays within the loop cap (MAX_LOOP).

override WG: u32 = 64u;

struct Params {
    n: u32,      // columns (matrix order for eigh)
    m: u32,      // rows of u (SVD); n for eigh
    np: u32,     // n padded to even
    round: u32,
    batch: u32,
    groups: u32, // batch * np / 2
    tol: f32,
    nrounds: u32, // fused kernels: rounds round .. round + nrounds - 1 in this dispatch
    tpp: u32,     // fused kernels: threads per pair (a power of two)
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<storage, read_write> a: array<T>;
@group(0) @binding(1) var<storage, read_write> v: array<T>;
@group(0) @binding(2) var<storage, read_write> rot: array<T>;
@group(0) @binding(3) var<uniform> P: Params;

var<workgroup> r0: array<f32, WG>;
var<workgroup> r1: array<f32, WG>;
var<workgroup> r2: array<f32, WG>;

// (matrix, p, q) of workgroup g, p < q; q == n marks a dummy pair
fn pair(g: u32) -> vec3<u32> {
    return pair_r(g, P.round);
}

fn pair_r(g: u32, round: u32) -> vec3<u32> {
    let half = P.np / 2u;
    let b = g / half;
    let i = g % half;
    let mm = P.np - 1u;
    var p: u32;
    var q: u32;
    if (i == 0u) {
        p = round;
        q = mm;
    } else {
        p = (round + i) % mm;
        q = (round + mm - i) % mm;
    }
    return vec3<u32>(b, min(p, q), max(p, q));
}

// NaN / inf tests on the bits (WGSL lets compilers assume finite floats in comparisons)
fn finite3(x: f32, y: f32, z: f32) -> bool {
    let e = 0x7f800000u;
    return (bitcast<u32>(x) & e) != e && (bitcast<u32>(y) & e) != e && (bitcast<u32>(z) & e) != e;
}

// tangent of the rotation angle for the 2x2 symmetric problem [[app, apq], [apq, aqq]]
fn rot_t(app: f32, aqq: f32, apq: f32) -> f32 {
    let tau = (aqq - app) / (2.0 * apq);
    let sg = select(1.0, -1.0, tau < 0.0);
    if (abs(tau) > 1e18) { return 0.5 / tau; }
    return sg / (abs(tau) + sqrt(1.0 + tau * tau));
}

@compute @workgroup_size(WG)
fn eig_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= P.groups) { return; }
    let pq = pair(g);
    let n = P.n;
    if (pq.z >= n) { return; }
    let b = pq.x;
    let p = pq.y;
    let q = pq.z;
    let base = b * n * n;
    let app = f32(a[base + p * n + p]);
    let aqq = f32(a[base + q * n + q]);
    let apq = f32(a[base + p * n + q]);
    var c = 1.0;
    var s = 0.0;
    if (apq != 0.0) {
        let t = rot_t(app, aqq, apq);
        c = 1.0 / sqrt(1.0 + t * t);
        s = t * c;
    }
    workgroupBarrier();  // everyone has read a[p, p], a[q, q], a[p, q] before rows change
    let rs = s / (1.0 + c);
    if (lid == 0u) {
        rot[2u * g] = T(c);
        rot[2u * g + 1u] = T(s);
    }
    for (var j = lid; j < n; j += WG) {
        let x = f32(a[base + p * n + j]);
        let y = f32(a[base + q * n + j]);
        a[base + p * n + j] = T(x - s * (y + rs * x));
        a[base + q * n + j] = T(y + s * (x - rs * y));
    }
}

@compute @workgroup_size(WG)
fn eig_cols(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= P.groups) { return; }
    let pq = pair(g);
    let n = P.n;
    if (pq.z >= n) { return; }
    let b = pq.x;
    let p = pq.y;
    let q = pq.z;
    let base = b * n * n;
    let c = f32(rot[2u * g]);
    let s = f32(rot[2u * g + 1u]);
    if (s == 0.0 && c == 1.0) { return; }
    let rs = s / (1.0 + c);
    for (var j = lid; j < n; j += WG) {
        let x = f32(a[base + j * n + p]);
        let y = f32(a[base + j * n + q]);
        var np_ = x - s * (y + rs * x);
        var nq = y + s * (x - rs * y);
        if (j == q) { np_ = 0.0; }
        if (j == p) { nq = 0.0; }
        a[base + j * n + p] = T(np_);
        a[base + j * n + q] = T(nq);
        let vx = f32(v[base + j * n + p]);
        let vy = f32(v[base + j * n + q]);
        v[base + j * n + p] = T(vx - s * (vy + rs * vx));
        v[base + j * n + q] = T(vy + s * (vx - rs * vy));
    }
}

@compute @workgroup_size(WG)
fn svd_round(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= P.groups) { return; }
    let pq = pair(g);
    let n = P.n;
    let m = P.m;
    let b = pq.x;
    let p = pq.y;
    let q = min(pq.z, n - 1u);  // a dummy pair still joins the barriers below
    let ub = b * m * n;
    let vb = b * n * n;
    var al = 0.0;
    var be = 0.0;
    var ga = 0.0;
    for (var i = lid; i < m; i += WG) {
        let x = f32(a[ub + i * n + p]);
        let y = f32(a[ub + i * n + q]);
        al = al + x * x;
        be = be + y * y;
        ga = ga + x * y;
    }
    r0[lid] = al;
    r1[lid] = be;
    r2[lid] = ga;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            r0[lid] = r0[lid] + r0[lid + s];
            r1[lid] = r1[lid] + r1[lid + s];
            r2[lid] = r2[lid] + r2[lid + s];
        }
        workgroupBarrier();
    }
    al = r0[0];
    be = r1[0];
    ga = r2[0];
    var off = 0.0;
    if (al != 0.0 && be != 0.0) { off = abs(ga) / sqrt(al) / sqrt(be); }
    if (!finite3(al, be, ga)) { off = bitcast<f32>(0x7fc00000u); }
    if (pq.z >= n) { off = 0.0; }
    if (lid == 0u) { rot[P.round * P.groups + g] = T(off); }
    if (pq.z >= n || !finite3(al, be, ga) || !(off > P.tol)) { return; }
    let zeta = (be - al) / (2.0 * ga);
    let sg = select(1.0, -1.0, zeta < 0.0);
    var t = sg / (abs(zeta) + sqrt(1.0 + zeta * zeta));
    if (abs(zeta) > 1e18) { t = 0.5 / zeta; }
    let c = 1.0 / sqrt(1.0 + t * t);
    let s = t * c;
    let rs = s / (1.0 + c);
    for (var i = lid; i < m; i += WG) {
        let x = f32(a[ub + i * n + p]);
        let y = f32(a[ub + i * n + q]);
        a[ub + i * n + p] = T(x - s * (y + rs * x));
        a[ub + i * n + q] = T(y + s * (x - rs * y));
    }
    for (var i = lid; i < n; i += WG) {
        let x = f32(v[vb + i * n + p]);
        let y = f32(v[vb + i * n + q]);
        v[vb + i * n + p] = T(x - s * (y + rs * x));
        v[vb + i * n + q] = T(y + s * (x - rs * y));
    }
}

const WGF: u32 = 256u;
var<workgroup> f0: array<f32, WGF>;
var<workgroup> f1: array<f32, WGF>;
var<workgroup> f2: array<f32, WGF>;
var<workgroup> fc: array<f32, 128>;
var<workgroup> fs: array<f32, 128>;

@compute @workgroup_size(WGF)
fn svd_fused(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let b = wid.x + wid.y * nwg.x;
    if (b >= P.batch) { return; }
    let n = P.n;
    let m = P.m;
    let half = P.np / 2u;
    let tpp = P.tpp;
    let pi = lid / tpp;  // this thread's pair
    let sub = lid % tpp;
    let live = pi < half;
    let ub = b * m * n;
    let vb = b * n * n;
    for (var rr = 0u; rr < P.nrounds; rr++) {
        let round = P.round + rr;
        var p = 0u;
        var q = 0u;
        var has_pair = false;
        if (live) {
            let pq = pair_r(b * half + pi, round);
            p = pq.y;
            q = pq.z;
            has_pair = q < n;
        }
        var al = 0.0;
        var be = 0.0;
        var ga = 0.0;
        if (has_pair) {
            for (var i = sub; i < m; i += tpp) {
                let x = f32(a[ub + i * n + p]);
                let y = f32(a[ub + i * n + q]);
                al = al + x * x;
                be = be + y * y;
                ga = ga + x * y;
            }
        }
        f0[lid] = al;
        f1[lid] = be;
        f2[lid] = ga;
        workgroupBarrier();
        for (var s = tpp / 2u; s > 0u; s = s / 2u) {
            if (sub < s) {
                f0[lid] = f0[lid] + f0[lid + s];
                f1[lid] = f1[lid] + f1[lid + s];
                f2[lid] = f2[lid] + f2[lid + s];
            }
            workgroupBarrier();
        }
        if (has_pair) {
            let l0 = pi * tpp;
            al = f0[l0];
            be = f1[l0];
            ga = f2[l0];
            var off = 0.0;
            if (al != 0.0 && be != 0.0) { off = abs(ga) / sqrt(al) / sqrt(be); }
            let fin = finite3(al, be, ga);
            if (!fin) { off = bitcast<f32>(0x7fc00000u); }
            if (sub == 0u) { rot[round * P.groups + b * half + pi] = T(off); }
            if (fin && off > P.tol) {
                let zeta = (be - al) / (2.0 * ga);
                let sg = select(1.0, -1.0, zeta < 0.0);
                var t = sg / (abs(zeta) + sqrt(1.0 + zeta * zeta));
                if (abs(zeta) > 1e18) { t = 0.5 / zeta; }
                let c = 1.0 / sqrt(1.0 + t * t);
                let sn = t * c;
                let rs = sn / (1.0 + c);
                for (var i = sub; i < m; i += tpp) {
                    let x = f32(a[ub + i * n + p]);
                    let y = f32(a[ub + i * n + q]);
                    a[ub + i * n + p] = T(x - sn * (y + rs * x));
                    a[ub + i * n + q] = T(y + sn * (x - rs * y));
                }
                for (var i = sub; i < n; i += tpp) {
                    let x = f32(v[vb + i * n + p]);
                    let y = f32(v[vb + i * n + q]);
                    v[vb + i * n + p] = T(x - sn * (y + rs * x));
                    v[vb + i * n + q] = T(y + sn * (x - rs * y));
                }
            }
        } else if (live && sub == 0u) {
            rot[round * P.groups + b * half + pi] = T(0.0);
        }
        storageBarrier();
        workgroupBarrier();
    }
}

@compute @workgroup_size(WGF)
fn eig_fused(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let b = wid.x + wid.y * nwg.x;
    if (b >= P.batch) { return; }
    let n = P.n;
    let half = P.np / 2u;
    let tpp = P.tpp;
    let pi = lid / tpp;
    let sub = lid % tpp;
    let live = pi < half;
    let base = b * n * n;
    for (var rr = 0u; rr < P.nrounds; rr++) {
        let round = P.round + rr;
        var p = 0u;
        var q = 0u;
        var has_pair = false;
        if (live) {
            let pq = pair_r(b * half + pi, round);
            p = pq.y;
            q = pq.z;
            has_pair = q < n;
        }
        // 1. rotation of each pair (from rows p, q before any of them changes)
        if (has_pair && sub == 0u) {
            let app = f32(a[base + p * n + p]);
            let aqq = f32(a[base + q * n + q]);
            let apq = f32(a[base + p * n + q]);
            var c = 1.0;
            var s = 0.0;
            if (apq != 0.0) {
                let t = rot_t(app, aqq, apq);
                c = 1.0 / sqrt(1.0 + t * t);
                s = t * c;
            }
            fc[pi] = c;
            fs[pi] = s;
        }
        storageBarrier();
        workgroupBarrier();
        var c = 1.0;
        var s = 0.0;
        if (has_pair) {
            c = fc[pi];
            s = fs[pi];
        }
        let rs = s / (1.0 + c);
        // 2. rows p and q
        if (has_pair && s != 0.0) {
            for (var j = sub; j < n; j += tpp) {
                let x = f32(a[base + p * n + j]);
                let y = f32(a[base + q * n + j]);
                a[base + p * n + j] = T(x - s * (y + rs * x));
                a[base + q * n + j] = T(y + s * (x - rs * y));
            }
        }
        storageBarrier();
        workgroupBarrier();
        // 3. columns p and q of a and v
        if (has_pair && s != 0.0) {
            for (var j = sub; j < n; j += tpp) {
                let x = f32(a[base + j * n + p]);
                let y = f32(a[base + j * n + q]);
                var np_ = x - s * (y + rs * x);
                var nq = y + s * (x - rs * y);
                if (j == q) { np_ = 0.0; }
                if (j == p) { nq = 0.0; }
                a[base + j * n + p] = T(np_);
                a[base + j * n + q] = T(nq);
                let vx = f32(v[base + j * n + p]);
                let vy = f32(v[base + j * n + q]);
                v[base + j * n + p] = T(vx - s * (vy + rs * vx));
                v[base + j * n + q] = T(vy + s * (vx - rs * vy));
            }
        }
        storageBarrier();
        workgroupBarrier();
    }
}
