#!/usr/bin/env python3
"""Benchmark the FASTA -> database arrays read (``Database.from_fasta``, what ``hmmsearch`` and
``as_database`` do with a FASTA path) per reader, each call in a fresh process (numba's import
and first cache load count, as in a command), arms alternating round by round.

Arms: ``numpy`` (the numpy scan, :mod:`clalign.data.fasta_np`, as shipped), ``compiled`` (the
numba scan, :mod:`clalign.data.fasta_nb`, forced whatever the cores), ``records`` (the per-record
reader). ``--threads`` caps both scans' threads (default: all cores); ``--busy`` reads on a
thread while the main thread runs Python (the CPU seconds then include that). Prints per call the wall
and process CPU seconds of the read, whether numba was imported, and a digest of the arrays
(every arm must print the same). Example, on the hmmsearch benchmark's database::

    python3 -m tools.gen_protein_db -n 570000 --seed 1 -o db.fa
    zcat data/proteome.faa.gz >> db.fa
    python3 -m tools.bench_fasta_read db.fa --arms numpy compiled --threads 16 --rounds 5
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r"""
import hashlib, sys, time
import clalign.data.fasta as fasta, clalign.data.fasta_np as fnp, clalign.data.fasta_nb as fnb
from clalign.data import Database
arm, T, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if T:
    fnp.threads = fnb.threads = (lambda: T)
if arm != "numpy":
    fasta.NUMPY_MIN_BYTES = 1 << 62
if arm == "compiled":
    fasta.COMPILED_MIN_BYTES, fasta.COMPILED_MIN_CORES = 0, 0
if arm == "records":
    fasta.COMPILED_MIN_BYTES = 1 << 62
c0, t0 = time.process_time(), time.perf_counter()
if sys.argv[4] == "busy":     # the read on a thread, the main thread running Python meanwhile
    import threading
    got = []
    th = threading.Thread(target=lambda: got.append(Database.from_fasta(path)))
    th.start()
    x = 0
    while th.is_alive():
        for i in range(10000):
            x += i * i
    db = got[0]
else:
    db = Database.from_fasta(path)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
h = hashlib.md5()
for a in (db.residues, db.offsets, db.lengths, db.stops, db.ids.blob, db.ids.offsets,
          db.descriptions.blob, db.descriptions.offsets):
    h.update(a.tobytes())
print(f"{wall:.3f} {cpu:.3f} {int('numba' in sys.modules)} {h.hexdigest()[:12]} {db.alphabet.name}")
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fasta")
    ap.add_argument("--arms", nargs="+", default=["numpy", "compiled"], choices=["numpy", "compiled", "records"])
    ap.add_argument("--threads", type=int, default=0, help="threads of the scans (0: all cores)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--busy", action="store_true",
                    help="read on a thread while the main thread runs Python (the interpreter lock's worst case)")
    args = ap.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    got = {a: [] for a in args.arms}
    for r in range(args.rounds):
        arms = args.arms if r % 2 == 0 else args.arms[::-1]
        for arm in arms:
            out = subprocess.run([sys.executable, "-c", CHILD, arm, str(args.threads), args.fasta,
                                  "busy" if args.busy else "idle"], env=env,
                                 check=True, capture_output=True, text=True).stdout.split()
            wall, cpu, numba, digest, alpha = float(out[0]), float(out[1]), out[2] == "1", out[3], out[4]
            got[arm].append((wall, cpu))
            print(f"round {r} {arm:9s} wall {wall:.3f} s  cpu {cpu:.3f} s  numba {'yes' if numba else 'no '}  "
                  f"{alpha} {digest}", flush=True)
    for arm, rows in got.items():
        print(f"{arm:9s} median wall {statistics.median(w for w, _ in rows):.3f} s, "
              f"median cpu {statistics.median(c for _, c in rows):.3f} s ({len(rows)} calls)")


if __name__ == "__main__":
    main()
