#!/usr/bin/env python3
"""MSV / SSV filter throughput of every S-lane kernel vs pyhmmer (CUDAMPF++ Tables 3-4 style).

GCUPS = model length M x database residues / kernel seconds (OpenCL profiling events,
median of ``--repeat`` launches after one warm-up launch; block building, transfers and the
host-side score conversion are excluded and reported separately as ``host_s``). Models are
random (``pyhmmer.plan7.HMM.sample``, seeded), the database is the synthetic Swiss-Prot-like
set of ``tools/gen_protein_db.py`` (``--n`` sequences). Every kernel's scores are checked
against pyhmmer's ``msv_filter``/``ssv_filter`` on a sample of sequences before it is timed
(``clalign.runtime.harness.verify_then_time``: a wrong kernel is reported, never timed).
``bench_msv.json`` is a ``clalign-results-1`` document (rows per M, algorithm and kernel).

pyhmmer runs in ``--threads`` forked worker processes (default: one per core), each with its
own OptimizedProfile copy over a share of the sequences, on ``--pyhmmer-n`` sequences; its
GCUPS gives the speed-up column. (Until issue 15 it ran on threads of this process, where the
GIL around each microsecond-long filter call left most cores idle: 3-12 GCUPS on 16 threads
against 209-270 GCUPS with 16 processes on the H100 host.)

    python3 -m tools.bench_msv --n 100000 --lengths 20,100,200,400,800,1600,2400 --out bench_msv
    python3 -m tools.bench_msv --n 20000 --lengths 100,200,400,800 --striped-rounds 5   # CPU devices
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from clalign.data import PROTEIN, Database
from clalign.hmm import engine as E
from clalign.hmm import reference as R
from clalign.hmm.params import H_LIMIT, S_VALUES, geometry
from clalign.runtime.harness import compare, result_doc, verify_then_time, write_results

try:                                   # python3 -m tools.bench_msv (tools/ as a package)
    from tools import gen_protein_db
except ImportError:                    # python3 -m tools.bench_msv (tools/ is sys.path[0])
    import gen_protein_db

_EASEL = "ACDEFGHIKLMNPQRSTVWY-BJZOUX*~"


def make_db(n, seed=1):
    """The synthetic database as a clalign Database (PROTEIN codes)."""
    lengths, ascii_res = gen_protein_db.generate(n, seed)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    codes = PROTEIN.lut[ascii_res]
    return Database(codes, offsets, [f"s{i}" for i in range(n)], [""] * n, PROTEIN)


def digital_block(db, idx):
    """pyhmmer DigitalSequenceBlock of database sequences ``idx``."""
    from pyhmmer.easel import Alphabet, DigitalSequence, DigitalSequenceBlock

    abc = Alphabet.amino()
    lut = np.array([_EASEL.index(c) for c in PROTEIN.letters], dtype=np.uint8)
    seqs = [DigitalSequence(abc, name=str(i).encode(), sequence=lut[db.sequence(int(i))]) for i in idx]
    return DigitalSequenceBlock(abc, seqs)


_SHARED = {}


def _filter_range(job):
    """Worker process: scores of sequences a..b of the shared block (fork-inherited)."""
    algo, a, b = job
    o, block = _SHARED["om"].copy(), _SHARED["block"]
    f = o.msv_filter if algo == "msv" else o.ssv_filter
    out = np.empty(b - a, dtype=np.float32)
    for i in range(a, b):
        s = block[i]
        o.L = len(s)
        v = f(s)
        out[i - a] = np.nan if v is None else v
    return a, out


def _ready(_):
    return os.getpid()


def pyhmmer_filter(om, block, algo, threads):
    """Scores of ``block`` on ``threads`` worker *processes* (one per core); returns (scores
    float32, seconds). Why processes: each pyhmmer filter call is microseconds of SSE code
    around Python that holds the GIL, so threads serialise on it; the issue-15 baseline check
    found 3-12 GCUPS "on 16 threads" where 16 processes give 209-270 GCUPS. The workers are
    forked before the clock starts (block and profile inherited, not pickled); the time is
    the parallel scoring of 4 x ``threads`` chunks, results gathered."""
    import multiprocessing

    n = len(block)
    out = np.empty(n, dtype=np.float32)
    step = max(1, -(-n // (4 * threads)))
    jobs = [(algo, a, min(n, a + step)) for a in range(0, n, step)]
    _SHARED.update(om=om, block=block)
    try:
        with multiprocessing.get_context("fork").Pool(threads) as pool:
            pool.map(_ready, range(threads), chunksize=1)          # workers up before timing
            t0 = time.perf_counter()
            for a, part in pool.imap_unordered(_filter_range, jobs):
                out[a:a + part.size] = part
            dt = time.perf_counter() - t0
    finally:
        _SHARED.clear()
    return out, dt


def kernels_for(M, hcap, lane=8):
    """(S, H) of every S-lane kernel that covers M with H <= hcap."""
    out = []
    for S in S_VALUES:
        if S > (32 // lane) * 32:
            continue
        H = -(-M // geometry(S, 32, lane)["P"])
        if H <= min(hcap, H_LIMIT):
            out.append((S, H))
    return out


def parse_variants(text):
    """``"LANE=16,simd=ptx,S=1/2/4;simd=swar"`` -> [(label, overrides, S list or None), ...].

    ``default`` or ``swar``/``ptx`` alone are the old simd names; values that look like ints
    become ints (PROF_LOCAL=0, PTX_SHFL=1 ...). Not template values: ``HMIN=n`` keeps only
    the kernels with H >= n (e.g. ``HMIN=25`` runs the Eq. 2-5 choice at Hmax 32 and the one
    with twice the H per M = 100 * 2^k); ``AUTO=1`` runs only the tuned choice of S and H;
    ``balance=0`` builds blocks without the row cap; ``split=0`` keeps long sequences whole
    for SSV, ``split=N`` cuts them into pieces of N residues (``engine.run_raw``).
    """
    out = []
    for spec in text.split(";"):
        spec = spec.strip()
        if not spec:
            continue
        if spec in ("default", "swar", "ptx"):
            spec = "" if spec == "default" else f"simd={spec}"
        kw, s_list = {}, None
        for item in filter(None, spec.split(",")):
            k, v = item.split("=")
            if k == "S":
                s_list = [int(x) for x in v.split("/")]
            else:
                kw[k] = int(v) if v.lstrip("-").isdigit() else v
        out.append((spec or "default", kw, s_list))
    return out


def bench(db, lengths, algos=("msv", "ssv"), device=None, hcap=64, repeat=3, threads=None,
          pyhmmer_n=20000, check_n=2000, simds=(None,), seed=7, log=print, s_list=None, variants=None):
    """Rows of GCUPS per (M, algo, kernel). ``variants`` (from :func:`parse_variants`) replaces
    ``simds``/``s_list``: each is a label, template overrides and an optional S list."""
    if variants is None:
        variants = [(simd or "default", {"simd": simd} if simd else {}, s_list) for simd in simds]
    from pyhmmer.easel import Alphabet
    from pyhmmer.plan7 import HMM

    threads = threads or os.cpu_count()
    rows = []
    rng = np.random.default_rng(seed)
    py_idx = np.sort(rng.choice(len(db), size=min(pyhmmer_n, len(db)), replace=False))
    chk_idx = py_idx[:min(check_n, py_idx.size)]
    block = digital_block(db, py_idx)
    py_res = int(db.lengths[py_idx].sum())
    res = db.total_residues
    for M in lengths:
        hmm = HMM.sample(Alphabet.amino(), M, seed + M)
        prof = E.profile_from_pyhmmer(hmm)
        for algo in algos:
            want, py_s = pyhmmer_filter(prof._om, block, algo, threads)
            py_gcups = M * py_res / py_s / 1e9
            rows.append(dict(M=M, algo=algo, kernel="pyhmmer", S=None, H=None, simd=f"{threads} processes",
                             seconds=py_s, gcups=py_gcups, residues=py_res, ok=True))
            log(f"M={M:5d} {algo} pyhmmer {threads} proc: {py_gcups:8.2f} GCUPS ({py_s:.3f} s, {py_res} res)")
            wmap = dict(zip(py_idx.tolist(), want))
            for label, vkw, vs_list in variants:
                blocks = None
                simd = label
                hmin = int(vkw.get("HMIN", 1))
                tkw = {k: v for k, v in vkw.items() if k not in ("HMIN", "AUTO", "balance", "split")}
                if vkw.get("AUTO"):      # only the tuned choice (S, H from choose_kernel)
                    from clalign.runtime import Runtime
                    simd = tkw.pop("simd", None)
                    v0 = E.choose_kernel(M, algo, Runtime.get(device).caps, dict(tkw), simd=simd)
                    if simd:
                        tkw["simd"] = simd
                    todo = [(v0["S"], v0["H"])]
                else:
                    todo = kernels_for(M, hcap, int(vkw.get("LANE", 8)))
                for S, H in todo:
                    if (vs_list and S not in vs_list) or H < hmin:
                        continue
                    kw = {**tkw, "S": S, "H": H}
                    if "balance" in vkw:
                        kw["balance"] = bool(vkw["balance"])
                    if "split" in vkw and algo == "ssv":
                        kw["split"] = vkw["split"] if vkw["split"] > 1 else bool(vkw["split"])
                    t0 = time.perf_counter()
                    last = {}

                    def launch(kw=kw):
                        r = E.run_raw(prof, db.residues, db.offsets, db.lengths, db.order, algo, device,
                                      repeat=1, blocks=last.get("blocks", blocks), **kw)
                        last.update(blocks=r.blocks, run=r, host=last.get("host", time.perf_counter() - t0))
                        return r, r.seconds

                    def verify(r):
                        raw, L = r.raw[chk_idx], db.lengths[chk_idx]
                        got = (R.msv_from_bytes(prof, raw & 0xFF, (raw >> 8) & 1, L) if algo == "msv"
                               else R.ssv_from_bytes(prof, raw, L))
                        return compare(got, np.array([wmap[int(i)] for i in chk_idx], np.float32),
                                       f"{algo} vs pyhmmer", chk_idx)

                    # checked against pyhmmer first; only a right kernel is timed (median of repeat)
                    m = verify_then_time(launch, verify, repeats=repeat)
                    if not m.ok:
                        log(f"M={M:5d} {algo} S={S:3d} H={H:3d} {simd or 'default'}: {m.status.upper()} {m.reason}")
                        rows.append(dict(M=M, algo=algo, kernel="slane", S=S, H=H, simd=simd, variant=label,
                                         seconds=None, gcups=None, ok=False, status=m.status, error=m.reason))
                        continue
                    r, host, ok = last["run"], last["host"], True
                    blocks = r.blocks
                    r.seconds = m.seconds
                    g = M * res / r.seconds / 1e9
                    v = r.values
                    rows.append(dict(M=M, algo=algo, kernel="slane", S=S, H=H, variant=label, LANE=v["LANE"],
                                     PROF_LOCAL=v["PROF_LOCAL"], RG=v["RG"],
                                     simd=(f"L{v['LANE']} " + v["SIMD"] + ("+s16" if v["PTX_S16X2"] else "")
                                           + ("+shfl" if v["PTX_SHFL"] else "") + ("+lprof" if v["PROF_LOCAL"] else "")
                                           + f" RG{v['RG']}"),
                                     WG_WAVES=r.values["WG_WAVES"], seconds=r.seconds, gcups=g, host_s=host,
                                     residues=res, ok=bool(ok), speedup=g / py_gcups))
                    log(f"M={M:5d} {algo} S={S:3d} H={H:3d} {rows[-1]['simd']:24s}: {g:9.2f} GCUPS "
                        f"({r.seconds * 1e3:8.2f} ms) x{g / py_gcups:6.1f} vs pyhmmer  {'ok' if ok else 'WRONG'}")
    return rows


def bench_striped(db, lengths, rounds=5, device=None, threads=None, log=print, seed=7):
    """The striped CPU kernels (kernels/hmm_striped.mako) against pyhmmer, in interleaved
    rounds (a shared machine's noise spread over both): per model length and filter, pyhmmer
    on one process and on ``threads`` processes, and our API call (``msv_scores``: SSV first,
    MSV where SSV has no result, as pyhmmer's msv_filter; ``ssv_scores``) with its kernel
    seconds (profiling events, the whole device). Every round's scores are checked against
    pyhmmer's. Rows hold the medians; ``per_core`` divides the device rate by its compute
    units, ``vs_1proc`` compares that with pyhmmer's single process."""
    from pyhmmer.easel import Alphabet
    from pyhmmer.plan7 import HMM

    from clalign.runtime import Runtime

    threads = threads or os.cpu_count()
    cus = Runtime.get(device).caps.compute_units
    block = digital_block(db, np.arange(len(db)))
    res = db.total_residues
    rows = []
    for M in lengths:
        prof = E.profile_from_pyhmmer(HMM.sample(Alphabet.amino(), M, seed + M))
        for algo in ("msv", "ssv"):
            t = {"pyhmmer_1": [], f"pyhmmer_{threads}": [], "striped": []}
            ok = True
            for _ in range(rounds):
                want, dt = pyhmmer_filter(prof._om, block, algo, 1)
                t["pyhmmer_1"].append(dt)
                t[f"pyhmmer_{threads}"].append(pyhmmer_filter(prof._om, block, algo, threads)[1])
                if algo == "msv":
                    got, run = E.msv_scores_run(prof, db, device, kernel="striped")
                else:
                    run = E.run_raw(prof, db.residues, db.offsets, db.lengths, db.order, "ssv", device,
                                    kernel="striped", cache=E.layout_cache(db))
                    got = R.ssv_from_bytes(prof, run.raw, db.lengths)
                ok &= bool(np.array_equal(got, want, equal_nan=True))
                t["striped"].append(run.seconds)
            g = {k: M * res / float(np.median(v)) / 1e9 for k, v in t.items()}
            row = dict(M=M, algo=algo, rounds=rounds, ok=ok, vec=run.values["VEC"], cus=cus,
                       gcups={k: round(v, 2) for k, v in g.items()}, per_core=round(g["striped"] / cus, 2),
                       vs_1proc=round(g["striped"] / cus / g["pyhmmer_1"], 2),
                       vs_all=round(g["striped"] / g[f"pyhmmer_{threads}"], 2))
            rows.append(row)
            log(f"M={M:5d} {algo} striped VEC={row['vec']}: {g['striped']:6.2f} GCUPS ({row['per_core']:.2f}/CU) | "
                f"pyhmmer 1 proc {g['pyhmmer_1']:6.2f}, {threads} proc {g[f'pyhmmer_{threads}']:6.2f} | "
                f"per core x{row['vs_1proc']:.2f}, all cores x{row['vs_all']:.2f} | {'ok' if ok else 'WRONG'}")
    return rows


def table(rows):
    out = ["| M | algo | kernel | S | H | simd | GCUPS | speed-up vs pyhmmer | check |",
           "|---:|---|---|---:|---:|---|---:|---:|---|"]
    for r in rows:
        g = "-" if r.get("gcups") is None else f"{r['gcups']:.1f}"
        sp = "" if r["kernel"] == "pyhmmer" or r.get("speedup") is None else f"{r['speedup']:.1f}x"
        v = r.get("variant")
        simd = r["simd"] + (f" [{v}]" if v and v != "default" else "")
        out.append(f"| {r['M']} | {r['algo']} | {r['kernel']} | {r['S'] or ''} | {r['H'] or ''} | {simd} "
                   f"| {g} | {sp} | {'ok' if r['ok'] else 'WRONG/FAILED'} |")
    return "\n".join(out)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, algo in zip(axes, ("msv", "ssv")):
        sel = [r for r in rows if r["algo"] == algo and r.get("gcups")]
        keys = sorted({(r["S"], r["simd"]) for r in sel if r["kernel"] == "slane"}, key=lambda k: (k[1], k[0]))
        for S, simd in keys:
            pts = sorted((r["M"], r["gcups"]) for r in sel if r["S"] == S and r["simd"] == simd)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"S={S} {simd}")
        pts = sorted((r["M"], r["gcups"]) for r in sel if r["kernel"] == "pyhmmer")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "k--", marker="x", label="pyhmmer")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("model length M")
        ax.set_ylabel("GCUPS")
        ax.set_title(algo.upper())
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20000, help="synthetic database sequences")
    ap.add_argument("--lengths", default="20,50,100,200,400,800,1600,2400")
    ap.add_argument("--algos", default="msv,ssv")
    ap.add_argument("--device", default=None)
    ap.add_argument("--hcap", type=int, default=64, help="skip kernels needing H above this")
    ap.add_argument("--S", default=None, help="comma list of S to run (default: all)")
    ap.add_argument("--simd", default="default", help="comma list: default, swar, ptx")
    ap.add_argument("--variants", default=None,
                    help='";"-separated override sets, e.g. "LANE=8,simd=swar,S=4/16;LANE=16,simd=ptx"')
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="pyhmmer threads (default: all cores)")
    ap.add_argument("--pyhmmer-n", type=int, default=20000)
    ap.add_argument("--striped-rounds", type=int, default=0,
                    help="instead of the S-lane sweep: the striped CPU kernels vs pyhmmer, this many rounds")
    ap.add_argument("--out", default="bench_msv")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    logf = open(os.path.join(a.out, "bench_msv.log"), "a")

    def log(msg):
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    t0 = time.perf_counter()
    db = make_db(a.n)
    log(f"database: {len(db)} sequences, {db.total_residues} residues ({time.perf_counter() - t0:.1f} s)")
    from clalign.runtime import Runtime
    rt = Runtime.get(a.device)
    log(f"device: {rt.label} | {rt.caps.platform} | host cores {os.cpu_count()}")
    if a.striped_rounds:
        rows = bench_striped(db, [int(x) for x in a.lengths.split(",")], a.striped_rounds, a.device, a.threads, log)
        with open(os.path.join(a.out, "bench_msv_striped.json"), "w") as f:
            json.dump({"device": rt.label, "argv": sys.argv, "load": os.getloadavg(), "rows": rows}, f, indent=1)
        return rows
    simds = tuple(None if s == "default" else s for s in a.simd.split(","))
    rows = bench(db, [int(x) for x in a.lengths.split(",")], a.algos.split(","), a.device, a.hcap, a.repeat,
                 a.threads, a.pyhmmer_n, simds=simds, log=log,
                 s_list=[int(x) for x in a.S.split(",")] if a.S else None,
                 variants=parse_variants(a.variants) if a.variants else None)
    write_results(os.path.join(a.out, "bench_msv.json"),
                  result_doc(rt.caps, " ".join(sys.argv), rows, label=rt.label, capabilities=rt.caps.as_dict()))
    md = table(rows)
    with open(os.path.join(a.out, "bench_msv.md"), "w") as f:
        f.write(md + "\n")
    log(md)
    try:
        plot(rows, os.path.join(a.out, "bench_msv.png"))
    except ImportError as exc:
        log(f"no plot: {exc}")
    return rows


if __name__ == "__main__":
    main()
