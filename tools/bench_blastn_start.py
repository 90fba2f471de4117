"""A whole ``clalign blastn`` process and a fresh process's first ``run_blastn``, trees alternated.

What a user's command pays once per process (numba's import and start, the stages' cache
loads, first-touch of the set-up's arrays) does not show in a warm in-process run. Per round and
per tree (``--trees``, each put first on ``PYTHONPATH``; default this checkout), in turn:

* ``cli``: wall seconds of ``python -m clalign blastn -task TASK -query Q -db DB -outfmt 6
  -num_threads N [--device D]``, its output compared with ``--expect`` (e.g. blastn 2.12's);
* ``first``: a new interpreter that imports the engine, then times one ``run_blastn`` (the
  same search) with its phases (setup, prelim, traceback; device_setup with a device).

Prints the medians per tree (and the ranges of the walls). The machine's load moves single
runs by a tenth of a second or more: use rounds, and compare trees in the same call.

    python3 -m tools.bench_blastn_start --query genes.fa --db gdb --expect ref.tsv \\
        --device 0:0 --rounds 10 --trees /tmp/base,.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FIRST = """
import json, sys, time
t0 = time.perf_counter()
from clalign.blast.blastn import run_blastn
from clalign.blast.nucl_setup import BlastnOptions
t1 = time.perf_counter()
times = {}
a = json.loads(sys.argv[1])
run_blastn(a["query"], a["db"], BlastnOptions(task=a["task"]), times=times,
           num_threads=a["threads"], device=a["device"])
out = {"import": t1 - t0, "run": time.perf_counter() - t1}
out.update((k, v) for k, v in times.items() if isinstance(v, float))
print(json.dumps(out))
"""


def _env(tree):
    path = os.pathsep.join(p for p in (os.path.abspath(tree), os.environ.get("PYTHONPATH", "")) if p)
    return dict(os.environ, PYTHONPATH=path)


def _run(cmd, tree, **kw):
    """``cmd`` with ``tree`` first on the path and as the working directory: ``python -m`` and
    ``-c`` put the working directory before ``PYTHONPATH``, so a checkout there would be the one
    measured whatever the tree."""
    return subprocess.run(cmd, env=_env(tree), cwd=os.path.abspath(tree), capture_output=True,
                          check=True, **kw)


def cli_once(tree, args):
    """Wall seconds of one whole command; raises when its output differs from ``--expect``."""
    cmd = [sys.executable, "-m", "clalign", "blastn", "-task", args.task, "-query", args.query,
           "-db", args.db, "-outfmt", "6", "-num_threads", str(args.threads)]
    if args.device:
        cmd += ["--device", args.device]
    t = time.perf_counter()
    r = _run(cmd, tree)
    wall = time.perf_counter() - t
    if args.expect is not None:
        with open(args.expect, "rb") as fh:
            if fh.read() != r.stdout:
                raise SystemExit(f"bench_blastn_start: {tree}: output differs from {args.expect}")
    return wall


def first_once(tree, args):
    """Phases of a fresh process's first run_blastn (seconds)."""
    a = {"query": args.query, "db": args.db, "task": args.task, "threads": args.threads,
         "device": args.device}
    r = _run([sys.executable, "-c", FIRST, json.dumps(a)], tree, text=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--query", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--expect", default=None, help="tabular output the command must equal")
    ap.add_argument("--task", default="megablast")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--trees", default=ROOT, help="comma-separated source trees (PYTHONPATH)")
    args = ap.parse_args()
    for name in ("query", "db", "expect"):      # the commands run in each tree's folder
        if getattr(args, name) is not None:
            setattr(args, name, os.path.abspath(getattr(args, name)))
    trees = args.trees.split(",")
    for tree in trees:                  # warm-up: the numba and kernel caches of each tree
        cli_once(tree, args)
    cli = {t: [] for t in trees}
    first = {t: {} for t in trees}
    for _ in range(args.rounds):
        for tree in trees:
            cli[tree].append(cli_once(tree, args))
            for k, v in first_once(tree, args).items():
                first[tree].setdefault(k, []).append(v)
    for tree in trees:
        w = cli[tree]
        print(f"{tree}: cli median {statistics.median(w):.3f} s ({min(w):.3f}-{max(w):.3f}, "
              f"{len(w)} runs); first run_blastn medians: "
              + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in first[tree].items()))


if __name__ == "__main__":
    main()
