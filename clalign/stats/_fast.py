"""Compiled (numba) array form of Spouge's E-value, for scoring every subject of a search.

Same arithmetic, same order of operations as :func:`clalign.stats.evalue.spouge_evalue`
(tested equal to it bit for bit).
"""
from __future__ import annotations

import math

from ..runtime.jit import njit
import numpy as np

_INV_SQRT_2PI = 0.39894228040143267793994605993438


@njit(cache=True, nogil=True)
def spouge_evalues(scores, slens, qlen, lam, k, glam, a, b, alpha, beta, sigma, tau, db_length):
    """E-values of ``scores[i]`` against subjects of length ``slens[i]`` for one query."""
    n = scores.shape[0]
    out = np.empty(n, dtype=np.float64)
    scale = lam / glam
    ai = a * scale
    alphai = alpha * scale
    sig = sigma * scale
    r2 = math.sqrt(2.0)
    for i in range(n):
        y = scores[i]
        m_li = qlen - (ai * y + b)
        vi = max(2.0 * alphai / lam, alphai * y + beta)
        svi = math.sqrt(vi)
        mF = m_li / svi
        PmF = math.erfc(-mF / r2) / 2.0
        p1 = m_li * PmF + svi * _INV_SQRT_2PI * math.exp(-0.5 * mF * mF)
        n_lj = slens[i] - (ai * y + b)
        nF = n_lj / svi
        PnF = math.erfc(-nF / r2) / 2.0
        p2 = n_lj * PnF + svi * _INV_SQRT_2PI * math.exp(-0.5 * nF * nF)
        c = max(2.0 * sig / lam, sig * y + tau)
        area = p1 * p2 + c * PmF * PnF
        dbscale = db_length / slens[i] if db_length != 0.0 else 1.0
        out[i] = area * k * math.exp(-lam * y) * dbscale
    return out
