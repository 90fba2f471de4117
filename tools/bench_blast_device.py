"""Benchmark of BLASTP's device phases 2-4 alone (``clalign.blast.device``): kernel variants
on the same queries and generated database, with counts and throughputs.

Generates the seeded long-tail database in memory (``tools/gen_protein_db.py``), sets the
queries up as ``clalign blastp`` does (lookup table, statistics, cutoffs), uploads the subjects
once per variant and runs every query, each variant once after one warm-up query. Reports per
variant: summed kernel seconds (profiling events), word hits, two-hit extensions, initial HSPs,
hits per second. Every variant's initial-HSP rows (all queries) are checked against the first
working variant's before it is timed (``clalign.runtime.harness``); a variant with other rows is
reported as wrong and not timed. Prints one JSON line per variant and writes ``--results``. Example (H100 host)::

    python3 -m tools.bench_blast_device -n 570000 --variants '[{}, {"WG": 128}, {"KERNEL": "subject"}]'
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np

from clalign.runtime.harness import compare, verify_then_time
from tools.results import save

ROOT = Path(__file__).resolve().parents[1]

QUERIES = [ROOT / "tests" / "data" / "cudasw" / "cudasw_queries.fasta",
           ROOT.parent / "shared" / "data" / "cudasw_queries.fasta"]


def subjects_of(n, seed):
    """``engine.Subjects`` of the generated database (NCBIstdaa codes)."""
    from tools.gen_protein_db import generate
    from clalign.blast.engine import Subjects
    from clalign.data.alphabet import PROTEIN

    lengths, residues = generate(n, seed)
    codes = PROTEIN.encode(residues.tobytes()).astype(np.uint8)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Subjects(codes, offsets, [str(i) for i in range(len(lengths))])


def run_variant(subjects, setups, device, override, reference=None):
    """One variant through ``harness.verify_then_time``: a first pass over every query (build,
    warm-up, output), its initial-HSP rows checked against ``reference`` (per-query digests of the
    first variant), then one timed pass; a variant with other rows is reported, never timed."""
    from clalign.blast.device import DeviceUngapped

    state = {}

    def run():
        if "dev" not in state:
            t0 = time.perf_counter()
            state["dev"] = DeviceUngapped(subjects, device, override=override)
            state["upload"] = time.perf_counter() - t0
        dev = state["dev"]
        dev.times.two_hit = dev.times.hits = dev.times.sort = 0.0
        dev.times.counts = {"hits": 0, "extensions": 0, "init_hsps": 0}
        digests, per_query = [], []
        t0 = time.perf_counter()
        for qs in setups:
            before = dev.times.two_hit
            rows = dev.initial_hsps(qs)
            per_query.append(round(dev.times.two_hit - before, 4))
            digests.append(hashlib.sha256(np.ascontiguousarray(rows).tobytes()).hexdigest()[:16])
        state["wall"], state["per_query"] = time.perf_counter() - t0, per_query
        return digests, dev.times.two_hit + dev.times.hits

    def verify(digests):
        state["digests"] = digests
        return None if reference is None else compare(digests, reference, "initial-HSP rows (sha256 per query)")

    m = verify_then_time(run, verify, repeats=1)
    row = {"family": "blast-ungapped", "input": f"{len(setups)} queries", "values": override, **m.as_dict(),
           "override": override, "rows_sha256": hashlib.sha256("".join(state.get("digests", [])).encode()).hexdigest()[:16],
           "same_rows_as_first": m.status == "ok" if reference is not None else True}
    if m.ok:
        dev, t = state["dev"], state["dev"].times
        kern = t.two_hit + t.hits
        row.update({"kernel": dev.kernel, "upload_s": round(state["upload"], 2), "kernel_s": round(kern, 4),
                    "host_sort_s": round(t.sort, 3), "wall_s": round(state["wall"], 3),
                    "hits": t.counts["hits"], "extensions": t.counts.get("extensions", 0),
                    "init_hsps": t.counts["init_hsps"],
                    "ghits_per_s": round(t.counts["hits"] / kern / 1e9, 3) if kern else None,
                    "per_query_s": state["per_query"]})
    return row, state.get("digests"), state.get("dev")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=570000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queries", default=None)
    ap.add_argument("--device", default=None, help="OpenCL device P:D (default: the first)")
    ap.add_argument("--variants", default="[{}]", help="JSON list of parameter overrides")
    ap.add_argument("--cpu-check", type=int, default=0,
                    help="also compare the first variant's rows of the first N queries with "
                         "the compiled CPU path")
    ap.add_argument("--results", default="bench_blast_device.json", help="results JSON file")
    a = ap.parse_args(argv)
    from clalign.blast.blastp import read_queries, search_codes
    from clalign.blast.engine import initial_hsps, search_statistics, setup_query
    from clalign.blast.options import blastp_options

    qpath = a.queries or next(str(p) for p in QUERIES if p.exists())
    t0 = time.perf_counter()
    subjects = subjects_of(a.n, a.seed)
    opts = blastp_options(max_target_seqs=500)
    stats = search_statistics(subjects, opts)
    setups = [setup_query(search_codes(c), subjects, opts, stats) for _, _, c in read_queries(qpath)]
    print(json.dumps({"n": a.n, "residues": subjects.total_length, "queries": len(setups),
                      "query_residues": int(sum(len(q.codes) for q in setups)),
                      "setup_s": round(time.perf_counter() - t0, 2)}), flush=True)
    results, reference, caps = [], None, None
    for override in json.loads(a.variants):
        r, digests, dev = run_variant(subjects, setups, a.device, override, reference)
        if reference is None and r["status"] == "ok":
            reference = digests                     # the first working variant is the reference
        caps = caps or getattr(getattr(dev, "rt", None), "caps", None)
        results.append(r)
        print(json.dumps(r), flush=True)
    save(a.results, results, caps=caps, n=a.n, seed=a.seed, queries=qpath)
    if a.cpu_check:
        from clalign.blast.device import DeviceUngapped

        dev = DeviceUngapped(subjects, a.device, override=json.loads(a.variants)[0])
        same = all(np.array_equal(dev.initial_hsps(qs), initial_hsps(qs, subjects, threads=8))
                   for qs in setups[:a.cpu_check])
        print(json.dumps({"cpu_check_queries": a.cpu_check, "identical_to_cpu": same}), flush=True)
    return results


if __name__ == "__main__":
    main()
