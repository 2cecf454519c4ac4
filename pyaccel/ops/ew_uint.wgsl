// Unsigned-integer (and bool) helpers for elementwise ops (compute type T = u32;
// uint8/uint16 data is stored widened and masked to its width after every op; bool is
// stored as 0/1). Overflow wraps like NumPy; division by zero gives 0 for // and %
// (NumPy's result); shifts by >= 32 give 0.

fn u_floor_divide(x: T, y: T) -> T {
    if (y == 0u) { return 0u; }
    return x / y;
}

fn u_remainder(x: T, y: T) -> T {
    if (y == 0u) { return 0u; }
    return x % y;
}

fn u_pow(x: T, y: T) -> T {
    var result: T = 1u;
    var base = x;
    var e = y;
    loop {
        if (e == 0u) { break; }
        if ((e & 1u) == 1u) { result = result * base; }
        base = base * base;
        e = e >> 1u;
    }
    return result;
}

fn u_left_shift(x: T, y: T) -> T {
    if (y >= 32u) { return 0u; }
    return x << y;
}

fn u_right_shift(x: T, y: T) -> T {
    if (y >= 32u) { return 0u; }
    return x >> y;
}
