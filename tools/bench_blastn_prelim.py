"""BLASTN's compiled preliminary stage (``nucl_stages_nb.prelim_rows``) timed in isolation.

``--capture``: runs ``run_blastn`` (CPU path, one thread) on ``--query``/``--db`` with
``prelim_rows`` wrapped, and pickles every call's arguments and result to ``--calls``.
Without it: loads those calls, checks that each gives the same rows as captured, then times
every call ``--rounds`` times on one thread and prints the best round's total, per call and per
initial hit (the calls' ``rows``; the oriented query of calls captured before ``prelim_rows`` took it is
made here, untimed, as ``prelim_hsps`` makes it once per search). To compare trees, capture once and run this file with
``PYTHONPATH`` set to each tree.

    python3 -m tools.bench_blastn_prelim --capture --query genes.fa --db gdb --calls calls.pkl
    python3 -m tools.bench_blastn_prelim --calls calls.pkl --rounds 5
"""
import argparse
import pickle
import time

import numpy as np


def capture(query, db, task, path):
    from clalign.blast import nucl_stages_nb
    from clalign.blast.blastn import run_blastn
    from clalign.blast.nucl_setup import BlastnOptions

    inner, calls = nucl_stages_nb.prelim_rows, []

    def wrapped(*args):
        kept = tuple(np.array(a) if isinstance(a, np.ndarray) else a for a in args)
        out = inner(*args)
        calls.append((kept, out.copy()))     # copies: the caller shifts and reuses arrays
        return out

    nucl_stages_nb.prelim_rows = wrapped
    try:
        run_blastn(query, db, BlastnOptions(task=task), num_threads=1)
    finally:
        nucl_stages_nb.prelim_rows = inner
    with open(path, "wb") as fh:
        pickle.dump(calls, fh, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"{len(calls)} calls, {sum(a[0].shape[0] for a, _ in calls)} initial hits -> {path}")


def timing(path, rounds):
    from clalign.blast.nucl_stages_nb import prelim_rows

    with open(path, "rb") as fh:
        calls = pickle.load(fh)
    if "qf" in prelim_rows.py_func.__code__.co_varnames[:4]:   # calls captured before qf, qr
        from clalign.blast.nucl_gapped import oriented_batch
        ob = {}
        calls = [(a[:2] + ob.setdefault(id(a[1]), oriented_batch(a[1])) + a[2:], w)
                 if len(a) == 15 else (a, w) for a, w in calls]
    if "pre" in prelim_rows.py_func.__code__.co_varnames[:2]:   # calls captured before pre
        none = np.zeros((0, 8), np.int64)
        calls = [((a[0], none) + a[1:], w) if a[1].ndim == 1 else (a, w) for a, w in calls]
    hits = sum(a[0].shape[0] for a, _ in calls)
    kept = 0
    for args, want in calls:
        got = prelim_rows(*args)
        assert np.array_equal(got, want), "rows differ from the captured ones"
        kept += got.shape[0]
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for args, _ in calls:
            prelim_rows(*args)
        best = min(best, time.perf_counter() - t0)
    print(f"{len(calls)} calls, {hits} initial hits, {kept} HSPs kept: best of {rounds} "
          f"{best:.3f} s, {best / len(calls) * 1e3:.3f} ms a call, {best / hits * 1e6:.3f} us a hit")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--capture", action="store_true")
    ap.add_argument("--query")
    ap.add_argument("--db")
    ap.add_argument("--task", default="blastn")
    ap.add_argument("--calls", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if args.capture:
        capture(args.query, args.db, args.task, args.calls)
    else:
        timing(args.calls, args.rounds)


if __name__ == "__main__":
    main()
