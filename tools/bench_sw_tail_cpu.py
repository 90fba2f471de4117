#!/usr/bin/env python3
"""Issue-14 CPU checks (PoCL): per-cell rate on the long-tail database vs the same generator
without the tail, and a long query against a handful of long subjects, in one process.

    python3 -m tools.bench_sw_tail_cpu [-n 20000] [--queries Q.fa] [--max-queries 3] [--lanes-ab]

Prints GCUPS (query length x residues / wall seconds of the fastest warmed-up search) and the
ratios the issue asks for (long-tail / no tail >= 0.8; long query / no tail >= 0.5). Searches go
through ``clalign.runtime.harness.verify_then_time``; ``--lanes-ab`` checks every lane mode's
scores against the first before timing it. Writes ``--results`` (JSON).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from clalign.data import PROTEIN, Database, read_fasta
from clalign.runtime.harness import compare, verify_then_time
from clalign.sw.engine import SWEngine
from tools import gen_protein_db
from tools.results import save


def make_db(n, seed, model):
    lengths, residues = gen_protein_db.generate(n, seed, model)
    codes = PROTEIN.encode(residues.tobytes().decode())
    offs = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    return Database.from_sequences([codes[offs[i]:offs[i + 1]] for i in range(n)])


def measure(make, queries, db, repeat=2, reference=None):
    """``harness.verify_then_time`` of one engine (``make()``): a first search (build, warm-up)
    whose scores are checked against ``reference`` (when given), then ``repeat`` timed ones.
    Returns (measurement, scores of the first search, GCUPS from the fastest wall time or None)."""
    state = {}

    def run():
        eng = state.setdefault("eng", make())
        t = time.perf_counter()
        res, _ = eng.search(queries, db, progress=False)
        return res, time.perf_counter() - t

    def verify(res):
        state["res"] = res
        for i, (x, y) in enumerate(zip(res, res if reference is None else reference)):
            bad = compare(x, y, f"scores of query {queries[i][0]}")
            if bad:
                return bad
        return None

    m = verify_then_time(run, verify, repeats=repeat)
    cells = sum(len(c) for _, c in queries) * int(db.total_residues)
    return m, state.get("res"), (cells / min(m.samples) / 1e9 if m.ok else None)


def rate(eng, queries, db, repeat=2):
    m, _, r = measure(lambda: eng, queries, db, repeat)
    if not m.ok:
        sys.exit(f"bench_sw_tail_cpu: search failed ({m.status}): {m.reason}")
    return r


def long_case():
    """The 15,000-aa random query and the 4 random subjects of 12,000-20,000 aa."""
    rng = np.random.default_rng(4)
    aa = PROTEIN.encode("ACDEFGHIKLMNPQRSTVWY")
    long_q = [("long15000", aa[rng.integers(0, 20, 15000)])]
    return long_q, Database.from_sequences([aa[rng.integers(0, 20, n)] for n in (12000, 15000, 20000, 14000)])


def lanes_ab(device):
    """Same-process A/B of the striped kernel's first lane type (s16 vs u8) on the long-query case."""
    from clalign.sw import intratask

    long_q, handful = long_case()
    orig = intratask.striped_lanes
    rows, reference = [], None
    try:
        for mode in ("s16", "u8", "s16", "u8"):
            intratask.striped_lanes = (lambda sc: ["s16", "s32"]) if mode == "s16" else orig
            m, res, r = measure(lambda: SWEngine("BLOSUM62", 11, 1, device, long_threshold=0, INTRA_KIND="striped"),
                                long_q, handful, reference=reference)
            reference = reference if reference is not None or not m.ok else res   # the first working mode
            rows.append({"family": "sw-intra", "input": "long15000 x 4 long", "values": {"first_lane": mode},
                         **m.as_dict(), "gcups": r})
            print(f"striped from {mode}: " + (f"{r:.2f} GCUPS" if m.ok else f"{m.status}, not timed: {m.reason}"),
                  flush=True)
    finally:
        intratask.striped_lanes = orig
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=20000)
    ap.add_argument("--queries", default=str(ROOT / "tests" / "data" / "cudasw" / "cudasw_queries.fasta"))
    ap.add_argument("--max-queries", type=int, default=3)
    ap.add_argument("--device", default=None)
    ap.add_argument("--lanes-ab", action="store_true",
                    help="only the long-query case, the striped kernel starting at s16 vs u8, alternating twice")
    ap.add_argument("--results", default="bench_sw_tail_cpu.json", help="results JSON file")
    a = ap.parse_args()
    if a.lanes_ab:
        return save(a.results, lanes_ab(a.device))
    qs = [(r.id, PROTEIN.encode(r.sequence)) for r in read_fasta(a.queries)]
    step = max(1, len(qs) // a.max_queries)
    qs = qs[::step][:a.max_queries]
    eng = SWEngine("BLOSUM62", 11, 1, a.device)
    lines = []
    tail = make_db(a.n, 1, "longtail")
    plain = make_db(a.n, 1, "lognormal")
    eng.search(qs[:1], tail, progress=False, verbose=lines.append)
    print("\n".join(lines))
    r_plain = rate(eng, qs, plain)
    r_tail = rate(eng, qs, tail)
    long_q, handful = long_case()
    r_long = rate(eng, long_q, handful, repeat=3)
    print(f"{eng.caps.name}: no tail {r_plain:.2f} GCUPS, long tail {r_tail:.2f} GCUPS "
          f"({r_tail / r_plain:.2f}x, target >= 0.8), long query x 4 long subjects {r_long:.2f} GCUPS "
          f"({r_long / r_plain:.2f}x, target >= 0.5)")
    save(a.results, [{"family": "sw", "input": name, "values": {}, "status": "ok", "gcups": round(r, 3)}
                     for name, r in (("no tail", r_plain), ("long tail", r_tail), ("long query", r_long))],
         caps=eng.caps, n=a.n, queries=[q for q, _ in qs])


if __name__ == "__main__":
    main()
