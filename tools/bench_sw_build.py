#!/usr/bin/env python3
"""Build time and speed of inter-task kernel variants, and where a ``clalign sw`` run's time goes.

Issue 14 asks for a first run on a fresh machine within 1.3x a repeated one; on the H100 the
tuned first-pass kernel (ROWS=64 UNROLL=4) takes ~25 s to build. This tool measures, for each
``--variants`` spec (``;``-separated ``K=V,...`` inter-task overrides, e.g. ``ROWS=32,UNROLL=2``):

1. build: one child process per variant (``--jobs`` at a time, ``--build-timeout`` each), with the
   driver's cache disabled (``CUDA_CACHE_DISABLE=1``) and a fresh clalign cache shared by the
   children, so each child compiles from source and stores the binary; also the intra-task
   kernel of the tuned plan (what a fresh search builds besides the first pass);
2. speed: in this process, every variant that built (loaded from that cache), ``--queries``
   against ``--db``, subjects above ``--long`` left to the intra-task kernel; kernel seconds of the
   first pass (profiling events), median of ``--repeat`` after a warm-up, through
   ``clalign.runtime.harness.verify_then_time``: the warm-up's scores must equal the first
   working variant's, else the variant is reported and not timed;
3. ``--cli-profile``: ``clalign sw`` of the queries against the database twice (plain wall
   time, then under cProfile and ``-X importtime``), top functions and imports in the report.

    CUDA_CACHE_DISABLE=1 python3 -m tools.bench_sw_build --db DBDIR --queries Q.fa --out OUT \\
        --variants "tuned;UNROLL=2;ROWS=32,UNROLL=4;CHAIN=x,UNROLL=1" --cli-profile

Results: ``OUT/sw_build.json``, a ``clalign.runtime.harness`` results document (and the log on stdout).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
from clalign.runtime import Runtime
from clalign.sw.engine import SWEngine
from clalign.sw.passes import INTER_TEMPLATE
from clalign.sw.params import SW_PARAMS, INTRA_PARAMS
from clalign.sw.intratask import INTRA_TEMPLATE, intra_values
ov, what = json.loads(sys.argv[1]), sys.argv[2]
t0 = time.perf_counter()
eng = SWEngine(**ov)
w = eng.workers[0]
t1 = time.perf_counter()
if what == "intra":
    vals = intra_values(w.plan.ivalues, 5478, 32)
    src_t = INTRA_TEMPLATE, INTRA_PARAMS
else:
    vals = w.plan.values(w.plan.first_width, "plain", "dynamic")
    src_t = INTER_TEMPLATE, SW_PARAMS
from clalign.runtime import render
lines = render(src_t[0], src_t[1].validate(vals)).count("\n") + 1
t2 = time.perf_counter()
w.rt.program(src_t[0], src_t[1], vals)
t3 = time.perf_counter()
print("RESULT " + json.dumps({"startup_s": round(t1 - t0, 3), "build_s": round(t3 - t2, 3), "lines": lines,
                              "builds": w.rt.builds, "loads": w.rt.loads}))
"""


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def parse_spec(spec: str) -> dict:
    ov = {}
    for kv in filter(None, spec.split(",")):
        k, _, x = kv.partition("=")
        if k != "tuned":
            ov[k] = int(x) if x.lstrip("-").isdigit() else x
    return ov


def build_all(args, specs, env) -> list:
    def one(spec, what="inter"):
        ov = parse_spec(spec)
        t = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(ov), what], env=env, capture_output=True,
                                  text=True, timeout=args.build_timeout)
            got = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            row = json.loads(got[0][7:]) if got else {"error": proc.stderr[-400:]}
        except subprocess.TimeoutExpired:
            row = {"error": f"build over {args.build_timeout} s"}
        row.update(variant=spec, kernel=what, wall_s=round(time.perf_counter() - t, 2))
        log(f"build [{what} {spec}]: {row}")
        return row

    jobs = [(s, "inter") for s in specs] + [("tuned", "intra")]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return list(pool.map(lambda j: one(*j), jobs))


