"""Turn conformance/results/*.json (pytest-json-report of array-api-tests) into docs/conformance.md.

Every test the suite runs is counted: rate = passed / (passed + failed + errors). Nothing is
relabelled; the suite's own skips are listed grouped by the reason the suite gives.
``numpy-<version>.json`` (``conformance/run.sh numpy``) is the reference run on the same suite
and machine. Reports are named ``<device>-<version>.json`` (``cpu_0-2024.12.json``); a name
without a version is a 2023.12 report (the script's earlier naming).
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def first_line(test: dict) -> str:
    """The first line of a test's failure or skip reason (addresses masked, 160 chars)."""
    for phase in ("call", "setup", "teardown"):
        p = test.get(phase) or {}
        crash = p.get("crash") or {}
        msg = crash.get("message") or p.get("longrepr") or ""
        if msg:
            m = re.search(r"Skipped: (.*?)['\"]\)?$", msg.strip())
            if m:
                msg = m.group(1)
            msg = msg.strip().splitlines()[0]
            msg = re.sub(r"0x[0-9a-f]+", "0x…", msg)
            return msg[:160]
    return "?"


def counts(data: dict) -> tuple[collections.OrderedDict, collections.Counter,
                                 dict[str, collections.Counter]]:
    per: collections.OrderedDict = collections.OrderedDict()
    skips: collections.Counter = collections.Counter()
    reasons: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for t in data["tests"]:
        mod = t["nodeid"].split("::")[0].split("/")[-1]
        outcome = {"error": "errors"}.get(t["outcome"], t["outcome"])
        per.setdefault(mod, collections.Counter())[outcome] += 1
        if outcome == "skipped":
            skips[first_line(t)] += 1
        elif outcome in ("failed", "errors"):
            reasons[mod][first_line(t)] += 1
    return per, skips, reasons


def rate(c: collections.Counter) -> float | None:
    ran = c["passed"] + c["failed"] + c["errors"]
    return 100 * c["passed"] / ran if ran else None


def fmt(r: float | None) -> str:
    return "n/a" if r is None else f"{r:.1f}%"


def summarize(path: Path) -> tuple[str, collections.Counter, list[str]]:
    data = json.loads(path.read_text())
    per, skips, reasons = counts(data)
    name = label(path)
    tot: collections.Counter = collections.Counter()
    lines = [f"### {name}", "", "| module | passed | failed | errors | skipped | rate |",
             "|---|---:|---:|---:|---:|---:|"]
    for mod, c in per.items():
        tot.update(c)
        lines.append(f"| {mod} | {c['passed']} | {c['failed']} | {c['errors']} | {c['skipped']} | "
                     f"{fmt(rate(c))} |")
    lines.append(f"| **total** | **{tot['passed']}** | **{tot['failed']}** | **{tot['errors']}** | "
                 f"**{tot['skipped']}** | **{fmt(rate(tot))}** |")
    lines.append("")
    if skips:
        lines.append("Skipped by the suite itself, by reason:")
        lines.append("")
        for msg, n in skips.most_common():
            lines.append(f"- {n}: {msg.replace('|', '/')}")
        lines.append("")
    if reasons:
        lines.append("Failures and errors (first line of the message, count):")
        lines.append("")
        for mod, cnt in reasons.items():
            for msg, n in cnt.most_common(12):
                lines.append(f"- `{mod}` ({n}): {msg.replace('|', '/')}")
            rest = sum(cnt.values()) - sum(n for _, n in cnt.most_common(12))
            if rest:
                lines.append(f"- `{mod}`: {rest} more")
        lines.append("")
    summary = (f"{name}: {tot['passed']} passed, {tot['failed']} failed, {tot['errors']} errors, "
               f"{tot['skipped']} skipped: **{fmt(rate(tot))}**; duration "
               f"{data.get('duration', 0):.0f} s")
    return summary, tot, lines


def split(path: Path) -> tuple[str, str]:
    """(device, version) of a report file name."""
    dev, _, ver = path.stem.partition("-")
    return dev.replace("_", ":", 1), ver or "2023.12"


def label(path: Path) -> str:
    dev, ver = split(path)
    return f"{dev} ({ver})"


def main() -> int:
    reports = sorted((ROOT / "conformance" / "results").glob("*.json"),
                     key=lambda p: (tuple(-int(v) for v in split(p)[1].split(".")),
                                    split(p)[0] == "numpy", split(p)[0]))
    if not reports:
        print("no reports in conformance/results; run conformance/run.sh first", file=sys.stderr)
        return 1
    head = (ROOT / "conformance" / "HEADER.md").read_text()
    body, summaries = [], []
    for r in reports:
        s, _, lines = summarize(r)
        summaries.append(f"- {s}")
        body += lines
    (ROOT / "docs" / "conformance.md").write_text(head + "\n## Summary\n\n" + "\n".join(summaries)
                                                  + "\n\n## Per module\n\n" + "\n".join(body) + "\n")
    print("\n".join(summaries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
