"""Compiled forms of :mod:`clalign.hmm.bytepass`: the per-length MSV byte thresholds and the
survivors' scores, one call each per model, without the GIL.

Why: the numpy forms make ~40 calls per model on arrays of ~3,000 length classes and ~10,000
survivors. From the device stage's 8 threads, beside pyhmmer's 16, those calls queue for the
interpreter lock: 105 thread-seconds of the 1,000-model search on the H100 host (py-spy, run
y16). The arithmetic here is the numpy forms' own, operation for operation in the same
precisions (float32 scores, float64 bits and Gumbel), so the results are equal
(``tests/test_hmm_host.py``).
"""
from __future__ import annotations

import math

import numpy as np

from ..runtime.jit import njit
from .pvalue import LN2, _SMALLX1


@njit(cache=True, nogil=True, inline="always")
def _nats(xj, tjb, base, bias, tec, tbm, scale):
    """:func:`clalign.hmm.reference.msv_from_bytes` of one non-overflowing byte."""
    xb = base - ((tjb + tbm) & 0xFF)
    if xb < 0:
        xb = 0
    if tjb + tbm + tec + bias < 127 and xj <= base and xb - tec > xj:
        xj = xb - tec
    f = np.float32(np.float32(xj - tjb) - np.float32(base))
    return np.float32(np.float32(f / scale) - np.float32(3.0))


@njit(cache=True, nogil=True, inline="always")
def _passes(nats, null, mu, lam, F1, slack, near):
    """:func:`clalign.hmm.pvalue.msv_pass` of one score (``near``: its threshold less 1e-3)."""
    bits = np.float64(np.float32((np.float64(nats) - np.float64(null)) / LN2))
    if slack != 0.0:
        bits = bits + slack
    if not bits >= near:                    # NaN fails too
        return False
    if bits == np.inf:
        return 0.0 <= F1
    ey = -math.exp(-(lam * (bits - mu)))
    p = -ey if abs(ey) < _SMALLX1 else 1.0 - math.exp(ey)
    return p <= F1


@njit(cache=True, nogil=True, inline="always")
def _ok(xj, tjb, null, base, bias, tec, tbm, scale, mu, lam, F1, slack, near):
    return _passes(_nats(xj, tjb, base, bias, tec, tbm, scale), null, mu, lam, F1, slack, near)


@njit(cache=True, nogil=True)
def class_thresholds(uniq, tjb, null, base, bias, tec, tbm, scale, mu, lam, F1, slack, thr, window):
    """Smallest passing byte (256: none) per length class: the window around the inverted
    conversion's estimate first, bisection over 0..256 where it misses (as the numpy form)."""
    n = uniq.shape[0]
    out = np.empty(n, dtype=np.int64)
    near = thr - 1e-3
    bits = thr - slack
    for c in range(n):
        tj, nu = tjb[c], null[c]
        if not np.isfinite(bits):
            g = 0
        else:
            x = ((bits * LN2 + np.float64(null[c]) + 3.0) * np.float64(scale) + np.float64(base)
                 + np.float64(tjb[c]))
            x = math.ceil(x) if np.isfinite(x) else (0.0 if x == -np.inf else 256.0)
            g = int(min(max(x, 0.0), 256.0))
        found = -1
        below_failed = False
        for s in range(-window, window + 1):
            b = min(max(g + s, 0), 256)
            if b == 256 or _ok(b, tj, nu, base, bias, tec, tbm, scale, mu, lam, F1, slack, near):
                found = b
                below_failed = s > -window or b == 0
                break
        if found >= 0 and below_failed:
            out[c] = found
            continue
        lo, hi = 0, 256
        while lo < hi:
            mid = min((lo + hi) // 2, 255)
            if _ok(mid, tj, nu, base, bias, tec, tbm, scale, mu, lam, F1, slack, near):
                hi = mid
            else:
                lo = mid + 1
        out[c] = lo
    return out


@njit(cache=True, nogil=True)
def survivors(raw, inv, t, tjb, base, bias, tec, tbm, scale):
    """(indices, float32 nats) of the targets whose byte reaches its class threshold ``t``
    (or that overflowed, where the class can pass at all; 257: an empty class, never)."""
    n = raw.shape[0]
    count = 0
    for i in range(n):
        ti = t[inv[i]]
        if np.int16(raw[i] & 0xFF) >= ti or ((raw[i] >> 8) & 1 == 1 and ti < 257):
            count += 1
    idx = np.empty(count, dtype=np.int64)
    nats = np.empty(count, dtype=np.float32)
    k = 0
    for i in range(n):
        c = inv[i]
        ti = t[c]
        xj = np.int64(raw[i] & 0xFF)
        ovf = (raw[i] >> 8) & 1 == 1
        if xj >= ti or (ovf and ti < 257):
            idx[k] = i
            nats[k] = np.float32(np.inf) if ovf else _nats(xj, tjb[c], base, bias, tec, tbm, scale)
            k += 1
    return idx, nats
