"""Per-column mean and standard deviation of a data set larger than one device buffer, with Dask.

    python examples/dask_reduce.py [--device vulkan:0] [--gib 2.25] [--cols 64]
                                   [--chunk-mib 32] [--quick 1]

The data set (``--gib`` GiB of float32, by default more than a WebGPU device's
``max_buffer_size`` of 2 GiB) never exists in one piece: ``da.map_blocks`` generates each
chunk where it is used — on the device as a pyaccel Array, or in NumPy for the comparison —
and Dask streams the chunks through ``sum`` and ``sum of squares`` reductions (its tree
reduction keeps only a few chunks alive). The result is a pyaccel Array on the device,
checked against the same computation with NumPy chunks, and both are timed.
``--quick 1`` (the example test) uses a 1 MiB data set in 4 chunks.
"""

from __future__ import annotations

import math
import time

import dask
import dask.array as da
import numpy as np

import pyaccel

from _common import parse_args, print_times, verdict


def make_block(xp, cols: int, device=None):  # noqa: ANN001, ANN201 - any namespace
    """A ``map_blocks`` function making one chunk of rows with ``xp`` (pyaccel or NumPy)."""
    kw = {} if device is None else {"device": device}

    def block(block_info=None):  # noqa: ANN001, ANN202
        r0, r1 = block_info[None]["array-location"][0]
        phase = (r0 * 1e-3) % (2 * math.pi)  # the row offset enters as one small scalar
        i = xp.reshape(xp.arange(r1 - r0, dtype=xp.float32, **kw), (r1 - r0, 1))
        j = xp.reshape(xp.arange(cols, dtype=xp.float32, **kw), (1, cols))
        return (j * 0.1 + xp.sin(i * 1e-3 + j * 0.37 + phase)
                + xp.cos(i * 7e-4 + j) * 0.25)
    return block


def column_stats(d: da.Array, shift):  # noqa: ANN001, ANN201
    """(mean, std) per column from one pass of sums of ``d - shift`` (a per-column estimate of
    the mean, so the float32 sum of squares does not cancel); Dask computes both together."""
    n = d.shape[0]
    c = d.map_blocks(lambda b: b - shift, dtype=d.dtype)
    s1, s2 = dask.compute(c.sum(axis=0), (c * c).sum(axis=0))
    m = s1 / n
    return m + shift, (s2 / n - m * m) ** 0.5


def main() -> int:
    args = parse_args(__doc__.splitlines()[0], gib=(float, 2.25, "data set size in GiB"),
                      cols=(int, 64, "columns"), chunk_mib=(int, 32, "chunk size in MiB"),
                      quick=(int, 0, "1: a 1 MiB data set in 4 chunks (for tests)"))
    dev = pyaccel.device(args.device) if args.device else pyaccel.get_device()
    gib = 1 / 1024 if args.quick else args.gib
    cols = 16 if args.quick else args.cols
    rows_per_chunk = max(1, args.chunk_mib * 2**20 // (4 * cols))
    if args.quick:
        rows_per_chunk = 4096
    nchunks = max(1, math.ceil(gib * 2**30 / (4 * cols * rows_per_chunk)))
    rows = nchunks * rows_per_chunk
    total = rows * cols * 4
    chunks = ((rows_per_chunk,) * nchunks, (cols,))
    limit = dev.limits.max_buffer_size
    print(f"data set: {rows} x {cols} float32 = {total / 2**30:.3f} GiB in {nchunks} chunks of "
          f"{rows_per_chunk * cols * 4 / 2**20:.1f} MiB; {dev.uri} max_buffer_size "
          f"{limit / 2**30:.2f} GiB ({total / limit:.2f}x)" if limit < 2**50 else
          f"data set: {rows} x {cols} float32 = {total / 2**30:.3f} GiB in {nchunks} chunks")

    meta = pyaccel.empty((0, 0), dtype=pyaccel.float32, device=dev)
    d_dev = da.map_blocks(make_block(pyaccel, cols, dev), chunks=chunks, dtype=np.float32,
                          meta=meta)
    d_np = da.map_blocks(make_block(np, cols), chunks=chunks, dtype=np.float32,
                         meta=np.empty((0, 0), np.float32))
    shift_np = np.arange(cols, dtype=np.float32) * np.float32(0.1)  # the columns' offsets
    shift_dev = pyaccel.asarray(shift_np, device=dev)
    best_dev = best_np = float("inf")
    with dask.config.set(scheduler="threads"):
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            mean, std = column_stats(d_dev, shift_dev)
            got = np.stack([mean.to_numpy(), std.to_numpy()])
            best_dev = min(best_dev, time.perf_counter() - t0)
            assert isinstance(mean, pyaccel.Array) and mean.device is dev
            t0 = time.perf_counter()
            want = np.stack(column_stats(d_np, shift_np))
            best_np = min(best_np, time.perf_counter() - t0)
    print_times(f"per-column mean and std over {total / 2**30:.3f} GiB (Dask, threaded)", dev,
                best_dev, best_np)
    print("  (numpy row: the same Dask graph with NumPy chunks)")
    err = float(np.max(np.abs(got - want)))
    ok = bool(got.shape == (2, cols) and np.all(np.isfinite(got)) and err <= 2e-4)
    return verdict(ok, f"max |device - numpy| over mean and std = {err:.2e} (limit 2e-4; "
                   f"mean of column {cols - 1} = {got[0, -1]:.4f})")


if __name__ == "__main__":
    raise SystemExit(main())
