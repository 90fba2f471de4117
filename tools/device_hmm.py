#!/usr/bin/env python3
"""One command for the GPU machine: MSV/SSV exactness on the real proteome, then the S-lane sweep.

1. Exactness: pyhmmer's test proteome (2,100 proteins) x every protein model of pyhmmer's
   test HMM files (14), MSV and SSV, for the auto-selected kernel and for every S (one H per
   S covering all models with ceil(M/P) <= --exact-hcap), with the device's default SIMD
   variant (PTX + shfl.sync on NVIDIA) and with portable SWAR + local memory; compared with
   pyhmmer's msv_filter / ssv_filter as floats (+inf and None/NaN included).
2. Sweep: ``tools/bench_msv.py`` (every S-lane kernel x model lengths, pyhmmer on all host
   cores in the same run), stopping early when ``--budget-s`` is spent.

    source .whl/device-env.sh && python3 -m tools.device_hmm --out $OUT
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

import numpy as np

from clalign.data import as_database
from clalign.hmm import engine as E
from clalign.hmm import reference as R
from clalign.hmm.params import S_VALUES, geometry
from clalign.runtime.harness import result_doc, write_results

try:                                   # python3 -m tools.device_hmm (tools/ as a package)
    from tools import bench_msv
except ImportError:                    # python3 -m tools.device_hmm (tools/ is sys.path[0])
    import bench_msv



def proteome_truth(hmm, block, threads):
    prof = E.profile_from_pyhmmer(hmm)
    m, _ = bench_msv.pyhmmer_filter(prof._om, block, "msv", threads)
    s, _ = bench_msv.pyhmmer_filter(prof._om, block, "ssv", threads)
    return prof, m, s


_CACHE = {}


def exactness(device, hcap, threads, log, configs=(("default", {}), ("swar", {"simd": "swar"})), every_s=True):
    """Proteome x protein models for each (label, overrides) of ``configs``."""
    import pyhmmer
    from pyhmmer.plan7 import HMMFile

    from clalign.runtime import Runtime

    data = os.path.join(os.path.dirname(pyhmmer.__file__), "tests", "data")
    db = as_database(os.path.join(data, "seqs", "938293.PRJEB85.HG003687.faa"))
    block = bench_msv.digital_block(db, np.arange(len(db)))
    models = []
    for fn in sorted(glob.glob(os.path.join(data, "hmms", "txt", "*.hmm"))):
        with HMMFile(fn) as f:
            for i, hmm in enumerate(f):
                if hmm.alphabet.K == 20:
                    models.append((f"{os.path.basename(fn)}#{i}", hmm))
    log(f"exactness: {len(db)} proteins ({db.total_residues} residues) x {len(models)} protein models")
    if "truth" not in _CACHE:
        _CACHE["truth"] = [(name, *proteome_truth(hmm, block, threads)) for name, hmm in models]
    truth = _CACHE["truth"]
    res = (db.residues, db.offsets, db.lengths, db.order)
    results = []

    def check(prof, name, algo, want, **kw):
        t0 = time.perf_counter()
        try:
            r = E.run_raw(prof, *res, algo, device, **kw)
        except Exception as exc:
            results.append(dict(model=name, algo=algo, ok=False, error=str(exc)[:400], **kw))
            log(f"  {name} {algo} {kw}: FAILED {str(exc)[:400]}")
            return
        got = (R.msv_from_bytes(prof, r.raw & 0xFF, (r.raw >> 8) & 1, db.lengths) if algo == "msv"
               else R.ssv_from_bytes(prof, r.raw, db.lengths))
        ok = np.array_equal(got, want, equal_nan=True)
        v = r.values
        results.append(dict(model=name, M=prof.M, algo=algo, S=v["S"], H=v["H"], SIMD=v["SIMD"],
                            PTX_SHFL=v["PTX_SHFL"], LANE=v["LANE"], PROF_LOCAL=v["PROF_LOCAL"], RG=v["RG"],
                            PTX_S16X2=v["PTX_S16X2"], ok=bool(ok), n_bad=int((~((got == want) | (np.isnan(got) & np.isnan(want)))).sum()),
                            n_inf=int(np.isinf(want).sum()), n_none=int(np.isnan(want).sum()),
                            wall_s=time.perf_counter() - t0))
        if not ok:
            log(f"  MISMATCH {name} {algo} LANE={v['LANE']} S={v['S']} H={v['H']} RG={v['RG']} {v['SIMD']} shfl={v['PTX_SHFL']} "
                f"lprof={v['PROF_LOCAL']}: "
                f"{results[-1]['n_bad']} sequences differ")

    for label, base_kw in configs:
        for name, prof, want_m, want_s in truth:                      # auto-selected S and H
            check(prof, name, "msv", want_m, **base_kw)
            check(prof, name, "ssv", want_s, **base_kw)
        if every_s:
            lane = E.choose_kernel(truth[0][1].M, "msv", Runtime.get(device).caps,
                                   {k: v for k, v in base_kw.items() if k != "simd"},
                                   simd=base_kw.get("simd"))["LANE"]
            for S in S_VALUES:                                        # every S, one H per S
                if S > (32 // lane) * 32:
                    continue
                P = geometry(S, 32, lane)["P"]
                sel = [t for t in truth if -(-t[1].M // P) <= hcap]
                if not sel:
                    continue
                H = max(-(-t[1].M // P) for t in sel)
                for name, prof, want_m, want_s in sel:
                    check(prof, name, "msv", want_m, S=S, H=H, **base_kw)
                    check(prof, name, "ssv", want_s, S=S, H=H, **base_kw)
        log(f"  {label}: {sum(r['ok'] for r in results)}/{len(results)} checks exact so far")
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "device_hmm_out"))
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--exact-hcap", type=int, default=128)
    ap.add_argument("--skip-exact", action="store_true")
    ap.add_argument("--exact", default="auto:;L8:LANE=8;L16:LANE=16;L16g:LANE=16,PROF_LOCAL=0",
                    help='";"-separated label:overrides for the auto-S exactness checks')
    ap.add_argument("--exact-every-s", default="L16",
                    help="comma list of --exact labels that also run every S (one H per S)")
    ap.add_argument("--variants", default=None,
                    help='sweep override sets (tools/bench_msv.py --variants); replaces --simd/--S')
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--lengths", default="20,50,100,200,400,800,1600,2400")
    ap.add_argument("--hcap", type=int, default=48)
    ap.add_argument("--simd", default="default,swar")
    ap.add_argument("--S", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pyhmmer-n", type=int, default=20000)
    ap.add_argument("--budget-s", type=float, default=480.0, help="stop starting new sweep lengths after this")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    t_start = time.perf_counter()
    logf = open(os.path.join(a.out, "device_hmm.log"), "a")

    def log(msg):
        msg = f"[{time.perf_counter() - t_start:7.1f}s] {msg}"
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    from clalign.runtime import Runtime
    rt = Runtime.get(a.device)
    log(f"device {rt.label}: {json.dumps(rt.caps.as_dict())}")
    log(f"date {time.strftime('%Y-%m-%d %H:%M')} UTC, argv {sys.argv}")
    summary = {"device": rt.label, "caps": rt.caps.as_dict(), "argv": sys.argv}
    if not a.skip_exact:
        ex = []
        every = set(a.exact_every_s.split(","))
        for spec in a.exact.split(";"):
            label, _, kv = spec.partition(":")
            kw = {k: (int(v) if v.lstrip("-").isdigit() else v)
                  for k, v in (item.split("=") for item in filter(None, kv.split(",")))}
            ex += exactness(a.device, a.exact_hcap, a.threads, log, [(label, kw)], every_s=label in every)
        summary["exactness"] = ex
        log(f"exactness: {sum(r['ok'] for r in ex)}/{len(ex)} exact; build seconds so far {rt.build_seconds:.1f}")
        with open(os.path.join(a.out, "exactness.json"), "w") as f:
            json.dump(ex, f, indent=1)
    db = bench_msv.make_db(a.n)
    log(f"sweep database: {len(db)} sequences, {db.total_residues} residues")
    simds = tuple(None if s == "default" else s for s in a.simd.split(","))
    rows = []
    for M in [int(x) for x in a.lengths.split(",")]:
        if time.perf_counter() - t_start > a.budget_s:
            log(f"budget spent: skipping M={M} and longer")
            break
        rows += bench_msv.bench(db, [M], device=a.device, hcap=a.hcap, repeat=a.repeat, threads=a.threads,
                                pyhmmer_n=a.pyhmmer_n, simds=simds, log=log,
                                s_list=[int(x) for x in a.S.split(",")] if a.S else None,
                                variants=bench_msv.parse_variants(a.variants) if a.variants else None)
        write_results(os.path.join(a.out, "sweep.json"), result_doc(rt.caps, " ".join(sys.argv), rows))
    summary["sweep"] = rows
    md = bench_msv.table(rows)
    with open(os.path.join(a.out, "sweep.md"), "w") as f:
        f.write(md + "\n")
    log("\n" + md)
    try:
        bench_msv.plot(rows, os.path.join(a.out, "sweep.png"))
    except Exception as exc:
        log(f"no plot: {exc}")
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log(f"done; build seconds {rt.build_seconds:.1f}")


if __name__ == "__main__":
    main()
