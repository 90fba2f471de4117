#!/usr/bin/env python3
"""The Viterbi filter kernel against HMMER's (pyhmmer), and hmmsearch with it on and off.

Part 1 (kernel): per model length M, a pyhmmer-sampled model (seeded) and ``--n`` random
proteins (log-normal lengths, median 300, 30..5,000, HMMER's background residues); the
kernel's words are checked equal to :mod:`clalign.hmm.vit_reference` on the first
``--check`` targets, then timed (OpenCL profiling events, median of ``--repeat`` after one
warm-up launch): GCUPS = M x residues / seconds. pyhmmer's Viterbi filter on one thread is
estimated on ``--pyhmmer-n`` of the targets as the time of a pipeline that runs it on all of
them (F1 = 1, bias filter off, F2 = 1e-300: nothing reaches Forward) minus one that stops
after MSV (F1 = 1e-300); multiply by the host's cores for a whole-machine bound.

Part 2 (``--e2e HMMFILE DB``): ``clalign hmmsearch --cpu N`` as whole processes with
``CLALIGN_HMM_VITERBI=device`` and ``=pyhmmer`` (``--rounds`` each, interleaved; MSV engine
``--filter-engine``), walls, the
summary lines, and whether the tables are identical.

    python3 -m tools.bench_viterbi --lengths 100,400,800 --n 20000 [--e2e models.hmm db.fa] --out DIR
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _model(M, seed):
    import pyhmmer
    from pyhmmer.plan7 import HMM

    from clalign.hmm.hmmfile import read_hmms

    abc = pyhmmer.easel.Alphabet.amino()
    h = HMM.sample(abc, M, 77 + M + seed)
    ev = h.evalue_parameters
    ev.m_mu, ev.m_lambda, ev.v_mu, ev.v_lambda, ev.f_tau, ev.f_lambda = -9.0, 0.7, -10.0, 0.7, -4.0, 0.7
    buf = io.BytesIO()
    h.write(buf)
    with tempfile.NamedTemporaryFile(suffix=".hmm", delete=False) as fh:
        fh.write(buf.getvalue())
    try:
        ours = next(iter(read_hmms(fh.name)))
    finally:
        os.unlink(fh.name)
    ours.msv, ours.viterbi = (-9.0, 0.7), (-10.0, 0.7)
    return h, ours


def _targets(n, seed):
    from clalign.data import PROTEIN
    from clalign.hmm.profile import BACKGROUND

    rng = np.random.default_rng(seed)
    L = np.clip(np.round(rng.lognormal(np.log(300), 0.6, n)), 30, 5000).astype(np.int64)
    std = np.array([PROTEIN.letters.index(c) for c in "ACDEFGHIKLMNPQRSTVWY"], dtype=np.uint8)
    p = BACKGROUND.astype(np.float64)
    p /= p.sum()
    res = std[rng.choice(20, size=int(L.sum()), p=p)]
    off = np.concatenate([[0], np.cumsum(L)]).astype(np.int64)
    return res, off, L


def _pyhmmer_vit_seconds(phmm, res, off, n):
    import pyhmmer
    from pyhmmer.easel import DigitalSequenceBlock, TextSequence
    from pyhmmer.plan7 import Pipeline

    from clalign.data import PROTEIN

    abc = pyhmmer.easel.Alphabet.amino()
    seqs = [TextSequence(name=str(i).encode(), sequence=PROTEIN.decode(res[off[i]:off[i + 1]])).digitize(abc)
            for i in range(n)]
    block = DigitalSequenceBlock(abc, seqs)

    def t(**kw):
        best = []
        for _ in range(3):
            t0 = time.perf_counter()
            Pipeline(abc, bias_filter=False, **kw).search_hmm(phmm, block)
            best.append(time.perf_counter() - t0)
        return min(best)

    return t(F1=1.0, F2=1e-300) - t(F1=1e-300)


def kernel_part(a, log):
    from clalign.hmm.vit_engine import _limits, choose_viterbi, vit_words_device
    from clalign.hmm.vit_reference import build_vit_profile, vit_words
    from clalign.runtime import Runtime

    rt = Runtime.get(None)
    log(f"device: {rt.label}")
    res, off, L = _targets(a.n, 5)
    rows = []
    for M in [int(x) for x in a.lengths.split(",")]:
        phmm, hmm = _model(M, 0)
        prof = build_vit_profile(hmm)
        idx = np.arange(a.n)
        words, _ = vit_words_device(prof, res, off, idx, L)               # build + warm-up
        c = min(a.check, a.n)
        want = vit_words(prof, [res[off[i]:off[i + 1]] for i in range(c)])
        same = bool(np.array_equal(words[:c], want))
        _, sec = vit_words_device(prof, res, off, idx, L, repeat=a.repeat)
        gcups = M * float(L.sum()) / sec / 1e9
        pn = min(a.pyhmmer_n, a.n)
        ps = _pyhmmer_vit_seconds(phmm, res, off, pn)
        pg = M * float(L[:pn].sum()) / ps / 1e9 if ps > 0 else float("nan")
        v = choose_viterbi(M, None, *_limits(rt.caps))
        row = {"M": M, "WG": v["WG"], "P": v["P"], "targets": a.n, "residues": int(L.sum()), "equal": same,
               "kernel_s": sec, "gcups": gcups, "pyhmmer_1thread_gcups": pg, "cores": os.cpu_count()}
        rows.append(row)
        log(f"M={M} WG={v['WG']} P={v['P']}: equal to reference on {c}: {same}; kernel {sec * 1e3:.2f} ms "
            f"{gcups:.3f} GCUPS; pyhmmer Viterbi 1 thread {pg:.3f} GCUPS (x{os.cpu_count()} cores = "
            f"{pg * (os.cpu_count() or 1):.1f})")
    return rows


def e2e_part(a, log):
    hmm, db = a.e2e
    from clalign.hmm.vit_bias import filter_scores

    t0 = time.perf_counter()       # numba's compiled bias filter, cached on disk for the runs below
    filter_scores(10, np.full(20, 0.05, np.float32), np.zeros(4, np.uint8), [0], [4])
    log(f"numba bias filter ready in {time.perf_counter() - t0:.2f} s")
    out = {}
    tables = {}
    for r in range(a.rounds):
        for mode in ("device", "pyhmmer"):
            tbl = os.path.join(a.out, f"e2e.{mode}.tbl")
            dom = os.path.join(a.out, f"e2e.{mode}.domtbl")
            path = ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
            env = {**os.environ, "CLALIGN_HMM_VITERBI": mode, "PYTHONPATH": path}
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "clalign", "hmmsearch", "--cpu", str(a.cpu), "--filter-engine",
                                a.filter_engine, "--tblout", tbl,
                                "--domtblout", dom, "-o", os.devnull, "--force", hmm, db],
                               capture_output=True, text=True, env=env, cwd=ROOT)
            wall = time.perf_counter() - t0
            if p.returncode:
                log(f"{mode}: exit {p.returncode}: {p.stderr.strip()[-500:]}")
                continue
            out.setdefault(mode, []).append(wall)
            tables[mode] = b"".join(open(f, "rb").read() for f in (tbl, dom) if os.path.exists(f))
            summary = [ln for ln in p.stderr.splitlines() if ln.strip()][-1:] or [""]
            log(f"round {r} {mode}: {wall:.2f} s  {summary[0][:300]}")
    if len(tables) == 2:
        strip = [b"\n".join(ln for ln in tables[m].splitlines() if not ln.startswith(b"#"))
                 for m in ("device", "pyhmmer")]
        log(f"tables identical (comment lines aside): {strip[0] == strip[1]}")
    med = {m: statistics.median(v) for m, v in out.items()}
    if len(med) == 2:
        log(f"median: device Viterbi {med['device']:.2f} s, pyhmmer Viterbi {med['pyhmmer']:.2f} s "
            f"({med['pyhmmer'] / med['device']:.2f}x)")
    return med


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lengths", default="100,400,800")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--check", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pyhmmer-n", type=int, default=2000)
    ap.add_argument("--e2e", nargs=2, metavar=("HMMFILE", "DB"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cpu", type=int, default=os.cpu_count())
    ap.add_argument("--filter-engine", default="auto", help="clalign hmmsearch --filter-engine (e2e part)")
    ap.add_argument("--skip-kernel", action="store_true")
    ap.add_argument("--out", default=os.environ.get("OUT", "bench_viterbi_out"))
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    report = open(os.path.join(a.out, "bench_viterbi.txt"), "a")
    t_start = time.perf_counter()

    def log(msg):
        msg = f"[{time.perf_counter() - t_start:6.1f}s] {msg}"
        print(msg, flush=True)
        report.write(msg + "\n")
        report.flush()

    doc = {"kernel": [] if a.skip_kernel else kernel_part(a, log)}
    if a.e2e:
        doc["e2e"] = e2e_part(a, log)
    with open(os.path.join(a.out, "bench_viterbi.json"), "w") as fh:
        json.dump(doc, fh, indent=1)


if __name__ == "__main__":
    main()
