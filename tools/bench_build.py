#!/usr/bin/env python3
"""Kernel build costs and the first-run penalty of ``clalign sw`` (issue 14, item 6).

Three parts, all written to ``--out/build.json`` (and logged):

1. ``--kernels``: in this process, every program a Smith-Waterman search of ``--queries``
   against ``--db`` needs on the device (the variants the engine would pick), plus a few
   HMM MSV kernels: rendered lines, seconds to build from source, binary size and seconds to
   load the binary (``clCreateProgramWithBinary``). Then whether the driver compiles in
   parallel: ``--copies`` distinct copies of one kernel built by as many threads at once,
   against the one-copy time; ``--trials`` builds the first SW kernel with other template
   values or compiler options. Run it with ``CUDA_CACHE_DISABLE=1`` on NVIDIA so the driver's
   own cache does not hide the builds.
2. ``--cli``: ``clalign sw`` of the queries against the database, whole processes, wall time:
   ``fresh`` (clalign's cache empty, the driver's disabled: a fresh machine; NVIDIA's and
   PoCL's caches are both switched by environment variables), ``ours-only``
   (clalign's cache warm, the driver's disabled), ``warm-1`` and ``repeated`` (both caches
   enabled; the driver's fills during warm-1). Each child reports the cache's counters.
3. ``--speed``: kernel time (profiling events) of SW variants, including compiler options,
   on a few queries, with their scores checked equal; and the probe's compile time.

    CUDA_CACHE_DISABLE=1 python3 -m tools.bench_build --db DBDIR --queries Q.fa --out OUT --kernels --cli
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
CLI_CHILD = ("import atexit, json, os, sys\n"
             "from clalign.runtime import cache\n"
             "tune = json.loads(os.environ.get('CLALIGN_BENCH_TUNE') or '{}')\n"
             "if tune:\n"
             "    import clalign.sw.params as swp\n"
             "    from clalign.runtime.tuning import register\n"
             "    register(swp.FAMILY, [({}, tune)])\n"
             "atexit.register(lambda: print('CACHE ' + cache.summary() + ' COUNTERS ' + "
             "json.dumps(cache.get_cache().counters.as_dict()), file=sys.stderr))\n"
             "from clalign.cli import main\n"
             "sys.argv[0] = 'clalign'\n"
             "main()\n")


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sw_variants(eng, queries, db):
    """[(label, template, paramset, values)] the engine builds for these queries and database."""
    from clalign.sw.params import SW_PARAMS, SWV_PARAMS
    from clalign.sw.passes import INTER_TEMPLATE as _TEMPLATE, VECTOR_TEMPLATE as _VTEMPLATE

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
    items = sw_variants(eng, queries, db) + ([] if args.skip_hmm else hmm_variants(rt))
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
        if args.cache_dir and not rows[1:]:
            # seed clalign's cache with the first program (as Runtime.build_source would store it)
            from clalign.runtime.cache import configure

            import importlib

            store = configure(root=args.cache_dir)
            store.store(rt.device, store.key(src, (), rt.device), prg, {"template": tmpl})
            pm = importlib.import_module("clalign.runtime.probe")
            pm._CACHE.pop(rt.device.int_ptr, None)
            t = time.perf_counter()
            pm.probe(rt.device)                    # compiles the probes again and stores them
            report["probe_s"] = round(time.perf_counter() - t, 3)
            log(f"device probe (compile tests): {report['probe_s']} s")
        log(f"{label}: {row['lines']} lines, build {secs:.2f} s, binary {len(binary)} B, load {load:.2f} s")
    report["kernels"] = rows
    # What drives the build time of the first SW kernel: unrolling, rows, compiler options.
    label, tmpl, ps, vals = items[0]
    extras = []
    t_end = time.perf_counter() + args.trial_budget
    for spec in filter(None, args.trials.split(";")):
        if time.perf_counter() > t_end:
            log(f"trial budget spent; skipping {spec}")
            continue
        v, opts = dict(vals), ()
        for kv in filter(None, spec.split(",")):
            k, _, x = kv.partition("=")
            if k == "opts":
                opts = tuple(x.split())
            else:
                v[k] = int(x) if x.lstrip("-").isdigit() else x
        try:
            src = render(tmpl, ps.validate(v))
            secs = build_once(rt.ctx, src, opts)[1]
        except Exception as exc:        # a trial that does not build is a result, not a crash
            log(f"{label} [{spec}]: failed: {str(exc)[:200]}")
            continue
        extras.append({"kernel": label, "trial": spec, "lines": src.count("\n") + 1, "build_s": round(secs, 3)})
        log(f"{label} [{spec}]: {extras[-1]['lines']} lines, build {secs:.2f} s")
    report["build_variants"] = extras
    # Does the driver compile distinct programs in parallel threads?
    par = []
    for label, tmpl, ps, vals in ([] if args.skip_parallel else items[:1] + items[-1:]):
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


def measure_speed(args, report):
    """Kernel speed of SW variants (``--speed`` specs as for ``--trials``): the searches of
    ``--speed-queries`` against the database, kernel time from profiling events, median of
    ``--repeat`` after a warm-up (``clalign.runtime.harness.verify_then_time``): the warm-up's
    scores must equal the first working variant's, else the variant is reported, not timed. Also the device probe's
    compile time with the cache off."""
    import importlib

    from clalign.data import Database, read_fasta
    from clalign.runtime import cache as cachemod
    from clalign.runtime.harness import compare, verify_then_time
    from clalign.sw.engine import SWEngine

    pm = importlib.import_module("clalign.runtime.probe")
    eng0 = SWEngine(device=args.device)
    dev = eng0.rt.device
    keep = cachemod.get_cache()
    cachemod.configure(enabled=False)
    pm._CACHE.pop(dev.int_ptr, None)
    t = time.perf_counter()
    pm.probe(dev)
    report["probe_uncached_s"] = round(time.perf_counter() - t, 3)
    log(f"device probe, cache off: {report['probe_uncached_s']} s")
    cachemod._CACHE = keep
    db = Database.open(args.db) if os.path.isdir(args.db) else Database.from_fasta(args.db)
    want = set(args.speed_queries.split(","))
    queries = [(r.id, eng_codes(r.sequence)) for r in read_fasta(args.queries) if any(w in r.id for w in want)]
    cells = sum(len(c) for _, c in queries) * db.total_residues
    rows, ref = [], None
    for spec in filter(None, args.speed.split(";")):
        ov, opts = {}, ()
        for kv in filter(None, spec.split(",")):
            k, _, x = kv.partition("=")
            if k == "opts":
                opts = tuple(x.split())
            elif k != "tuned":
                ov[k] = int(x) if x.lstrip("-").isdigit() else x
        if opts:
            log(f"speed [{spec}]: compiler options are not passed to the engine's builds; skipped")
            continue
        st = {"walls": []}

        def run():                      # first call: build, warm-up, the scores to verify
            eng = st.setdefault("eng", SWEngine(device=args.device, **ov))
            k0, t = eng.kernel_seconds, time.perf_counter()
            scores, _ = eng.search(queries, db, progress=False)
            st["walls"].append(time.perf_counter() - t)
            return scores, eng.kernel_seconds - k0

        def verify(scores):
            st["scores"] = scores
            for (qid, _), a, b in zip(queries, scores, scores if ref is None else ref):
                bad = compare(a, b, f"scores of {qid}")
                if bad:
                    return bad
            return None

        m = verify_then_time(run, verify, repeats=args.repeat)
        if not m.ok:                    # reported with the reason, never timed
            rows.append({"variant": spec, "values": ov, "status": m.status, "reason": m.reason,
                         "scores_equal_first": False})
            log(f"speed [{spec}]: {m.status}, not timed: {m.reason}")
            continue
        ref = st["scores"] if ref is None else ref
        first, k = st["walls"][0], m.seconds
        rows.append({"variant": spec, "values": ov, "status": "ok", "seconds": k, "samples": m.samples,
                     "first_call_s": round(first, 2), "kernel_s": round(k, 4),
                     "tcups_kernel": round(cells / k / 1e12, 3), "scores_equal_first": True})
        log(f"speed [{spec}]: first call {first:.2f} s, kernel {k:.3f} s = {cells / k / 1e12:.3f} TCUPS, "
            f"scores equal to the first working variant's")
    report["speed"] = {"queries": [q for q, _ in queries], "cells": cells, "rows": rows}


def eng_codes(seq):
    from clalign.data import PROTEIN

    return PROTEIN.encode(seq)


def run_cli(args, report, tune=None):
    """Whole ``clalign sw`` processes. ``fresh-all``: also numba's cache empty (the traceback
    code is compiled on a machine's first run); the others share one numba cache. ``tune``:
    inter-task values registered as a tuning entry in the child (a variant not yet in the table)."""
    tmp = Path(tempfile.mkdtemp(prefix="clalign-build-"))
    kc = args.cache_dir or str(tmp / "kc")
    base = {**os.environ, "CLALIGN_CACHE_DIR": kc, "CUDA_CACHE_PATH": str(tmp / "nv"),
            "NUMBA_CACHE_DIR": str(tmp / "numba"), "CLALIGN_BENCH_TUNE": json.dumps(tune or {})}
    base.pop("CLALIGN_NO_CACHE", None)
    # the drivers' own caches: NVIDIA's (CUDA_CACHE_*) and PoCL's (POCL_KERNEL_CACHE*)
    base["POCL_CACHE_DIR"] = str(tmp / "pocl")
    off = {**base, "CUDA_CACHE_DISABLE": "1", "POCL_KERNEL_CACHE": "0"}
    on = {k: v for k, v in base.items() if k not in ("CUDA_CACHE_DISABLE", "POCL_KERNEL_CACHE")}
    all_off = {**off, "CLALIGN_CACHE_DIR": str(tmp / "kc-fresh-all")}
    table = {"fresh-all": all_off, "fresh": off, "ours-only": off, "warm-1": on, "repeated": on}
    runs = [(n, table[n]) for n in args.cli_runs.split(",") if n in table]
    cmd = [sys.executable, "-c", CLI_CHILD, "sw", "-query", args.queries, "-db", args.db, "-out", str(tmp / "hits.tsv"),
           "--force", "--verbose"]
    if args.device:
        cmd += ["--device", args.device]
    out = []
    if runs and runs[0][0] != "fresh-all":
        # numba's cache filled first (untimed: the queries against themselves, so tracebacks run),
        # so that "fresh" means the kernel caches only, as the issue defines a fresh machine
        t = time.perf_counter()
        warm = [sys.executable, "-c", CLI_CHILD, "sw", "-query", args.queries, "-db", args.queries,
                "-out", str(tmp / "warm.tsv"), "--force"] + (["--device", args.device] if args.device else [])
        proc = subprocess.run(warm, env={**off, "CLALIGN_CACHE_DIR": str(tmp / "kc-warm")}, capture_output=True,
                              text=True)
        report["numba_warmup_s"] = round(time.perf_counter() - t, 2)
        log(f"numba cache warm-up run: {report['numba_warmup_s']} s rc {proc.returncode}")
    for name, env in runs:
        t = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
        m = re.search(r"COUNTERS (\{.*\})", proc.stderr)
        row = {"run": name, "wall_s": round(wall, 2), "rc": proc.returncode,
               "counters": json.loads(m.group(1)) if m else None,
               "stderr_tail": proc.stderr[-600:] if proc.returncode else "",
               "verbose": [ln for ln in proc.stderr.splitlines() if ln.startswith("sw: ") and "GCUPS" in ln
                           and ("queries" in ln or "rates" in ln or "subject(s)" in ln)]}
        out.append(row)
        log(f"clalign sw [{name}]: {wall:.2f} s rc {proc.returncode} counters {row['counters']}")
    report["cli"] = out
    walls = {}
    for r in out:
        walls[r["run"]] = r["wall_s"]         # the last of repeated runs with one name
    for first in ("fresh", "fresh-all"):
        if first in walls and "repeated" in walls:
            report[f"{first}_over_repeated"] = round(walls[first] / walls["repeated"], 3)
            log(f"{first} / repeated = {report[f'{first}_over_repeated']}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True, help="database folder (clalign makedb) or FASTA")
    ap.add_argument("--queries", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default=None)
    ap.add_argument("--kernels", action="store_true", help="per-kernel build and load times")
    ap.add_argument("--cli", action="store_true", help="fresh vs repeated clalign sw runs")
    ap.add_argument("--copies", type=int, default=4, help="programs built at once in the parallel test")
    ap.add_argument("--trials", default="UNROLL=1;ROWS=32;ROWS=32,UNROLL=1",
                    help="';'-separated builds of the first SW kernel with other values (K=V,...) or "
                         "compiler options (opts=-flag -flag)")
    ap.add_argument("--trial-budget", type=float, default=120.0, help="seconds for the trials")
    ap.add_argument("--skip-parallel", action="store_true", help="no parallel-build test")
    ap.add_argument("--skip-hmm", action="store_true", help="SW kernels only")
    ap.add_argument("--cli-runs", default="fresh,ours-only,warm-1,repeated")
    ap.add_argument("--cache-dir", default=None,
                    help="clalign cache folder for the CLI runs; --kernels seeds it with the first SW program")
    ap.add_argument("--kernels-first", action="store_true", help="--kernels before --cli")
    ap.add_argument("--speed", default="", help="';'-separated SW variants to time (tuned; K=V,...; opts=...)")
    ap.add_argument("--speed-queries", default="P07327,P21177,Q9UKN1", help="accessions for --speed")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"CUDA_CACHE_DISABLE": os.environ.get("CUDA_CACHE_DISABLE")}
    try:
        steps = [(args.cli, run_cli), (args.kernels, measure_kernels)]
        for wanted, step in (steps[::-1] if args.kernels_first else steps) + [(bool(args.speed), measure_speed)]:
            if wanted:
                step(args, report)
    finally:                            # a harness results document: rows are the --speed variants
        from tools.results import save

        save(out / "build.json", [{"family": "sw", "input": args.queries, **r}
                                  for r in report.get("speed", {}).get("rows", [])], **report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
