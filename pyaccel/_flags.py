"""On/off switches: environment variables and ``set_*(on)`` arguments, read strictly.

A typo must not flip a switch silently (``PYACCEL_FUSION=of`` or ``set_fusion("off")`` would
be truthy): unknown values raise, naming the value and what to write instead."""

from __future__ import annotations

import os
from typing import Any

_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def env_flag(name: str, default: bool = True) -> bool:
    """``$name`` as a bool (unset or empty: ``default``); raises ValueError on other values."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    v = raw.strip().lower()
    if v in _ON:
        return True
    if v in _OFF:
        return False
    raise ValueError(f"{name}={raw!r} is not an on/off value: set it to 1 (on) or 0 (off), "
                     f"or unset it (default {'on' if default else 'off'})")


def check_flag(func: str, on: Any, allow_none: bool = False) -> bool | None:
    """``on`` as given to ``func(on)``: True/False (NumPy bools too), or None where allowed."""
    if on is None and allow_none:
        return None
    t = type(on)
    if isinstance(on, bool) or (t.__module__ == "numpy" and t.__name__ in ("bool", "bool_")):
        return bool(on)
    allowed = "True, False or None" if allow_none else "True or False"
    raise TypeError(f"{func}(on): on must be {allowed}, got {type(on).__name__} {on!r}")
