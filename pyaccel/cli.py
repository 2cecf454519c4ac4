"""The ``pyaccel`` command: ``devices``, ``info [URI]``, ``doctor``, ``bench``, ``demo``.

``bench`` first prints the adapter's limits (FMA peak, copy bandwidth; raw wgpu-py,
:mod:`pyaccel.adapter_limits`) beside pyaccel's float32 matmul and add as % of them.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shutil
import sys
import time

from . import registry
from .errors import PyaccelError


def cmd_devices(args: argparse.Namespace) -> int:
    """Table of backends and devices, with availability, reasons and the default marked."""
    infos = registry.backends()
    try:
        default = registry.default_device_uri()
    except PyaccelError:
        default = None
    env = os.environ.get(registry.ENV_VAR)
    print(f"{'backend':8s} {'prio':>4s}  {'status':11s} version / reason")
    for b in infos:
        status = "available" if b.available else "unavailable"
        print(f"{b.name:8s} {b.priority:4d}  {status:11s} {b.version if b.available else b.reason.splitlines()[0]}")
    print()
    print(f"  {'URI':10s} {'type':10s} {'api':7s} {'vendor':10s} name")
    for d in registry.devices():
        mark = "*" if d.uri == default else " "
        kind = d.adapter_type + ("/sw" if d.is_software else "")
        print(f"{mark} {d.uri:10s} {kind:10s} {d.api:7s} {d.vendor[:10]:10s} {d.name}")
    print()
    src = f"from {registry.ENV_VAR}={env!r}" if env else "by priority: GPUs, then cpu, then software adapters"
    print(f"* default device: {default or 'none'} ({src})")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """The full report of one device (default: the default device)."""
    dev = registry.device(args.uri) if args.uri else registry.get_device()
    print(dev.info())
    return 0


def _doctor_lines() -> list[tuple[str, bool, str]]:
    checks: list[tuple[str, bool, str]] = []
    checks.append((f"python {platform.python_version()} on {sys.platform}/{platform.machine()}", True, ""))
    np_ok = importlib.util.find_spec("numpy") is not None
    checks.append(("numpy importable (cpu backend, oracle)", np_ok, "pip install 'numpy>=2'"))
    wgpu_ok = importlib.util.find_spec("wgpu") is not None
    checks.append(("wgpu-py importable (native GPU backend)", wgpu_ok, "pip install wgpu==0.32.0"))
    if sys.platform.startswith("linux"):
        icds = [p for d in ("/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d") if os.path.isdir(d)
                for p in os.listdir(d)]
        checks.append((f"Vulkan ICDs: {', '.join(sorted(icds)) or 'none'}", bool(icds),
                       "apt-get install mesa-vulkan-drivers libvulkan1 (software Vulkan: lavapipe)"))
        lib = any(os.path.exists(p) for p in ("/usr/lib/x86_64-linux-gnu/libvulkan.so.1",
                                              "/usr/lib/aarch64-linux-gnu/libvulkan.so.1",
                                              "/usr/lib/libvulkan.so.1"))
        checks.append(("Vulkan loader libvulkan.so.1", lib, "apt-get install libvulkan1"))
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        checks.append((f"Chromium for browser tests: {chromium or 'not found'}", bool(chromium),
                       "apt-get install chromium"))
    return checks


def cmd_doctor(args: argparse.Namespace) -> int:
    """Per backend: what was probed, what failed, and the command that fixes it."""
    bad = 0
    print("Environment:")
    for what, ok, fix in _doctor_lines():
        print(f"  [{'ok' if ok else 'FAIL'}] {what}" + ("" if ok else f"\n         fix: {fix}"))
        bad += not ok
    print("\nBackends:")
    entries = {e.name: e for e in registry.REGISTRY.entries()}
    for b in registry.backends():
        e = entries.get(b.name)
        print(f"  [{'ok' if b.available else 'FAIL'}] {b.name}: {b.description or (e.description if e else '')}")
        if b.available:
            print(f"         {b.version}; devices: {', '.join(b.devices)}")
        else:
            print(f"         probed: schemes {', '.join(b.schemes)}; reason: {b.reason.splitlines()[0]}")
            if e and e.fix and e.fix not in b.reason:
                print(f"         fix: {e.fix}")
    env = os.environ.get(registry.ENV_VAR)
    if env:
        print(f"\n{registry.ENV_VAR}={env!r}")
        for u in env.split(","):
            try:
                print(f"  [ok] {u.strip()} -> {registry.REGISTRY.resolve(u.strip()).uri}")
            except PyaccelError as exc:
                bad += 1
                print(f"  [FAIL] {u.strip()}: {exc}")
    try:
        print(f"\ndefault device: {registry.get_device().uri}")
    except PyaccelError as exc:
        bad += 1
        print(f"\nno default device: {exc}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """List devices, then run one computation on the best device (and every GPU), checked vs NumPy."""
    cmd_devices(args)
    from .demo import run_demo

    return run_demo(args.device)


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: want comma-separated integers, e.g. 256,512") from None


def cmd_limits(args: argparse.Namespace) -> int:
    """The adapter's FMA peak and copy bandwidth (raw wgpu-py) beside pyaccel's matmul and add."""
    from . import adapter_limits

    dev = registry.device(args.device) if args.device else _default_gpu()
    if dev is None:
        print("pyaccel bench: no GPU device for the adapter limits (pyaccel devices lists "
              "cpu only); pass --device URI", file=sys.stderr)
        return 1
    sizes = args.sizes or ((256,) if args.quick else (256, 512, 1024))
    add_n = args.add_size or ((1 << 20) if args.quick else (1 << 22))
    res = adapter_limits.measure(dev, sizes=sizes, add_n=add_n, quick=args.quick)
    print(adapter_limits.format_report(res), flush=True)
    return 0


def _default_gpu():  # noqa: ANN202 - a Device or None
    for d in registry.devices():
        if d.api != "cpu":
            return registry.device(d.uri)
    return None


def cmd_bench(args: argparse.Namespace) -> int:
    """The adapter limits (any install), then the benchmark suite (a source checkout)."""
    rc = cmd_limits(args)
    if args.limits_only:
        return rc
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bench_dir = os.path.join(here, "benchmarks")
    if not os.path.isdir(bench_dir):
        print("pyaccel bench: the benchmark suite needs a source checkout (the benchmarks/ folder); "
              "clone the repository and run it from there", file=sys.stderr)
        return 2
    sys.path.insert(0, here)
    import runpy

    argv = ["benchmarks/run_all.py"] + (["--quick"] if args.quick else [])
    if args.device:
        argv += ["--device", args.device]
    old = sys.argv
    sys.argv = argv
    try:
        runpy.run_path(os.path.join(bench_dir, "run_all.py"), run_name="__main__")
    finally:
        sys.argv = old
    return rc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="pyaccel", description="pyaccel: portable accelerator compute")
    sub = p.add_subparsers(dest="cmd")
    sub.add_parser("devices", help="list backends and devices; the default is marked *")
    pi = sub.add_parser("info", help="full report of a device")
    pi.add_argument("uri", nargs="?", help="device URI (default: the default device)")
    sub.add_parser("doctor", help="diagnose backends and print the fixes")
    pb = sub.add_parser("bench", help="adapter limits vs pyaccel's matmul and add, then the "
                        "benchmark suite (source checkout)")
    pb.add_argument("--quick", action="store_true", help="fewer repeats and sizes")
    pb.add_argument("--device", default=None, help="device URI (default: the first GPU device)")
    pb.add_argument("--limits-only", action="store_true",
                    help="only the adapter limits and pyaccel's fraction of them")
    pb.add_argument("--sizes", type=_ints, default=None,
                    help="matmul sizes n (n x n float32), comma-separated (default 256,512,1024)")
    pb.add_argument("--add-size", type=int, default=None,
                    help="elements of the float32 add (default 2**22; --quick 2**20)")
    pd = sub.add_parser("demo", help="run a computation on the best device, checked against NumPy")
    pd.add_argument("--device", default=None, help="device URI (default: best device)")
    args = p.parse_args(argv)
    if args.cmd is None:
        p.print_help()
        return 0
    t0 = time.perf_counter()
    try:
        return {"devices": cmd_devices, "info": cmd_info, "doctor": cmd_doctor,
                "bench": cmd_bench, "demo": cmd_demo}[args.cmd](args)
    except PyaccelError as exc:
        print(f"pyaccel {args.cmd}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        if os.environ.get("PYACCEL_CLI_TIMING"):
            print(f"({time.perf_counter() - t0:.3f} s)", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
