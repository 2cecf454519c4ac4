"""scikit-learn on pyaccel arrays: PCA, then Ridge regression, on the digits data set that
scikit-learn ships (1797 images of 8x8 pixels), with ``array_api_dispatch=True`` on the best
device; the fitted model and its predictions are checked against the same pipeline on NumPy.

    python examples/sklearn_pca.py [--device URI] [--components 16] [--dtype float32]
"""

from __future__ import annotations

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # scikit-learn's array-API mode needs it

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

import pyaccel  # noqa: E402

from _common import parse_args, print_times, timed, verdict  # noqa: E402


def fit_predict(X, y, components: int):  # noqa: ANN001, ANN201 - NumPy or pyaccel arrays
    """PCA to ``components`` dimensions, Ridge on the projection; returns (scores, predictions)."""
    pca = PCA(n_components=components, svd_solver="full")
    Z = pca.fit_transform(X)
    model = Ridge(alpha=1.0).fit(Z, y)
    return Z, model.predict(Z)


def main() -> int:
    args = parse_args(__doc__.splitlines()[0], components=(int, 16, "PCA components"),
                      dtype=(str, "float32", "float32 or float64"))
    dev = pyaccel.device(args.device) if args.device else pyaccel.get_device()
    digits = load_digits()
    X = digits.data.astype(args.dtype)
    y = digits.target.astype(args.dtype)
    Xd, yd = pyaccel.asarray(X, device=dev), pyaccel.asarray(y, device=dev)

    with sklearn.config_context(array_api_dispatch=True):
        (Z_dev, p_dev), t_dev = timed(lambda: fit_predict(Xd, yd, args.components), args.repeat,
                                      lambda r: (r[0].to_numpy(), r[1].to_numpy()))
    (Z_np, p_np), t_np = timed(lambda: fit_predict(X, y, args.components), args.repeat)

    # principal axes are defined up to sign: align each score column's sign before comparing
    sign = np.sign(np.sum(Z_dev * Z_np, axis=0))
    tol = 1e-3 if args.dtype == "float32" else 1e-8
    z_err = float(np.max(np.abs(Z_dev * sign - Z_np)) / np.max(np.abs(Z_np)))
    p_err = float(np.max(np.abs(p_dev - p_np)) / np.max(np.abs(p_np)))
    acc_dev = float(np.mean(np.clip(np.rint(p_dev), 0, 9) == digits.target))
    print_times(f"PCA({args.components}) + Ridge on digits {X.shape} {args.dtype}", dev, t_dev, t_np)
    print(f"  rounded-prediction accuracy: device {acc_dev:.3f}, "
          f"numpy {float(np.mean(np.clip(np.rint(p_np), 0, 9) == digits.target)):.3f}")
    ok = Z_dev.shape == Z_np.shape and z_err < tol and p_err < tol
    return verdict(ok, f"relative error: scores {z_err:.2e}, predictions {p_err:.2e} (tol {tol})")


if __name__ == "__main__":
    raise SystemExit(main())
