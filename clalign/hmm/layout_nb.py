"""Compiled (numba, GIL released) host loops of the hmm search: the host fill of the S-lane
database blocks of :func:`clalign.hmm.layout.build_blocks` (every sequence's residues and
END code written straight to its column's rows, in threads over slot ranges: disjoint
bytes), and the Easel codes of the targets handed to pyhmmer (:mod:`clalign.hmm.targets`).
Imported only where the work is large enough to pay numba's import and first call."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from ..runtime.jit import njit
import numpy as np


@njit(cache=True, nogil=True, boundscheck=False)
def _fill_slots(res, s0, s1, seq_off, seq_len, row0, blk, col, boff, C, rg, end, data):
    """Slots s0..s1-1: residues res[seq_off:seq_off+seq_len] then END, from row ``row0`` of
    column ``col`` of block ``blk``; row r of column c lies at
    ``boff + (r // rg) * C * rg + c * rg + r % rg``."""
    for s in range(s0, s1):
        base = boff[blk[s]] + col[s] * rg
        a = seq_off[s]
        m = row0[s] % rg                 # row inside its group of rg rows
        at = base + (row0[s] // rg) * C * rg + m
        step = C * rg - rg               # from the last row of a group to the next group's first
        for j in range(seq_len[s]):
            data[at] = res[a + j]
            at += 1
            m += 1
            if m == rg:
                m = 0
                at += step
        data[at] = end


def fill_slots(res, seq_off, seq_len, row0, blk, col, boff, C, rg, end, data):
    """Run :func:`_fill_slots` over all slots, cut into one part per core of equal residues."""
    n = seq_len.size
    parts = max(1, min(32, os.cpu_count() or 1)) if int(data.size) >= (1 << 22) else 1
    csum = np.cumsum(seq_len + 1)
    cuts = np.searchsorted(csum, np.linspace(0, int(csum[-1]) if n else 0, parts + 1)[1:-1])
    bounds = [0, *np.asarray(cuts).tolist(), n]
    args = (seq_off, seq_len, row0, blk, col, boff, C, rg, end, data)
    jobs = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    if len(jobs) <= 1:
        for a, b in jobs:
            _fill_slots(res, a, b, *args)
        return
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        for f in [pool.submit(_fill_slots, res, a, b, *args) for a, b in jobs]:
            f.result()


@njit(cache=True, nogil=True, boundscheck=False)
def easel_codes(res, lut, off, stops, idx, star, out_off, out):
    """Targets ``idx``: their residues through ``lut``, then ``stops`` times ``star``, packed
    at ``out_off``."""
    for k in range(idx.size):
        i = idx[k]
        o = out_off[k]
        for j in range(off[i], off[i + 1]):
            out[o] = lut[res[j]]
            o += 1
        for _ in range(stops[i]):
            out[o] = star
            o += 1
