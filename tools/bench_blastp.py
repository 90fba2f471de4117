"""Benchmark ``clalign blastp`` against BLAST+ ``blastp`` on the same machine, same command.

Generates the synthetic long-tail database (``tools/gen_protein_db.py``, seeded), builds it with
``makeblastdb`` for BLAST+, then times (wall clock, each once, BLAST+ first):

- ``blastp -num_threads T -task blastp -comp_based_stats 0 -seg no -max_target_seqs 500
  -outfmt 6`` (the database already built);
- clalign's search of the same FASTA in-process (``run_blastp``: FASTA parse, device upload,
  per-query stages), with the OpenCL device given by ``--device`` (else all on the CPU).

Prints one JSON object per query set (times, phase breakdown summed over queries, hits, whether
the outputs are identical line for line, the first differing lines otherwise). Stage keys:
``setup/ungapped/gapped/traceback`` are wall seconds summed over the concurrent queries (waits
included); ``scan_cpu/gapped_cpu/traceback_cpu`` the CPU seconds of the compiled work itself;
``dev_*`` the device kernels' profiling-event seconds (``dev_span``: from the first launch's
start to the last one's end, ``dev_busy``: the union of the launches -- their ratio says how busy
the queries kept the device); ``read_db`` and ``format`` the I/O; ``device_setup`` the device
object's making (in the background, overlapping the database read and the query setups).
``--trace`` timeline keys: the compiled tasks (``setup_cpu``, ``scan_cpu``, ``gapped_cpu``,
``traceback_cpu``), each query's phases (``q_setup`` -- its wait for its setup --, ``q_ungapped``,
``q_gapped``, ``q_traceback``) and its device turn: ``dev_prep`` (packing, the wait for a free
buffer slot, the uploads' enqueueing), ``dev_wait`` (for the lock), ``dev_held`` (enqueueing its
launches), ``dev_read`` (its launches running, queued ones before them included, and the read-back).

``--many N`` adds the many-query run: the first N proteins of the bundled proteome
(``data/proteome.faa.gz``, 2,100 proteins of pyhmmer's test data) as queries. ``--warmup``
first searches one query against 2,000 subjects and itself, so numba's compilation and the OpenCL build
are not timed (the query is put among the subjects so that every stage runs). Example (H100 host)::

    python3 -m tools.bench_blastp -n 570000 --queries queries.fasta --many 300 --threads 16 \
        --device 0:0 --work /tmp/b --warmup
"""
from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BLASTP_OPTS = ["-task", "blastp", "-comp_based_stats", "0", "-seg", "no", "-max_target_seqs", "500",
               "-outfmt", "6"]


from tools.results import peer_row, save


def build_db(n, seed, work: Path):
    from tools.gen_protein_db import generate, write_fasta

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


def proteome_queries(n, work: Path) -> Path:
    """The first n proteins of data/proteome.faa.gz as a plain FASTA file (BLAST+ reads no gzip)."""
    out = work / f"proteome_{n}.faa"
    records = gzip.open(ROOT / "data" / "proteome.faa.gz", "rt").read().split(">")[1:n + 1]
    out.write_text("".join(">" + r for r in records))
    return out


def warmup(query, fasta, threads, device, work: Path):
    """One query against the first 2,000 subjects plus itself, untimed: the self hit takes every
    stage (scan, gapped, traceback) through its compilation before the timed run."""
    one = work / "warmup_q.fa"
    first = ">" + Path(query).read_text().split(">")[1]
    one.write_text(first)
    small = work / "warmup_db.fa"
    with open(fasta) as src, open(small, "w") as dst:
        seen = 0
        for line in src:
            seen += line.startswith(">")
            if seen > 2000:
                break
            dst.write(line)
        dst.write(first.replace(">", ">warmup_self ", 1))
    t0 = time.perf_counter()
    run_clalign(one, small, threads, device, work / "warmup.tsv")
    return time.perf_counter() - t0


def timeline(events, t0, width=0.5):
    """Summary of a --trace timeline: per ``width``-second bin the mean number of busy compiled
    tasks per key, and the longest single tasks (what a tail waits on)."""
    if not events:
        return {}
    end = max(e[3] for e in events) - t0
    nb = int(end / width) + 1
    busy = {}
    for key, _, a, b in events:
        row = busy.setdefault(key, [0.0] * nb)
        a, b = a - t0, b - t0
        for k in range(int(a / width), int(b / width) + 1):
            lo, hi = max(a, k * width), min(b, (k + 1) * width)
            if hi > lo and k < nb:
                row[k] += (hi - lo) / width
    longest = sorted(events, key=lambda e: e[2] - e[3])[:12]
    return {"bin_s": width, "busy": {k: [round(x, 2) for x in v] for k, v in busy.items()},
            "longest": [(k, round(a - t0, 3), round(b - a, 3)) for k, _, a, b in longest]}


