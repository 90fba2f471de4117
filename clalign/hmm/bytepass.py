"""HMMER's MSV filter test (P <= F1) straight from the S-lane kernel's bytes, per length.

The MSV kernel gives, per target, its final ``xJ`` byte and an overflow flag; the score in
nats (:func:`clalign.hmm.reference.msv_from_bytes`) and the P-value test
(:func:`clalign.hmm.pvalue.msv_pass`) depend on the target only through ``xJ``, the flag and
its length L. Both are monotone in ``xJ`` (the SSV case raises ``xJ`` to at most ``base_b``,
below any ``xJ > base_b``; float rounding and the Gumbel survival keep the order), so for
each distinct length there is a smallest passing byte. We find it by bisection over 0..256
with the very same functions on the distinct lengths (~3,000 for 572,100 proteins, 9 steps),
and test every target with one gather and compare: the same set as scoring every target,
in a few milliseconds instead of ~50 per model.
"""
from __future__ import annotations

import numpy as np

from . import reference
from .pvalue import msv_pass


def class_thresholds(profile, hmm, uniq, F1, slack_bits) -> np.ndarray:
    """Per distinct length, the smallest ``xJ`` byte that passes (256: none passes)."""
    uniq = np.asarray(uniq, dtype=np.int64)
    lo = np.zeros(uniq.size, dtype=np.int64)
    hi = np.full(uniq.size, 256, dtype=np.int64)
    zero = np.zeros(uniq.size, dtype=np.int64)
    while (lo < hi).any():
        mid = np.minimum((lo + hi) // 2, 255)
        nats = reference.msv_from_bytes(profile, mid, zero, uniq)
        ok = msv_pass(nats, uniq, hmm, F1, slack_bits=slack_bits)
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
    t = class_thresholds(profile, hmm, uniq, F1, slack_bits)
    t = np.where(uniq > 0, t, 257).astype(np.int16)         # an empty target never passes
    ti = t[inv]
    keep = (raw & 0xFF).astype(np.int16) >= ti
    keep |= ((raw >> 8) & 1).astype(bool) & (ti < 257)      # overflow: +inf nats, always passes
    return keep
