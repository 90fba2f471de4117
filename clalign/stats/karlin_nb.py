"""Ungapped Karlin-Altschul parameters of one query, compiled (numba, no GIL).

``ungapped_karlin`` is ``karlin.ungapped_params`` with the query's residue counts in place of its
distribution, in one call: a blastp query's set-up runs beside the device's drivers and the
gapped stages' threads, and the plain version's Python loops (the K series above all) held the
interpreter for ~1.7 ms per query. Every step follows ``blast_stat.c``'s operations in its order
(``Blast_ResFreqResComp``, ``Blast_ResFreqStdComp``/``Blast_ResFreqNormalize``,
``BlastScoreFreqCalc``, ``NlmKarlinLambdaNR``, ``BlastKarlinLtoH`` with ``BLAST_Powi``,
``BlastKarlinLHtoK``'s in-place convolution and ``BLAST_Expm1``): where the plain version sums
with numpy (pairwise sums, BLAS dot products, ``np.convolve``) the two may differ in the last
bits of K, never in the integers the search derives from lambda and K (tested on real proteins).
"""
from __future__ import annotations

import math

from ..runtime.jit import njit
import numpy as np

SCORE_MIN = -32768
SCORE_MAX = 32767
LAMBDA_TOLERANCE = 1.0e-5   # BLAST_KARLIN_LAMBDA_ACCURACY_DEFAULT
LAMBDA_START = 0.5          # BLAST_KARLIN_LAMBDA0_DEFAULT
K_SUMLIMIT = 1.0e-4         # BLAST_KARLIN_K_SUMLIMIT_DEFAULT
K_ITER_MAX = 100            # BLAST_KARLIN_K_ITER_MAX


@njit(cache=True, nogil=True)
def _powi(x, n):
    """``BLAST_Powi``: x**n by repeated squaring."""
    if n == 0:
        return 1.0
    if x == 0.0:
        return np.inf if n < 0 else 0.0
    if n < 0:
        x = 1.0 / x
        n = -n
    y = 1.0
    while n > 0:
        if n & 1:
            y *= x
        n //= 2
        x *= x
    return y


@njit(cache=True, nogil=True)
def _expm1(x):
    """``BLAST_Expm1``."""
    ax = abs(x)
    if ax > 0.33:
        return math.exp(x) - 1.0
    if ax < 1.0e-16:
        return x
    return x * (1. + x * (1. / 2. + x * (1. / 6. + x * (1. / 24. + x * (1. / 120. + x * (
        1. / 720. + x * (1. / 5040. + x * (1. / 40320. + x * (1. / 362880. + x * (
            1. / 3628800. + x * (1. / 39916800. + x * (1. / 479001600. + x / 6227020800.))))))))))))


@njit(cache=True, nogil=True)
def _gcd(a, b):
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a


@njit(cache=True, nogil=True)
def std_frequencies(raw):
    """``Blast_ResFreqNormalize`` of the background counts per code (sequential sum)."""
    s = 0.0
    for i in range(raw.shape[0]):
        s += raw[i]
    out = np.zeros(raw.shape[0])
    if s <= 0.0:
        return out
    for i in range(raw.shape[0]):
        out[i] = raw[i] / s * 1.0
    return out


@njit(cache=True, nogil=True)
def _lambda_nr(sp, low, high, d):
    """``NlmKarlinLambdaNR`` (itmax 20, maxNewton 37); ``sp[s - low]`` is P(score s)."""
    x0 = math.exp(-LAMBDA_START)
    x = x0 if 0.0 < x0 < 1.0 else 0.5
    a, b, f = 0.0, 1.0, 4.0
    newton = False
    for k in range(20):
        fold, was_newton, newton = f, newton, False
        g = 0.0
        f = sp[0]
        i = low + d
        while i < 0:
            g = x * g + f
            f = f * x + sp[i - low]
            i += d
        g = x * g + f
        f = f * x + sp[-low] - 1
        i = d
        while i <= high:
            g = x * g + f
            f = f * x + sp[i - low]
            i += d
        if f > 0:
            a = x
        elif f < 0:
            b = x
        else:
            break
        if b - a < 2 * a * (1 - b) * LAMBDA_TOLERANCE:
            x = (a + b) / 2
            break
        if k >= 37 or (was_newton and abs(f) > 0.9 * abs(fold)) or g >= 0:
            x = (a + b) / 2
        else:
            step = -f / g
            y = x + step
            if y <= a or y >= b:
                x = (a + b) / 2
            else:
                newton = True
                x = y
                if abs(step) < LAMBDA_TOLERANCE * x * (1 - x):
                    break
    return -math.log(x) / d


