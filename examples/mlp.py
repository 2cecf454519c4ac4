"""MLP forward pass: three dense layers with ReLU and a numerically stable softmax.

    python examples/mlp.py [--device URI] [--batch 256] [--width 512]
"""

from __future__ import annotations

import itertools

import numpy as np

import pyaccel

from _common import parse_args, report, timed


def forward(xp, x, layers, softmax):  # noqa: ANN001, ANN201 - xp is pyaccel or numpy
    h = x
    for i, (w, b) in enumerate(layers):
        h = h @ w + b
        if i < len(layers) - 1:
            h = xp.maximum(h, 0)
    return softmax(h)


def np_softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main() -> int:
    args = parse_args(__doc__.splitlines()[0], batch=(int, 256, "batch size"), width=(int, 512, "hidden width"),
                      classes=(int, 10, "output classes"))
    dev = pyaccel.device(args.device) if args.device else pyaccel.get_device()
    rng = np.random.default_rng()
    sizes = [784, args.width, args.width, args.classes]
    layers_np = [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
                  (rng.standard_normal(b) * 0.1).astype(np.float32)) for a, b in itertools.pairwise(sizes)]
    x = rng.standard_normal((args.batch, 784)).astype(np.float32)
    layers_dev = [(pyaccel.asarray(w, device=dev), pyaccel.asarray(b, device=dev)) for w, b in layers_np]
    xd = pyaccel.asarray(x, device=dev)
    got, t_dev = timed(lambda: forward(pyaccel, xd, layers_dev, lambda z: pyaccel.nn.softmax(z, axis=-1)),
                       args.repeat, lambda r: r.to_numpy())
    expected, t_np = timed(lambda: forward(np, x, layers_np, np_softmax), args.repeat)
    print(f"predicted classes (first 8): {np.argmax(got, axis=1)[:8].tolist()}")
    return report(f"MLP forward {sizes}, batch {args.batch}", dev, got, expected, t_dev, t_np,
                  rtol=1e-3, atol=1e-5)


if __name__ == "__main__":
    raise SystemExit(main())
