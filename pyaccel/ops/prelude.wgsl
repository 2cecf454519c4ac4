// Prelude shared by reduce.wgsl, reduce64.wgsl, argreduce.wgsl and scan.wgsl (ops.launch.wgsl_source
// prepends it). Their `cols` entry points run one thread per (outer, chunk, inner) column
// of x viewed as (outer, n, inner), with n split into nchunks chunks of `chunk` elements.

struct Column {
    j: u32,      // index along inner
    c: u32,      // chunk
    o: u32,      // index along outer
    start: u32,  // first element of the chunk along n
    end: u32,    // one past its last element
}

fn column_of(t: u32, inner: u32, nchunks: u32, chunk: u32, n: u32) -> Column {
    let j = t % inner;
    let r = t / inner;
    let c = r % nchunks;
    let o = r / nchunks;
    let start = c * chunk;
    return Column(j, c, o, start, min(start + chunk, n));
}
