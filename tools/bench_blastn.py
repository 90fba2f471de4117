"""``clalign blastn --device -num_threads N`` against ``blastn -num_threads N``: reads and genes against a genome
collection scaled by options, every output table checked identical, with the device phases.

Data (written to ``--work``, seed 7): pyrodigal's bundled genome (GCF_001457455.1, 2.46 Mb) plus
synthetic contigs (uniform random bases, 20 % of them with a few runs of N, lengths 50 kb -
8 Mb so some exceed BLAST+'s 5 Mb chunk) up to ``--genome-mb`` megabases, one makeblastdb
database of all; ``reads.fa`` (``--reads`` reads of 150-1,000 bases) and ``genes.fa``
(``--genes`` stretches of 1-5 kb) sampled from every contig in proportion to its length, 1-5 %
substitutions and 0.2 %/0.2 % 1-base indels, every other one reverse complemented.

Per case (``--cases``, task:queries[:N], N: only the first N records) one round: blastn's
whole process, clalign's whole process with ``--device`` (start-up, numba cache loading and
kernel builds or cache loads included), each with its peak resident memory (GNU time, when
installed), optionally clalign's CPU path (``--cpu``), then clalign in-process (pipeline on,
with the phase breakdown) and, for the cases ``--pipeline-off`` names, again with the pipeline
off: device kernels (scan, lookup, mini-extension, run placement; profiling events), copies,
and the CPU phases (words = diagonals + ungapped on the device's word starts). The warm-up
(numba compiling or loading the stages, kernel builds) runs in a child process on a 20 Mb data
set of its own while the main data set is generated.
``--ungapped-cpu`` names cases also run in-process with the word starts' diagonal test and
ungapped extension on the CPU (``UNGAPPED=cpu``: the path before the device took them over).
Last, the device kernels alone over the whole database, ``--kernel-rounds`` times after a
warm-up pass (medians of profiling events), with the scan throughput.

    python3 -m tools.bench_blastn --work /tmp/bnb --genome-mb 50 --reads 5000 --genes 50 \\
        --threads 16 --device 0:0
"""
import argparse
import gzip
import os
import random
import shutil
import subprocess
import sys
import time

import numpy as np

from tools.bench_blastn_cpu import mutate, timed
from tools.results import peer_row, save

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMP = str.maketrans("ACGTN", "TGCAN")


def real_genome(path=None):
    """Records of the real genome FASTA (``path``, gzip or plain; default pyrodigal's bundled
    GCF_001457455.1, 2.46 Mb) as [(name, bytes)]."""
    if path is None:
        try:
            import pyrodigal
        except ImportError:
            sys.exit("bench_blastn: pyrodigal is not installed; pass --real with the genome FASTA "
                     "(pyrodigal's tests/data/GCF_001457455.1_NCTC11397_genomic.fna.gz)")
        path = os.path.join(os.path.dirname(pyrodigal.__file__), "tests", "data",
                            "GCF_001457455.1_NCTC11397_genomic.fna.gz")
    opener = gzip.open if path.endswith(".gz") else open
    out, name, seq = [], None, []
    with opener(path, "rt") as fh:
        for line in fh:
            if line.startswith(">"):
                if name is not None:
                    out.append((name, "".join(seq).encode()))
                name, seq = line[1:].split()[0], []
            else:
                seq.append(line.strip().upper())
    if name is not None:
        out.append((name, "".join(seq).encode()))
    return out


def write_fasta_record(fh, name, seq: bytes):
    fh.write(f">{name}\n".encode())
    n = len(seq)
    for i in range(0, n, 1 << 22):       # 80 bases a line, in 4 Mb pieces
        piece = np.frombuffer(seq[i:i + (1 << 22)], dtype=np.uint8)
        m = len(piece)
        full = m // 80
        body = np.full((full, 81), 10, np.uint8)
        body[:, :80] = piece[:full * 80].reshape(full, 80)
        fh.write(body.tobytes())
        if m % 80:
            fh.write(piece[full * 80:].tobytes() + b"\n")


def genome_records(genome_mb, seed=7, real=None):
    """(name, bytes) of the real genome's records, then seeded synthetic contigs (50 kb-8 Mb,
    every fifth with three runs of N) until ``genome_mb`` megabases, one at a time."""
    rng = np.random.default_rng(seed)
    letters = np.frombuffer(b"ACGT", np.uint8)
    total = 0
    for name, s in real_genome(real):
        yield name, s
        total += len(s)
    target = int(genome_mb * 1e6)
    k = 0
    while total < target:
        n = int(min(target - total, rng.integers(50_000, 8_000_000))) if target - total > 50_000 \
            else target - total
        s = letters[rng.integers(0, 4, n)]
        if k % 5 == 0:
            for _ in range(3):
                a = int(rng.integers(0, max(1, n - 200)))
                s[a:a + int(rng.integers(1, 200))] = ord("N")
        yield f"syn{k}", s.tobytes()
        total += n
        k += 1


