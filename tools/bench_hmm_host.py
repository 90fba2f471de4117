#!/usr/bin/env python3
"""Host work of ``clalign hmmsearch``'s GPU path at full size, with the kernels replaced by fakes.

What a GPU search does on the host per model (MSV byte test, Viterbi stage's host side: bias
filter, profiles, decisions; pyhmmer hand-off and hit-list pass), measurable on a machine
without a GPU: the S-lane path is forced, ``msv_filter_run`` passes a random 2 % of targets
with bytes just above each length class's threshold (as real survivors: near F1) and every
Viterbi word fails; no kernel is built or run. Prints the loop's time per model, the stage
sums and cProfile's ``--top`` costliest calls by own time (main thread only).

    python3 -m tools.bench_hmm_host HMMFILE DB.fa [--models 60] [--cpu 2]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import tempfile
import time

import numpy as np


class _Run:
    def __init__(self, raw):
        self.raw, self.seconds, self.values, self.blocks = raw, 0.0, {}, None


def _fake(seed):
    rng = np.random.default_rng(seed)

    def msv_filter_run(profile, hmm, db, F1, slack, device=None, cache=None, **overrides):
        from clalign.hmm import bytepass, reference

        L = reference.hmmer_lengths(db)
        uniq, inv = reference.length_classes(L)
        t = bytepass.class_thresholds(profile, hmm, uniq, F1, slack)
        keep = (rng.random(L.size) < 0.02) & (t[inv] < 256) & (L > 0)
        raw = np.where(keep, np.minimum(t[inv] + rng.integers(0, 3, L.size), 255), 0).astype(np.uint32)
        return keep, _Run(raw)

    def msv_survivors_run(profile, hmm, db, F1, slack, device=None, cache=None, **overrides):
        from clalign.hmm import bytepass, reference

        keep, run = msv_filter_run(profile, hmm, db, F1, slack)
        return (*bytepass.msv_survivors(profile, hmm, run.raw, reference.hmmer_lengths(db), F1, slack), run)

    def vit_words_device(prof, residues, offsets, targets, lengths, *a, **k):
        return np.full(len(targets), -32768, dtype=np.int64), 0.0

    return msv_filter_run, msv_survivors_run, vit_words_device


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hmmfile")
    ap.add_argument("db")
    ap.add_argument("--models", type=int, default=60)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args(argv)
    os.environ["CLALIGN_HMM_VITERBI"] = "device"
    from clalign.hmm import engine, kernel_choice, kernel_plan, vit_engine

    never = (lambda caps, override=None: False)
    for mod in (engine, kernel_choice, kernel_plan):
        mod.use_striped = never
    engine.msv_filter_run, engine.msv_survivors_run, vit_engine.vit_words_device = _fake(0)
    engine.prebuild = vit_engine.prebuild_viterbi = (lambda *x, **k: [])
    from clalign.hmm.search import hmmsearch

    parts = open(a.hmmfile, "rb").read().split(b"//\n")
    with tempfile.NamedTemporaryFile(suffix=".hmm", delete=False) as fh:
        fh.write(b"//\n".join(parts[:a.models]) + b"//\n")
    prof = cProfile.Profile()
    try:
        t0 = time.perf_counter()
        prof.enable()
        search = hmmsearch(fh.name, a.db, cpus=a.cpu, engine="opencl")
        t1 = time.perf_counter()
        n = sum(1 for _ in search)
        prof.disable()
        t2 = time.perf_counter()
    finally:
        os.unlink(fh.name)
    st = search.stats
    print(f"bench_hmm_host: {n} models x {st.sequences} targets: set-up {t1 - t0:.2f} s (database {st.load_seconds:.2f} s), "
          f"loop {t2 - t1:.2f} s ({(t2 - t1) / max(1, n) * 1e3:.1f} ms per model); MSV stage {st.device_seconds:.2f} s, "
          f"Viterbi stage {st.vit_seconds:.2f} s, pyhmmer {st.pyhmmer_seconds:.2f} s summed")
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(a.top)
    print(buf.getvalue())


if __name__ == "__main__":
    main()
