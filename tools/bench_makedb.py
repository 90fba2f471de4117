#!/usr/bin/env python3
"""Benchmark ``clalign makedb`` on a Swiss-Prot-sized synthetic protein FASTA.

Generates (once, cached by n and seed) a 570,000-sequence, ~205 M-residue FASTA with
``tools/gen_protein_db.py``, then runs the ``makedb`` command (``clalign.data.cli``) in a child process and
reports its wall-clock seconds and peak resident memory (``resource.getrusage`` of the
child; the parent does no work meanwhile). Targets: < 60 s and < 3 GB on the 2-core CI
machine. Example::

    python3 -m tools.bench_makedb                # 570000 sequences, seed 1, in /tmp
    python3 -m tools.bench_makedb -n 50000 --gzip
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# the one results writer of the tools (clalign.runtime.harness documents)
from tools.results import save  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=570000, help="number of sequences (default 570000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gzip", action="store_true", help="benchmark a gzip-compressed input")
    ap.add_argument("--workdir", default="/tmp", help="where the FASTA and the database go")
    args = ap.parse_args()

    fasta = os.path.join(args.workdir, f"bench_{args.n}_s{args.seed}.fasta" + (".gz" if args.gzip else ""))
    if not os.path.exists(fasta):
        cmd = [sys.executable, "-m", "tools.gen_protein_db", "-n", str(args.n), "--seed", str(args.seed),
               "-o", os.path.abspath(fasta)] + (["--gzip"] if args.gzip else [])
        print("generating:", " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, cwd=ROOT)
    out = os.path.join(args.workdir, f"bench_{args.n}_s{args.seed}.db")
    shutil.rmtree(out, ignore_errors=True)

    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-c", "from clalign.data.cli import makedb; makedb()", fasta, out, "-dbtype", "prot"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    wall = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak_kib <= before:  # a previous child (the generator) was bigger: not measurable this way
        print("warning: generator child peaked higher; rerun with the FASTA already generated", file=sys.stderr)
    size = os.path.getsize(fasta)
    print(f"input: {fasta} ({size / 1e6:.1f} MB)")
    print(f"makedb wall: {wall:.2f} s")
    print(f"makedb peak RSS: {peak_kib / 1024 ** 2:.2f} GiB ({peak_kib} KiB)")
    db_mb = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out)) / 1e6
    print(f"database: {db_mb:.1f} MB in {out}")
    save(os.path.join(args.workdir, f"bench_makedb_{args.n}_s{args.seed}.json"),
         [{"family": "makedb", "input": os.path.basename(fasta), "values": {"gzip": args.gzip}, "status": "ok",
           "seconds": wall, "peak_rss_kib": peak_kib, "input_bytes": size, "database_mb": round(db_mb, 1)}])
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
