"""``clalign hmmsearch`` on a machine without a GPU, against ``hmmsearch --cpu N``, in rounds.

Each round runs, as whole processes (wall seconds as a user sees them): HMMER's ``hmmsearch
--cpu N``, ``clalign hmmsearch --cpu N`` (automatic filter engine) and, in the first
``--opencl-rounds`` rounds, ``clalign hmmsearch --filter-engine opencl``. Interleaving the
programs round by round spreads the noise of a shared machine over all of them; the report
gives median, min and max per program, the ratios of medians, and whether every ``--tblout``
equals hmmsearch's (comment lines aside).

    python3 -m tools.bench_hmmsearch_cpu --hmm data/hmms.hmm --db /tmp/db22k.fa \\
        --generate 20000 --append data/proteome.faa.gz --cpu 2 --rounds 9 --opencl-rounds 2
"""
import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import time

from tools.bench_hmmsearch import rows as _rows, run as _run  # one timed runner for both tools
from tools.results import peer_row, save


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hmm", default="data/hmms.hmm")
    ap.add_argument("--db", required=True)
    ap.add_argument("--generate", type=int, default=0, help="write N synthetic proteins (seed 1) to --db first")
    ap.add_argument("--append", default=None, help="FASTA (plain/gzip) appended to the generated database")
    ap.add_argument("--cpu", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--opencl-rounds", type=int, default=1)
    ap.add_argument("--hmmsearch", default=shutil.which("hmmsearch"))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    if args.generate:
        subprocess.run([sys.executable, "-m", "tools.gen_protein_db", "-n", str(args.generate),
                        "--seed", "1", "-o", os.path.abspath(args.db)], check=True, cwd=os.path.dirname(here))
        if args.append:
            opener = gzip.open if args.append.endswith(".gz") else open
            with opener(args.append, "rt") as src, open(args.db, "a") as dst:
                dst.write(src.read())
    os.makedirs(args.out, exist_ok=True)
    tbl = {k: os.path.join(args.out, f"{k}.tbl") for k in ("hmmsearch", "auto", "opencl")}
    cmds = {
        "hmmsearch": [args.hmmsearch, "--cpu", str(args.cpu), "--tblout", tbl["hmmsearch"], "-o", os.devnull,
                      args.hmm, args.db],
        "auto": [sys.executable, "-m", "clalign", "hmmsearch", "--force", "--cpu", str(args.cpu),
                 "--tblout", tbl["auto"],
                 "-o", os.devnull, args.hmm, args.db],
        "opencl": [sys.executable, "-m", "clalign", "hmmsearch", "--force", "--cpu", str(args.cpu), "--filter-engine",
                   "opencl", "--tblout", tbl["opencl"], "-o", os.devnull, args.hmm, args.db],
    }
    times = {k: [] for k in cmds}
    summary = {}
    for r in range(args.rounds):
        for k in ("hmmsearch", "auto", "opencl"):
            if k == "opencl" and r >= args.opencl_rounds:
                continue
            dt, err = _run(cmds[k])
            times[k].append(dt)
            if k != "hmmsearch":
                summary[k] = err.strip().splitlines()[-1] if err.strip() else ""
    ref = _rows(tbl["hmmsearch"])
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M')} UTC, {os.uname().nodename}, --cpu {args.cpu}, "
             f"{args.rounds} rounds (load average before: {os.getloadavg()[0]:.2f})"]
    med = {k: statistics.median(v) for k, v in times.items() if v}
    results = []
    for k, v in times.items():
        if not v:
            continue
        same = _rows(tbl[k]) == ref
        if k != "hmmsearch":
            results.append(peer_row("hmmsearch", f"{os.path.basename(args.hmm)}:{k}", round(med[k], 3), "hmmsearch",
                                    round(med["hmmsearch"], 3), same, samples=v, cpu=args.cpu, db=args.db))
        lines.append(f"{k:10s} median {med[k]:7.3f} s  min {min(v):7.3f}  max {max(v):7.3f}  n={len(v)}  "
                     f"hmmsearch/this {med['hmmsearch'] / med[k]:.2f}x  tblout {'identical' if same else 'DIFFERS'}")
    for k, s in summary.items():
        lines.append(f"{k} summary: {s}")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.out, "bench_hmmsearch_cpu.txt"), "w") as fh:
        fh.write(text + "\n")
    save(os.path.join(args.out, "bench_hmmsearch_cpu.json"), results)


if __name__ == "__main__":
    main()