def speed_all(args, specs, built) -> list:
    import numpy as np

    from clalign.data import PROTEIN, Database, read_fasta
    from clalign.runtime.harness import compare, verify_then_time
    from clalign.sw.engine import SWEngine

    db = Database.open(args.db) if os.path.isdir(args.db) else Database.from_fasta(args.db)
    queries = [(r.id, PROTEIN.encode(r.sequence)) for r in read_fasta(args.queries)]
    if args.speed_queries:
        want = args.speed_queries.split(",")
        queries = [q for q in queries if any(w in q[0] for w in want)]
    L = np.asarray(db.lengths)
    cells = sum(len(c) for _, c in queries) * int(L[L <= args.long].sum())
    rows, ref = [], None
    for spec in specs:
        if spec not in built:
            continue
        st = {"walls": []}

        def run():                      # first call: build/load, warm-up, the scores to verify
            eng = st.setdefault("eng", SWEngine(long_threshold=args.long, **parse_spec(spec)))
            w = eng.workers[0]
            k0 = w.kernel_seconds - w.intra_seconds
            t = time.perf_counter()
            scores, _ = eng.search(queries, db, progress=False)
            st["walls"].append(time.perf_counter() - t)
            return scores, w.kernel_seconds - w.intra_seconds - k0

        def verify(scores):
            st["scores"] = scores
            if ref is None:
                return None
            for (qid, _), a, b in zip(queries, scores, ref):
                bad = compare(a, b, f"scores of {qid}")
                if bad:
                    return bad
            return None

        m = verify_then_time(run, verify, repeats=args.repeat)
        if not m.ok:                    # never timed: reported with the reason
            row = {"variant": spec, "status": m.status, "reason": m.reason, "scores_equal_first": False}
            rows.append(row)
            log(f"speed [{spec}]: {m.status}, not timed: {m.reason}")
            continue
        ref = st["scores"] if ref is None else ref
        first, walls, k, w = st["walls"][0], st["walls"][1:], m.seconds, st["eng"].workers[0]
        row = {"variant": spec, "status": "ok", "seconds": m.seconds, "samples": m.samples,
               "first_call_s": round(first, 2), "first_pass_kernel_s": round(k, 4),
               "tcups_first_pass": round(cells / k / 1e12, 3), "wall_s": round(float(np.median(walls)), 3),
               "tcups_wall_all": round(sum(len(c) for _, c in queries) * int(L.sum()) / float(np.median(walls)) / 1e12, 3),
               "builds": w.rt.builds, "loads": w.rt.loads, "scores_equal_first": True}
        rows.append(row)
        log(f"speed [{spec}]: {row}")
    return rows


def devices(args) -> list:
    """Every query against the whole database on each ``--devices`` spec (``;``-separated, e.g.
    ``0:0;0:0,0:1``): wall seconds of the search (after a warm-up search that builds, measures
    the rates and uploads), TCUPS, the per-device report, and whether the scores equal the first
    spec's."""
    import numpy as np

    from clalign.data import PROTEIN, Database, read_fasta
    from clalign.sw.engine import SWEngine

    db = Database.open(args.db) if os.path.isdir(args.db) else Database.from_fasta(args.db)
    queries = [(r.id, PROTEIN.encode(r.sequence)) for r in read_fasta(args.queries)]
    cells = sum(len(c) for _, c in queries) * int(db.total_residues)
    rows, ref = [], None
    for spec in filter(None, args.devices.split(";")):
        eng = SWEngine(device=spec)
        notes = []
        eng.search(queries, db, progress=False, verbose=notes.append)
        walls = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            scores, _ = eng.search(queries, db, progress=False)
            walls.append(time.perf_counter() - t)
        wall = float(np.median(walls))
        same = ref is None or all(np.array_equal(a, b) for a, b in zip(scores, ref))
        ref = scores if ref is None else ref
        row = {"devices": spec, "wall_s": round(wall, 3), "tcups": round(cells / wall / 1e12, 3),
               "identical_to_first": bool(same), "verbose": notes,
               "per_device": [{"device": lab, what: n, "tcups": round(c / max(sec, 1e-12) / 1e12, 3),
                               "busy_s": round(sec, 3)} for lab, n, what, c, sec in eng.device_report]}
        rows.append(row)
        log(f"devices [{spec}]: {row}")
    if len(rows) > 1:
        log(f"speed-up of {rows[-1]['devices']} over {rows[0]['devices']}: {rows[0]['wall_s'] / rows[-1]['wall_s']:.2f}x")
    return rows


