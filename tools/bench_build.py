#!/usr/bin/env python3
"""Kernel build costs and the first-run penalty of ``clalign sw`` (issue 14, item 6).

Two parts, both written to ``--out/build.json`` (and logged):

1. ``--kernels``: in this process, every program a Smith-Waterman search of ``--queries``
   against ``--db`` needs on the device (the variants the engine would pick), plus a few
   HMM MSV kernels: rendered lines, seconds to build from source, binary size and seconds to
   load the binary (``clCreateProgramWithBinary``). Then whether the driver compiles in
   parallel: ``--copies`` distinct copies of one kernel built by as many threads at once,
   against the one-copy time. Run it with ``CUDA_CACHE_DISABLE=1`` on NVIDIA so the driver's
   own cache does not hide the builds.
2. ``--cli``: ``clalign sw`` of the queries against the database, whole processes, wall time:
   ``fresh`` (clalign's cache empty, the driver's disabled: a fresh machine), ``ours-only``
   (clalign's cache warm, the driver's disabled), ``warm-1`` and ``repeated`` (both caches
   enabled; the driver's fills during warm-1). Each child reports the cache's counters.

    CUDA_CACHE_DISABLE=1 python3 tools/bench_build.py --db DBDIR --queries Q.fa --out OUT --kernels --cli
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Child: run the clalign CLI and print the kernel cache's summary and counters at exit.
CLI_CHILD = ("import atexit, json, sys\n"
             "from clalign.runtime import cache\n"
             "atexit.register(lambda: print('CACHE ' + cache.summary() + ' COUNTERS ' + "
             "json.dumps(cache.get_cache().counters.as_dict()), file=sys.stderr))\n"
             "from clalign.cli import main\n"
             "sys.argv[0] = 'clalign'\n"
             "main()\n")


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sw_variants(eng, queries, db):
    """[(label, template, paramset, values)] the engine builds for these queries and database."""
    from clalign.sw.engine import _TEMPLATE, _VTEMPLATE
    from clalign.sw.params import SW_PARAMS, SWV_PARAMS

    out, seen = [], set()

    def add(label, tmpl, ps, vals):
        key = (tmpl, tuple(sorted(vals.items())))
        if key not in seen:
            seen.add(key)
            out.append((label, tmpl, ps, vals))

    sched = eng.schedule(db.lengths)
    for _, codes in queries:
        if eng.kernel == "vector":
            for width, vals in eng.vector_passes():
                add(f"vector w{width}", _VTEMPLATE, SWV_PARAMS, vals)
            widths = [32]
        else:
            widths = eng.widths()
        for k, w in enumerate(widths):
            s = sched if (k == 0 and eng.kernel != "vector") else "static"
            layout = eng.profile_layout(w, len(codes))
            add(f"intertask w{w} {layout} {s}", _TEMPLATE, SW_PARAMS, eng.values(w, layout, s))
    return out


def hmm_variants(rt, Ms=(100, 400, 1200)):
    from clalign.hmm.engine import HMM_SLANE, choose_kernel

    return [(f"hmm msv M={M}", "hmm_slane.mako", HMM_SLANE, choose_kernel(M, "msv", rt.caps, {}))
            for M in Ms]


def build_once(ctx, src, opts=()):
    import warnings

    import pyopencl as cl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        prg = cl.Program(ctx, src).build(options=list(opts))
        return prg, time.perf_counter() - t


def measure_kernels(args, report):
    import warnings

    import pyopencl as cl

    from clalign.data import Database, read_fasta
    from clalign.runtime import Runtime, render
    from clalign.sw.engine import SWEngine

    t = time.perf_counter()
    rt = Runtime.get(args.device)
    report["runtime_start_s"] = round(time.perf_counter() - t, 3)
    report["device"] = rt.caps.name
    report["driver"] = rt.caps.driver
    log(f"Runtime.get (context + probe builds): {report['runtime_start_s']} s on {rt.caps.name}")
    db = Database.open(args.db) if os.path.isdir(args.db) else Database.from_fasta(args.db)
    eng = SWEngine(device=args.device)
    queries = [(r.id, eng_codes(r.sequence)) for r in read_fasta(args.queries)]
    rows = []
    items = sw_variants(eng, queries, db) + hmm_variants(rt)
    for label, tmpl, ps, vals in items:
        src = render(tmpl, ps.validate(vals))
        prg, secs = build_once(rt.ctx, src)
        binary = prg.get_info(cl.program_info.BINARIES)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            cl.Program(rt.ctx, [rt.device], [binary]).build()
            load = time.perf_counter() - t
        row = {"kernel": label, "template": tmpl, "lines": src.count("\n") + 1, "build_s": round(secs, 3),
               "binary_bytes": len(binary), "binary_load_s": round(load, 3),
               "values": {k: v for k, v in vals.items() if k not in ("SIMD", "PTX_S16X2", "PTX_SHFL")}}
        rows.append(row)
        log(f"{label}: {row['lines']} lines, build {secs:.2f} s, binary {len(binary)} B, load {load:.2f} s")
    report["kernels"] = rows
    # What drives the build time of the first SW kernel: unrolling, the optimiser level (NVIDIA).
    label, tmpl, ps, vals = items[0]
    extras = []
    if rows[0]["build_s"] < args.extra_limit:
        trials = [("UNROLL=1", {**vals, "UNROLL": 1}, ())] if "UNROLL" in vals and vals["UNROLL"] != 1 else []
        if rt.caps.is_nvidia:
            trials += [(f"-cl-nv-opt-level={k}", vals, (f"-cl-nv-opt-level={k}",)) for k in (0, 1)]
        for name, v, opts in trials:
            src = render(tmpl, ps.validate(v))
            try:
                secs = build_once(rt.ctx, src, opts)[1]
            except (cl.Error, RuntimeError) as exc:
                log(f"{label} {name}: build failed: {str(exc)[:200]}")
                continue
            extras.append({"kernel": label, "variant": name, "lines": src.count("\n") + 1, "build_s": round(secs, 3)})
            log(f"{label} with {name}: {extras[-1]['lines']} lines, build {secs:.2f} s")
    report["build_variants"] = extras
    # Does the driver compile distinct programs in parallel threads?
    par = []
    for label, tmpl, ps, vals in (items[:1] + items[-1:]):
        src = render(tmpl, ps.validate(vals))
        one = next(r["build_s"] for r in rows if r["kernel"] == label)
        n = args.copies if "hmm" in label else min(args.copies, 2)
        srcs = [f"#define CLALIGN_COPY_{i} {i}\n" + src for i in range(n)]
        done = [0.0] * n

        def work(i):
            done[i] = build_once(rt.ctx, srcs[i])[1]

        t = time.perf_counter()
        ths = [threading.Thread(target=work, args=(i,)) for i in range(n)]
        for th in ths:
            th.start()
        for th in ths:
            th.join()
        wall = time.perf_counter() - t
        par.append({"kernel": label, "copies": n, "one_build_s": one, "parallel_wall_s": round(wall, 3),
                    "speedup_vs_serial": round(n * one / wall, 2)})
        log(f"parallel: {n} copies of {label} in {wall:.2f} s (one: {one:.2f} s) -> {n * one / wall:.2f}x")
    report["parallel"] = par


def eng_codes(seq):
    from clalign.data import PROTEIN

    return PROTEIN.encode(seq)


def run_cli(args, report):
    tmp = Path(tempfile.mkdtemp(prefix="clalign-build-"))
    base = {**os.environ, "CLALIGN_CACHE_DIR": str(tmp / "kc"), "CUDA_CACHE_PATH": str(tmp / "nv")}
    base.pop("CLALIGN_NO_CACHE", None)
    off = {**base, "CUDA_CACHE_DISABLE": "1"}
    on = {k: v for k, v in base.items() if k != "CUDA_CACHE_DISABLE"}
    runs = [("fresh", off), ("ours-only", off), ("warm-1", on), ("repeated", on)]
    cmd = [sys.executable, "-c", CLI_CHILD, "sw", "-query", args.queries, "-db", args.db, "-out", str(tmp / "hits.tsv")]
    if args.device:
        cmd += ["--device", args.device]
    out = []
    for name, env in runs:
        t = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
        m = re.search(r"COUNTERS (\{.*\})", proc.stderr)
        row = {"run": name, "wall_s": round(wall, 2), "rc": proc.returncode,
               "counters": json.loads(m.group(1)) if m else None,
               "stderr_tail": proc.stderr[-600:] if proc.returncode else ""}
        out.append(row)
        log(f"clalign sw [{name}]: {wall:.2f} s rc {proc.returncode} counters {row['counters']}")
    report["cli"] = out
    rep = next(r["wall_s"] for r in out if r["run"] == "repeated")
    report["fresh_over_repeated"] = round(out[0]["wall_s"] / rep, 3)
    log(f"fresh / repeated = {report['fresh_over_repeated']}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True, help="database folder (clalign makedb) or FASTA")
    ap.add_argument("--queries", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default=None)
    ap.add_argument("--kernels", action="store_true", help="per-kernel build and load times")
    ap.add_argument("--cli", action="store_true", help="fresh vs repeated clalign sw runs")
    ap.add_argument("--copies", type=int, default=4, help="programs built at once in the parallel test")
    ap.add_argument("--extra-limit", type=float, default=10.0,
                    help="build-option trials only when the first SW kernel builds faster than this (s)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"date": time.strftime("%Y-%m-%d"), "command": " ".join(sys.argv),
              "CUDA_CACHE_DISABLE": os.environ.get("CUDA_CACHE_DISABLE")}
    try:
        if args.cli:
            run_cli(args, report)
        if args.kernels:
            measure_kernels(args, report)
    finally:
        (out / "build.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
