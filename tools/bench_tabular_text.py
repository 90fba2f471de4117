"""Seconds of BLASTN's tabular text (``blastn.tabular_text``, what the command writes) on one
search's results, repeated in-process: one search, then ``--rounds`` timings of the text (wall
seconds on the main thread, nothing else running), their median and minimum printed as JSON.

    PYTHONPATH=<tree> python3 tools/bench_tabular_text.py --query reads.fa --db gdb \\
        [--task megablast] [--outfmt "6"] [--rounds 15] [--save out.tsv]

Run it once per tree (PYTHONPATH), alternating the trees, and ``cmp`` the ``--save`` files.
"""
import argparse
import gc
import json
import statistics
import time

from clalign.blast import blastn
from clalign.blast.nucl_setup import BlastnOptions
from clalign.output import parse_outfmt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--query", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--task", default="megablast")
    ap.add_argument("--outfmt", default="6")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--save", default=None, help="write the text here")
    a = ap.parse_args()
    kind, columns = parse_outfmt(a.outfmt, extra=())
    res = blastn.run_blastn(a.query, a.db, BlastnOptions(task=a.task), num_threads=a.threads)
    kw = dict(columns=columns, comments=kind == "7", database=a.db)
    text = blastn.tabular_text(res, **kw)
    spent = []
    for _ in range(a.rounds):
        gc.collect()
        t0 = time.perf_counter()
        blastn.tabular_text(res, **kw)
        spent.append(time.perf_counter() - t0)
    if a.save:
        with open(a.save, "w") as fh:
            fh.write(text)
    print(json.dumps({"lines": text.count("\n"), "median_s": round(statistics.median(spent), 4),
                      "min_s": round(min(spent), 4), "rounds": a.rounds}))


if __name__ == "__main__":
    main()
