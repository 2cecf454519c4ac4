"""The operator table of :class:`pyaccel.Array`: name -> namespace function.

``Array.__add__`` and friends, ``x[key]``, ``x.T``, ``x.astype`` and ``x @ y`` look their
function up here; the namespace modules (elementwise, indexing, manipulation, linalg)
register theirs when they are imported (``import pyaccel`` imports them all). This module
imports nothing from pyaccel, so ``array.py`` needs no import of the modules that build on it
(no import cycle).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

OPS: dict[str, Callable[..., Any]] = {}


def register(**functions: Callable[..., Any]) -> None:
    """Make ``functions`` (operator name -> namespace function) available to Array's operators."""
    OPS.update(functions)
