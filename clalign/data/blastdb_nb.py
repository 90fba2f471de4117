"""Compiled copy of a BLAST protein volume's residues out of its ``.psq`` (numba, no GIL, a few
threads): the sequences' runs between the NUL separators, trailing stops left out. The numpy
form (a boolean mask over the whole file) took 0.5 s of a 570,000-protein search's start on
the H100 host and ~1 s on a 2-core VM; this one is a memory copy. While a command's preload
is still starting numba, each thread copies its share with numpy instead (``_numpy_runs``)."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..runtime.jit import njit, preloading, ready


@njit(cache=True, nogil=True)
def _copy_runs(src, starts, lens, out_off, out, a, b):
    for i in range(a, b):
        o, s = out_off[i], starts[i]
        for k in range(lens[i]):
            out[o + k] = src[s + k]


def _numpy_runs(src, starts, lens, out_off, out, a, b):
    """``_copy_runs`` in numpy: the runs of subjects a..b-1 as one mask over the file's stretch
    that holds them (+1 at each run's start, -1 at its end, summed), then one masked copy."""
    base, end = int(starts[a]), int(starts[b - 1] + lens[b - 1])
    edge = np.zeros(end - base + 1, dtype=np.int8)
    np.add.at(edge, starts[a:b] - base, 1)            # add.at: runs may share a start or end
    np.add.at(edge, starts[a:b] + lens[a:b] - base, -1)
    keep = np.cumsum(edge[:-1], dtype=np.int8).view(np.bool_)
    out[out_off[a]:out_off[b]] = src[base:end][keep]


def copy_runs(src: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """``src[starts[i]:starts[i] + lens[i]]`` for every i, concatenated (uint8)."""
    lens = np.ascontiguousarray(lens, dtype=np.int64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    out_off = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=out_off[1:])
    out = np.empty(int(out_off[-1]), dtype=np.uint8)
    src = np.asarray(src)   # a memory map as a plain (read-only) array: one compiled type
    n, workers = lens.size, max(1, min(8, os.cpu_count() or 1))
    if n == 0:
        return out
    cuts = np.searchsorted(out_off, np.linspace(0, out_off[-1], workers + 1)).tolist()
    cuts[0], cuts[-1] = 0, n
    spans = [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    copy = _numpy_runs if preloading() and not ready(_copy_runs) else _copy_runs
    if len(spans) == 1:
        copy(src, starts, lens, out_off, out, 0, n)
        return out
    with ThreadPoolExecutor(max_workers=len(spans)) as pool:
        list(pool.map(lambda ab: copy(src, starts, lens, out_off, out, ab[0], ab[1]), spans))
    return out