def run_clalign(query, fasta, threads, device, out: Path, trace=None):
    from clalign.blast import blastp as bp
    from clalign.blast.options import blastp_options

    times = {"_events": []} if trace else {}
    made = []
    if device is not None:   # keep the DeviceUngapped to report its kernel times
        from clalign.blast import device as dmod

        class Recording(dmod.DeviceUngapped):
            def __init__(self, *a, **k):
                super().__init__(*a, **k)
                if trace:
                    self.events = times["_events"]
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
        times.update({f"dev_setup_{k}": v for k, v in made[0].setup_times.items()})
        g = getattr(made[0], "_gapped", None)
        if g is not None:
            times["dev_gapped_setup"] = g.setup_seconds
        times.update({"dev_hits": d.hits, "dev_sort": d.sort, "dev_two_hit_or_scan": d.two_hit,
                      "dev_copies": d.copies, "init_hsps": d.counts["init_hsps"],
                      "word_hits": d.counts["hits"], "extensions": d.counts.get("extensions", 0)})
        if hasattr(d, "kernel_span"):    # first launch start to last end, and the launches' union
            times["dev_span"], times["dev_busy"] = d.kernel_span()
    t1 = time.perf_counter()
    if trace:
        events = times.pop("_events")
        launches = sorted(made[0].times.launches) if made else []   # device ns: where it idled
        Path(trace).write_text(json.dumps({"t0": t0, "events": events, "launches": launches,
                                           **timeline(events, t0)}))
    lines = tabular_lines(results)
    out.write_text("".join(line + "\n" for line in lines))
    times["format"] = time.perf_counter() - t1
    return time.perf_counter() - t0, times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=570000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queries", default="", help="query FASTA files, comma separated")
    ap.add_argument("--many", type=int, default=0, help="also the first N bundled proteome proteins")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--device", default=None, help="OpenCL device P:D for phases 2-4 (default: CPU)")
    ap.add_argument("--work", default="bench_blastp_work")
    ap.add_argument("--skip-blast", action="store_true")
    ap.add_argument("--warmup", action="store_true", help="an untimed small search first")
    ap.add_argument("--modes", default="device", help="comma list of device,cpu (cpu: all on the CPU)")
    ap.add_argument("--trace", action="store_true",
                    help="write each run's timeline of compiled tasks to WORK/trace_MODE_QUERIES.json")
    ap.add_argument("--results", default=None, help="results JSON (default WORK/bench_blastp.json)")
    a = ap.parse_args(argv)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    fasta, info = build_db(a.n, a.seed, work)
    sets = [Path(q) for q in a.queries.split(",") if q]
    if a.many:
        sets.append(proteome_queries(a.many, work))
    if not sets:
        ap.error("give --queries and/or --many")
    out, rows = [], []
    for query in sets:
        res = {"n": a.n, "seed": a.seed, "threads": a.threads, "device": a.device,
               "queries": query.name, **info}
        tag = query.stem
        if not a.skip_blast:
            res["blastp_s"] = round(run_blast(query, fasta, a.threads, work / f"blastp_{tag}.tsv"), 2)
            print(json.dumps(res), flush=True)
        for mode in a.modes.split(","):
            device = a.device if mode == "device" else None
            if a.warmup:
                res[f"warmup_{mode}_s"] = round(warmup(query, fasta, a.threads, device, work), 2)
            t, times = run_clalign(query, fasta, a.threads, device, work / f"clalign_{mode}_{tag}.tsv",
                                   trace=work / f"trace_{mode}_{tag}.json" if a.trace else None)
            r = {"clalign_s": round(t, 2), "stages_s": {k: round(v, 3) for k, v in times.items()}}
            if not a.skip_blast:
                want = (work / f"blastp_{tag}.tsv").read_text().splitlines()
                got = (work / f"clalign_{mode}_{tag}.tsv").read_text().splitlines()
                r["lines"] = [len(want), len(got)]
                r["identical"] = want == got
                if want != got:
                    r["first_diffs"] = [(i, w, g) for i, (w, g) in enumerate(zip(want, got))
                                        if w != g][:3]
                r["speedup"] = round(res["blastp_s"] / t, 3)
                r["speedup_valid"] = want == got       # a ratio against a different output counts for nothing
                rows.append(peer_row("blastp", f"{query.name}:{mode}", round(t, 2), "blastp", res["blastp_s"],
                                     want == got, threads=a.threads, device=device, n=a.n, seed=a.seed))
            res[f"clalign_{mode}"] = r
            print(json.dumps(res), flush=True)
        info = {}
        out.append(res)
    save(a.results or work / "bench_blastp.json", rows, runs=out)
    return out


if __name__ == "__main__":
    main()
