"""Time and memory of a 2-bit nucleotide database build: ``clalign makedb -dbtype nucl`` against
BLAST+'s ``makeblastdb -dbtype nucl`` on the same genomes, whole processes, one after the other.

The genomes are ``tools/bench_blastn``'s (pyrodigal's real 2.46 Mb genome plus seeded synthetic
contigs of 50 kb-8 Mb with runs of N) up to ``--genome-mb`` megabases. Prints one JSON object:
wall seconds, peak resident memory (GNU ``time``'s maximum resident set) and output
size of each tool.
Example (issue 11's 1 Gbp)::

    python3 -m tools.bench_makedb_nucl --work /tmp/mk1g --genome-mb 1000
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def _timed(cmd, cwd):
    """(wall seconds, peak RSS in MiB) of one child process, through GNU time (a child forked
    from this process would count this process's memory as its own peak)."""
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"bench_makedb_nucl: {' '.join(cmd)} failed: {r.stderr.strip()[-300:]}")
    return round(wall, 2), round(int(r.stderr.split()[-1]) / 1024, 1)


def _size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    base = os.path.dirname(path) or "."
    return sum(os.path.getsize(os.path.join(base, f)) for f in os.listdir(base)
               if f.startswith(os.path.basename(path) + "."))


def write_genomes(work, genome_mb, seed=7, real=None):
    """``work/genomes.fa`` as bench_blastn writes it (without its reads and genes), written
    record by record; returns the bases."""
    from tools.bench_blastn import genome_records, write_fasta_record

    total = 0
    with open(os.path.join(work, "genomes.fa"), "wb") as fh:
        for name, s in genome_records(genome_mb, seed, real):
            write_fasta_record(fh, name, s)
            total += len(s)
    return total


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="bench_makedb_nucl_work")
    ap.add_argument("--genome-mb", type=float, default=1000.0)
    ap.add_argument("--real", default=None, help="the real genome FASTA (default pyrodigal's)")
    a = ap.parse_args(argv)
    os.makedirs(a.work, exist_ok=True)
    t0 = time.perf_counter()
    bases = write_genomes(a.work, a.genome_mb, real=a.real)
    res = {"bases": bases, "fasta_bytes": os.path.getsize(os.path.join(a.work, "genomes.fa")),
           "generate_s": round(time.perf_counter() - t0, 2)}
    wall, rss = _timed([sys.executable, "-m", "clalign", "makedb", "genomes.fa", "cdb", "-dbtype",
                        "nucl", "--force", "-q"], a.work)
    res["clalign_makedb"] = {"wall_s": wall, "peak_rss_mib": rss, "bytes": _size(os.path.join(a.work, "cdb"))}
    wall, rss = _timed(["makeblastdb", "-in", "genomes.fa", "-dbtype", "nucl", "-out", "bdb"], a.work)
    res["makeblastdb"] = {"wall_s": wall, "peak_rss_mib": rss, "bytes": _size(os.path.join(a.work, "bdb"))}
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
