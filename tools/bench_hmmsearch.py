"""End-to-end ``clalign hmmsearch`` against HMMER's ``hmmsearch`` on the same inputs.

Runs both as whole processes (wall seconds, as a user sees them) ``--repeat`` times each,
clalign first: its first run is *cold* (a fresh process, kernels compiled; on NVIDIA the
driver's compute cache then keeps them for later processes), the others *warm*. Then compares
the per-sequence tables (``--tblout``) line by line, comment lines aside.

    python3 -m tools.bench_hmmsearch --hmm data/hmms.hmm --db DB.fa [--cpu 16] [--device P:D]

With ``--generate N`` the database is a synthetic Swiss-Prot-like FASTA from
``tools/gen_protein_db.py`` (seed 1) written to ``--db``. ``--profile`` adds one more clalign
run under cProfile and writes its 30 costliest calls (cumulative) to ``OUT/clalign.prof.txt``.
"""
import argparse
import io
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import time

from tools.results import peer_row, save


def run(cmd, env=None):
    """(wall seconds, stderr) of ``cmd``; exits with its stderr if it fails."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
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
    ap.add_argument("--repeat", type=int, default=1, help="runs of each program (clalign's first is cold)")
    ap.add_argument("--profile", action="store_true", help="one more clalign run under cProfile")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--hmmsearch", default=shutil.which("hmmsearch"))
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    if args.generate:
        subprocess.run([sys.executable, "-m", "tools.gen_protein_db", "-n", str(args.generate),
                        "--seed", "1", "-o", os.path.abspath(args.db)], check=True, cwd=os.path.dirname(here))
    if not args.hmmsearch:
        sys.exit("bench_hmmsearch: no hmmsearch binary (install HMMER, e.g. Debian's hmmer)")
    os.makedirs(args.out, exist_ok=True)
    ct, ht = os.path.join(args.out, "clalign.tbl"), os.path.join(args.out, "hmmsearch.tbl")
    dev = ["--device", args.device] if args.device else []
    ccmd = ["hmmsearch", "--force", "--cpu", str(args.cpu), *dev, "--tblout", ct, "-o", os.devnull, args.hmm, args.db]
    c_times, c_err = [], ""
    for _ in range(max(1, args.repeat)):
        dt, c_err = run([sys.executable, "-m", "clalign", *ccmd])
        c_times.append(dt)
    h_times = []
    for _ in range(max(1, args.repeat)):
        dt, _ = run([args.hmmsearch, "--cpu", str(args.cpu), "--tblout", ht, "-o", os.devnull, args.hmm, args.db])
        h_times.append(dt)
    same = rows(ct) == rows(ht)
    print(c_err.strip().splitlines()[-1] if c_err.strip() else "")
    warm = statistics.median(c_times[1:]) if len(c_times) > 1 else c_times[0]
    h_med = statistics.median(h_times)
    print(f"clalign hmmsearch --cpu {args.cpu}: cold {c_times[0]:.2f} s, runs {' '.join(f'{t:.2f}' for t in c_times)} s; "
          f"hmmsearch --cpu {args.cpu}: runs {' '.join(f'{t:.2f}' for t in h_times)} s; "
          f"ratio hmmsearch/clalign (medians, warm) {h_med / warm:.2f}x, cold {h_med / c_times[0]:.2f}x; "
          f"tblout rows: {len(rows(ct))} vs {len(rows(ht))}, identical: {same}")
    save(os.path.join(args.out, "bench_hmmsearch.json"),
         [peer_row("hmmsearch", os.path.basename(args.hmm), round(warm, 3), "hmmsearch", round(h_med, 3), same,
                   cold_seconds=round(c_times[0], 3), samples=c_times, peer_samples=h_times, cpu=args.cpu,
                   device=args.device, db=args.db)])
    if args.profile:
        prof = os.path.join(args.out, "clalign.prof")
        run([sys.executable, "-m", "cProfile", "-o", prof, "-m", "clalign", *ccmd])
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
        with open(prof + ".txt", "w") as fh:
            fh.write(buf.getvalue())
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
