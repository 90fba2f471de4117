"""The BLASTN device feeder's per-block host seconds and blocking device calls, in-process.

Runs ``run_blastn`` (``--device``) with the feeder's three phases (``NuclDeviceWords._start``,
``_settle``, ``_rows``) wrapped: per phase, wall seconds, seconds inside blocking device calls
(reads that wait: ``enqueue_copy`` with a host destination and ``is_blocking`` left on, and
``Lane.wait``) and their number, summed over the blocks; host seconds = wall - blocked; the
feeder thread's CPU seconds; the calls in which pyopencl lets go of the interpreter lock (every
``enqueue_copy``, blocking or not, and ``Event.wait``: each is a point where a worker may take
the lock and the feeder waits to get it back). The
output is checked against ``blastn``'s table (``bl.tsv`` in ``--work``, written once).
PoCL's kernel times differ from a GPU's: compare the host seconds and call counts, not walls.

    python3 -m tools.bench_blastn_feeder --work /tmp/bf --genes 100 --genome-mb 30 \\
        --block-mb 4 --rounds 3 --device 0:0
"""
import argparse
import os
import shutil
import subprocess
import threading
import time
from collections import defaultdict

import numpy as np
import pyopencl as cl

_STATE = threading.local()
# phase -> [wall, blocked, blocking calls, runs, calls letting go of the lock, thread CPU]
_STATS = defaultdict(lambda: [0.0, 0.0, 0, 0, 0, 0.0])
_LOCK = threading.Lock()


def _phase():
    return getattr(_STATE, "phase", None)


def _blocked(seconds):
    ph = _phase()
    if ph is not None:
        with _LOCK:
            _STATS[ph][1] += seconds
            _STATS[ph][2] += 1


def _released():
    ph = _phase()
    if ph is not None:
        with _LOCK:
            _STATS[ph][4] += 1


def instrument():
    """Wrap the feeder's phases, pyopencl's blocking reads and ``Lane.wait`` (once)."""
    from clalign.blast import nucl_device, nucl_lane
    if getattr(nucl_device, "_bench_feeder", False):
        return
    nucl_device._bench_feeder = True
    copy = cl.enqueue_copy

    def enqueue_copy(queue, dest, src, **kw):
        _released()
        if isinstance(dest, np.ndarray) and kw.get("is_blocking", True):
            t = time.perf_counter()
            out = copy(queue, dest, src, **kw)
            _blocked(time.perf_counter() - t)
            return out
        return copy(queue, dest, src, **kw)
    cl.enqueue_copy = enqueue_copy
    ev_wait = cl.Event.wait

    def event_wait(self):
        _released()
        return ev_wait(self)
    cl.Event.wait = event_wait

    if hasattr(nucl_lane.Lane, "wait"):
        wait = nucl_lane.Lane.wait

        def lane_wait(self, *a, **kw):
            t = time.perf_counter()
            out = wait(self, *a, **kw)
            _blocked(time.perf_counter() - t)
            return out
        nucl_lane.Lane.wait = lane_wait

    for name in ("_start", "_settle", "_rows"):
        fn = getattr(nucl_device.NuclDeviceWords, name)

        def wrapped(self, *a, _fn=fn, _name=name, **kw):
            outer = _phase()
            _STATE.phase = _name if outer is None else outer
            t, c = time.perf_counter(), time.thread_time()
            try:
                return _fn(self, *a, **kw)
            finally:
                if outer is None:
                    with _LOCK:
                        _STATS[_name][0] += time.perf_counter() - t
                        _STATS[_name][3] += 1
                        _STATS[_name][5] += time.thread_time() - c
                _STATE.phase = outer
        setattr(nucl_device.NuclDeviceWords, name, wrapped)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--genome-mb", type=int, default=30)
    ap.add_argument("--genes", type=int, default=100)
    ap.add_argument("--real", default=None, help="real genome FASTA (default pyrodigal's)")
    ap.add_argument("--block-mb", type=float, default=4)
    ap.add_argument("--lanes", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default="0:0")
    args = ap.parse_args()
    from tools.bench_blastn import write_data
    from clalign.blast.blastn import run_blastn, tabular_lines
    from clalign.blast.nucl_setup import BlastnOptions
    from clalign.runtime.tuning import trial

    if not os.path.exists(os.path.join(args.work, "gdb.nsq")):
        write_data(args.work, args.genome_mb, 0, args.genes, real=args.real)
    ref = os.path.join(args.work, "bl.tsv")
    if not os.path.exists(ref):
        subprocess.run([shutil.which("blastn"), "-task", "blastn", "-query", "genes.fa",
                        "-db", "gdb", "-outfmt", "6", "-num_threads", str(args.threads),
                        "-out", "bl.tsv"], cwd=args.work, check=True)
    with open(ref) as fh:
        want = fh.read().splitlines()
    instrument()
    values = {"UNGAPPED": "blastn", "PRELIM": True, "LANES": args.lanes,
              "BLOCK_BASES": int(args.block_mb * (1 << 20))}
    for r in range(args.rounds):
        _STATS.clear()
        times = {}
        t = time.perf_counter()
        with trial("blastn_scan", values):
            res = run_blastn(os.path.join(args.work, "genes.fa"), os.path.join(args.work, "gdb"),
                             BlastnOptions(task="blastn"), device=args.device, times=times,
                             num_threads=args.threads)
        wall = time.perf_counter() - t
        same = tabular_lines(res) == want
        parts = []
        for ph in ("_start", "_settle", "_rows"):
            w, b, n, k, rel, cpu = _STATS[ph]
            k = max(k, 1)
            parts.append(f"{ph} {k} blocks: wall {w:.3f} s, blocked {b:.3f} s in {n} calls "
                         f"({n / k:.2f}/block), host {w - b:.3f} s ({1e3 * (w - b) / k:.1f} "
                         f"ms/block), thread CPU {1e3 * cpu / k:.1f} ms/block, lock released "
                         f"{rel / k:.1f}/block")
        print(f"round {r}: in-process {wall:.2f} s, "
              f"device_wait {times.get('device_wait', 0):.2f} s, identical {same} "
              f"({len(want)} lines)\n  " + "\n  ".join(parts), flush=True)
        if r == 0:
            print(f"  counts {times.get('device_counts')}")
        print("  device " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(times.items())
                                      if k.startswith("device_") and isinstance(v, float)))


if __name__ == "__main__":
    main()
