"""Per-query set-up of ``clalign blastp`` (``engine.setup_query``) on one core.

Times ``setup_query`` -- SEG when asked, the lookup table, the ungapped Karlin block, cutoffs and
X-drops -- for the first N proteins of the bundled proteome (``data/proteome.faa.gz``) under
each task, after one untimed pass (numba's compile), against statistics of the 570,000-sequence
benchmark database's size. Prints one JSON line per task: milliseconds per query (mean, and the
median of the per-query times), the queries' mean length. Example::

    python3 -m tools.bench_blastp_setup --many 400 --tasks blastp,blastp-fast,seg
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--many", type=int, default=400)
    ap.add_argument("--tasks", default="blastp,blastp-fast,seg",
                    help="comma list of blastp, blastp-fast, seg (blastp with -seg yes), w2, w4")
    ap.add_argument("--db-residues", type=int, default=205_000_000)
    ap.add_argument("--db-seqs", type=int, default=570_000)
    a = ap.parse_args(argv)
    from clalign.blast.blastp import read_queries, search_codes
    from clalign.blast.engine import Subjects, setup_query
    from clalign.blast.options import blastp_options
    from clalign.blast.seg import SegParams
    from clalign.data.database import Database
    from clalign.stats import SearchStatistics

    db = Database.from_fasta(ROOT / "data" / "proteome.faa.gz", "protein")
    n = min(a.many, len(db.ids))
    queries = [search_codes(np.asarray(db.residues[db.offsets[k]:db.offsets[k + 1]], dtype=np.uint8))
               for k in range(n)]
    subjects = Subjects(np.zeros(2, np.uint8), np.array([0, 1, 2]), ["a", "b"])
    out = []
    for task in a.tasks.split(","):
        opts = {"blastp": lambda: blastp_options(), "blastp-fast": lambda: blastp_options(task="blastp-fast"),
                "seg": lambda: dataclasses.replace(blastp_options(), seg=SegParams()),
                "w2": lambda: blastp_options(word_size=2), "w4": lambda: blastp_options(word_size=4)}[task]()
        stats = SearchStatistics.for_search(opts.matrix, opts.gap_open, opts.gap_extend,
                                            a.db_residues, a.db_seqs)
        for codes in queries[:5]:
            setup_query(codes, subjects, opts, stats)
        each = []
        for codes in queries:
            t = time.perf_counter()
            setup_query(codes, subjects, opts, stats)
            each.append(time.perf_counter() - t)
        r = {"task": task, "queries": n, "mean_len": round(float(np.mean([len(q) for q in queries])), 1),
             "ms_per_query": round(1e3 * sum(each) / n, 3),
             "median_ms": round(1e3 * statistics.median(each), 3)}
        print(json.dumps(r), flush=True)
        out.append(r)
    return out


if __name__ == "__main__":
    main()
