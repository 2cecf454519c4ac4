"""JavaScript snippets the browser tests evaluate in the page."""

# runs Python with pyodide.runPython (no JSPI); returns {ok, value | type, message}
RUN_SYNC_JS = """
(code) => {
  try {
    const r = window.pyodide.runPython(code);
    const v = (r && typeof r.toJs === "function") ? r.toJs() : r;
    if (r && typeof r.destroy === "function") r.destroy();
    return {ok: true, value: v};
  } catch (err) {
    return {ok: false, type: err?.type ?? err?.name, message: String(err?.message ?? err)};
  }
}
"""
