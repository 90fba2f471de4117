#!/usr/bin/env python3
"""Time reading makeblastdb databases against parsing the FASTA they were made from.

Protein: a synthetic Swiss-Prot-sized FASTA (``tools/gen_protein_db.py``, cached by n and
seed) is given to ``makeblastdb -dbtype prot`` with and without ``-parse_seqids``; then
:func:`clalign.data.blastdb.open_blastdb` (twice: first and page-cache-warm), bulk ids and
descriptions, and :meth:`Database.from_fasta` are timed, and the residues checked equal.
Nucleotide (``--nucl BP``): a seeded random genome with N runs and IUPAC codes plus 100,000
reads, through ``makeblastdb -dbtype nucl``; times opening the 2-bit form, unpacking it, and
packing the FASTA with makeblastdb's ambiguity bases (checked byte-equal). Needs BLAST+.

    python3 -m tools.bench_blastdb                      # 570000 proteins, seed 1, in /tmp
    python3 -m tools.bench_blastdb -n 50000 --nucl 115000000
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

from clalign.data import Database  # noqa: E402
from clalign.data.blastdb import open_blast_nucleotide, open_blastdb  # noqa: E402
from clalign.data.nucleotide import NucleotideDatabase  # noqa: E402
from tools.results import save  # noqa: E402


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _makeblastdb(fasta, out, dbtype, *extra):
    if not os.path.exists(out + (".pin" if dbtype == "prot" else ".nin")) and not os.path.exists(out + ".pal"):
        _, dt = _timed(lambda: subprocess.run(["makeblastdb", "-in", fasta, "-dbtype", dbtype, "-out", out, *extra],
                                              check=True, stdout=subprocess.DEVNULL))
        print(f"makeblastdb {' '.join(extra) or '(defaults)'}: {dt:.1f} s")
    return out


def protein(n, seed, workdir):
    fasta = os.path.join(workdir, f"bench_{n}_s{seed}.fasta")
    if not os.path.exists(fasta):
        subprocess.run([sys.executable, "-m", "tools.gen_protein_db", "-n", str(n), "--seed", str(seed),
                        "-o", os.path.abspath(fasta)], check=True, cwd=ROOT)
    ref, dt = _timed(lambda: Database.from_fasta(fasta, "protein"))
    print(f"FASTA parse: {dt:.2f} s ({len(ref)} sequences, {ref.total_residues} residues)")
    rows = [{"family": "blastdb", "input": "FASTA parse", "values": {}, "status": "ok", "seconds": dt}]
    for extra in ((), ("-parse_seqids",)):
        name = _makeblastdb(fasta, os.path.join(workdir, f"bench_{n}_s{seed}" + ("_ps" if extra else "")), "prot",
                            *extra)
        _, first = _timed(lambda: open_blastdb(name))
        db, warm = _timed(lambda: open_blastdb(name))
        _, bulk = _timed(lambda: db.ids.blob)
        same = np.array_equal(np.asarray(db.residues), np.asarray(ref.residues)) and np.array_equal(db.stops, ref.stops)
        print(f"open_blastdb {os.path.basename(name)}: first {first:.2f} s, warm {warm:.2f} s; "
              f"all ids+descriptions {bulk:.1f} s; residues equal the FASTA: {same}")
        rows.append({"family": "blastdb", "input": f"open_blastdb {os.path.basename(name)}", "values": {},
                     "status": "ok" if same else "wrong", "seconds": warm, "first_seconds": first,
                     "ids_seconds": bulk, "identical": bool(same),
                     "reason": "" if same else "residues differ from the FASTA"})
    return rows


def nucleotide(bases, seed, workdir):
    fasta = os.path.join(workdir, f"bench_nt_{bases}_s{seed}.fa")
    if not os.path.exists(fasta):
        rng = np.random.default_rng(seed)
        nt = np.frombuffer(b"ACGT", dtype=np.uint8)
        with open(fasta, "wb") as fh:
            for c in range(4):
                s = nt[rng.integers(0, 4, bases // 4)]
                for k in rng.integers(0, s.size - 5000, 200):
                    s[k:k + rng.integers(1, 5000)] = ord("N")
                s[rng.integers(0, s.size, 2000)] = ord("R")
                fh.write(b">chr%d synthetic\n" % c + s.tobytes() + b"\n")
            for i in range(100000):
                fh.write(b">read%d\n" % i + nt[rng.integers(0, 4, 150)].tobytes() + b"\n")
    name = _makeblastdb(fasta, os.path.join(workdir, f"bench_nt_{bases}_s{seed}"), "nucl", "-parse_seqids")
    blast, dt = _timed(lambda: open_blast_nucleotide(name))
    print(f"open_blast_nucleotide: {dt:.3f} s ({blast})")
    _, dt = _timed(blast.all_codes)
    print(f"unpack to one byte a base (all_codes): {dt:.2f} s")
    ref, dt = _timed(lambda: Database.from_fasta(fasta, "dna"))
    print(f"FASTA parse: {dt:.2f} s")
    ours, dt = _timed(lambda: NucleotideDatabase.from_database(ref))
    same = all(np.array_equal(ours.ncbi2na(i), blast.ncbi2na(i)) for i in range(len(blast)))
    print(f"pack with makeblastdb's ambiguity bases: {dt:.2f} s; 2-bit data equal makeblastdb's: {same}")
    return [{"family": "blastdb", "input": "pack ncbi2na", "values": {}, "status": "ok" if same else "wrong",
             "seconds": dt, "identical": bool(same), "reason": "" if same else "2-bit data differ from makeblastdb's"}]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=570000, help="protein sequences (default 570000; 0: skip)")
    ap.add_argument("--nucl", type=int, default=0, help="genome bases for the nucleotide part (0: skip)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", default="/tmp")
    ap.add_argument("--results", default=None, help="results JSON (default WORKDIR/bench_blastdb.json)")
    args = ap.parse_args()
    rows = []
    if args.n:
        rows += protein(args.n, args.seed, args.workdir)
    if args.nucl:
        rows += nucleotide(args.nucl, args.seed, args.workdir)
    save(args.results or os.path.join(args.workdir, "bench_blastdb.json"), rows, n=args.n, nucl=args.nucl,
         seed=args.seed)


if __name__ == "__main__":
    main()
