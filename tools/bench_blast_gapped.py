"""Benchmark of BLASTP's preliminary gapped extensions on the device (``clalign.blast.device_gapped``)
against the compiled CPU stage, on the seeded long-tail database generated in memory.

Per query: initial HSPs from the device's phases 2-4, then the CPU preliminary stage
(``engine.prelim_hits`` on a pool of ``--threads``) and, per kernel variant, the device's
extensions plus the replay on them (``prelim_hits(..., pre=...)``), whose rows are checked equal
to the CPU stage's before anything is reported. Prints one JSON line per variant: summed kernel
seconds (profiling events), the wall seconds of the extensions and of the replay, HSPs per
kernel-second, overflowed HSPs (redone on the CPU). Example (H100 host)::

    python3 -m tools.bench_blast_gapped -n 100000 --device 0:0 --variants '[{}, {"BAND": 256}]'
"""
from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tools.bench_blast_device import QUERIES, subjects_of


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--variants", default="[{}]", help="JSON list of BLAST_GAPPED overrides")
    a = ap.parse_args(argv)
    from clalign.blast.blastp import read_queries, search_codes
    from clalign.blast.device import DeviceUngapped
    from clalign.blast.device_gapped import DeviceGapped
    from clalign.blast.engine import prelim_hits, setup_query
    from clalign.blast.options import blastp_options

    subjects = subjects_of(a.n, a.seed)
    qpath = next(p for p in QUERIES if p.exists())
    dev = DeviceUngapped(subjects, a.device)
    pool = ThreadPoolExecutor(max_workers=a.threads)
    work = []
    t_cpu = 0.0
    for _, _, codes in read_queries(qpath):
        qs = setup_query(search_codes(codes), subjects, blastp_options(max_target_seqs=500))
        rows = dev.initial_hsps(qs)
        if len(rows) == 0:
            continue
        prelim_hits(qs, subjects, rows[:50], pool, 2)   # compiled once, untimed
        t0 = time.perf_counter()
        want = prelim_hits(qs, subjects, rows, pool, 4 * a.threads)
        t_cpu += time.perf_counter() - t0
        work.append((qs, rows, want))
    n_rows = sum(len(w[1]) for w in work)
    print(json.dumps({"n": a.n, "queries": len(work), "init_hsps": n_rows,
                      "cpu_prelim_wall_s": round(t_cpu, 3), "threads": a.threads}), flush=True)
    for override in json.loads(a.variants):
        dg = DeviceGapped(dev.rt, subjects, override)
        dg.extend(work[0][0], work[0][1][:100])   # build and upload, untimed
        dg.kernel_seconds = 0.0
        ext = replay = 0.0
        overflow = 0
        same = True
        for qs, rows, want in work:
            t0 = time.perf_counter()
            pre = dg.extend(qs, rows)
            t1 = time.perf_counter()
            got = prelim_hits(qs, subjects, rows, pool, 4 * a.threads, pre=pre)
            replay += time.perf_counter() - t1
            ext += t1 - t0
            overflow += int((pre[:, 7] == 0).sum())
            same &= all(np.array_equal(x, y) for x, y in zip(got, want))
        print(json.dumps({"variant": override, "values": {k: dg.values[k] for k in ("WG", "BAND",
                          "SCRATCH_LOCAL", "LAUNCH")}, "same_rows_as_cpu": bool(same),
                          "kernel_s": round(dg.kernel_seconds, 3), "extend_wall_s": round(ext, 3),
                          "replay_wall_s": round(replay, 3), "overflow": overflow,
                          "hsps_per_kernel_s": round(n_rows / max(dg.kernel_seconds, 1e-9))}),
              flush=True)
    pool.shutdown()


if __name__ == "__main__":
    main()
