"""2-D heat diffusion: an explicit 5-point stencil, written once with the array API.

    python examples/heat_diffusion.py [--device URI] [--n 512] [--steps 100]
"""

from __future__ import annotations

import numpy as np

import pyaccel

from _common import parse_args, report, timed


def step(xp, u, alpha):  # noqa: ANN001, ANN201 - xp is pyaccel or numpy
    """One explicit Euler step on the interior; the boundary stays fixed."""
    lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
    inner = u[1:-1, 1:-1] + alpha * lap
    top, bottom = u[:1, :], u[-1:, :]
    left, right = u[1:-1, :1], u[1:-1, -1:]
    mid = xp.concat([left, inner, right], axis=1)
    return xp.concat([top, mid, bottom], axis=0)


def simulate(xp, u, alpha, steps):  # noqa: ANN001, ANN201
    for _ in range(steps):
        u = step(xp, u, alpha)
    return u


def main() -> int:
    args = parse_args(__doc__.splitlines()[0], n=(int, 256, "grid size"), steps=(int, 50, "time steps"))
    dev = pyaccel.device(args.device) if args.device else pyaccel.get_device()
    rng = np.random.default_rng()
    u0 = rng.random((args.n, args.n), dtype=np.float32)
    alpha = 0.2  # stable for alpha <= 0.25
    u_dev = pyaccel.asarray(u0, device=dev)
    got, t_dev = timed(lambda: simulate(pyaccel, u_dev, alpha, args.steps), args.repeat,
                       lambda r: r.to_numpy())
    expected, t_np = timed(lambda: simulate(np, u0, np.float32(alpha), args.steps), args.repeat)
    return report(f"heat diffusion {args.n}x{args.n}, {args.steps} steps", dev, got, expected, t_dev, t_np)


if __name__ == "__main__":
    raise SystemExit(main())
