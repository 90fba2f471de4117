#!/usr/bin/env python3
"""One device command: ``clalign hmmsearch`` end to end against ``pyhmmer.hmmsearch(cpus=N)``
(and optionally ``hmmsearch --cpu N``), all as whole processes on the same host, same inputs.

Database: ``gen_protein_db.py -n N --seed 1`` plus the bundled proteome (570,000 + 2,100 =
572,100 proteins by default), also prepared once with ``clalign makedb``. Model sets: the 14
bundled HMMs and ``--pfam N`` Pfam-like models from ``gen_pfamlike_hmms.py`` (seed 1). Per set,
in rounds: clalign from the FASTA, clalign from the prepared database, pyhmmer from the FASTA
(``tools/pyhmmer_hmmsearch.py``); the first clalign run of the command is *cold* (kernel
builds; numba's cache of the host loops is warmed before, on its own line, unless
``--no-warm``). Medians,
ratios (pyhmmer / clalign), whether the tables are identical (comment lines aside), clalign's
summary lines (stage times, kernel TCUPS) and one cProfile of clalign (top 25 by cumulative
time) go to ``$OUT/device_hmmsearch.txt``. Stops starting new work after ``--budget-s`` and
kills a run still going at ``--stop-s``. ``--base DIR``: another source tree (its ``clalign``
package) whose clalign runs go beside this tree's, labelled ``base_<kind>``, against the same
pyhmmer run (on the Pfam-like set: this tree cold, base, pyhmmer, this tree, base).
``--warm-kernels``: the bundled set's programs built first, untimed, so its runs are all warm.

    source .whl/device-env.sh && python3 -m tools.device_hmmsearch --out $OUT --pfam 300
"""
import argparse
import gzip
import io
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

from tools.results import peer_row, save  # noqa: E402  (the tools' one results writer)