def write_data(work, genome_mb, n_reads, n_genes, seed=7, real=None):
    """Genomes, database and query files in ``work``; returns (bases, contigs)."""
    os.makedirs(work, exist_ok=True)
    contigs = list(genome_records(genome_mb, seed, real))
    total = sum(len(s) for _, s in contigs)
    with open(os.path.join(work, "genomes.fa"), "wb") as fh:
        for name, s in contigs:
            write_fasta_record(fh, name, s)
    subprocess.run(["makeblastdb", "-in", "genomes.fa", "-dbtype", "nucl", "-out", "gdb"], cwd=work,
                   check=True, stdout=subprocess.DEVNULL)
    r = random.Random(seed)
    weights = [len(s) for _, s in contigs]

    for fname, n, lo, hi in (("reads.fa", n_reads, 150, 1000), ("genes.fa", n_genes, 1000, 5000)):
        with open(os.path.join(work, fname), "w") as fh:
            for i in range(n):
                _, g = r.choices(contigs, weights)[0]
                m = r.randint(lo, hi)
                a = r.randrange(max(1, len(g) - m))
                q = mutate(r, g[a:a + m].decode(), r.uniform(0.01, 0.05))
                if i % 2:
                    q = q.translate(COMP)[::-1]
                fh.write(f">{fname[:-4]}{i}\n{q}\n")
    return total, len(contigs)


def parse_cases(cases):
    """[(task, query file stem, record count or None)] of ``task:queries[:N]`` items; with N the
    case searches the first N records of ``queries.fa`` (written as ``queriesN.fa``)."""
    out = []
    for case in cases.split(","):
        task, q, *n = case.split(":")
        out.append((task, q, int(n[0]) if n else None))
    return out


def case_queries(work, q, n):
    """The query file stem of a case: ``q``, or ``q{n}`` holding the first ``n`` records of ``q.fa``."""
    if n is None:
        return q
    with open(os.path.join(work, f"{q}.fa")) as fh:
        lines = fh.readlines()      # the benches write one sequence line per record
    with open(os.path.join(work, f"{q}{n}.fa"), "w") as fh:
        fh.writelines(lines[:2 * n])
    return f"{q}{n}"


def timed_rss(cmd, cwd, out):
    """(wall seconds, peak resident MiB or None) of ``cmd`` as :func:`timed` runs it; the peak
    from GNU time when installed (``os.wait4`` of a child forked from this process would count
    this process's memory before the exec as the child's)."""
    gnu = "/usr/bin/time"
    if not os.path.exists(gnu):
        return timed(cmd, cwd, out), None
    rss = out + ".rss"
    wall = timed([gnu, "-o", rss, "-f", "%M"] + cmd, cwd, out)
    with open(rss) as fh:
        return wall, round(int(fh.read().split()[-1]) / 1024, 1)


def warm_start(work, cases, device, real=None):
    """Start the warm-up in a child process on a 20 Mb data set of its own (``work``), so that
    numba's compilation (about a minute on a fresh machine) overlaps the generation of a large
    data set; returns the child (wait for it before timing anything)."""
    cmd = [sys.executable, "-m", "tools.bench_blastn", "--warm-only", "--work", work, "--genome-mb",
           "20", "--reads", "8", "--genes", "8", "--device", device, "--cases", cases]
    if real is not None:
        cmd += ["--real", os.path.abspath(real)]
    path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.Popen(cmd, env=dict(os.environ, PYTHONPATH=path))


def warm_up(work, cases, device):
    """Compile (or load from the caches) the numba stages and kernels every case needs, on the
    first four queries of its file, so that no timed process pays for compilation."""
    from clalign.blast.blastn import run_blastn
    from clalign.blast.nucl_setup import BlastnOptions

    for task, q, _ in parse_cases(cases):
        with open(os.path.join(work, f"{q}.fa")) as fh:
            head = "".join(fh.readlines()[:8])
        path = os.path.join(work, f"warm_{q}.fa")
        with open(path, "w") as fh:
            fh.write(head)
        for dev, threads in ((None, 1), (device, 2)):
            run_blastn(path, os.path.join(work, "gdb"), BlastnOptions(task=task), device=dev,
                       num_threads=threads)


