"""HMMER's MSV filter test (P <= F1) straight from the S-lane kernel's bytes, per length.

The MSV kernel gives, per target, its final ``xJ`` byte and an overflow flag; the score in
nats (:func:`clalign.hmm.reference.msv_from_bytes`) and the P-value test
(:func:`clalign.hmm.pvalue.msv_pass`) depend on the target only through ``xJ``, the flag and
its length L. Both are monotone in ``xJ`` (the SSV case raises ``xJ`` to at most ``base_b``,
below any ``xJ > base_b``; float rounding and the Gumbel survival keep the order), so for
each distinct length there is a smallest passing byte. We find it by bisection over 0..256
with the very same functions on the distinct lengths (~3,000 for 572,100 proteins), and test
every target with one gather and compare: the same set as scoring every target, in a few
milliseconds instead of ~50 per model.

The search for that byte starts from the score conversion inverted in floating point
(:func:`_guess`) and tests the :data:`WINDOW` bytes on either side with those functions, all
classes in one vectorised pass; only classes whose smallest passing byte is not inside the
window (none seen; the SSV case at permissive F1 can cause it) are bisected. Why: the
bisection's ~200 small numpy calls per model, made from 8 device-stage threads beside
pyhmmer's, took ~88 ms a model on the H100 host (1,000 models: 88 thread-seconds).
"""
from __future__ import annotations

import sys

import numpy as np

from ..runtime.jit import njit
from . import reference
from .options import check
from .pvalue import msv_pass


#: Bytes tested on either side of the inverted conversion's estimate (its float error is far
#: below one byte: 1/scale_b = 1/3 bit).
WINDOW = 2


def _passes(profile, hmm, xj, lengths, F1, slack_bits) -> np.ndarray:
    zero = np.zeros(xj.size, dtype=np.int64)
    return msv_pass(reference.msv_from_bytes(profile, xj, zero, lengths), lengths, hmm, F1,
                    slack_bits=slack_bits)


def _guess(profile, hmm, uniq, F1, slack_bits) -> np.ndarray:
    """The smallest passing byte per length by the conversion inverted in floating point
    (ignoring the SSV case): xJ = ((T - slack) ln 2 + null(L) + 3) scale + base + tjb(L),
    T the bit threshold of P <= F1; clipped to 0..256."""
    from .pvalue import LN2, _null_nats, msv_bit_threshold

    bits = msv_bit_threshold(hmm, F1) - slack_bits
    if not np.isfinite(bits):
        return np.zeros(uniq.size, dtype=np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):      # L = 0: NaN, clipped to 256
        nats = bits * LN2 + _null_nats(uniq).astype(np.float64) + 3.0
        xj = nats * float(profile.scale_b) + float(profile.base_b) + reference.tjb_table(profile, uniq)
    return np.clip(np.ceil(np.nan_to_num(xj, nan=256.0, posinf=256.0, neginf=0.0)), 0, 256).astype(np.int64)


def class_thresholds(profile, hmm, uniq, F1, slack_bits) -> np.ndarray:
    """Per distinct length, the smallest ``xJ`` byte that passes (256: none passes)."""
    uniq = np.asarray(uniq, dtype=np.int64)
    if not uniq.size:
        return np.zeros(0, dtype=np.int64)
    steps = np.arange(-WINDOW, WINDOW + 1, dtype=np.int64)
    cand = np.clip(_guess(profile, hmm, uniq, F1, slack_bits)[None, :] + steps[:, None], 0, 256)
    lens = np.broadcast_to(uniq, cand.shape)
    ok = cand == 256                                   # 256 stands for "none passes"
    test = ~ok
    ok[test] = _passes(profile, hmm, cand[test], lens[test], F1, slack_bits)
    first = np.argmax(ok, axis=0)
    cols = np.arange(uniq.size)
    out = cand[first, cols]
    found = ok.any(axis=0) & ((first > 0) | (cand[0] == 0))   # the byte below the window failed
    if not found.all():
        out[~found] = _bisect(profile, hmm, uniq[~found], F1, slack_bits)
    return out


