"""HMMER's biased-composition filter score (``p7_bg_FilterScore``), in float32 as HMMER computes it.

The pipeline needs it between the MSV and Viterbi filters: a target passes the bias filter
when its MSV score measured against this score (instead of the null model) still has
P <= F1, and the Viterbi filter's P-value is measured against it too. HMMER (bg.c
``p7_bg_SetFilter``; easel ``esl_hmm_Configure``/``esl_hmm_Forward``) builds a two-state HMM:
state 0 emits the background, state 1 the model's composition (COMPO line; zeros when the
file has none, see :data:`COMPO_UNSET`), mean length M/8, entered with probability 0.001.
``p7_bg_SetFilter`` gives state 0 a mean length of 400, but ``p7_bg_SetLength``, called for every target after it,
sets state 0's transitions to (p1, 1 - p1), p1 = L/(L+1): the pipeline scores with those.
Emission odds are divided by the background; degenerate residues take the summed odds over
the summed background, gap/``*``/``~`` odds 1. The scaled Forward score plus the null length
term ``L logf(p1) + logf(1 - p1)`` is the filter score in nats.

The arithmetic follows the C order in float32 (products and sums in single precision, the
row scale factors' logs in double rounded to float). A caller that must be exact at a
threshold still decides near it with HMMER itself (see :mod:`clalign.hmm.vit_search`).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..runtime.jit import njit
from .profile import BACKGROUND, DEGENERATE, EASEL_AMINO, KP

K = 20
#: The composition a model without a COMPO line is searched with: zeros, as pyhmmer's optimized
#: profile holds it (``OptimizedProfile.compositions``; HMMER's own C initialises p7_COMPO_UNSET,
#: -1, which would make the filter score NaN): pyhmmer runs the stages after ours, so its view holds.
COMPO_UNSET = 0.0


def filter_hmm(M: int, compo) -> tuple:
    """(t (2, 3), pi (2,), eo (Kp, 2)) float32 of HMMER's filter HMM for a model of M states."""
    f32 = np.float32
    L0 = f32(400.0)
    L1 = f32(float(f32(M)) / 8.0)
    t = np.zeros((2, 3), dtype=np.float32)
    t[0, 0] = L0 / (L0 + f32(1.0))
    t[0, 1] = f32(1.0) / (L0 + f32(1.0))
    t[1, 0] = f32(1.0) / (L1 + f32(1.0))
    t[1, 1] = L1 / (L1 + f32(1.0))
    t[:, 2] = 1.0
    pi = np.array([0.999, 0.001], dtype=np.float32)
    e = np.stack([BACKGROUND, np.asarray(compo, dtype=np.float32)])          # (2, K)
    eo = np.zeros((KP, 2), dtype=np.float32)
    eo[:K] = (e / BACKGROUND).T
    for sym in ("-", "*", "~"):
        eo[EASEL_AMINO.index(sym)] = 1.0
    for sym, members in DEGENERATE.items():
        idx = sorted(EASEL_AMINO.index(m) for m in members)
        for k in range(2):
            num, den = f32(0.0), f32(0.0)
            for y in idx:
                num = f32(num + e[k, y])
                den = f32(den + BACKGROUND[y])
            eo[EASEL_AMINO.index(sym), k] = num / den if den > 0 else f32(0.0)
    return t, pi, eo


@njit(cache=True, nogil=True, error_model="numpy")      # x/0 as C: inf or NaN
def _forward(codes, a, b, t00, t01, t, pi, eo, cmap):
    """esl_hmm_Forward of the two-state filter HMM on cmap[codes[a:b]] (float32, scaled rows);
    state 0's transitions t00, t01 are the target's (p7_bg_SetLength), the rest ``t``."""
    f1 = np.float32(1.0)
    logsc = np.float32(0.0)
    x = cmap[codes[a]]
    d0 = np.float32(eo[x, 0] * pi[0])
    d1 = np.float32(eo[x, 1] * pi[1])
    mx = np.float32(0.0)
    mx = d0 if d0 > mx else mx
    mx = d1 if d1 > mx else mx
    d0 = np.float32(d0 / mx)
    d1 = np.float32(d1 / mx)
    logsc = np.float32(logsc + np.float32(np.log(np.float64(mx))))
    for i in range(a + 1, b):
        x = cmap[codes[i]]
        n0 = np.float32(np.float32(np.float32(0.0) + np.float32(d0 * t00)) + np.float32(d1 * t[1, 0]))
        n0 = np.float32(n0 * eo[x, 0])
        n1 = np.float32(np.float32(np.float32(0.0) + np.float32(d0 * t01)) + np.float32(d1 * t[1, 1]))
        n1 = np.float32(n1 * eo[x, 1])
        mx = np.float32(0.0)
        mx = n0 if n0 > mx else mx
        mx = n1 if n1 > mx else mx
        d0 = np.float32(n0 / mx)
        d1 = np.float32(n1 / mx)
        logsc = np.float32(logsc + np.float32(np.log(np.float64(mx))))
    end = np.float32(np.float32(np.float32(0.0) + np.float32(d0 * t[0, 2])) + np.float32(d1 * t[1, 2]))
    logsc = np.float32(logsc + np.float32(np.log(np.float64(end))))
    return logsc * f1


