"""End-to-end ``clalign hmmsearch`` against HMMER's ``hmmsearch`` on the same inputs.

Runs both as whole processes (wall seconds, like a user would), then compares the per-sequence
tables (``--tblout``) line by line, comment lines aside.

    python3 tools/bench_hmmsearch.py --hmm data/hmms.hmm --db DB.fa [--cpu 16] [--device P:D]

With ``--generate N`` the database is a synthetic Swiss-Prot-like FASTA from
``tools/gen_protein_db.py`` (seed 1) written to ``--db``.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time


def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"bench_hmmsearch: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return dt, p.stderr


def rows(path):
    with open(path) as fh:
        return [ln.rstrip("\n") for ln in fh if not ln.startswith("#")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hmm", default="data/hmms.hmm")
    ap.add_argument("--db", required=True)
    ap.add_argument("--generate", type=int, default=0, help="write a synthetic db of N sequences to --db first")
    ap.add_argument("--cpu", type=int, default=os.cpu_count())
    ap.add_argument("--device", default=None)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--hmmsearch", default=shutil.which("hmmsearch"))
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    if args.generate:
        subprocess.run([sys.executable, os.path.join(here, "gen_protein_db.py"), "-n", str(args.generate),
                        "--seed", "1", "-o", args.db], check=True)
    if not args.hmmsearch:
        sys.exit("bench_hmmsearch: no hmmsearch binary (install HMMER, e.g. Debian's hmmer)")
    os.makedirs(args.out, exist_ok=True)
    ct, ht = os.path.join(args.out, "clalign.tbl"), os.path.join(args.out, "hmmsearch.tbl")
    dev = ["--device", args.device] if args.device else []
    c_s, c_err = run([sys.executable, "-m", "clalign", "hmmsearch", "--cpu", str(args.cpu), *dev,
                      "--tblout", ct, "-o", os.devnull, args.hmm, args.db])
    h_s, _ = run([args.hmmsearch, "--cpu", str(args.cpu), "--tblout", ht, "-o", os.devnull, args.hmm, args.db])
    same = rows(ct) == rows(ht)
    print(c_err.strip().splitlines()[-1] if c_err.strip() else "")
    print(f"clalign hmmsearch: {c_s:.2f} s wall   hmmsearch --cpu {args.cpu}: {h_s:.2f} s wall   "
          f"ratio {h_s / c_s:.2f}x   tblout rows: {len(rows(ct))} vs {len(rows(ht))}, identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
