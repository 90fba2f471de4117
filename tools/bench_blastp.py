"""Benchmark ``clalign blastp`` against BLAST+ ``blastp`` on the same machine, same command.

Generates the synthetic long-tail database (``tools/gen_protein_db.py``, seeded), builds it with
``makeblastdb`` for BLAST+, then times (wall clock, each once, BLAST+ first):

- ``blastp -num_threads T -task blastp -comp_based_stats 0 -seg no -max_target_seqs 500
  -outfmt 6`` (the database already built);
- clalign's search of the same FASTA in-process (``run_blastp``: FASTA parse, device upload,
  per-query stages), with the OpenCL device given by ``--device`` (else all on the CPU).

Prints one JSON object (times, phase breakdown summed over queries, hits, whether the outputs
are identical line for line, the first differing lines otherwise). Example (H100 host)::

    python tools/bench_blastp.py -n 570000 --queries queries.fasta --threads 16 --device 0:0 --work /tmp/b
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

BLASTP_OPTS = ["-task", "blastp", "-comp_based_stats", "0", "-seg", "no", "-max_target_seqs", "500",
               "-outfmt", "6"]


def build_db(n, seed, work: Path):
    from gen_protein_db import generate, write_fasta

    fasta = work / f"synth_{n}_{seed}.fa"
    info = {}
    if not fasta.exists():
        t0 = time.perf_counter()
        lengths, residues = generate(n, seed)
        write_fasta(str(fasta), lengths, residues)
        info["generate_s"] = round(time.perf_counter() - t0, 2)
    if not (work / (fasta.name + ".pin")).exists() and not (work / (fasta.name + ".00.pin")).exists():
        t0 = time.perf_counter()
        subprocess.run(["makeblastdb", "-in", str(fasta), "-dbtype", "prot", "-out", str(fasta)],
                       check=True, stdout=subprocess.DEVNULL)
        info["makeblastdb_s"] = round(time.perf_counter() - t0, 2)
    return fasta, info


def run_blast(query, fasta, threads, out: Path):
    t0 = time.perf_counter()
    with open(out, "w") as fh:
        subprocess.run(["blastp", "-query", str(query), "-db", str(fasta), "-num_threads", str(threads)]
                       + BLASTP_OPTS, check=True, stdout=fh)
    return time.perf_counter() - t0


def run_clalign(query, fasta, threads, device, out: Path):
    from clalign.blast import blastp as bp
    from clalign.blast.options import blastp_options

    times = {}
    made = []
    if device is not None:   # keep the DeviceUngapped to report its kernel times
        from clalign.blast import device as dmod

        class Recording(dmod.DeviceUngapped):
            def __init__(self, *a, **k):
                super().__init__(*a, **k)
                made.append(self)

        dmod_orig = dmod.DeviceUngapped
        dmod.DeviceUngapped = Recording
    t0 = time.perf_counter()
    try:
        results = list(bp.run_blastp(query, fasta, blastp_options(max_target_seqs=500),
                                     num_threads=threads, device=device, times=times))
    finally:
        if device is not None:
            dmod.DeviceUngapped = dmod_orig
    tabular_lines = bp.tabular_lines
    if made:
        d = made[0].times
        times.update({"dev_hits": d.hits, "dev_sort": d.sort, "dev_two_hit_or_scan": d.two_hit,
                      "dev_copies": d.copies, "init_hsps": d.counts["init_hsps"],
                      "word_hits": d.counts["hits"], "extensions": d.counts.get("extensions", 0)})
    lines = tabular_lines(results)
    out.write_text("".join(line + "\n" for line in lines))
    return time.perf_counter() - t0, times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=570000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--device", default=None, help="OpenCL device P:D for phases 2-4 (default: CPU)")
    ap.add_argument("--work", default="bench_blastp_work")
    ap.add_argument("--skip-blast", action="store_true")
    ap.add_argument("--modes", default="device", help="comma list of device,cpu (cpu: all on the CPU)")
    a = ap.parse_args(argv)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    fasta, info = build_db(a.n, a.seed, work)
    res = {"n": a.n, "seed": a.seed, "threads": a.threads, "device": a.device, **info}
    if not a.skip_blast:
        res["blastp_s"] = round(run_blast(a.queries, fasta, a.threads, work / "blastp.tsv"), 2)
        print(json.dumps(res), flush=True)
    for mode in a.modes.split(","):
        device = a.device if mode == "device" else None
        t, times = run_clalign(a.queries, fasta, a.threads, device, work / f"clalign_{mode}.tsv")
        r = {"clalign_s": round(t, 2), "stages_s": {k: round(v, 3) for k, v in times.items()}}
        if not a.skip_blast:
            want = (work / "blastp.tsv").read_text().splitlines()
            got = (work / f"clalign_{mode}.tsv").read_text().splitlines()
            r["lines"] = [len(want), len(got)]
            r["identical"] = want == got
            if want != got:
                r["first_diffs"] = [(i, w, g) for i, (w, g) in enumerate(zip(want, got)) if w != g][:3]
            r["speedup"] = round(res["blastp_s"] / t, 3)
        res[f"clalign_{mode}"] = r
        print(json.dumps(res), flush=True)
    return res


if __name__ == "__main__":
    main()