@njit(cache=True, nogil=True, error_model="numpy")
def _filter_scores(codes, starts, ends, stops, t1, pi, eo, star, cmap, out, lo, hi):
    """Scores of sequences lo..hi-1 (serial, no GIL: callers run ranges in threads)."""
    ident = np.arange(256).astype(np.uint8)
    for n in range(lo, hi):
        a, b, k = starts[n], ends[n], stops[n]
        L = b - a + k
        if L == 0:
            out[n] = np.float32(-np.inf)
            continue
        p1 = np.float32(np.float32(L) / np.float32(L + 1))
        q1 = np.float32(np.float32(1.0) - p1)     # p7_bg_SetLength, after p7_bg_SetFilter
        if k:      # trailing '*' residues (odds 1): the sequence as HMMER reads it
            buf = np.empty(L, dtype=np.uint8)
            for i in range(b - a):
                buf[i] = cmap[codes[a + i]]
            buf[b - a:] = star
            fw = _forward(buf, 0, L, p1, q1, t1, pi, eo, ident)
        else:
            fw = _forward(codes, a, b, p1, q1, t1, pi, eo, cmap)
        lp1 = np.float32(np.log(np.float64(p1)))
        l1p = np.float32(np.log(np.float64(np.float32(1.0 - np.float64(p1)))))
        out[n] = np.float32(np.float32(fw + np.float32(np.float32(L) * lp1)) + l1p)


#: Fewest residues per piece of one call handed to the pool (a piece costs ~16 ns a residue).
PIECE_RESIDUES = 1 << 18
_POOLS: dict = {}                   # threads -> the pool of that size
_POOL_LOCK = threading.Lock()


def _pool(threads: int) -> ThreadPoolExecutor:
    """One pool of ``threads`` threads for every call of that size: the pieces of calls made
    from several threads at once (a search's device stage) share them, none waits its turn."""
    with _POOL_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = _POOLS[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="clalign-bias")
        return pool


def _pieces(starts, ends, stops, threads: int) -> np.ndarray:
    """Bounds of up to 4 x ``threads`` consecutive pieces of about equal residues (>= PIECE_RESIDUES)."""
    n = starts.shape[0]
    work = np.cumsum(ends - starts + stops + 1)
    total = int(work[-1]) if n else 0
    k = max(1, min(4 * threads, total // PIECE_RESIDUES))
    cuts = np.searchsorted(work, np.arange(1, k) * (total / k))
    return np.unique(np.concatenate([[0], cuts, [n]]))


def full_map(cmap=None) -> np.ndarray:
    """The 256-byte code map of ``cmap`` (codes past it, or all of them without one, map to
    themselves): what both bias filters read a database's codes through."""
    full = np.arange(256, dtype=np.uint8)
    if cmap is not None:
        cmap = np.asarray(cmap, dtype=np.uint8)
        full[:cmap.size] = cmap
    return full


def filter_scores(M: int, compo, codes, starts, ends, stops=None, cmap=None, threads: int | None = None) -> np.ndarray:
    """p7_bg_FilterScore (float32 nats) of sequences ``codes[starts[n]:ends[n]]`` (easel amino
    codes, or any codes that ``cmap``, 256 bytes, turns into them: a search hands the
    database's own codes and :data:`clalign.hmm.profile.EASEL_OF_CODE`, no translated copy)
    plus ``stops[n]`` trailing ``*`` residues, for a model of M states and composition
    ``compo`` (20 floats, easel order). Sequences are scored in parallel: pieces in a shared
    pool of ``threads`` threads (:func:`_pool`; default: every core; a search gives its ``--cpu``)."""
    threads = max(1, int(threads or os.cpu_count() or 1))
    t, pi, eo = filter_hmm(M, np.full(K, COMPO_UNSET, dtype=np.float32) if compo is None else compo)
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    stops = np.zeros_like(starts) if stops is None else np.asarray(stops, dtype=np.int64)
    out = np.empty(starts.shape[0], dtype=np.float32)
    args = (np.asarray(codes, dtype=np.uint8), starts, ends, stops, t, pi, eo, np.uint8(EASEL_AMINO.index("*")),
            full_map(cmap), out)
    bounds = _pieces(starts, ends, stops, threads)
    if bounds.size <= 2:
        _filter_scores(*args, 0, starts.shape[0])
        return out
    for f in [_pool(threads).submit(_filter_scores, *args, int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]:
        f.result()
    return out
