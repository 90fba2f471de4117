"""BLASTN query set-up, whole in-process searches and ``Alignment.make``, timed in-process.

Data: ``tools.bench_blastn_cpu.write_data(work, reads, 2)`` (pyrodigal's genome, reads of
150-1,000 bases, seed 5). Prints ``setup_search`` (megablast) as the median of ``--rounds``
after a warm-up, ``run_blastn`` wall and phases (``--threads``) after a warm-up run, and
``Alignment.make`` per record on random protein strings of 50 and 5,000 columns. To compare
with an older commit, run this file with ``PYTHONPATH`` set to that commit's tree.

    python3 -m tools.bench_blastn_setup --work /tmp/bnsetup --reads 2000 --threads 2
"""
import argparse
import os
import random
import statistics
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/bnsetup")
    ap.add_argument("--reads", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from clalign.blast.blastn import run_blastn
    from clalign.blast.nucl_setup import BlastnOptions, read_queries, setup_search
    from clalign.data.alphabet import PROTEIN
    from clalign.output.record import Alignment
    from tools.bench_blastn_cpu import write_data

    work = os.path.join(args.work, f"r{args.reads}")
    if not os.path.exists(os.path.join(work, "reads.fa")):
        write_data(work, args.reads, 2)
    reads, db = os.path.join(work, "reads.fa"), os.path.join(work, "gdb")
    opts = BlastnOptions(task="megablast")
    queries = read_queries(reads)
    setup_search(queries, opts, 2_500_000, 1)
    ts = []
    for _ in range(args.rounds):
        t = time.perf_counter()
        setup_search(queries, opts, 2_500_000, 1)
        ts.append(time.perf_counter() - t)
    print(f"{args.reads} reads: setup_search median {statistics.median(ts):.3f} s "
          f"({', '.join(f'{x:.3f}' for x in ts)})")
    run_blastn(reads, db, opts, num_threads=args.threads)
    for _ in range(2):
        times = {}
        t = time.perf_counter()
        run_blastn(reads, db, opts, times=times, num_threads=args.threads)
        print(f"run_blastn {args.threads} threads {time.perf_counter() - t:.3f} s, phases "
              + ", ".join(f"{k} {v:.3f}" for k, v in times.items()))
    rng = random.Random(1)
    m = np.random.default_rng(1).integers(-4, 5, (len(PROTEIN.letters),) * 2)
    for n_cols, n in ((50, 2000), (5000, 50)):
        q, s = ("".join(rng.choice("ACDEFGHIKLMNPQRSTVWY-") for _ in range(n_cols)) for _ in range(2))
        Alignment.make("q", "s", n_cols, n_cols, 1, 1.0, 1.0, 1, 1, q, s, scores=m, letters=PROTEIN.letters)
        t = time.perf_counter()
        for _ in range(n):
            Alignment.make("q", "s", n_cols, n_cols, 1, 1.0, 1.0, 1, 1, q, s, scores=m,
                           letters=PROTEIN.letters)
        print(f"Alignment.make {n_cols} columns: {(time.perf_counter() - t) / n * 1e6:.1f} us")


if __name__ == "__main__":
    main()
