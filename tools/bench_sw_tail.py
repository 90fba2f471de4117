#!/usr/bin/env python3
"""The issue-14 SW benchmark on the long-tail database, in one command (GPU machine).

    python3 -m tools.bench_sw_tail --out $OUT [-n 570000] [--queries Q.fa] [--variants]

1. generates the long-tail database (``tools/gen_protein_db.py``, default model) as FASTA;
2. API timings (20 queries, database resident, after a warm-up that builds the kernels and
   measures the per-cell rates): the default kernel split (inter-task + concurrent intra-task),
   the inter-task kernel alone (``long_threshold`` huge: the behaviour before the split), and
   the intra-task kernel alone on the subjects longer than 2,000 aa; the full score vectors
   of the first two must be identical;
3. ``--variants``: intra-task tile variants (TH, TW, WG, profile packing and place) on the long
   subjects, each checked identical to the default before it is timed
   (``clalign.runtime.harness.verify_then_time``; a differing one is reported, never timed), then
   the split with the fastest;
   ``--split-variants 'WG=128;pipeline=1'``: the split search with each set of overrides (scores checked identical);
4. ``--big``: one random 35,000 x 35,000 pair, and a 35,000-aa query against the long subjects;
5. ``--cli``: ``clalign makedb`` then ``clalign sw`` twice (first and repeated run wall time);
Writes ``sw_tail.json`` (a harness results document) to ``--out``. TCUPS = sum of query lengths x database residues / seconds.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from clalign.data import PROTEIN, Database, as_database, read_fasta
from clalign.sw.engine import SWEngine
from clalign.runtime.harness import compare, verify_then_time
from tools import gen_protein_db
from tools.results import save

def _v(th, tw, wg, prof="global", **kw):
    return dict(INTRA_TH=th, INTRA_TW=tw, INTRA_WG=wg, INTRA_PROF=prof, **kw)


# Intra-task tile variants (issue 14, run 13): the first is the kernel of runs 9-11 with a 32-bit profile
# read from global memory; the others read the 8-bit packed profile (the default's values, TH=16 TW=8 WG=64
# from global memory one step ahead, are the "intra only" run). A PROF=local variant must fit the
# device's local memory (48 KiB on NVIDIA's OpenCL).
VARIANTS = [_v(12, 4, 64, INTRA_PBITS=32), _v(16, 8, 64, "local"), _v(16, 8, 64, "local", INTRA_AHEAD=False),
            _v(16, 8, 64, INTRA_AHEAD=False), _v(16, 8, 32, "local"), _v(16, 16, 32, "local", INTRA_AHEAD=False),
            _v(24, 8, 32, "local", INTRA_AHEAD=False), _v(32, 4, 32, "local", INTRA_AHEAD=False),
            _v(16, 4, 64, "local"), _v(16, 8, 128)]


def _programs(eng):
    return sum(w.rt.builds + w.rt.loads for w in eng.workers)


def timed(eng, queries, db, verbose=None):
    """One search of every query, timed after a warm-up that measures the rates, uploads the
    database and builds every program the search needs (``SWEngine.prepare`` for all queries:
    run 14's warm-up of one query left the other queries' intra-task variants to be built inside
    the timed search). ``programs_in_timed`` counts programs built or loaded during the timed call
    (0 expected)."""
    for f in eng.prepare(queries, db.lengths, verbose):
        f.result()
    # warm-up: rates, upload; several devices search every query once, so they warm up the way
    # the timed search splits its work (queries dealt whole, the database resident on each)
    eng.search(queries if len(eng.workers) > 1 else queries[:1], db, progress=False, verbose=verbose)
    k0 = eng.kernel_seconds
    i0 = sum(w.intra_seconds for w in eng.workers)
    p0 = _programs(eng)
    t0 = time.perf_counter()
    res, secs = eng.search(queries, db, progress=False)
    wall = time.perf_counter() - t0
    cells = sum(len(c) for _, c in queries) * int(db.total_residues)
    per_q = [{"id": q, "qlen": len(c), "s": round(s, 4)} for (q, c), s in zip(queries, secs)]
    return res, {"wall_s": wall, "kernel_s": eng.kernel_seconds - k0,
                 "intra_kernel_s": sum(w.intra_seconds for w in eng.workers) - i0,
                 "tcups_wall": cells / wall / 1e12, "cells": cells, "programs_in_timed": _programs(eng) - p0,
                 "per_query": per_q}


def verified(make, queries, db, reference):
    """A variant through ``harness.verify_then_time``: its first full search (build, warm-up)
    must give ``reference``'s score vectors, then one search is timed (kernel seconds); a variant
    that breaks a device limit or differs is reported and never timed."""
    state = {}

    def run():
        eng = state.setdefault("eng", make())
        k0, i0 = eng.kernel_seconds, sum(w.intra_seconds for w in eng.workers)
        t0 = time.perf_counter()
        res, _ = eng.search(queries, db, progress=False)
        wall = time.perf_counter() - t0
        cells = sum(len(c) for _, c in queries) * int(db.total_residues)
        state["m"] = {"wall_s": wall, "kernel_s": eng.kernel_seconds - k0,
                      "intra_kernel_s": sum(w.intra_seconds for w in eng.workers) - i0,
                      "tcups_wall": cells / wall / 1e12, "cells": cells}
        return res, state["m"]["kernel_s"]

    def verify(res):
        if len(res) != len(reference):
            return f"{len(res)} score vectors, reference {len(reference)}"
        for (qid, _), x, y in zip(queries, res, reference):
            bad = compare(x, y, f"scores of {qid}")
            if bad:
                return bad
        return None

    meas = verify_then_time(run, verify, repeats=1)
    m = dict(state["m"]) if meas.ok else {}
    m.update(meas.as_dict(), identical=meas.status == "ok")
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=570000)
    ap.add_argument("--db", default=None, help="a prepared database folder instead of generating one (no --cli)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queries", default=str(ROOT / "tests" / "data" / "cudasw" / "cudasw_queries.fasta"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default="/tmp/sw_tail")
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--cli", action="store_true")
    ap.add_argument("--no-old", action="store_true", help="skip the inter-task-only run")
    ap.add_argument("--multi", action="store_true",
                    help="also split the database over the GPU and a CPU device (or the GPU listed twice), "
                         "and over every GPU of the host when it has several")
    ap.add_argument("--multi-specs", default="",
                    help="with --multi: these device lists instead (';' between lists, e.g. '0:0,0:1;0:0')")
    ap.add_argument("--device", default=None)
    ap.add_argument("--split-variants", default="",
                    help="';'-separated engine overrides K=V[,K=V] (e.g. 'WG=128;pipeline=1'): the split search "
                         "again with each, scores checked identical to the default's")
    ap.add_argument("--skip-intra", action="store_true", help="skip the intra-task-only run")
    ap.add_argument("--big", action="store_true",
                    help="also time one random 35,000 x 35,000 pair and a 35,000-aa query against the long subjects")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    out = {}
    t = time.perf_counter()
    if a.db:                    # a prepared database (clalign makedb), memory-mapped as the CLI opens it
        db = as_database(a.db)
        lengths = np.asarray(db.lengths, dtype=np.int64)
        offs = np.asarray(db.offsets, dtype=np.int64) - int(db.offsets[0])
        codes = np.asarray(db.residues[int(db.offsets[0]):int(db.offsets[-1])])
        fasta = None
    else:
        lengths, residues = gen_protein_db.generate(a.n, a.seed)
        fasta = os.path.join(a.work, "db.fasta")
        gen_protein_db.write_fasta(fasta, lengths, residues)
        offs = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offs[1:])
        codes = PROTEIN.encode(residues.tobytes().decode())
        db = Database.from_sequences([codes[offs[i]:offs[i + 1]] for i in range(len(lengths))])
    out["db"] = {"n": len(lengths), "residues": int(lengths.sum()), "tail": gen_protein_db.tail_summary(lengths),
                 "source": a.db or "generated", "gen_s": time.perf_counter() - t}
    print(out["db"], flush=True)
    queries = [(r.id, PROTEIN.encode(r.sequence)) for r in read_fasta(a.queries)]
    lines = []
    eng = SWEngine("BLOSUM62", 11, 1, a.device)
    out["device"] = eng.caps.name
    res_split, out["split"] = timed(eng, queries, db, verbose=lines.append)
    out["verbose"] = lines
    print("split", out["split"], lines, flush=True)
    res_old = res_split
    if not a.no_old:
        old = SWEngine("BLOSUM62", 11, 1, a.device, long_threshold=10 ** 9)
        res_old, out["intertask_only"] = timed(old, queries, db)
        print("intertask only", out["intertask_only"], flush=True)
        out["identical"] = all(np.array_equal(x, y) for x, y in zip(res_split, res_old))
        print("identical", out["identical"], flush=True)
    out["split_variants"] = []
    for spec in [x for x in a.split_variants.split(";") if x.strip()]:
        ov = {k.strip(): int(v) for k, v in (kv.split("=") for kv in spec.split(","))}
        we = SWEngine("BLOSUM62", 11, 1, a.device, **ov)
        rep = []
        r, m = timed(we, queries, db, verbose=rep.append)
        m.update(overrides=ov, identical=all(np.array_equal(x, y) for x, y in zip(r, res_split)), verbose=rep)
        out["split_variants"].append(m)
        print("split", ov, {k: v for k, v in m.items() if k != "per_query"}, flush=True)
        del we
    long_ids = np.flatnonzero(lengths > 2000)
    ldb = Database.from_sequences([codes[offs[i]:offs[i + 1]] for i in long_ids])
    if not a.skip_intra or a.variants or a.big:
        intra = SWEngine("BLOSUM62", 11, 1, a.device, long_threshold=0)
        res_l, out["intra_only_2000plus"] = timed(intra, queries, ldb)
        out["intra_identical"] = all(np.array_equal(x[long_ids], y) for x, y in zip(res_split, res_l))
        print("intra only", out["intra_only_2000plus"], out["intra_identical"], flush=True)
    if a.variants:
        out["variants"] = []
        for v in VARIANTS:              # a PROF=local variant beyond the device's local memory: "limit"
            m = verified(lambda: SWEngine("BLOSUM62", 11, 1, a.device, long_threshold=0, **v), queries, ldb, res_l)
            m["values"] = v
            out["variants"].append(m)
            if m["status"] != "ok":
                print("variant", v, f"{m['status']}, not timed: {m['reason']}", flush=True)
                continue
            m["intra_tcups_kernel"] = m["cells"] / max(m["intra_kernel_s"], 1e-9) / 1e12
            print("variant", v, f"kernel {m['intra_kernel_s']:.3f} s = {m['intra_tcups_kernel']:.2f} TCUPS, wall "
                  f"{m['wall_s']:.3f} s, identical {m['identical']}", flush=True)
        good = [m for m in out["variants"] if m["status"] == "ok"]
        if good:
            best = min(good, key=lambda m: m["kernel_s"])["values"]
            out["split_best"] = verified(lambda: SWEngine("BLOSUM62", 11, 1, a.device, **best), queries, db, res_split)
            out["split_best"]["values"] = best
            out["split_best_identical"] = out["split_best"]["identical"]
            print("split with best intra variant", out["split_best"], flush=True)
    if a.big:
        rng = np.random.default_rng(35)
        aa = PROTEIN.encode("ACDEFGHIKLMNPQRSTVWY")
        q35 = aa[rng.integers(0, 20, 35000)]
        one = Database.from_sequences([aa[rng.integers(0, 20, 35000)]])
        e = SWEngine("BLOSUM62", 11, 1, a.device, long_threshold=0)
        _, out["pair_35000x35000"] = timed(e, [("q35000", q35)], one)
        _, out["query_35000_vs_long"] = timed(e, [("q35000", q35)], ldb)
        print("35,000 x 35,000", out["pair_35000x35000"], "35,000-aa query x long subjects",
              out["query_35000_vs_long"], flush=True)
    if a.multi:
        from clalign.runtime import all_devices
        import pyopencl as cl

        devs = all_devices()
        gpus = [f"{p}:{d}" for p, d, x in devs if x.type & cl.device_type.GPU]
        gpu = gpus[:1]
        cpu = [f"{p}:{d}" for p, d, x in devs if x.type & cl.device_type.CPU][:1]
        out["multi"] = []
        specs = [",".join(gpu + (cpu or gpu)), ",".join(gpu + gpu)]
        if len(gpus) > 1:               # every GPU of the host, then with the CPU device too
            specs = [",".join(gpus), ",".join(gpus + cpu)] + specs
        specs = list(dict.fromkeys(specs)) + gpu[:len(gpus) > 1]   # one GPU again, last
        if a.multi_specs:
            specs = a.multi_specs.split(";")
        for spec in specs:
            me = SWEngine("BLOSUM62", 11, 1, spec)
            rep = []
            r, m = timed(me, queries, db, verbose=rep.append)
            m.update(spec=spec, identical=all(np.array_equal(x, y) for x, y in zip(r, res_split)),
                     devices=me.device_report, verbose=rep)
            out["multi"].append(m)
            print("multi", m, flush=True)
    if a.cli and fasta is not None:
        prep = os.path.join(a.work, "prep")
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "clalign", "makedb", fasta, prep], check=True, env=env,
                       capture_output=True)
        out["cli_makedb_s"] = time.perf_counter() - t
        for k in ("first", "repeat"):
            t = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "clalign", "sw", "-query", a.queries, "-db", prep,
                                "-out", os.path.join(a.work, f"hits_{k}.tsv"), "--verbose"], env=env,
                               capture_output=True, text=True)
            out[f"cli_{k}_s"] = time.perf_counter() - t
            out[f"cli_{k}_tail"] = p.stderr[-1500:]
            print(k, out[f"cli_{k}_s"], p.returncode, p.stderr[-600:], flush=True)
    rows = [{"family": "sw-intra", "input": "subjects > 2000 aa", **m} for m in out.get("variants", [])]
    if "split_best" in out:
        rows.append({"family": "sw", "input": "whole database", **out["split_best"]})
    save(os.path.join(a.out, "sw_tail.json"), rows, caps=eng.caps, summary=out)


if __name__ == "__main__":
    main()