#: Compiles (once per installation: numba's cache) every host loop a search runs, for the array
#: types of a FASTA file and of a prepared database, so that the first timed run is not a
#: compiler benchmark; its time is logged on its own line.
_WARM = """
import sys, numpy as np, pyhmmer
import clalign.data.fasta as F
from clalign.data import Database, makedb
from clalign.hmm import layout, targets
F.COMPILED_MIN_BYTES = F.COMPILED_MIN_CORES = targets.COMPILED_MIN_RESIDUES = targets.COMPILED_LOADED_MIN = 0
fa = 'data/proteome.faa.gz'
for db in (Database.from_fasta(fa), makedb(fa, sys.argv[1], force=True, quiet=True)):
    layout.build_blocks(db.residues, db.offsets, db.lengths, db.order, 32, 2, 4, 4000)
    targets.block(targets.Targets(db, db.stops), np.arange(8), pyhmmer.easel.Alphabet.amino(), False)
from clalign.hmm.hmmfile import read_hmms
from clalign.hmm.profile import EASEL_OF_CODE
from clalign.hmm.vit_bias import filter_scores
from clalign.hmm.vit_reference import build_vit_profile
h = next(iter(read_hmms('data/hmms.hmm')))
build_vit_profile(h)
filter_scores(h.M, h.compo, db.residues, db.offsets[:-1][:64], db.offsets[1:][:64], db.stops[:64], EASEL_OF_CODE)
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "device_hmmsearch_out"))
    ap.add_argument("--n", type=int, default=570000)
    ap.add_argument("--work", default="/tmp/dhs")
    ap.add_argument("--cpu", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--pfam", type=int, default=0, help="Pfam-like models for the second set (0: none)")
    ap.add_argument("--pfam-rounds", type=int, default=1, help="clalign runs from the FASTA on the Pfam-like "
                    "set (the first is cold: its kernel builds); pyhmmer runs once, after the first")
    ap.add_argument("--pfam-db", action="store_true", help="also clalign from the prepared database on that set")
    ap.add_argument("--vit-both", action="store_true",
                    help="bundled set: also clalign from the FASTA with CLALIGN_HMM_VITERBI=pyhmmer (pyhmmer's "
                         "Viterbi filter; by default a GPU search of that size runs the device's)")
    ap.add_argument("--vit-device", action="store_true",
                    help="bundled set: also clalign from the FASTA with CLALIGN_HMM_VITERBI=device (the device's "
                         "bias, Viterbi and Forward filters, whatever the search's size)")
    ap.add_argument("--hmmsearch", action="store_true", help="also HMMER's hmmsearch on the bundled set")
    ap.add_argument("--profile", action="store_true", help="one cProfile run of clalign (bundled set, FASTA)")
    ap.add_argument("--budget-s", type=float, default=540.0)
    ap.add_argument("--stop-s", type=float, default=0.0, help="kill a run still going at this time (0: never)")
    ap.add_argument("--warm-kernels", action="store_true",
                    help="build the bundled set's kernels first (one untimed clalign run, device Viterbi forced)")
    ap.add_argument("--base", default=None, help="another tree's clalign, run beside this one (base_<kind>)")
    ap.add_argument("--no-warm", action="store_true",
                    help="leave numba's cache cold (the first clalign run then compiles the host loops)")
    a = ap.parse_args(argv)
    t_start = time.perf_counter()
    os.makedirs(a.out, exist_ok=True)
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    report = open(os.path.join(a.out, "device_hmmsearch.txt"), "a")

    def log(msg):
        msg = f"[{time.perf_counter() - t_start:6.1f}s] {msg}"
        print(msg, flush=True)
        report.write(msg + "\n")
        report.flush()

    base_env = None
    if a.base:
        a.base = os.path.abspath(a.base)
        base_env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [a.base] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.abspath(p) != ROOT])}

    def run(cmd, label, env=None, cwd=ROOT):
        t0 = time.perf_counter()
        left = a.stop_s - (t0 - t_start) if a.stop_s else None
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=left)
        except subprocess.TimeoutExpired:
            log(f"{label}: KILLED at --stop-s {a.stop_s:.0f} s after {time.perf_counter() - t0:.1f} s")
            return None, ""
        dt = time.perf_counter() - t0
        last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
        if p.returncode != 0:
            log(f"{label}: FAILED rc={p.returncode}: {p.stderr[-1500:]}")
            return None, last
        log(f"{label}: {dt:.2f} s | {last[:600]}")
        return dt, last

    def rows(path):
        with open(path) as fh:
            return [ln.rstrip("\n") for ln in fh if not ln.startswith("#")]

    log(f"date {time.strftime('%Y-%m-%d %H:%M')} UTC, host {os.uname().nodename}, {os.cpu_count()} cores, argv {sys.argv}")
    fa, db = os.path.join(a.work, "db.fa"), os.path.join(a.work, "db")
    subprocess.run([sys.executable, "-m", "tools.gen_protein_db", "-n", str(a.n), "--seed", "1", "-o",
                    os.path.abspath(fa)], check=True, capture_output=True, cwd=ROOT)
    with gzip.open(os.path.join(ROOT, "data", "proteome.faa.gz"), "rt") as src, open(fa, "a") as dst:
        dst.write(src.read())
    shutil.rmtree(db, ignore_errors=True)
    run([sys.executable, "-m", "clalign", "makedb", "-q", fa, db], "clalign makedb")
    if not a.no_warm:
        run([sys.executable, "-c", _WARM, os.path.join(a.work, "warm")], "warm-up: numba's cache of the compiled host loops")
        if a.base:
            run([sys.executable, "-c", _WARM, os.path.join(a.work, "warm")], "warm-up (base tree)", base_env, a.base)
    sets = [("bundled14", os.path.join(ROOT, "data", "hmms.hmm"), a.rounds)]
    if a.warm_kernels:
        run([sys.executable, "-m", "clalign", "hmmsearch", "--force", "--cpu", str(a.cpu), "-o", os.devnull, sets[0][1], fa],
            "warm-up: the bundled set's MSV and Viterbi programs", {**os.environ, "CLALIGN_HMM_VITERBI": "device"})
    if a.pfam:
        pf = os.path.join(a.work, "pfamlike.hmm")
        subprocess.run([sys.executable, "-m", "tools.gen_pfamlike_hmms", "-n", str(a.pfam), "--seed", "1",
                        "-o", os.path.abspath(pf)], check=True, cwd=ROOT)
        sets.append((f"pfamlike{a.pfam}", pf, a.pfam_rounds))
    cl = [sys.executable, "-m", "clalign", "hmmsearch", "--force", "--cpu", str(a.cpu), "-o", os.devnull]
    results = []
    for name, hmm, rounds in sets:
        kinds = ["clalign_fasta", "clalign_db", "pyhmmer_fasta"]
        if name == "bundled14" and a.vit_both:
            kinds.insert(1, "clalign_fasta_vitpyhmmer")
        if name == "bundled14" and a.vit_device:
            kinds.insert(1, "clalign_fasta_vitdevice")
        if a.base:
            kinds[-1:-1] = ["base_" + k for k in kinds[:-1]]
        times = {k: [] for k in kinds}
        tbl = {k: os.path.join(a.work, f"{name}.{k}.tbl") for k in times}
        cmds = {"clalign_fasta": cl + ["--tblout", tbl["clalign_fasta"], hmm, fa],
                "clalign_fasta_vitpyhmmer": cl + ["--tblout", tbl.get("clalign_fasta_vitpyhmmer", ""), hmm, fa],
                "clalign_fasta_vitdevice": cl + ["--tblout", tbl.get("clalign_fasta_vitdevice", ""), hmm, fa],
                "clalign_db": cl + ["--tblout", tbl["clalign_db"], hmm, db],
                "pyhmmer_fasta": [sys.executable, "-m", "tools.pyhmmer_hmmsearch", hmm, fa, "--cpus",
                                  str(a.cpu), "--tblout", tbl["pyhmmer_fasta"]]}
        for k in [k for k in kinds if k.startswith("base_")]:
            cmds[k] = [tbl[k] if x == tbl[k[5:]] else x for x in cmds[k[5:]]]
        if name == "bundled14":
            jobs = [(r, k) for r in range(rounds) for k in kinds]
        else:        # clalign cold, pyhmmer once (the long run), then clalign's warm rounds
            mine = ["clalign_fasta"] + ["clalign_db"] * a.pfam_db
            both = mine + ["base_" + k for k in mine] * bool(a.base)
            jobs = [(0, k) for k in both] + [(0, "pyhmmer_fasta")]
            jobs += [(r, k) for r in range(1, rounds) for k in both]
        for r, k in jobs:
            if time.perf_counter() - t_start > a.budget_s:
                log(f"budget spent: skipping {name} {k} round {r}")
                continue
            env = base_env if k.startswith("base_") else os.environ
            if k.endswith(("_vitpyhmmer", "_vitdevice")):
                env = {**env, "CLALIGN_HMM_VITERBI": "pyhmmer" if k.endswith("_vitpyhmmer") else "device"}
            dt, _ = run(cmds[k], f"{name} {k} round {r}", env, a.base if k.startswith("base_") else ROOT)
            if dt is not None:
                times[k].append(dt)
        med = {k: statistics.median(v) for k, v in times.items() if v}
        ref = rows(tbl["pyhmmer_fasta"]) if os.path.exists(tbl["pyhmmer_fasta"]) else None
        for k in [k for k in kinds if k != "pyhmmer_fasta"]:
            if k in med and "pyhmmer_fasta" in med:
                same = ref is not None and os.path.exists(tbl[k]) and rows(tbl[k]) == ref
                if not same and ref is not None and os.path.exists(tbl[k]):
                    import difflib

                    diff = list(difflib.unified_diff(ref, rows(tbl[k]), "pyhmmer", k, lineterm="", n=0))
                    with open(os.path.join(a.out, f"diff_{name}_{k}.txt"), "w") as fh:
                        fh.write("\n".join(diff[:200]) + "\n")
                best = f", best {min(times[k]):.2f} s ({med['pyhmmer_fasta'] / min(times[k]):.2f}x)" if len(times[k]) > 1 else ""
                log(f"RESULT {name} {k}: median {med[k]:.2f} s{best} (runs {times[k]}) vs pyhmmer {med['pyhmmer_fasta']:.2f} s "
                    f"(runs {times['pyhmmer_fasta']}): pyhmmer/clalign {med['pyhmmer_fasta'] / med[k]:.2f}x; "
                    f"tblout identical to pyhmmer's: {same} ({len(rows(tbl[k]))} rows)")
                results.append(peer_row("hmmsearch", f"{name}:{k}", round(med[k], 3), "pyhmmer",
                                        round(med["pyhmmer_fasta"], 3), same, samples=times[k],
                                        peer_samples=times["pyhmmer_fasta"], cpu=a.cpu))
        if name == "bundled14" and a.hmmsearch and time.perf_counter() - t_start < a.budget_s:
            ht = os.path.join(a.work, "hmmsearch.tbl")
            dt, _ = run([shutil.which("hmmsearch") or "hmmsearch", "--cpu", str(a.cpu), "--tblout", ht, "-o", os.devnull,
                         hmm, fa], "bundled14 hmmsearch")
            if dt is not None and ref is not None:
                log(f"RESULT bundled14 hmmsearch --cpu {a.cpu}: {dt:.2f} s; tblout identical to pyhmmer's: {rows(ht) == ref}")
    if a.profile and time.perf_counter() - t_start < a.budget_s:
        prof = os.path.join(a.work, "clalign.prof")
        run([sys.executable, "-m", "cProfile", "-o", prof] + cl[1:] + ["--tblout", os.devnull, sets[0][1], fa],
            "profile bundled14 clalign_fasta")
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(25)
        report.write(buf.getvalue())
    save(os.path.join(a.out, "device_hmmsearch.json"), results, n=a.n, pfam=a.pfam)
    log("done")


if __name__ == "__main__":
    main()
