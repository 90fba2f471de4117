#!/usr/bin/env python3
"""Cost of SW hit reporting (E-values + exact tracebacks) next to the search itself.

Protocol (issue 12's cost target): the 20 CUDASW++ queries against the synthetic Swiss-Prot-like
database of ``tools/bench_sw.py`` (``tools/gen_protein_db.py``, 570,000 sequences by default),
BLOSUM62 11/1. In one process, after warm-up (kernel builds, numba compilation, database
resident on the device):

- ``search``: ``SWEngine.search`` of all queries (scores only), wall seconds;
- ``report``: ``clalign.sw.sw_search`` of the same queries with ``top`` hits per query (500) and
  an E-value threshold high enough that every query reports ``top`` hits (a random database
  has ~10 hits with E <= 10), wall seconds; its tracebacks run on CPU threads while the device
  scores the next query.

Each is repeated ``--repeat`` times alternately; medians are reported, and the added cost
``report / search - 1``. Also printed: the CPU seconds of the tracebacks (summed over threads)
and every alignment's re-scoring check on a sample. Results go to stdout and ``--out``/
``sw_report_bench.json``.

    python3 -m tools.bench_sw_report -n 570000 --out /tmp/r
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)

from tools import gen_protein_db
from tools.bench_sw import QUERY_PLACES, read_queries
from tools.results import save


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=570000, help="database sequences (default 570000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--top", type=int, default=500, help="hits reported per query (default 500)")
    ap.add_argument("--evalue", type=float, default=1e12, help="E-value threshold (default: everything)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--max-queries", type=int, default=0, help="use only the first K queries")
    ap.add_argument("--threads", type=int, default=0, help="traceback threads (default: all cores)")
    ap.add_argument("--device", default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)

    from clalign.data import PROTEIN, Database
    from clalign.sw import get_engine, sw_search
    from clalign.sw.align import rescore

    qpath = next((p for p in QUERY_PLACES if os.path.exists(p)), None)
    if qpath is None:
        print("bench_sw_report: the CUDASW++ queries are not found in " + ", ".join(QUERY_PLACES), file=sys.stderr)
        return 2
    queries = [(qid, PROTEIN.encode(seq)) for qid, seq in read_queries(qpath)]
    if a.max_queries:
        queries = queries[:a.max_queries]
    t = time.perf_counter()
    lengths, residues = gen_protein_db.generate(a.n, a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        fa = os.path.join(tmp, "db.fa")
        gen_protein_db.write_fasta(fa, lengths, residues)
        db = Database.from_fasta(fa)
    gen_s = time.perf_counter() - t
    cells = sum(len(c) for _, c in queries) * db.total_residues
    eng = get_engine("BLOSUM62", 11, 1, a.device)
    kw = dict(top=a.top, evalue=a.evalue, device=a.device, threads=a.threads or None)
    # warm-up: kernels, the database upload (resident afterwards), numba compilation
    t = time.perf_counter()
    eng.search(queries, db, progress=False)
    sw_search(queries[:1], db, **kw)
    warm_s = time.perf_counter() - t

    search, report, align_cpu, last = [], [], [], None
    for _ in range(a.repeat):
        t = time.perf_counter()
        eng.search(queries, db, progress=False)
        search.append(time.perf_counter() - t)
        t = time.perf_counter()
        last = sw_search(queries, db, **kw)
        report.append(time.perf_counter() - t)
        align_cpu.append(sum(r.align_seconds for r in last))
    nhits = sum(len(r.hits) for r in last)
    rng = np.random.default_rng(0)
    M = eng.scoring.scores[:28, :28]
    sample = [h for r in last for h in r.hits]
    sample = [sample[i] for i in rng.choice(len(sample), min(200, len(sample)), replace=False)] if sample else []
    bad = sum(rescore(h.qseq, h.sseq, M, PROTEIN.letters, 11, 1) != h.score for h in sample)
    ms, mr = statistics.median(search), statistics.median(report)
    lane_gcups = _lane_speed(queries, last, db, M)
    res = {
        "device": eng.caps.name, "n": a.n, "residues": int(db.total_residues), "queries": len(queries),
        "top": a.top, "evalue": a.evalue, "hits": nhits, "threads": a.threads or max(1, (os.cpu_count() or 2) - 1),
        "generate_s": round(gen_s, 2), "warmup_s": round(warm_s, 2),
        "search_s": [round(x, 4) for x in search], "report_s": [round(x, 4) for x in report],
        "align_cpu_s": [round(x, 3) for x in align_cpu],
        "median_search_s": round(ms, 4), "median_report_s": round(mr, 4),
        "search_tcups": round(cells / ms / 1e12, 3), "added_fraction": round(mr / ms - 1, 4),
        "rescored_sample": len(sample), "rescore_mismatches": bad,
        "longest_hit_slen": max((h.slen for r in last for h in r.hits), default=0),
        "hit_cells": int(sum(r.qlen * h.slen for r in last for h in r.hits)),
        "align_gcups_per_thread": round(sum(r.qlen * h.slen for r in last for h in r.hits) / 1e9
                                        / max(statistics.median(align_cpu), 1e-9), 3),
        "lane_group_gcups_1thread": lane_gcups,
    }
    print(json.dumps(res, indent=1))
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        ok = bad == 0                     # the reported alignments rescore to their scores
        save(os.path.join(a.out, "sw_report_bench.json"),
             [{"family": "sw-report", "input": f"n={a.n}", "values": {}, "status": "ok" if ok else "wrong",
               "seconds": round(mr, 4), "reason": "" if ok else f"{bad} rescore mismatches", "identical": ok,
               "ratio": res["added_fraction"], "ratio_valid": ok, **res}], caps=eng.caps)
    return 0 if bad == 0 and nhits == a.top * len(queries) else 1


def _lane_speed(queries, results, db, M):
    """Single-thread speed of one compiled group call (16 hits of the middle query): GCUPS
    counted as qlen x longest subject x 16, median of 3."""
    from clalign.data import PROTEIN
    from clalign.sw.align import CELL_BUDGET
    from clalign.sw.lanes import GROUP as LANES, trace_group

    k = len(results) // 2
    hits = sorted(results[k].hits, key=lambda h: h.slen)[-LANES:]
    if len(hits) < LANES:
        return None
    q = queries[k][1]
    lens = np.array([h.slen for h in hits], dtype=np.int64)
    subs = np.zeros((LANES, int(lens.max())), dtype=np.uint8)
    for j, h in enumerate(hits):
        subs[j, :h.slen] = db.sequence(h.subject_index)
    tg = np.array([h.score for h in hits], dtype=np.int32)
    M64 = np.ascontiguousarray(M, dtype=np.int64)
    lc = np.frombuffer(PROTEIN.letters.encode("ascii") + b"-", dtype=np.uint8)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        trace_group(q, subs, lens, tg, M64.astype(np.int16), M64.astype(np.int32), M64, 12, 1, CELL_BUDGET, lc)
        times.append(time.perf_counter() - t)
    return round(len(q) * int(lens.max()) * LANES / statistics.median(times) / 1e9, 3)


if __name__ == "__main__":
    sys.exit(main())
