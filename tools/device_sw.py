#!/usr/bin/env python3
"""Device check and timing of every Smith-Waterman kernel variant, in one command.

    source .whl/device-env.sh && python3 -m tools.device_sw --out $OUT

1. prints the OpenCL devices (``clalign devices``);
2. generates the benchmark database (``tools/gen_protein_db.py -n 570000 --seed 1``);
3. checks each variant on the device (through ``clalign.runtime.harness``: a variant is timed
   only after it passed): exact agreement with the numpy Gotoh reference (and
   parasail's 32-bit SW when installed) on a sample of subjects plus an overflow set whose
   scores exceed 8 and 16 bits, and agreement of the full score vector with the 32-bit variant;
4. times each variant per query (OpenCL profiling events for kernel time; wall time of the
   whole device round trip incl. rescoring passes and score read-back) and reports GCUPS
   (query length x database residues / seconds), per query and overall.

Writes ``sw_device.json`` (``clalign-results-1`` rows, one per variant and query, which
``clalign tune`` and the tuning table can read) and ``sw_device.md`` to ``--out``. Queries: the 20 CUDASW++ queries
(``--queries``, default ``.sw_device/cudasw_queries.fasta`` or ``../shared/data/...``).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from clalign.data import PROTEIN, Database, get_matrix, read_fasta
from clalign.runtime.harness import compare, result_doc, verify_then_time, write_results
from clalign.sw.engine import SWEngine
from clalign.sw.reference import sw_score

ROOT = Path(__file__).resolve().parent.parent

#: The sw_intertask parameters a variant sets: what a row's "values" hold (``clalign tune --import``).
TUNED_KEYS = ("WIDTH", "WORDS", "ROWS", "PROFILE", "WG", "UNROLL")

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


def check_variant(eng, check_q, db, ref, pref, psample, sample, oqc, odb, oref) -> str | None:
    """None when the variant's scores equal the numpy Gotoh reference (and parasail) on the
    samples and on the overflow set, else the first difference."""
    for qid, seq in check_q:
        sc = eng.search([(qid, PROTEIN.encode(seq))], db, progress=False)[0][0]
        bad = compare(sc[sample], ref[qid], f"{qid} vs numpy", sample)
        if bad is None and pref is not None:
            bad = compare(sc[psample], pref[qid], f"{qid} vs parasail", psample)
        if bad:
            return bad
    osc = eng.search([("ovf", oqc)], odb, progress=False)[0][0]
    return compare(osc, oref, "overflow set vs numpy")


def main(argv=None):
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
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    from clalign.runtime import Runtime
    from clalign.runtime.cli import devices
    try:
        devices.main([], standalone_mode=False)
    except SystemExit:
        pass
    caps = Runtime.get(args.device).caps

    qpath = args.queries
    for cand in (ROOT / "tests/data/cudasw/cudasw_queries.fasta", ROOT / ".sw_device/cudasw_queries.fasta",
                 ROOT.parent / "shared/data/cudasw_queries.fasta"):
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
        subprocess.run([sys.executable, "-m", "tools.gen_protein_db", "-n", str(args.n), "--seed", "1",
                        "-o", os.path.abspath(args.db)], check=True, cwd=ROOT)
        log(f"generated {args.db} in {time.time() - t:.1f} s")
    t = time.time()
    db = Database.from_fasta(args.db)
    R = db.total_residues
    log(f"database: {len(db)} sequences, {R} residues, max length {int(db.lengths.max())}, "
        f"read in {time.time() - t:.1f} s")

    rng = np.random.default_rng(7)
    m = get_matrix("BLOSUM62")
    sample = np.unique(np.concatenate([rng.choice(len(db), min(300, len(db)), replace=False), db.order[-3:]]))
    check_q = [queries[0], queries[9]]
    ref = {}
    t = time.time()
    for qid, seq in check_q:
        qc = PROTEIN.encode(seq)
        ref[qid] = np.array([sw_score(qc, db.sequence(int(i)), m.scores, 11, 1) for i in sample])
    log(f"numpy reference on {len(sample)} subjects x {len(check_q)} queries in {time.time() - t:.1f} s")
    psample = pref = None
    try:
        import parasail

        psample = rng.choice(len(db), min(3000, len(db)), replace=False)
        pref = {qid: np.array([parasail.sw_striped_32(seq, PROTEIN.decode(db.sequence(int(i))), 12, 1,
                                                      parasail.blosum62).score for i in psample])
                for qid, seq in check_q}
        log(f"parasail reference on {len(psample)} subjects")
    except ImportError:
        log("parasail not installed: numpy reference only")
    oq, osubs = overflow_set(rng)
    odb = Database.from_sequences(osubs)
    oqc = PROTEIN.encode(oq)
    oref = np.array([sw_score(oqc, odb.sequence(i), m.scores, 11, 1) for i in range(len(odb))])
    log(f"overflow set: max score {oref.max()}, {int((oref > 32767).sum())} above 16 bits")

    names = [n for n, _ in VARIANTS] if args.variants == "all" else args.variants.split(",")
    full_names = set(args.full.split(","))
    sweep = [q for q in queries if short[q[0]] in set(args.sweep_queries.split(","))]
    base_scores: dict = {}      # query -> full score vector of the first verified variant
    rows, summary, engines = [], {}, {}     # engines: the variant that passed its check
    t_start = time.time()
    for name in names:
        ov = dict(VARIANTS)[name]
        if time.time() - t_start > args.budget:
            log(f"{name}: skipped (time budget)")
            rows.append({"family": "sw_intertask", "variant": name, "values": ov, "input": None, "status": "budget",
                         "seconds": None, "reason": "time budget"})
            continue
        # the variant is checked first (numpy + parasail samples, overflow set); a wrong one is never timed
        def gate(e):
            engines["eng"] = e
            return check_variant(e, check_q, db, ref, pref, psample, sample, oqc, odb, oref)

        check = verify_then_time(lambda ov=ov: (SWEngine("BLOSUM62", 11, 1, args.device, **ov), 0.0), gate,
                                 repeats=0)
        if not check.ok:
            log(f"{name}: {check.status}: {check.reason}")
            rows.append({"family": "sw_intertask", "variant": name, "values": ov, "input": None, "status": check.status,
                         "seconds": None, "reason": check.reason})
            continue
        eng = engines.pop("eng")
        v = eng.values(eng.first_width, eng.profile_layout(eng.first_width, 1000), eng.schedule(db.lengths))
        values = {k: v[k] for k in v}
        if eng.kernel == "vector":      # the CPU first pass: a sw_vector row
            fam, tuned_values = "sw_vector", {k: eng.plan.vvalues[k] for k in ("LANE", "VEC", "COLS", "STRIP", "WG")}
        else:
            fam, tuned_values = "sw_intertask", {k: values[k] for k in TUNED_KEYS}
        tq = queries if name in full_names else sweep
        vrows = []
        for qid, seq in tq:
            qc = PROTEIN.encode(seq)
            walls = []

            def run(qid=qid, qc=qc, walls=walls):
                k0 = eng.kernel_seconds
                sc, secs = eng.search([(qid, qc)], db, progress=False)
                walls.append(secs[0])
                return sc[0], eng.kernel_seconds - k0

            def same(sc, qid=qid):
                if qid not in base_scores:
                    base_scores[qid] = sc
                    return None
                return compare(sc, base_scores[qid], f"{short[qid]} full score vector vs the first verified variant")

            meas = verify_then_time(run, same, repeats=args.repeat)
            row = {"family": fam, "variant": name, "values": tuned_values, "template_values": values,
                   "input": short[qid], "qlen": len(seq),
                   **meas.as_dict(), "passes": eng.last_passes}
            if meas.ok:
                w = float(np.median(walls[-args.repeat:]))
                row.update(wall_s=w, gcups_wall=len(seq) * R / w / 1e9, gcups_kernel=len(seq) * R / meas.seconds / 1e9)
                log(f"  {name:24s} {short[qid]:8s} {len(seq):5d} aa  wall {w * 1e3:8.1f} ms "
                    f"{row['gcups_wall']:8.1f} GCUPS  kernel {row['gcups_kernel']:8.1f} GCUPS passes {eng.last_passes}")
            else:
                log(f"  {name:24s} {short[qid]:8s}: {meas.status}: {meas.reason}")
            vrows.append(row)
        rows.extend(vrows)
        ok = [r for r in vrows if r["status"] == "ok"]
        if ok and len(ok) == len(vrows):
            cells = sum(r["qlen"] for r in ok) * R
            summary[name] = {"queries": len(ok), "gcups_wall": cells / sum(r["wall_s"] for r in ok) / 1e9,
                             "gcups_kernel": cells / sum(r["seconds"] for r in ok) / 1e9}
            log(f"{name}: verified; {summary[name]['gcups_wall']:.1f} GCUPS wall, "
                f"{summary[name]['gcups_kernel']:.1f} GCUPS kernel over {len(ok)} queries; values {values}")
        doc = result_doc(caps, " ".join(sys.argv), rows, database={"n": len(db), "residues": int(R),
                                                                   "max_length": int(db.lengths.max())},
                         summary=summary)
        write_results(out / "sw_device.json", doc)

    doc = result_doc(caps, " ".join(sys.argv), rows, summary=summary)
    lines = [f"# SW device run {doc['meta']['date']}", "", f"command: `{doc['meta']['command']}`", "",
             "| variant | status | queries | GCUPS wall | GCUPS kernel |", "|---|---|---|---|---|"]
    for name in names:
        s = summary.get(name)
        bad = next((r for r in rows if r["variant"] == name and r["status"] != "ok"), None)
        if s is None:
            lines.append(f"| {name} | {bad['status'] if bad else 'not run'} | | | |")
        else:
            lines.append(f"| {name} | ok | {s['queries']} | {s['gcups_wall']:.1f} | {s['gcups_kernel']:.1f} |")
    (out / "sw_device.md").write_text("\n".join(lines) + "\n")
    log("\n".join(lines))


if __name__ == "__main__":
    main()
