// Signed-integer helpers for elementwise ops (compute type T = i32; int8/int16 data is
// stored widened and wrapped to its width after every op by the generated code).
// Overflow wraps (two's complement) like NumPy. Division by zero gives 0 for // and %
// (NumPy's result; WGSL itself defines x / 0 = x). Shifts by >= the bit width give 0
// (left) or the sign fill (right), as NumPy does. pow with a negative exponent, where
// NumPy raises, gives 1 / x truncated: 1 for x == 1, +-1 for x == -1, else 0.

// The truncated remainder is computed as x - y * (x / y): WGSL's signed `%` comes out
// wrong for negative operands through the GL backend (llvmpipe: -7 % 3 == 0).
fn i_floor_divide(x: T, y: T) -> T {
    if (y == 0) { return 0; }
    let q = x / y;
    if ((x - y * q != 0) && ((x < 0) != (y < 0))) { return q - 1; }
    return q;
}

fn i_remainder(x: T, y: T) -> T {
    if (y == 0) { return 0; }
    let r = x - y * (x / y);
    if (r != 0 && ((r < 0) != (y < 0))) { return r + y; }
    return r;
}

fn i_pow(x: T, y: T) -> T {
    if (y < 0) {
        if (x == 1) { return 1; }
        if (x == -1) { return select(1, -1, (y & 1) == 1); }
        return 0;
    }
    var result: T = 1;
    var base = x;
    var e = y;
    loop {
        if (e == 0) { break; }
        if ((e & 1) == 1) { result = result * base; }
        base = base * base;
        e = e >> 1u;
    }
    return result;
}

fn i_left_shift(x: T, y: T) -> T {
    if (y < 0 || y >= 32) { return 0; }
    return x << u32(y);
}

fn i_right_shift(x: T, y: T) -> T {
    if (y < 0 || y >= 32) { return select(0, -1, x < 0); }
    return x >> u32(y);
}
