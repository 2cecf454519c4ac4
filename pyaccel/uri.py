"""Device URIs: ``scheme``, ``scheme:ordinal`` or ``scheme://path``.

URIs are case-insensitive: the scheme and path are folded to lower case, and
surrounding whitespace is ignored. The canonical string (``str(uri)``) is the
one ``pyaccel.devices()`` prints, e.g. ``vulkan:0``, ``cpu:0``, ``webgpu:0``;
parsing it gives the same URI back. A bare scheme means that scheme's best device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import InvalidDeviceURIError

_SCHEME = r"[a-z][a-z0-9_+.-]*"
_PATH = r"[a-z0-9][a-z0-9_.+-]*"
_RE = re.compile(rf"^(?P<scheme>{_SCHEME})(?::(?P<ordinal>[^:/]*)|://(?P<path>.*))?$")
_GRAMMAR = "expected 'scheme', 'scheme:N' (N >= 0) or 'scheme://path', e.g. 'vulkan:0', 'cpu', 'webgpu://low-power'"


@dataclass(frozen=True, order=True)
class DeviceURI:
    """A parsed device URI. Exactly one of ``ordinal`` / ``path`` may be set."""

    scheme: str
    ordinal: int | None = None
    path: str | None = None

    def __post_init__(self) -> None:
        if not re.fullmatch(_SCHEME, self.scheme or ""):
            raise InvalidDeviceURIError(f"invalid device URI scheme {self.scheme!r}: {_GRAMMAR}")
        if self.ordinal is not None and self.path is not None:
            raise InvalidDeviceURIError("a device URI has an ordinal or a path, not both")
        if self.ordinal is not None and (not isinstance(self.ordinal, int) or self.ordinal < 0):
            raise InvalidDeviceURIError(f"invalid device ordinal {self.ordinal!r}: must be an int >= 0")
        if self.path is not None and not re.fullmatch(_PATH, self.path):
            raise InvalidDeviceURIError(f"invalid device path {self.path!r}: {_GRAMMAR}")

    @classmethod
    def parse(cls, text: object) -> DeviceURI:
        """Parse ``text``; raises :class:`InvalidDeviceURIError` quoting the bad value."""
        if isinstance(text, DeviceURI):
            return text
        if not isinstance(text, str):
            raise InvalidDeviceURIError(
                f"a device URI must be a str (or a pyaccel Device), got {type(text).__name__} {text!r}; {_GRAMMAR}"
            )
        s = text.strip().lower()
        if not s:
            raise InvalidDeviceURIError(f"empty device URI {text!r}; {_GRAMMAR}")
        m = _RE.match(s)
        if not m:
            raise InvalidDeviceURIError(f"invalid device URI {text!r}: {_GRAMMAR}")
        ordinal = m.group("ordinal")
        path = m.group("path")
        if ordinal is not None:
            if not re.fullmatch(r"\d+", ordinal):
                raise InvalidDeviceURIError(
                    f"invalid device URI {text!r}: the ordinal {ordinal!r} is not an integer >= 0; {_GRAMMAR}"
                )
            return cls(m.group("scheme"), int(ordinal), None)
        if path is not None:
            if not re.fullmatch(_PATH, path):
                raise InvalidDeviceURIError(f"invalid device URI {text!r}: bad path {path!r}; {_GRAMMAR}")
            return cls(m.group("scheme"), None, path)
        return cls(m.group("scheme"))

    def __str__(self) -> str:
        if self.ordinal is not None:
            return f"{self.scheme}:{self.ordinal}"
        if self.path is not None:
            return f"{self.scheme}://{self.path}"
        return self.scheme


def parse_uri(text: object) -> DeviceURI:
    """Parse a device URI string (see :class:`DeviceURI`)."""
    return DeviceURI.parse(text)