def kernel_medians(work, task, q, device, rounds):
    """Device kernels alone over the whole database (every block), ``rounds`` times after one
    warm-up pass: median seconds per kernel (profiling events) and the counts of one pass."""
    import statistics

    from clalign.blast.nucl_device import NuclDeviceWords
    from clalign.blast.nucl_setup import BlastnOptions, read_queries, setup_search
    from clalign.data.nucleotide import open_nucleotide

    nt = open_nucleotide(os.path.join(work, "gdb"))
    st = setup_search(read_queries(os.path.join(work, f"{q}.fa")), BlastnOptions(task=task),
                      nt.total_bases, len(nt))
    dw = NuclDeviceWords(nt, st, device, pipeline=False, hits=True)
    per = []
    for r in range(rounds + 1):
        dw.times.clear()             # the lanes add to this dictionary
        for a, e in dw.blocks:
            dw.run_block(a, e)
        if r:
            per.append(dict(dw.times))
    keys = ("device_scan", "device_lookup", "device_extend", "device_order", "device_ung_sort",
            "device_ungapped", "device_ung_redo")
    med = {k: statistics.median(t.get(k, 0.0) for t in per) for k in keys}
    return med, per[-1].get("device_counts", {}), dw.flat


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/bench_blastn")
    ap.add_argument("--genome-mb", type=float, default=20.0, help="megabases of genomes (>= 2.46)")
    ap.add_argument("--reads", type=int, default=2000)
    ap.add_argument("--genes", type=int, default=50)
    ap.add_argument("--cases", default="megablast:reads,megablast:genes,blastn:genes",
                    help="comma-separated task:queries[:N] (queries: reads or genes; N: only the "
                         "first N records of the file)")
    ap.add_argument("--threads", type=int, default=16, help="-num_threads of blastn and clalign")
    ap.add_argument("--device", default="0:0", help="OpenCL device P:D of clalign --device")
    ap.add_argument("--real", default=None, help="real genome FASTA (.gz ok; default pyrodigal's "
                    "bundled GCF_001457455.1)")
    ap.add_argument("--cpu", action="store_true", help="also time clalign's CPU path (no --device)")
    ap.add_argument("--pipeline-off", default="all",
                    help="cases (task:queries[:N], comma-separated) also run in-process with the "
                         "pipeline off; 'all' or 'none'")
    ap.add_argument("--ungapped-cpu", default="none",
                    help="comma-separated cases (as --cases) also run in-process with the word "
                         "starts' diagonals and ungapped extension on the CPU (BLASTN_SCAN "
                         "UNGAPPED=cpu), output checked against blastn's, or 'all'/'none'")
    ap.add_argument("--kernel-rounds", type=int, default=5,
                    help="rounds of the device kernels alone per case (medians; 0: skip)")
    ap.add_argument("--warm-only", action="store_true",
                    help="write the data and warm the caches only (the child of the warm-up)")
    ap.add_argument("--results", default=None, help="results JSON (default WORK/bench_blastn.json)")
    args = ap.parse_args()
    if args.warm_only:
        write_data(args.work, args.genome_mb, args.reads, args.genes, real=args.real)
        warm_up(args.work, args.cases, args.device)
        return
    t = time.perf_counter()
    child = warm_start(os.path.join(args.work, "warm"), args.cases, args.device, args.real)
    bases, ncontigs = write_data(args.work, args.genome_mb, args.reads, args.genes, real=args.real)
    print(f"data: {bases:,} bases in {ncontigs} contigs, {args.reads} reads, {args.genes} genes, "
          f"makeblastdb included {time.perf_counter() - t:.1f} s", flush=True)
    if child.wait():
        sys.exit(f"bench_blastn: the warm-up failed (exit {child.returncode})")
    print(f"warm-up (numba compilation or cache loads, kernel builds, in a child process on 20 Mb, "
          f"beside the data generation): {time.perf_counter() - t:.1f} s since the start", flush=True)
    # the same warm-up in this process, so that every case's in-process run finds numba started
    # and its stages loaded (before, the first case's run paid numba's import and start and the
    # cache loads, ~1.3 s on the H100 host, and the later cases' did not: docs/perf/blastn.md,
    # session 13)
    t = time.perf_counter()
    warm_up(os.path.join(args.work, "warm"), args.cases, args.device)
    print(f"in-process warm-up: {time.perf_counter() - t:.1f} s", flush=True)
    run_cases(args, bases, ncontigs)


