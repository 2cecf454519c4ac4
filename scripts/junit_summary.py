"""Summed test time per suite (tests/<dir>) and per file from a pytest junit XML file.

Used by scripts/test.sh after the main session, so a slow part of the suite shows by name
(``--durations`` lists single tests; this shows where the minutes add up). With xdist the
sums are worker-seconds: divide by the worker count for the wall-clock share.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def summarize(path: str, top: int = 20) -> str:
    """Return the per-suite and top per-file time tables for one junit XML file."""
    per_file: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("classname", "").replace(".", "/") + ".py"
        per_file[name] += float(case.get("time", 0) or 0)
        count[name] += 1
    per_suite: dict[str, float] = defaultdict(float)
    for name, secs in per_file.items():
        parts = name.split("/")
        per_suite["/".join(parts[:2]) if len(parts) > 2 else parts[0]] += secs
    total = sum(per_file.values()) or 1.0
    lines = [f"== summed test time (worker-seconds) from {path}: {total:.0f} s in {sum(count.values())} tests"]
    for suite, secs in sorted(per_suite.items(), key=lambda kv: -kv[1]):
        lines.append(f"   {suite:<48} {secs:8.1f} s  {100 * secs / total:5.1f} %")
    lines.append(f"   slowest {top} files:")
    for name, secs in sorted(per_file.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"   {name:<60} {secs:8.1f} s  ({count[name]} tests)")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summarize(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20))
