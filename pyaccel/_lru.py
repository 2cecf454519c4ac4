"""A bounded least-recently-used mapping: every cache in pyaccel has a size limit.

Caches that belong to one device (pipelines, bind groups, launch plans, op memos) live on
that device (``GPUDeviceImpl.memo`` / ``Device.memo``), so closing or losing the device
drops them with it; the limit keeps a long session's memory flat however many distinct
kernels it builds (``tests/stress/test_memory_flat.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any


class LRU(OrderedDict):
    """An OrderedDict holding at most ``maxsize`` entries; ``get`` marks a hit as recent and
    ``put`` evicts the least recently used entry (``evicted`` counts them)."""

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        if maxsize < 1:
            raise ValueError(f"LRU(maxsize={maxsize}): the size limit must be >= 1")
        self.maxsize = maxsize
        self.evicted = 0

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            value = self[key]
        except KeyError:
            return default
        self.move_to_end(key)
        return value

    def copy(self) -> LRU:
        c = LRU(self.maxsize)
        c.update(self)
        return c

    def put(self, key: Any, value: Any) -> Any:
        """Store ``value`` under ``key`` (most recent); returns ``value``."""
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.maxsize:
            self.popitem(last=False)
            self.evicted += 1
        return value
