"""CPU seconds of BLASTN's record and output stages, in-process (one thread, so each stage's
thread CPU time is its own): the records' Python of every work unit (``_unit_records`` less its
compiled ``traceback_unit``), the selection of each query's records (``FinalHits``), and the
tabular text (``tabular_lines``) for the chosen ``-outfmt`` columns; also the whole search's CPU.

    PYTHONPATH=<tree> python3 tools/bench_blastn_records.py --query reads.fa --db gdb \\
        [--task megablast] [--outfmt "6"] [--rounds 3] [--check ref.tsv]

Run it once per tree (PYTHONPATH) and alternate the trees; medians of ``--rounds`` (the first
search of the process, which loads the compiled stages, is not counted).
"""
import argparse
import json
import statistics
import time

from clalign.blast import blastn, nucl_pairs, nucl_stages_nb
from clalign.blast.nucl_setup import BlastnOptions
from clalign.output import parse_outfmt

_spent = {}


def _timed(owner, name, key):
    fn = getattr(owner, name)

    def wrapped(*a, **k):
        t0 = time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            _spent[key] = _spent.get(key, 0.0) + time.thread_time() - t0

    setattr(owner, name, wrapped)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--query", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--task", default="megablast")
    ap.add_argument("--outfmt", default="6")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--check", default=None, help="expected output file (BLAST+'s)")
    a = ap.parse_args()
    _timed(blastn, "_unit_records", "unit_records")
    _timed(nucl_stages_nb, "traceback_unit", "traceback_unit")
    for name in ("hits", "hit_rows"):
        if hasattr(nucl_pairs.FinalHits, name):
            _timed(nucl_pairs.FinalHits, name, "final_hits")
    kind, columns = parse_outfmt(a.outfmt, extra=())
    got = {}
    for r in range(a.rounds + 1):
        _spent.clear()
        t0 = time.thread_time()
        res = blastn.run_blastn(a.query, a.db, BlastnOptions(task=a.task), num_threads=1)
        search = time.thread_time() - t0
        t0 = time.thread_time()
        lines = blastn.tabular_lines(res, columns=columns, comments=kind == "7", database=a.db)
        text = time.thread_time() - t0
        if r == 0:
            if a.check:
                with open(a.check) as fh:
                    assert lines == fh.read().splitlines(), "output differs from --check"
            continue
        row = {"search": search, "records": _spent["unit_records"] - _spent["traceback_unit"],
               "final_hits": _spent.get("final_hits", 0.0), "text": text, "rows": len(lines)}
        for k, v in row.items():
            got.setdefault(k, []).append(v)
    print(json.dumps({k: round(statistics.median(v), 4) for k, v in got.items()}))


if __name__ == "__main__":
    main()
