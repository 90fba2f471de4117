"""What BLASTP's stage process (``runtime.stageproc``) costs on this machine: the child's start
(first reply; numba's start and the stages' cache loads), a call's round trip by payload size,
and the subjects' copy into shared memory.

    python tools/bench_stageproc.py [--threads 2] [--residues 200000000]
"""
import argparse
import time

import numpy as np

from clalign.blast.stage_remote import PRELOAD
from clalign.runtime.stageproc import StageProcess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--residues", type=int, default=200_000_000)
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args()
    t0 = time.perf_counter()
    p = StageProcess(a.threads, PRELOAD)
    try:
        p.call("os:getpid")
        t1 = time.perf_counter()
        loaded = p.call("clalign.runtime.stageproc:wait_preload")
        t2 = time.perf_counter()
        print(f"child: first reply {t1 - t0:.3f} s; preload done {t2 - t0:.3f} s after start "
              f"({loaded:.3f} s of the child's own clock)")
        for rows in (0, 2_000, 20_000, 100_000):
            x = np.zeros((rows, 7), dtype=np.int64)
            p.call("numpy:shape", x)
            t = time.perf_counter()
            for _ in range(a.calls):
                p.call("numpy:shape", x)
            dt = (time.perf_counter() - t) / a.calls
            print(f"round trip, {x.nbytes / 1e6:6.2f} MB argument: {dt * 1e3:.3f} ms")
        res = np.random.default_rng(1).integers(1, 25, a.residues).astype(np.uint8)
        t = time.perf_counter()
        h = p.share(res)
        t3 = time.perf_counter()
        total = p.call("numpy:sum", h)
        t4 = time.perf_counter()
        assert total == res.sum(dtype=np.uint64)
        print(f"share {a.residues / 1e6:.0f} MB: copy {t3 - t:.3f} s; child's map + first sum "
              f"{t4 - t3:.3f} s")
    finally:
        p.close()


if __name__ == "__main__":
    main()
