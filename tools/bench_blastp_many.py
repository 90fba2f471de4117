"""Many-query ``clalign blastp`` on the device: configurations side by side in one process.

The many-query run (the first N bundled proteome proteins against the synthetic long-tail
database, ``tools/bench_blastp``'s data) is limited by how well the host keeps the chunk
kernel fed. This tool times it once per configuration, in one process after one warm-up
(numba and the OpenCL programs compiled once), and reports per configuration: wall seconds,
the device's kernel seconds and span (first launch start to last end: their ratio is how busy
the queries kept the device), query set-up seconds (summed over the workers), and how long a
thread waited for the interpreter lock (a probe thread sleeping 1 ms in a loop: its overshoot
is mostly the wait for the GIL, the cost every driver pays after each OpenCL or numba call).
The outputs of all configurations must be identical (checked, line for line); with
``--expect FILE`` they are also compared with a saved ``-outfmt 6`` (BLAST+'s).

Configurations (comma list, ``--configs``): ``slotsK`` -- ``device.IN_FLIGHT = K`` buffer slots
of queries in flight on the chunk kernel; suffix ``+plainkarlin`` -- the set-up's ungapped
Karlin block by the plain numpy/Python form (``stats.ungapped_params``, as before the compiled
one), to measure what its interpreter time costs the pipeline; suffix ``+switchU`` --
``sys.setswitchinterval(U microseconds)`` for the run (Python's default is 5,000: a thread
that wants the lock back waits up to that long for one running Python code); ``driversK`` --
``blastp.DRIVERS_EXTRA = K`` query drivers beyond ``--threads``. ``--queries FILE`` searches
that FASTA instead of the proteome proteins (e.g. the 20 CUDASW++ queries). A name given twice
is run twice (results ``name``, ``name#2``). ``--blastdb`` also builds the database with
``makeblastdb`` (as ``tools/bench_blastp`` and a user's command read it: the device fills its
blocks from the ``.psq`` while the residues are copied); ``--label`` prefixes the outputs' names
(two trees compared on one database). BLAST+ is not run
(its time for the same data is in docs/perf/blastp.md). Example (H100 host)::

    python3 -m tools.bench_blastp_many -n 570000 --many 400 --threads 16 --device 0:0 \
        --work /tmp/bm --configs slots4+plainkarlin,slots4,slots8 --out $OUT/many.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

from tools.bench_blastp import build_db, proteome_queries, run_clalign, warmup


def build_fasta(n, seed, work: Path) -> Path:
    """The synthetic database as FASTA only (no makeblastdb: BLAST+ is not run here)."""
    from tools.gen_protein_db import generate, write_fasta

    fasta = work / f"synth_{n}_{seed}.fa"
    if not fasta.exists():
        lengths, residues = generate(n, seed)
        write_fasta(str(fasta), lengths, residues)
    return fasta


class GilProbe:
    """A thread sleeping ``period`` seconds in a loop; the overshoot of each sleep (wake-up,
    then the wait for the interpreter lock) is recorded while running."""

    def __init__(self, period=0.001):
        self.period, self.samples, self._stop = period, [], threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            t = time.perf_counter()
            time.sleep(self.period)
            self.samples.append(time.perf_counter() - t - self.period)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()

    def summary(self):
        s = sorted(self.samples)
        if not s:
            return {}
        return {"n": len(s), "median_ms": round(1e3 * statistics.median(s), 3),
                "p90_ms": round(1e3 * s[int(0.9 * (len(s) - 1))], 3),
                "mean_ms": round(1e3 * sum(s) / len(s), 3)}


def _configure(name):
    """Apply one configuration; returns a function that undoes it."""
    from clalign.blast import device, engine

    undo = []
    slots = old_slots = device.IN_FLIGHT
    for part in name.split("+"):
        if part.startswith("slots"):
            slots = int(part[5:])
        elif part == "plainkarlin":
            from clalign.data.alphabet import PROTEIN
            from clalign.stats import composition, robinson_frequencies, ungapped_params

            compiled = engine.ungapped_karlin_query

            def plain(codes, matrix):
                return ungapped_params(matrix, composition(codes, 28, ambiguous=(engine._X,)),
                                       robinson_frequencies(PROTEIN.letters))
            engine.ungapped_karlin_query = plain
            undo.append(lambda: setattr(engine, "ungapped_karlin_query", compiled))
        elif part.startswith("drivers"):
            from clalign.blast import blastp

            old_drivers = blastp.DRIVERS_EXTRA
            blastp.DRIVERS_EXTRA = int(part[7:])
            undo.append(lambda: setattr(blastp, "DRIVERS_EXTRA", old_drivers))
        elif part.startswith("switch"):
            old_switch = sys.getswitchinterval()
            sys.setswitchinterval(int(part[6:]) * 1e-6)
            undo.append(lambda: sys.setswitchinterval(old_switch))
        else:
            raise SystemExit(f"unknown configuration part {part!r}")
    device.IN_FLIGHT = slots
    undo.append(lambda: setattr(device, "IN_FLIGHT", old_slots))
    return lambda: [u() for u in undo]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=570000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--many", type=int, default=400)
    ap.add_argument("--queries", default=None, help="a query FASTA instead of --many proteins")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--device", default="0:0")
    ap.add_argument("--work", default="bench_blastp_many_work")
    ap.add_argument("--configs", default="slots4,slots8")
    ap.add_argument("--expect", default=None, help="a saved -outfmt 6 of the same search")
    ap.add_argument("--trace", action="store_true", help="timelines to WORK/trace_CONFIG.json")
    ap.add_argument("--out", default=None, help="results JSON (default WORK/many.json)")
    ap.add_argument("--blastdb", action="store_true", help="also makeblastdb the database")
    ap.add_argument("--label", default="", help="prefix of the outputs' file names")
    a = ap.parse_args(argv)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    fasta = build_db(a.n, a.seed, work)[0] if a.blastdb else build_fasta(a.n, a.seed, work)
    query = Path(a.queries) if a.queries else proteome_queries(a.many, work)
    res = {"n": a.n, "seed": a.seed, "many": a.many, "threads": a.threads, "device": a.device,
           "database_s": round(time.perf_counter() - t0, 2)}
    res["warmup_s"] = round(warmup(query, fasta, a.threads, a.device, work), 2)
    out = Path(a.out or work / "many.json")
    first = None
    for name in a.configs.split(","):
        undo = _configure(name)
        key = name
        while key in res:
            key = f"{name}#{int(key.partition('#')[2] or 1) + 1}"
        tag = a.label + key.replace("#", "_")
        tsv = work / f"clalign_{tag}.tsv"
        try:
            with GilProbe() as probe:
                t, times = run_clalign(query, fasta, a.threads, a.device, tsv,
                                       trace=work / f"trace_{tag}.json" if a.trace else None)
        finally:
            undo()
        lines = tsv.read_text().splitlines()
        first = lines if first is None else first
        r = {"clalign_s": round(t, 2), "lines": len(lines), "same_as_first": lines == first,
             "gil_wait": probe.summary()}
        for k in ("dev_two_hit_or_scan", "dev_span", "dev_busy", "setup_cpu", "ungapped", "dev_gapped",
                  "dev_gapped_kernel", "gapped_cpu", "traceback_cpu", "read_db", "device_setup",
                  "init_hsps"):
            if k in times:
                r[k] = round(times[k], 3)
        if a.expect:
            r["identical_to_expect"] = lines == Path(a.expect).read_text().splitlines()
        res[key] = r
        print(json.dumps({key: r}), flush=True)
        out.write_text(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
