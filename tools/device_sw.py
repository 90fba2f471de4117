#!/usr/bin/env python3
"""Device check and timing of every Smith-Waterman kernel variant, in one command.

    source .whl/device-env.sh && python3 tools/device_sw.py --out $OUT

1. prints the OpenCL devices (``clalign devices``);
2. generates the benchmark database (``tools/gen_protein_db.py -n 570000 --seed 1``);
3. checks each variant on the device: exact agreement with the numpy Gotoh reference (and
   parasail's 32-bit SW when installed) on a sample of subjects plus an overflow set whose
   scores exceed 8 and 16 bits, and agreement of the full score vector with the 32-bit variant;
4. times each variant per query (OpenCL profiling events for kernel time; wall time of the
   whole device round trip incl. rescoring passes and score read-back) and reports GCUPS
   (query length x database residues / seconds), per query and overall.

Writes ``sw_device.json`` and ``sw_device.md`` to ``--out``. Queries: the 20 CUDASW++ queries
(``--queries``, default ``.sw_device/cudasw_queries.fasta`` or ``../shared/data/...``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clalign.data import PROTEIN, Database, get_matrix, read_fasta  # noqa: E402
from clalign.sw.engine import SWEngine  # noqa: E402
from clalign.sw.reference import sw_score  # noqa: E402

# name -> overrides; the first is the tuned default for the device (no override).
VARIANTS = [
    ("tuned", {}),
    ("w16-pairs-r32", dict(WIDTH=16, PROFILE="pairs", ROWS=32, WORDS=1)),
    ("w16-plain-r32", dict(WIDTH=16, PROFILE="plain", ROWS=32, WORDS=1)),
    ("w16-pairs-r16", dict(WIDTH=16, PROFILE="pairs", ROWS=16, WORDS=1)),
    ("w16-pairs-r64", dict(WIDTH=16, PROFILE="pairs", ROWS=64, WORDS=1)),
    ("w16-pairs-r32-x2", dict(WIDTH=16, PROFILE="pairs", ROWS=32, WORDS=2)),
    ("w16-pairs-r32-static", dict(WIDTH=16, PROFILE="pairs", ROWS=32, SCHEDULE="static")),
    ("w16-pairs-r32-wg64", dict(WIDTH=16, PROFILE="pairs", ROWS=32, WG=64)),
    ("w16-pairs-r32-wg256", dict(WIDTH=16, PROFILE="pairs", ROWS=32, WG=256)),
    ("w16-pairs-r32-swar", dict(WIDTH=16, PROFILE="pairs", ROWS=32, SIMD="swar")),
    ("w8-plain-r32", dict(WIDTH=8, PROFILE="plain", ROWS=32)),
    ("w8-pairs-r32", dict(WIDTH=8, PROFILE="pairs", ROWS=32)),
    ("w32-r32", dict(WIDTH=32, ROWS=32)),
    ("w16-plain-r64", dict(WIDTH=16, PROFILE="plain", ROWS=64, WORDS=1)),
    ("w16-plain-r48", dict(WIDTH=16, PROFILE="plain", ROWS=48, WORDS=1)),
    ("w16-plain-r64-wg256", dict(WIDTH=16, PROFILE="plain", ROWS=64, WG=256)),
    ("w32-r64", dict(WIDTH=32, ROWS=64)),
    ("w16-plain-r48-x2", dict(WIDTH=16, PROFILE="plain", ROWS=48, WORDS=2)),
    ("w16-plain-r48-wg64", dict(WIDTH=16, PROFILE="plain", ROWS=48, WG=64)),
    ("w16-plain-r48-wg256", dict(WIDTH=16, PROFILE="plain", ROWS=48, WG=256)),
    ("w32-r48", dict(WIDTH=32, ROWS=48)),
    ("w16-plain-r32-x2", dict(WIDTH=16, PROFILE="plain", ROWS=32, WORDS=2)),
    ("w16-plain-r32-x2-wg256", dict(WIDTH=16, PROFILE="plain", ROWS=32, WORDS=2, WG=256)),
    ("w16-plain-r64-wg256", dict(WIDTH=16, PROFILE="plain", ROWS=64, WG=256)),
    ("w32-r48-wg256", dict(WIDTH=32, ROWS=48, WG=256)),
    ("w32-r64-wg256", dict(WIDTH=32, ROWS=64, WG=256)),
    ("w32-r32-x2", dict(WIDTH=32, ROWS=32, WORDS=2)),
    ("w16-plain-r48-wg512", dict(WIDTH=16, PROFILE="plain", ROWS=48, WG=512)),
    ("w16-plain-r64-wg512", dict(WIDTH=16, PROFILE="plain", ROWS=64, WG=512)),
    ("w32-r64-wg64", dict(WIDTH=32, ROWS=64, WG=64)),
    ("w16-plain-r32-wg256", dict(WIDTH=16, PROFILE="plain", ROWS=32, WG=256)),
    ("w16-r48-wg256-u1", dict(WIDTH=16, PROFILE="plain", ROWS=48, WG=256, UNROLL=1)),
    ("w16-r48-wg256-u4", dict(WIDTH=16, PROFILE="plain", ROWS=48, WG=256, UNROLL=4)),
    ("w16-r48-wg128-u4", dict(WIDTH=16, PROFILE="plain", ROWS=48, WG=128, UNROLL=4)),
    ("w16-r32-wg256-u4", dict(WIDTH=16, PROFILE="plain", ROWS=32, WG=256, UNROLL=4)),
    ("w16-r64-wg128-u4", dict(WIDTH=16, PROFILE="plain", ROWS=64, WG=128, UNROLL=4)),
    ("w32-r64-u4", dict(WIDTH=32, ROWS=64, WG=128, UNROLL=4)),
    ("w32-r64-u1", dict(WIDTH=32, ROWS=64, WG=128, UNROLL=1)),
]


def log(*a):
    print(*a, flush=True)


def overflow_set(rng):
    """Subjects and a query whose scores need 16 and 32 bits (plus ordinary ones)."""
    letters = np.array(list("ACDEFGHIKLMNPQRSTVWY"))
    base = "".join(rng.choice(letters, 1500))
    query = "W" * 3100 + base
    subs = ["W" * 3100, "W" * 40, "W" * 700, base, base[:300] + "W" * 2000,
            "".join(rng.choice(letters, 4000)), "A", "W" * 3101 + base[::-1]]
    subs += ["".join(rng.choice(letters, int(n))) for n in rng.integers(1, 900, 60)]
    return query, subs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("-n", type=int, default=570000)
    ap.add_argument("--db", default="/tmp/sw_bench_db.fa")
    ap.add_argument("--queries", default=None)
    ap.add_argument("--variants", default="all", help="comma-separated names or 'all'")
    ap.add_argument("--sweep-queries", default="P02232,P07327,P01008,P21177,P27895,P19096,Q9UKN1",
                    help="accessions timed for every variant; the full 20 are timed for --full")
    ap.add_argument("--full", default="tuned", help="variants timed on all 20 queries")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--device", default=None)
    ap.add_argument("--budget", type=float, default=480, help="seconds; later variants are skipped past it")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"date": "2026-11-22", "command": " ".join(sys.argv), "variants": {}}

    from clalign.runtime.cli import devices
    try:
        devices.main([], standalone_mode=False)
    except SystemExit:
        pass

    qpath = args.queries
    for cand in (ROOT / "tests/data/cudasw/cudasw_queries.fasta", ROOT / ".sw_device/cudasw_queries.fasta", ROOT.parent / "shared/data/cudasw_queries.fasta"):
        if qpath is None and cand.exists():
            qpath = str(cand)
    queries = [(r.id, r.sequence) for r in read_fasta(qpath)]
    short = {}
    for qid, seq in queries:
        acc = [x for x in qid.replace("|", " ").split() if x[:1] in "PQ" and x[1:2].isdigit()]
        short[qid] = acc[0].split(".")[0] if acc else qid
    log(f"queries: {len(queries)} from {qpath}, lengths {[len(s) for _, s in queries]}")

    if not os.path.exists(args.db):
        t = time.time()
        subprocess.run([sys.executable, str(ROOT / "tools/gen_protein_db.py"), "-n", str(args.n), "--seed", "1",
                        "-o", args.db], check=True)
        log(f"generated {args.db} in {time.time() - t:.1f} s")
    t = time.time()
    db = Database.from_fasta(args.db)
    R = db.total_residues
    log(f"database: {len(db)} sequences, {R} residues, max length {int(db.lengths.max())}, "
        f"read in {time.time() - t:.1f} s")
    report["database"] = {"n": len(db), "residues": int(R), "max_length": int(db.lengths.max())}

    rng = np.random.default_rng(7)
    m = get_matrix("BLOSUM62")
    sample = np.unique(np.concatenate([rng.choice(len(db), 300, replace=False), db.order[-3:]]))
    check_q = [queries[0], queries[9]]
    ref = {}
    t = time.time()
    for qid, seq in check_q:
        qc = PROTEIN.encode(seq)
        ref[qid] = np.array([sw_score(qc, db.sequence(int(i)), m.scores, 11, 1) for i in sample])
    log(f"numpy reference on {len(sample)} subjects x {len(check_q)} queries in {time.time() - t:.1f} s")
    try:
        import parasail

        psample = rng.choice(len(db), 3000, replace=False)
        pref = {}
        for qid, seq in check_q:
            pref[qid] = np.array([parasail.sw_striped_32(seq, PROTEIN.decode(db.sequence(int(i))), 12, 1,
                                                         parasail.blosum62).score for i in psample])
        log(f"parasail reference on {len(psample)} subjects")
    except ImportError:
        pref = None
        log("parasail not installed: numpy reference only")
    oq, osubs = overflow_set(rng)
    odb = Database.from_sequences(osubs)
    oqc = PROTEIN.encode(oq)
    oref = np.array([sw_score(oqc, odb.sequence(i), m.scores, 11, 1) for i in range(len(odb))])
    log(f"overflow set: max score {oref.max()}, {int((oref > 32767).sum())} above 16 bits")

    names = [n for n, _ in VARIANTS] if args.variants == "all" else args.variants.split(",")
    full_names = set(args.full.split(","))
    sweep = [q for q in queries if short[q[0]] in set(args.sweep_queries.split(","))]
    base_scores = {}
    t_start = time.time()
    for name in names:
        ov = dict(VARIANTS)[name]
        if time.time() - t_start > args.budget:
            log(f"{name}: skipped (time budget)")
            continue
        res = {"overrides": ov}
        try:
            eng = SWEngine("BLOSUM62", 11, 1, args.device, **ov)
            v = eng.values(eng.first_width, eng.profile_layout(eng.first_width, 1000), eng.schedule(db.lengths))
            res["values"] = {k: v[k] for k in v}
            ok = True
            for qid, seq in check_q:
                sc, _ = eng.search([(qid, PROTEIN.encode(seq))], db, progress=False)
                sc = sc[0]
                if not np.array_equal(sc[sample], ref[qid]):
                    ok = False
                    log(f"  {name}: MISMATCH vs numpy on {qid}")
                if pref is not None and not np.array_equal(sc[psample], pref[qid]):
                    ok = False
                    log(f"  {name}: MISMATCH vs parasail on {qid}")
                if qid in base_scores and not np.array_equal(sc, base_scores[qid]):
                    ok = False
                    log(f"  {name}: full score vector differs from the first variant on {qid}")
                base_scores.setdefault(qid, sc)
            osc, _ = eng.search([("ovf", oqc)], odb, progress=False)
            if not np.array_equal(osc[0], oref):
                ok = False
                log(f"  {name}: MISMATCH on the overflow set")
            res["correct"] = ok
            tq = queries if name in full_names else sweep
            rows = []
            for qid, seq in tq:
                qc = PROTEIN.encode(seq)
                walls, kerns = [], []
                for _ in range(args.repeat):
                    k0 = eng.kernel_seconds
                    _, secs = eng.search([(qid, qc)], db, progress=False)
                    walls.append(secs[0])
                    kerns.append(eng.kernel_seconds - k0)
                w, k = float(np.median(walls)), float(np.median(kerns))
                rows.append({"query": short[qid], "qlen": len(seq), "wall_s": w, "kernel_s": k,
                             "gcups_wall": len(seq) * R / w / 1e9, "gcups_kernel": len(seq) * R / k / 1e9,
                             "passes": eng.last_passes})
                log(f"  {name:24s} {short[qid]:8s} {len(seq):5d} aa  wall {w * 1e3:8.1f} ms "
                    f"{rows[-1]['gcups_wall']:8.1f} GCUPS  kernel {rows[-1]['gcups_kernel']:8.1f} GCUPS "
                    f"passes {eng.last_passes}")
            cells = sum(r["qlen"] for r in rows) * R
            res["per_query"] = rows
            res["overall_gcups_wall"] = cells / sum(r["wall_s"] for r in rows) / 1e9
            res["overall_gcups_kernel"] = cells / sum(r["kernel_s"] for r in rows) / 1e9
            res["queries_timed"] = len(rows)
            log(f"{name}: correct={ok} overall {res['overall_gcups_wall']:.1f} GCUPS wall, "
                f"{res['overall_gcups_kernel']:.1f} GCUPS kernel over {len(rows)} queries; values {res['values']}")
        except Exception as exc:  # report and go on to the next variant
            res["error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
            log(f"{name}: ERROR {res['error']}")
        report["variants"][name] = res
        (out / "sw_device.json").write_text(json.dumps(report, indent=1, default=str))

    lines = [f"# SW device run {report['date']}", "", f"command: `{report['command']}`", "",
             "| variant | correct | queries | GCUPS wall | GCUPS kernel |", "|---|---|---|---|---|"]
    for name, r in report["variants"].items():
        if "error" in r:
            lines.append(f"| {name} | error | | | |")
        else:
            lines.append(f"| {name} | {r['correct']} | {r['queries_timed']} | {r['overall_gcups_wall']:.1f} | "
                         f"{r['overall_gcups_kernel']:.1f} |")
    (out / "sw_device.md").write_text("\n".join(lines) + "\n")
    log("\n".join(lines))


if __name__ == "__main__":
    main()