@njit(cache=True, nogil=True)
def _k_from(sp, low, high, lam, H, avg):
    """``BlastKarlinLHtoK``: closed forms, else the in-place convolution series."""
    rng = high - low
    d = -low
    i = 1
    while i <= rng and d > 1:
        if sp[i] != 0.0:
            d = _gcd(d, i)
        i += 1
    high //= d
    low //= d
    lam *= d
    rng = high - low
    first_term = H / lam
    eml = math.exp(-lam)
    if low == -1 and high == 1:
        pl, ph = sp[0], sp[rng * d]
        return (pl - ph) * (pl - ph) / pl
    if low == -1 or high == 1:
        if high != 1:
            av = avg / d
            first_term = (av * av) / first_term
        return first_term * (1.0 - eml)
    P = np.zeros(K_ITER_MAX * rng + 1)
    P[0] = 1.0
    inner = 1.0
    outer = 0.0
    lo_sc = 0
    hi_sc = 0
    it = 0
    while it < K_ITER_MAX and inner > K_SUMLIMIT:
        first = rng
        last = rng
        lo_sc += low
        hi_sc += high
        t = hi_sc - lo_sc
        while t >= 0:
            acc = 0.0
            a = t - first
            j = first
            while a >= t - last:
                acc += P[a] * sp[j]
                a -= 1
                j += 1
            P[t] = acc
            if first:
                first -= 1
            if t <= rng:
                last -= 1
            t -= 1
        # Horner's rule from the lowest score
        inner = P[0]
        s = lo_sc + 1
        pos = 0
        while s < 0:
            pos += 1
            inner = P[pos] + inner * eml
            s += 1
        inner *= eml
        while s <= hi_sc:
            pos += 1
            inner += P[pos]
            s += 1
        it += 1
        inner /= it
        outer += inner
    return -math.exp(-2.0 * outer) / (first_term * _expm1(-lam))


@njit(cache=True, nogil=True)
def ungapped_karlin(scores, counts, p_subject):
    """(lambda, K, H) of ``scores`` (codes x codes) for a query with residue ``counts`` (ambiguous
    codes already zeroed) against the distribution ``p_subject``; (-1, -1, -1) where BLAST+ fails
    (``Blast_KarlinBlkUngappedCalc``'s error exit)."""
    n = scores.shape[0]
    total = 0.0
    for i in range(n):
        total += counts[i]
    pq = np.zeros(n)
    if total != 0.0:
        for i in range(n):
            pq[i] = counts[i] / total
    lo_s, hi_s = SCORE_MAX, SCORE_MIN          # BlastScoreBlkMaxScoreSet
    for i in range(n):
        for j in range(n):
            s = scores[i, j]
            if s <= SCORE_MIN or s >= SCORE_MAX:
                continue
            lo_s = min(lo_s, s)
            hi_s = max(hi_s, s)
    sprob = np.zeros(hi_s - lo_s + 1)
    for i in range(n):
        for j in range(n):
            s = scores[i, j]
            if s >= lo_s:
                sprob[s - lo_s] += pq[i] * p_subject[j]
    ssum = 0.0
    low = high = SCORE_MIN
    for k in range(sprob.shape[0]):
        if sprob[k] > 0.0:
            ssum += sprob[k]
            high = k + lo_s
            if low == SCORE_MIN:
                low = k + lo_s
    avg = 0.0
    sp = np.zeros(1)
    if low != SCORE_MIN:
        sp = sprob[low - lo_s:high - lo_s + 1].copy()
        if ssum > 0.0001 or ssum < -0.0001:
            for k in range(sp.shape[0]):
                sp[k] /= ssum
                avg += (k + low) * sp[k]
    fail = (-1.0, -1.0, -1.0)
    if avg >= 0.0 or low >= 0 or high <= 0 or high - low > 2 * SCORE_MAX:
        return fail
    d = -low
    i = 1
    while i <= high - low and d > 1:
        if sp[i] != 0.0:
            d = _gcd(d, i)
        i += 1
    lam = _lambda_nr(sp, low, high, d)
    if lam < 0.0:
        return fail
    et = math.exp(-lam)                         # BlastKarlinLtoH
    acc = low * sp[0]
    for s in range(low + 1, high + 1):
        acc = s * sp[s - low] + et * acc
    scale = _powi(et, high)
    H = lam * acc / scale if scale > 0.0 else lam * math.exp(lam * high + math.log(acc))
    if H < 0.0:
        return fail
    if lam <= 0.0 or H <= 0.0:                  # BlastKarlinLHtoK's own checks
        return fail
    K = _k_from(sp, low, high, lam, H, avg)
    if K < 0.0:
        return fail
    return lam, K, H