def run_cases(args, bases, ncontigs):
    """Every case: the two whole processes, the in-process runs, the phase tables."""
    from clalign.blast.blastn import run_blastn
    from clalign.blast.nucl_setup import BlastnOptions
    from clalign.runtime import Runtime
    from clalign.runtime.tuning import trial

    print(f"device: {Runtime.get(args.device).label}; blastn -num_threads {args.threads}")
    off = args.pipeline_off
    rows, table = [], []
    for task, q0, n in parse_cases(args.cases):
        q = case_queries(args.work, q0, n)
        base = ["-task", task, "-query", f"{q}.fa", "-db", "gdb", "-outfmt", "6"]
        a = os.path.join(args.work, f"bl_{task}_{q}.tsv")
        b = os.path.join(args.work, f"cl_{task}_{q}.tsv")
        bl, bl_rss = timed_rss([shutil.which("blastn")] + base + ["-num_threads", str(args.threads)],
                               args.work, a)
        threads = ["-num_threads", str(args.threads)]
        cl, cl_rss = timed_rss([sys.executable, "-m", "clalign", "blastn"] + base + threads
                               + ["--device", args.device], args.work, b)
        same = open(a).read() == open(b).read()
        with open(a) as fh:
            lines = sum(1 for _ in fh)
        cpu = None
        if args.cpu:
            c = os.path.join(args.work, f"cpu_{task}_{q}.tsv")
            cpu = timed([sys.executable, "-m", "clalign", "blastn"] + base + threads, args.work, c)
            same &= open(a).read() == open(c).read()
        print(f"{task} {q}: blastn {bl:.2f} s ({bl_rss} MiB), clalign --device {cl:.2f} s "
              f"({cl_rss} MiB) ({bl / cl:.2f}x), {lines:,} lines, identical {same}", flush=True)
        phases = {}
        t = time.perf_counter()
        run_blastn(os.path.join(args.work, f"{q}.fa"), os.path.join(args.work, "gdb"),
                   BlastnOptions(task=task), device=args.device, times=phases, num_threads=args.threads)
        warm = time.perf_counter() - t
        counts = phases.pop("device_counts", {})
        serial = None
        if off == "all" or f"{task}:{q0}" + (f":{n}" if n else "") in off.split(","):
            t = time.perf_counter()
            with trial("blastn_scan", {"PIPELINE": False}):
                run_blastn(os.path.join(args.work, f"{q}.fa"), os.path.join(args.work, "gdb"),
                           BlastnOptions(task=task), device=args.device, num_threads=args.threads)
            serial = time.perf_counter() - t
        ung_cpu = None
        name = f"{task}:{q0}" + (f":{n}" if n else "")
        if args.ungapped_cpu == "all" or name in args.ungapped_cpu.split(","):
            from clalign.blast.blastn import tabular_lines
            ph = {}
            t = time.perf_counter()
            with trial("blastn_scan", {"UNGAPPED": "cpu"}):
                res = run_blastn(os.path.join(args.work, f"{q}.fa"), os.path.join(args.work, "gdb"),
                                 BlastnOptions(task=task), device=args.device, times=ph,
                                 num_threads=args.threads)
            ung_cpu = time.perf_counter() - t
            with open(a) as fh:
                ok = tabular_lines(res) == fh.read().splitlines()
            ph.pop("device_counts", None)
            print(f"{task} {q}: in-process with UNGAPPED=cpu {ung_cpu:.2f} s, identical {ok}; phases "
                  + ", ".join(f"{k} {v:.3f}" for k, v in ph.items()), flush=True)
            ph = {}      # the default path again, both now warm (the first run loaded numba's code)
            t = time.perf_counter()
            run_blastn(os.path.join(args.work, f"{q}.fa"), os.path.join(args.work, "gdb"),
                       BlastnOptions(task=task), device=args.device, times=ph, num_threads=args.threads)
            print(f"{task} {q}: in-process again (default UNGAPPED) {time.perf_counter() - t:.2f} s; "
                  "phases " + ", ".join(f"{k} {v:.3f}" for k, v in ph.items()
                                        if k != "device_counts"), flush=True)
        rows.append(peer_row(task, q, round(cl, 3), "blastn", round(bl, 3), same,
                             ungapped_cpu_seconds=None if ung_cpu is None else round(ung_cpu, 3),
                             in_process_seconds=round(warm, 3), cpu_path_seconds=cpu,
                             no_pipeline_seconds=None if serial is None else round(serial, 3),
                             peak_rss_mib=cl_rss, peer_peak_rss_mib=bl_rss, lines=lines,
                             threads=args.threads, device=args.device, counts=counts,
                             phases={k: round(v, 4) for k, v in phases.items()}))
        table.append((task, q, bl, cl, cpu, warm, same, phases, counts, serial))
        ser = "-" if serial is None else f"{serial:.2f} s"
        print(f"{task} {q}: in-process {warm:.2f} s (pipeline off {ser}); phases "
              + ", ".join(f"{k} {v:.3f}" for k, v in phases.items()) + "; "
              + ", ".join(f"{k} {v:,}" for k, v in counts.items()), flush=True)
    print("\n| task | queries | blastn s | clalign --device s | speed-up | in-process s | "
          "in-process, pipeline off s | CPU path s | identical |")
    print("|---|---|---|---|---|---|---|---|---|")
    for task, q, bl, cl, cpu, warm, same, _, _, serial in table:
        cps = f"{cpu:.2f}" if cpu is not None else "-"
        sers = f"{serial:.2f}" if serial is not None else "-"
        print(f"| {task} | {q} | {bl:.2f} | {cl:.2f} | {bl / cl:.2f}x | {warm:.2f} | {sers} "
              f"| {cps} | {same} |")
    names = ("device_setup", "device_wait", "device_scan", "device_lookup", "device_extend",
             "device_order", "device_ung_sort", "device_ungapped", "device_ung_redo", "device_copies",
             "device_split", "setup", "prelim", "traceback", "words", "records")
    print("\nIn-process phases (seconds): device_setup = runtime, program, table upload; device_wait "
          "= time the CPU waited for device blocks (blocks run ahead in a thread, so the kernel, "
          "copy and split times below overlap the CPU phases); device_scan/lookup/extend/order = "
          "kernels (profiling events). Wall: setup, prelim (the whole preliminary stage, device_wait "
          "and words inside it), traceback (the whole stage, records inside it). Summed over the "
          "worker threads (may exceed the wall phases they sit in): words = diagonals + ungapped on "
          "the device's word starts; records = output records")
    print("| task | queries | " + " | ".join(names) + " | positions | matched | pairs | words | saved |")
    print("|---|---|" + "---|" * (len(names) + 5))
    for task, q, _, _, _, _, _, ph, cnt, _ in table:
        print(f"| {task} | {q} | " + " | ".join(f"{ph.get(n, 0.0):.3f}" for n in names) + " | "
              + " | ".join(f"{cnt.get(k, 0):,}" for k in ("positions", "matched", "pairs", "words",
                                                           "saved")) + " |")
    for task, q, _, _, _, _, _, ph, cnt, _ in table:
        s = ph.get("device_scan", 0.0)
        if s:
            print(f"{task} {q}: scan {cnt.get('positions', 0) / s / 1e6:.1f} M positions/s, "
                  f"{bases / s / 1e6:.1f} M bases/s")
    if args.kernel_rounds:
        print(f"\nDevice kernels alone over the whole database (median of {args.kernel_rounds} "
              "after a warm-up pass, profiling events):")
        print("| task | queries | table | scan s | lookup s | extend s | order s | ung sort s | "
              "ungapped s | ung redo s | scan M positions/s | scan M bases/s | matched | pairs | "
              "words | saved | redo starts |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for task, q0, n in parse_cases(args.cases):
            q = q0 if n is None else f"{q0}{n}"
            med, cnt, flat = kernel_medians(args.work, task, q, args.device, args.kernel_rounds)
            sc = med["device_scan"] or float("nan")
            print(f"| {task} | {q} | {flat.kind} w{flat.width} stride {flat.scan_step} | "
                  + " | ".join(f"{med[k]:.4f}" for k in ("device_scan", "device_lookup",
                                                        "device_extend", "device_order",
                                                        "device_ung_sort", "device_ungapped",
                                                        "device_ung_redo"))
                  + f" | {cnt.get('positions', 0) / sc / 1e6:.1f} | {bases / sc / 1e6:.1f} | "
                  + " | ".join(f"{cnt.get(k, 0):,}" for k in ("matched", "pairs", "words", "saved",
                                                               "redo_starts"))
                  + " |",
                  flush=True)
            rows.append({"family": "blastn_scan", "input": f"{task}:{q}", "status": "ok",
                         "seconds": round(sum(med.values()), 5), "values": {},
                         "kernels": {k: round(v, 5) for k, v in med.items()}, "counts": cnt})
    save(args.results or os.path.join(args.work, "bench_blastn.json"), rows, genome_bases=bases,
         contigs=ncontigs, reads=args.reads, genes=args.genes)


if __name__ == "__main__":
    main()
