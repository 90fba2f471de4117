"""Compiled (numba) hot loops of SEG: the per-position window entropies and the trim search.

Same rule and the same floating-point operations in the same order as the plain reference in
``seg.py`` (``_entropies_ref``, ``_trim_ref``); the segment bookkeeping (recursion, merge) stays
in Python there. ``cls`` holds each residue's index among the 20 standard letters, -1 for the
others ("bogus").
"""
from __future__ import annotations

import math

from ..runtime.jit import njit
import numpy as np

_LN2 = 0.69314718055994530941723212145818
_LN20 = 2.9957322735539909


@njit(cache=True, nogil=True)
def _state(comp):
    """Non-zero counts, largest first."""
    sv = np.sort(comp[comp > 0])
    return sv[::-1].copy()


@njit(cache=True, nogil=True)
def _entropy(comp, log_win10):
    sv = _state(comp)
    total = 0
    for c in sv:
        total += c
    if total == 0:
        return 0.0
    ent = 0.0
    if total == 10:
        for c in sv:
            ent += float(c) * log_win10[c] / _LN2
    else:
        for c in sv:
            ent += float(c) * math.log(float(c) / float(total)) / _LN2
    return abs(ent / float(total))


@njit(cache=True, nogil=True)
def _lnfact(n, table):
    if n < table.shape[0]:
        return table[n]
    return (n + 0.5) * math.log(n) - n + 0.9189385332


@njit(cache=True, nogil=True)
def _ln_prob(comp, length, table):
    sv = _state(comp)
    padded = np.zeros(21, dtype=np.int64)
    for i in range(len(sv)):   # a loop: no numba slice-copy error path
        padded[i] = sv[i]
    ans = table[20]
    if len(sv) > 0:
        total = 20
        klass = 1
        svim1 = padded[0]
        i = 0
        while True:
            i += 1
            if i == 20:
                ans -= _lnfact(klass, table)
                break
            svi = padded[i]
            if svi == svim1:
                klass += 1
            else:
                total -= klass
                ans -= _lnfact(klass, table)
                if svi == 0:
                    ans -= _lnfact(total, table)
                    break
                klass = 1
            svim1 = svi
    ans2 = 0.0
    if ans > -100000.0:
        ans2 = _lnfact(length, table)
        for c in sv:
            ans2 -= _lnfact(c, table)
    return ans + ans2 - float(length) * _LN20


@njit(cache=True, nogil=True)
def entropies(cls, start, length, window, maxbogus, log_win10):
    """Entropy of the window centred at each position of cls[start:start+length] (-1: none)."""
    downset = (window + 1) // 2 - 1
    upset = window - downset
    h = np.full(length, -1.0)
    comp = np.zeros(20, dtype=np.int64)
    bogus = 0
    for k in range(start, start + window):
        if cls[k] >= 0:
            comp[cls[k]] += 1
        else:
            bogus += 1
    for i in range(downset, length - upset + 1):
        if bogus <= maxbogus:
            h[i] = _entropy(comp, log_win10)
        left = start + i - downset
        if left + window < start + length:
            old, new = cls[left], cls[left + window]
            if old >= 0:
                comp[old] -= 1
            else:
                bogus -= 1
            if new >= 0:
                comp[new] += 1
            else:
                bogus += 1
    return h


@njit(cache=True, nogil=True)
def trim(cls, start, length, maxtrim, table):
    """(lend, rend) of the least probable sub-window of cls[start:start+length]."""
    lend = 0
    rend = length - 1
    minlen = max(1, length - maxtrim)
    minprob = 1.0
    comp = np.zeros(20, dtype=np.int64)
    for ln in range(length, minlen, -1):
        comp[:] = 0
        for k in range(start, start + ln):
            if cls[k] >= 0:
                comp[cls[k]] += 1
        i = 0
        while True:
            prob = _ln_prob(comp, ln, table)
            if prob < minprob:
                minprob = prob
                lend = i
                rend = ln + i - 1
            if start + i + ln >= start + length:
                break
            old, new = cls[start + i], cls[start + i + ln]
            if old >= 0:
                comp[old] -= 1
            if new >= 0:
                comp[new] += 1
            i += 1
    return lend, rend
