#!/usr/bin/env python3
"""Issue-14 CPU checks (PoCL): per-cell rate on the long-tail database vs the same generator
without the tail, and a long query against a handful of long subjects, in one process.

    python3 -m tools.bench_sw_tail_cpu [-n 20000] [--queries Q.fa] [--max-queries 3] [--lanes-ab]

Prints GCUPS (query length x residues / wall seconds of one warmed-up search) and the ratios
the issue asks for (long-tail / no tail >= 0.8; long query / no tail >= 0.5).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from clalign.data import PROTEIN, Database, read_fasta
from clalign.sw.engine import SWEngine
from tools import gen_protein_db


def make_db(n, seed, model):
    lengths, residues = gen_protein_db.generate(n, seed, model)
    codes = PROTEIN.encode(residues.tobytes().decode())
    offs = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    return Database.from_sequences([codes[offs[i]:offs[i + 1]] for i in range(n)])


def rate(eng, queries, db, repeat=2):
    eng.search(queries[:1], db, progress=False)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        eng.search(queries, db, progress=False)
        best = min(best, time.perf_counter() - t)
    return sum(len(c) for _, c in queries) * int(db.total_residues) / best / 1e9


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
    for mode in ("s16", "u8", "s16", "u8"):
        intratask.striped_lanes = (lambda sc: ["s16", "s32"]) if mode == "s16" else orig
        eng = SWEngine("BLOSUM62", 11, 1, device, long_threshold=0, INTRA_KIND="striped")
        r = rate(eng, long_q, handful)
        print(f"striped from {mode}: {r:.2f} GCUPS", flush=True)
    intratask.striped_lanes = orig


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=20000)
    ap.add_argument("--queries", default=str(ROOT / "tests" / "data" / "cudasw" / "cudasw_queries.fasta"))
    ap.add_argument("--max-queries", type=int, default=3)
    ap.add_argument("--device", default=None)
    ap.add_argument("--lanes-ab", action="store_true",
                    help="only the long-query case, the striped kernel starting at s16 vs u8, alternating twice")
    a = ap.parse_args()
    if a.lanes_ab:
        return lanes_ab(a.device)
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
    r_long = rate(eng, long_q, handful, repeat=1)
    print(f"{eng.caps.name}: no tail {r_plain:.2f} GCUPS, long tail {r_tail:.2f} GCUPS "
          f"({r_tail / r_plain:.2f}x, target >= 0.8), long query x 4 long subjects {r_long:.2f} GCUPS "
          f"({r_long / r_plain:.2f}x, target >= 0.5)")


if __name__ == "__main__":
    main()
