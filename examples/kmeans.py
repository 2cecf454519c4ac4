"""k-means clustering (Lloyd's algorithm) with the array API: distances by matmul,
assignment by argmin, centroid update by a one-hot matmul.

    python examples/kmeans.py [--device URI] [--points 20000] [--k 16] [--iters 10]
"""

from __future__ import annotations

import numpy as np

import pyaccel

from _common import parse_args, report, timed


def kmeans(xp, x, c, iters):  # noqa: ANN001, ANN201 - xp is pyaccel or numpy
    k = c.shape[0]
    ids = xp.arange(k, dtype=xp.int32, device=x.device)
    x2 = xp.sum(x * x, axis=1, keepdims=True)
    for _ in range(iters):
        d = x2 - 2 * (x @ xp.matrix_transpose(c)) + xp.sum(c * c, axis=1)[None, :]
        labels = xp.argmin(d, axis=1)
        onehot = xp.astype(labels[:, None] == ids[None, :], x.dtype)
        counts = xp.sum(onehot, axis=0)
        sums = xp.matrix_transpose(onehot) @ x
        c = xp.where(counts[:, None] > 0, sums / xp.maximum(counts, 1)[:, None], c)
    return c, labels


def main() -> int:
    args = parse_args(__doc__.splitlines()[0], points=(int, 20000, "points"), k=(int, 16, "clusters"),
                      iters=(int, 10, "iterations"))
    dev = pyaccel.device(args.device) if args.device else pyaccel.get_device()
    rng = np.random.default_rng()
    centers = rng.normal(0, 8, (args.k, 2)).astype(np.float32)
    x = (centers[rng.integers(0, args.k, args.points)] + rng.normal(0, 1, (args.points, 2))).astype(np.float32)
    c0 = x[rng.choice(args.points, args.k, replace=False)]
    xd, cd = pyaccel.asarray(x, device=dev), pyaccel.asarray(c0, device=dev)
    (c_dev, _), t_dev = timed(lambda: kmeans(pyaccel, xd, cd, args.iters), args.repeat,
                              lambda r: (r[0].to_numpy(), r[1]))
    (c_np, _), t_np = timed(lambda: kmeans(np, x, c0, args.iters), args.repeat)
    # float32 sums in another order can flip a near-tie label; centroids still agree closely
    return report(f"k-means: {args.points} points, k={args.k}, {args.iters} iterations", dev, c_dev, c_np,
                  t_dev, t_np, rtol=1e-3, atol=1e-3)


if __name__ == "__main__":
    raise SystemExit(main())
