#!/usr/bin/env python3
"""In-process A/B of BLASTN's device set-up: the search's read-only buffers made with
``COPY_HOST_PTR`` in their constructors (main before branch bup) against ``nucl_upload.Uploads``'
copies on a thread. One ``setup_search``, then per round and arm: ``NuclDeviceWords.__init__``
and its first block (``pairs(0)``), alternating arms.

    python3 tools/bench_nucl_upload.py QUERIES.fa DB [--device 0:0] [--threads 16] [--rounds 4]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pyopencl as cl

from clalign.blast import nucl_device, nucl_upload
from clalign.blast.nucl_setup import BlastnOptions, read_queries, setup_search
from clalign.data.nucleotide import open_nucleotide
from clalign.runtime.gcpause import paused


class Sync:
    """The buffers as before: copied in the constructor, on the calling thread."""

    def __init__(self, rt):
        self.rt = rt

    def add(self, a):
        return cl.Buffer(self.rt.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                         hostbuf=np.ascontiguousarray(a) if len(a) else np.zeros(4, np.uint8))

    def start(self):
        """Nothing to start: the constructor copied."""

    def order(self, queue):
        """Nothing to wait for: the copies were done before any queue saw the buffers."""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("queries")
    ap.add_argument("db")
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4)
    a = ap.parse_args()
    with paused():
        qs = read_queries(a.queries)
        nt = open_nucleotide(a.db)
        st = setup_search(qs, BlastnOptions(task="megablast"), nt.total_bases, len(nt),
                          threads=a.threads)
        for _ in range(a.rounds):
            for name, cls in (("sync", Sync), ("thread", nucl_upload.Uploads)):
                nucl_device.Uploads = cls
                t0 = time.perf_counter()
                dw = nucl_device.NuclDeviceWords(nt, st, a.device, {}, {}, hits=True)
                t1 = time.perf_counter()
                dw.pairs(0)
                t2 = time.perf_counter()
                dw.close()
                for t in getattr(dw, "_threads", []):   # no feeder left running into the next
                    t.join()
                del dw
                print(f"{name:6} init {t1 - t0:.3f} s  first block {t2 - t1:.3f} s  "
                      f"sum {t2 - t0:.3f} s", flush=True)


if __name__ == "__main__":
    main()
