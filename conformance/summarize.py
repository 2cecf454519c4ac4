"""Turn conformance/results/*.json (pytest-json-report of array-api-tests) into docs/conformance.md."""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def first_line(test: dict) -> str:
    for phase in ("call", "setup"):
        p = test.get(phase) or {}
        crash = p.get("crash") or {}
        msg = crash.get("message") or p.get("longrepr") or ""
        if msg:
            msg = msg.strip().splitlines()[0]
            msg = re.sub(r"0x[0-9a-f]+", "0x…", msg)
            return msg[:160]
    return "?"


# Failures of tests that do not apply to pyaccel, with the reason (kept visible in the report).
NOT_APPLICABLE = (
    ("no real float dtype to match None", "complex special case (pyaccel has no complex dtypes)"),
    ("has no attribute 'fft'", "fft extension (not implemented)"),
    ("is missing the linalg extension function", "linalg extension (not implemented)"),
    ("KeyError: 'self'", "the suite builds this method's example array from int64, which WebGPU "
                         "devices lack (the same tests pass on cpu:0)"),
)


def not_applicable(msg: str) -> str | None:
    for needle, why in NOT_APPLICABLE:
        if needle in msg:
            return why
    return None


def summarize(path: Path) -> tuple[str, list[str]]:
    data = json.loads(path.read_text())
    per = collections.OrderedDict()
    reasons: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    na: collections.Counter = collections.Counter()
    for t in data["tests"]:
        mod = t["nodeid"].split("::")[0].split("/")[-1]
        c = per.setdefault(mod, collections.Counter())
        outcome = t["outcome"]
        if outcome in ("failed", "error"):
            why = not_applicable(first_line(t))
            if why is not None:
                outcome = "n/a"
                na[why] += 1
            else:
                reasons[mod][first_line(t)] += 1
        c[outcome] += 1
    dev = path.stem.replace("_", ":", 1)
    tot = collections.Counter()
    lines = [f"### {dev}", "", "| module | passed | failed | skipped | not applicable | pass rate (applicable) |",
             "|---|---:|---:|---:|---:|---:|"]
    for mod, c in per.items():
        tot.update(c)
        applicable = c["passed"] + c["failed"] + c["error"]
        rate = f"{100 * c['passed'] / applicable:.0f}%" if applicable else "n/a"
        lines.append(f"| {mod} | {c['passed']} | {c['failed'] + c['error']} | {c['skipped']} | {c['n/a']} | {rate} |")
    applicable = tot["passed"] + tot["failed"] + tot["error"]
    rate = 100 * tot["passed"] / applicable if applicable else 0.0
    lines.append(f"| **total** | **{tot['passed']}** | **{tot['failed'] + tot['error']}** | "
                 f"**{tot['skipped']}** | **{tot['n/a']}** | **{rate:.1f}%** |")
    lines.append("")
    if na:
        lines.append("Not applicable (counted apart, not as passes): "
                     + "; ".join(f"{why}: {n}" for why, n in na.most_common()) + ".")
        lines.append("")
    if reasons:
        lines.append("Failure reasons (first line, count):")
        lines.append("")
        for mod, cnt in reasons.items():
            for msg, n in cnt.most_common(8):
                lines.append(f"- `{mod}` ({n}): {msg.replace('|', '/')}")
        lines.append("")
    summary = (f"{dev}: {tot['passed']} passed, {tot['failed'] + tot['error']} failed, {tot['skipped']} "
               f"skipped, {tot['n/a']} not applicable: {rate:.1f}% of applicable tests pass; "
               f"duration {data.get('duration', 0):.0f} s")
    return summary, lines


def main() -> int:
    reports = sorted((ROOT / "conformance" / "results").glob("*.json"))
    if not reports:
        print("no reports in conformance/results; run conformance/run.sh first", file=sys.stderr)
        return 1
    head = (ROOT / "conformance" / "HEADER.md").read_text()
    body, summaries = [], []
    for r in reports:
        s, lines = summarize(r)
        summaries.append(f"- {s}")
        body += lines
    (ROOT / "docs" / "conformance.md").write_text(head + "\n## Summary\n\n" + "\n".join(summaries)
                                                  + "\n\n## Per module\n\n" + "\n".join(body) + "\n")
    print("\n".join(summaries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
