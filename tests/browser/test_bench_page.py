"""The benchmark page (web/public/bench/, served at /bench/index.html) runs and checks its results.

Only a smoke run (one tiny case of each kind); figures come from benchmarks/browser/run.py.
"""

from __future__ import annotations


def test_bench_page_smoke(chromium_webgpu, site_url):
    page = chromium_webgpu.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(site_url + "bench/index.html", wait_until="load")
        page.wait_for_function("() => window.pyaccelBenchReady !== undefined", timeout=30_000)
        page.evaluate("async () => await window.pyaccelBenchReady")
        res = page.evaluate("async () => await window.pyaccelBench.run({smoke: true})")
        table = page.inner_text("#table")
    finally:
        page.close()
    assert not errors, errors
    assert res["adapter"]["architecture"] == "swiftshader"
    (row,) = res["chained"]
    assert row["check_ok"] and row["js_check_ok"], row
    for key in ("js_us_per_op", "kernel_us_per_op", "kernel_wg_us_per_op", "dispatch_us_per_op"):
        assert row[key] > 0, (key, row)
    assert all(d["ok"] for d in res["download"])
    assert res["upload"][0]["pyaccel_gbps"] > 0 and res["upload"][0]["js_gbps"] > 0
    assert res["ffi"]["kernel_call_chained"] <= 1.1
    assert res["ffi"]["buffer_write"] == 1
    assert "plain JS" in table