def choose_best(report, max_build) -> str:
    """The fastest first pass (scores equal) among the variants built within ``max_build`` s."""
    built = {r["variant"]: r["build_s"] for r in report.get("builds", []) if r["kernel"] == "inter" and "error" not in r}
    ok = [r for r in report["speed"] if r["scores_equal_first"] and built.get(r["variant"], 0) <= max_build]
    return max(ok, key=lambda r: r["tcups_first_pass"])["variant"]


def cli_profile(args, out: Path, env) -> dict:
    res = {}
    cmd = ["-m", "clalign", "sw", "-query", args.queries, "-db", args.db, "-out", str(out / "hits.tsv"), "--force"]
    t = time.perf_counter()
    p = subprocess.run([sys.executable] + cmd, env=env, capture_output=True, text=True)
    res["plain_wall_s"] = round(time.perf_counter() - t, 3)
    res["plain_rc"] = p.returncode
    res["plain_stderr_tail"] = p.stderr[-1500:]
    log(f"clalign sw: {res['plain_wall_s']} s rc {p.returncode}")
    prof = out / "sw.prof"
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "cProfile", "-o", str(prof)] + cmd, env=env,
                       capture_output=True, text=True)
    res["profiled_wall_s"] = round(time.perf_counter() - t, 3)
    imps = []
    for ln in p.stderr.splitlines():
        if ln.startswith("import time:") and "|" in ln:
            parts = ln[12:].split("|")
            try:
                imps.append((int(parts[1]), parts[2].rstrip()))
            except ValueError:
                pass
    res["top_imports_us"] = sorted(imps, reverse=True)[:25]
    import io
    import pstats

    buf = io.StringIO()
    pstats.Stats(str(prof), stream=buf).sort_stats("cumulative").print_stats(45)
    res["cprofile_cumulative"] = buf.getvalue()[-9000:]
    log(res["cprofile_cumulative"][:6000])
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--variants", default="tuned")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--build-timeout", type=float, default=40.0)
    ap.add_argument("--speed-max-build", type=float, default=1e9,
                    help="time the speed of variants whose build took at most this many seconds")
    ap.add_argument("--speed-queries", default="", help="accessions (comma-separated) for the speed part")
    ap.add_argument("--long", type=int, default=8600, help="long_threshold of the speed part")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cli-profile", action="store_true")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--cli-best", action="store_true",
                    help="then whole clalign sw runs (tools/bench_build.py --cli) with the fastest variant that "
                         "built within --best-max-build seconds, as a tuning entry")
    ap.add_argument("--best-max-build", type=float, default=4.0)
    ap.add_argument("--devices", default="", help="';'-separated --device specs to compare (e.g. '0:0;0:0,0:1')")
    ap.add_argument("--cli-runs", default="", help="as bench_build.py --cli-runs")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    specs = [s.strip() for s in args.variants.split(";") if s.strip()]   # "" with --skip-build: none
    kc = tempfile.mkdtemp(prefix="clalign-kc-")
    env = {**os.environ, "CLALIGN_CACHE_DIR": kc, "PYTHONPATH": f"{ROOT}:{os.environ.get('PYTHONPATH', '')}"}
    os.environ["CLALIGN_CACHE_DIR"] = kc
    report = {"CUDA_CACHE_DISABLE": os.environ.get("CUDA_CACHE_DISABLE")}
    try:
        if not args.skip_build:
            report["builds"] = build_all(args, specs, {**env, "CUDA_CACHE_DISABLE": "1"})
            built = {r["variant"] for r in report["builds"]
                     if r["kernel"] == "inter" and "error" not in r and r["build_s"] <= args.speed_max_build}
        else:
            built = set(specs)
        report["speed"] = speed_all(args, specs, built)
        if args.cli_best:
            best = choose_best(report, args.best_max_build)
            report["cli_variant"] = best
            log(f"CLI runs with the variant {best!r}")
            from tools.bench_build import run_cli

            args.cache_dir, args.device, args.cli_runs = None, None, args.cli_runs or "fresh-all,fresh,repeated,repeated"
            run_cli(args, report, tune=parse_spec(best))
        if args.devices:
            report["devices"] = devices(args)
        if args.cli_profile:
            report["cli"] = cli_profile(args, out, {k: v for k, v in env.items() if k != "CUDA_CACHE_DISABLE"})
    finally:                            # a harness results document: one row per timed (or rejected) variant
        from tools.results import save

        save(out / "sw_build.json", [{"family": "sw-inter", "input": args.queries, "values": parse_spec(r["variant"]),
                                      **r} for r in report.get("speed", [])], **report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
