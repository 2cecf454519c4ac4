// pyaccel's WebGPU helpers in the page (loaded by pyaccel/runtime/browser.py through
// pyodide.code.run_js): buffer, pipeline and dispatch calls, error scopes and sync points.
(() => {
  const kindOf = (e) => {
    if (typeof GPUOutOfMemoryError !== "undefined" && e instanceof GPUOutOfMemoryError) return "out-of-memory";
    if (typeof GPUValidationError !== "undefined" && e instanceof GPUValidationError) return "validation";
    if (typeof GPUInternalError !== "undefined" && e instanceof GPUInternalError) return "internal";
    return String(e?.constructor?.name ?? "error");
  };
  const record = (st, e, what) => {
    if (st.errors.length < 64) st.errors.push({kind: kindOf(e), message: String(e?.message ?? e), what});
    else st.dropped += 1;
  };
  const watch = (st, scopes, what, seq = -1) => {
    const c = Promise.all(scopes).then(
      (errs) => {
        for (const e of errs) if (e) { record(st, e, what); if (seq >= 0) st.bad.push(seq); break; }
      },
      (e) => { if (st.lost === null) record(st, e, what); });
    st.checks.push(c);
    if (st.checks.length > 256) st.checks = [Promise.all(st.checks)];
  };
  const take = (st, mapErr) => {
    if (st.lost !== null) return {kind: "lost", message: st.lost, what: "", count: 0};
    if (st.errors.length) {
      const errs = st.errors;
      st.errors = [];
      const first = errs.find((e) => e.kind === "out-of-memory" || e.what.startsWith("allocating")) ?? errs[0];
      const count = errs.length - 1 + st.dropped;
      const bad = st.bad;
      st.dropped = 0;
      st.bad = [];
      return {...first, count, bad};
    }
    if (mapErr) {
      const lost = mapErr.name === "AbortError" || /lost|destroyed/i.test(String(mapErr.message));
      return {kind: lost ? "lost" : "map", message: `${mapErr.name}: ${mapErr.message}`, what: "mapping a staging buffer", count: 0};
    }
    return null;
  };
  const settle = async (st) => {
    while (st.checks.length) { const c = st.checks; st.checks = []; await Promise.all(c); }
  };
  return {
    state(device) {
      const st = {checks: [], errors: [], dropped: 0, lost: null, bad: []};
      device.addEventListener("uncapturederror", (ev) => record(st, ev.error, "uncaptured"));
      device.lost.then((info) => { st.lost = `${info.reason}: ${info.message}`; });
      return st;
    },
    createBuffer(st, device, size, usage, now, seq) {
      device.pushErrorScope("out-of-memory");
      device.pushErrorScope("validation");
      const buf = device.createBuffer({size, usage});
      const scopes = [device.popErrorScope(), device.popErrorScope()];
      const what = `allocating ${size} bytes`;
      if (!now) { watch(st, scopes, what, seq); return buf; }
      return Promise.all(scopes).then((errs) => {
        const e = errs.find((x) => x);
        return e ? {buf, error: {kind: kindOf(e), message: String(e.message), what, count: 0}} : {buf, error: null};
      }, (e) => ({buf, error: {kind: st.lost !== null ? "lost" : "internal", message: String(st.lost ?? e?.message ?? e), what, count: 0}}));
    },
    dispatch(pass, pipe, group, x, y, z) {
      if (pipe) pass.setPipeline(pipe);
      if (group) pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(x, y, z);
    },
    submit(st, device, queue, enc) {
      device.pushErrorScope("internal");
      device.pushErrorScope("out-of-memory");
      device.pushErrorScope("validation");
      let thrown = null;
      try { queue.submit([enc.finish()]); } catch (e) { thrown = e; }
      watch(st, [device.popErrorScope(), device.popErrorScope(), device.popErrorScope()],
            "a submitted batch of GPU work");
      if (thrown) throw thrown;
    },
    write(st, device, queue, buf, offset, data) {
      device.pushErrorScope("validation");
      queue.writeBuffer(buf, offset, data);
      watch(st, [device.popErrorScope()], `writing ${data.byteLength} bytes to a buffer`);
    },
    writeFrom(st, device, queue, buf, offset, proxy) {
      const v = proxy.getBuffer("u8");
      device.pushErrorScope("validation");
      try { queue.writeBuffer(buf, offset, v.data); } finally {
        v.release();
        watch(st, [device.popErrorScope()], `writing ${v.data.byteLength} bytes to a buffer`);
      }
    },
    bindGroup(st, device, pipe, entries) {
      device.pushErrorScope("validation");
      const group = device.createBindGroup({layout: pipe.getBindGroupLayout(0), entries});
      watch(st, [device.popErrorScope()], "creating a bind group");
      return group;
    },
    shaderModule(device, code) {
      // its compile errors are read from getCompilationInfo(); the scope keeps them from
      // also arriving as uncaptured errors at a later, unrelated sync point
      device.pushErrorScope("validation");
      const module = device.createShaderModule({code});
      device.popErrorScope().catch(() => null);
      return module;
    },
    async mapRead(st, buf, mode, offset, n) {
      const checks = st.checks;
      st.checks = [];
      let mapErr = null;
      await Promise.all([...checks, buf.mapAsync(mode, offset, n).catch((e) => { mapErr = e; })]);
      await settle(st);
      const err = take(st, mapErr);
      if (err && !mapErr) buf.unmap();
      return err;
    },
    async idle(st, queue) {
      let err = null;
      try { await queue.onSubmittedWorkDone(); } catch (e) { err = e; }
      await settle(st);
      return take(st, err);
    },
    async check(st) { await settle(st); return take(st, null); },
    race(p, ms) {  // a sync point with timeout=: p's result, or the timeout marker first
      return Promise.race([p, new Promise((r) => setTimeout(() => r({kind: "pyaccel-timeout"}), ms))]);
    },
    readInto(buf, offset, n, proxy) {
      const v = proxy.getBuffer("u8");
      try { v.data.set(new Uint8Array(buf.getMappedRange(offset, n))); }
      finally { v.release(); buf.unmap(); }
    },
    readBytes(buf, offset, n) { return new Uint8Array(buf.getMappedRange(offset, n)); },
  };
})()
