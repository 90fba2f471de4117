"""``clalign blastn`` (CPU path) against ``blastn -num_threads N`` on the genome bundled in
pyrodigal's wheel, in rounds, checking that every output table is identical.

Data (written to ``--work``, seed 5): the genome (GCF_001457455.1, 2.46 Mb, one record), a
makeblastdb database of it, ``reads.fa`` (``--reads`` reads of 150-1,000 bases, 1-5 %
substitutions, 0.2 % 1-base insertions and deletions each, every other one reverse
complemented) and ``genes.fa`` (``--genes`` stretches of 1-5 kb mutated the same way).
Each round runs, as whole processes (wall seconds as a user sees them, start-up and numba
cache loading included), blastn and clalign blastn for every (task, query file) pair; the
report gives medians per program and the ratio, plus clalign's in-process time of a second
run (start-up and compiled-code loading excluded). Both programs get ``--threads`` threads.

    python3 -m tools.bench_blastn_cpu --work /tmp/bnbench --rounds 3 --threads 2
"""
import argparse
import gzip
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

from tools.results import peer_row, save

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMP = str.maketrans("ACGT", "TGCA")


def write_data(work, n_reads, n_genes, seed=5, genome=None):
    """Genome, database and query files in ``work``; returns the genome length. ``genome``:
    the gzipped FASTA (default: the one in pyrodigal's wheel; a machine without pyrodigal is
    given a copy)."""
    os.makedirs(work, exist_ok=True)
    path = genome
    if path is None:
        import pyrodigal

        path = os.path.join(os.path.dirname(pyrodigal.__file__), "tests", "data",
                            "GCF_001457455.1_NCTC11397_genomic.fna.gz")
    name, seq = None, []
    with gzip.open(path, "rt") as fh:
        for line in fh:
            if line.startswith(">"):
                name = line[1:].strip()
            else:
                seq.append(line.strip().upper())
    g = "".join(seq)
    with open(os.path.join(work, "genome.fa"), "w") as fh:
        fh.write(f">{name}\n" + "".join(g[i:i + 80] + "\n" for i in range(0, len(g), 80)))
    subprocess.run(["makeblastdb", "-in", "genome.fa", "-dbtype", "nucl", "-out", "gdb"], cwd=work,
                   check=True, stdout=subprocess.DEVNULL)
    rng = random.Random(seed)

    for fname, n, lo, hi in (("reads.fa", n_reads, 150, 1000), ("genes.fa", n_genes, 1000, 5000)):
        with open(os.path.join(work, fname), "w") as fh:
            for k in range(n):
                m = rng.randint(lo, hi)
                a = rng.randrange(len(g) - m)
                r = mutate(rng, g[a:a + m], rng.uniform(0.01, 0.05))
                if k % 2:
                    r = r.translate(COMP)[::-1]
                fh.write(f">{fname.split('.')[0][:-1]}{k}\n{r}\n")
    return len(g)


def mutate(rng, seq: str, rate: float) -> str:
    """``seq`` with substitutions at ``rate`` and 0.2 % / 0.2 % one-base deletions / insertions
    (the benches' reads and genes; the same ``rng`` draws give the same sequence)."""
    out = []
    for c in seq:
        x = rng.random()
        if x < rate:
            out.append(rng.choice("ACGT"))
        elif x < rate + 0.002:
            continue
        elif x < rate + 0.004:
            out.append(c + rng.choice("ACGT"))
        else:
            out.append(c)
    return "".join(out)


def timed(cmd, cwd, out):
    """Wall seconds of ``cmd`` (stdout to ``out``), this tree first on PYTHONPATH, the caller's
    PYTHONPATH after it."""
    t = time.perf_counter()
    with open(out, "w") as fh:
        path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p)
        subprocess.run(cmd, cwd=cwd, check=True, stdout=fh, env=dict(os.environ, PYTHONPATH=path))
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/bench_blastn")
    ap.add_argument("--reads", type=int, default=400)
    ap.add_argument("--genes", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--genome", default=None, help="gzipped genome FASTA (default: pyrodigal's GCF_001457455.1)")
    ap.add_argument("--results", default=None, help="results JSON (default WORK/bench_blastn_cpu.json)")
    args = ap.parse_args()
    glen = write_data(args.work, args.reads, args.genes, genome=args.genome)
    cases = [(t, q) for t in ("megablast", "blastn") for q in ("reads", "genes")]
    times = {c: {"blastn": [], "clalign": []} for c in cases}
    same = {c: True for c in cases}
    for _ in range(args.rounds):
        for task, q in cases:
            a = os.path.join(args.work, f"bl_{task}_{q}.tsv")
            b = os.path.join(args.work, f"cl_{task}_{q}.tsv")
            times[task, q]["blastn"].append(timed(
                [shutil.which("blastn"), "-task", task, "-query", f"{q}.fa", "-db", "gdb", "-outfmt", "6",
                 "-num_threads", str(args.threads)], args.work, a))
            times[task, q]["clalign"].append(timed(
                [sys.executable, "-m", "clalign", "blastn", "-task", task, "-query", f"{q}.fa", "-db", "gdb",
                 "-outfmt", "6", "-num_threads", str(args.threads)], args.work, b))
            same[task, q] &= open(a).read() == open(b).read()
    from clalign.blast.blastn import run_blastn
    from clalign.blast.nucl_setup import BlastnOptions

    print(f"genome {glen:,} bases; {args.reads} reads, {args.genes} genes; {args.rounds} rounds; "
          f"blastn -num_threads {args.threads}")
    phases, rows = {}, []
    print("| task | queries | blastn s | clalign s (process) | ratio | clalign s (in-process) | identical |")
    print("|---|---|---|---|---|---|---|")
    for task, q in cases:
        bl = statistics.median(times[task, q]["blastn"])
        cl = statistics.median(times[task, q]["clalign"])
        run_blastn(os.path.join(args.work, f"{q}.fa"), os.path.join(args.work, "gdb"), BlastnOptions(task=task),
                   num_threads=args.threads)
        t = time.perf_counter()
        phases[task, q] = {}
        run_blastn(os.path.join(args.work, f"{q}.fa"), os.path.join(args.work, "gdb"), BlastnOptions(task=task),
                   times=phases[task, q], num_threads=args.threads)
        warm = time.perf_counter() - t
        rows.append(peer_row(task, q, round(cl, 3), "blastn", round(bl, 3), same[task, q],
                             in_process_seconds=round(warm, 3), threads=args.threads, rounds=args.rounds,
                             phases={k: round(v, 3) for k, v in phases[task, q].items()}))
        print(f"| {task} | {q} | {bl:.2f} | {cl:.2f} | {cl / bl:.1f}x slower | {warm:.2f} | {same[task, q]} |")
    names = ("setup", "prelim", "traceback", "words", "records")
    print("\nIn-process phases (seconds). Wall: setup = queries, DUST, lookup table, statistics; prelim = "
          "the whole preliminary stage; traceback = the whole traceback stage. Summed over the worker "
          "threads (inside the wall phases; with threads they may exceed them): words = scan, "
          "mini-extension, diagonals, ungapped (in prelim); records = output records (in traceback)")
    print("| task | queries | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for task, q in cases:
        print(f"| {task} | {q} | " + " | ".join(f"{phases[task, q].get(n, 0.0):.2f}" for n in names) + " |")
    save(args.results or os.path.join(args.work, "bench_blastn_cpu.json"), rows, genome_bases=glen,
         reads=args.reads, genes=args.genes)


if __name__ == "__main__":
    main()