def _bisect(profile, hmm, uniq, F1, slack_bits) -> np.ndarray:
    """:func:`class_thresholds` by bisection over 0..256 (the window's fallback)."""
    lo = np.zeros(uniq.size, dtype=np.int64)
    hi = np.full(uniq.size, 256, dtype=np.int64)
    while (lo < hi).any():
        mid = np.minimum((lo + hi) // 2, 255)
        ok = _passes(profile, hmm, mid, uniq, F1, slack_bits)
        open_ = lo < hi
        hi = np.where(open_ & ok, mid, hi)
        lo = np.where(open_ & ~ok, mid + 1, lo)
    return lo


def msv_pass_bytes(profile, hmm, raw, lengths, F1=0.02, slack_bits=0.0) -> np.ndarray:
    """Boolean array: the targets of ``msv_pass(msv_from_bytes(profile, raw & 255,
    (raw >> 8) & 1, lengths), lengths, hmm, F1, slack_bits) & (lengths > 0)``."""
    raw = np.asarray(raw)
    uniq, inv = reference.length_classes(lengths)
    if not inv.size:
        return np.zeros(0, dtype=bool)
    if inv.size >= COMPILED_MIN and "numba" in sys.modules:
        t = _thresholds_nb(profile, hmm, uniq, F1, slack_bits)
        keep = np.empty(inv.size, dtype=bool)
        _keep(np.ascontiguousarray(raw, dtype=np.uint32), np.ascontiguousarray(inv, dtype=np.int64), t, keep)
        return keep
    t = np.where(uniq > 0, class_thresholds(profile, hmm, uniq, F1, slack_bits), 257).astype(np.int16)
    ti = t[inv]
    keep = (raw & 0xFF).astype(np.int16) >= ti
    keep |= ((raw >> 8) & 1).astype(bool) & (ti < 257)      # overflow: +inf nats, always passes
    return keep


def msv_survivors(profile, hmm, raw, lengths, F1=0.02, slack_bits=0.0) -> tuple:
    """(indices, float32 nats) of the targets :func:`msv_pass_bytes` keeps: the indices of its
    mask and ``msv_from_bytes`` of their bytes, in one compiled pass where numba is loaded
    already, else in numpy (a GPU search need not load numba for it)."""
    uniq, inv = reference.length_classes(lengths)
    if not inv.size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if "numba" not in sys.modules:
        idx = np.flatnonzero(msv_pass_bytes(profile, hmm, raw, lengths, F1, slack_bits))
        r = np.asarray(raw)[idx]
        nats = reference.msv_from_bytes(profile, r & 0xFF, (r >> 8) & 1, np.asarray(lengths)[idx])
        return idx.astype(np.int64), np.asarray(nats, dtype=np.float32)
    from . import bytepass_nb as nb

    uniq = np.ascontiguousarray(uniq, dtype=np.int64)
    terms = _terms(profile, uniq)
    t = _thresholds_nb(profile, hmm, uniq, F1, slack_bits, terms)
    return nb.survivors(np.ascontiguousarray(raw, dtype=np.uint32), np.ascontiguousarray(inv, dtype=np.int64), t,
                        terms[0], *_consts(profile))


def _consts(profile) -> tuple:
    return (int(profile.base_b), int(profile.bias_b), int(profile.tec_b), int(profile.tbm_b),
            np.float32(profile.scale_b))


def _terms(profile, uniq) -> tuple:
    """(tjb int64, null float32) of each length class."""
    from .pvalue import _null_nats

    with np.errstate(all="ignore"):
        return (np.ascontiguousarray(reference.tjb_table(profile, uniq), dtype=np.int64),
                np.ascontiguousarray(_null_nats(uniq), dtype=np.float32))


def _thresholds_nb(profile, hmm, uniq, F1, slack_bits, terms=None) -> np.ndarray:
    """:func:`class_thresholds` (int16; 257 for the empty length) by the compiled form
    (``terms``: :func:`_terms` of ``uniq`` if the caller has them)."""
    from . import bytepass_nb as nb
    from .pvalue import _stats, msv_bit_threshold

    check("F1", F1)
    mu, lam = _stats(hmm)
    uniq = np.ascontiguousarray(uniq, dtype=np.int64)
    t = nb.class_thresholds(uniq, *(terms or _terms(profile, uniq)), *_consts(profile), mu, lam, float(F1),
                            float(slack_bits), float(msv_bit_threshold((mu, lam), F1)), WINDOW)
    return np.where(uniq > 0, t, 257).astype(np.int16)


#: Fewest targets tested by the compiled loop (when numba is loaded already): one call without
#: the GIL instead of six numpy passes over the database.
COMPILED_MIN = 1 << 15


@njit(cache=True, nogil=True, boundscheck=False)
def _keep(raw, inv, t, out):
    """out[i]: byte >= its class threshold, or overflow where the class can pass at all."""
    for i in range(raw.size):
        ti = t[inv[i]]
        out[i] = np.int16(raw[i] & 0xFF) >= ti or ((raw[i] >> 8) & 1 == 1 and ti < 257)
