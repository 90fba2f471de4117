"""The end cell of one long pair, with the query striped across vector lanes (Farrar's layout).

:func:`clalign.sw.lanes.trace_group` finds the ends of up to 32 subjects at once, one subject per
lane, so a group runs as long as its longest subject: a reported subject of 28,000 aa beside
short ones kept one reporting thread busy for 0.8-1.9 s (docs/perf/sw.md, X6). Here one subject
is aligned alone, the query's rows spread over ``V`` lanes (row ``l * seg + k`` in lane ``l`` of
segment ``k``), so every column costs about ``m / V`` vector steps. Same cells, same values,
same rule as :func:`clalign.sw.align.find_end`: the end is the smallest subject position, then the
smallest query position, among cells scoring ``target``.

Vertical gaps that cross from one lane's rows into the next are settled after each column by the
"lazy F" loop (Farrar 2007), which also raises the horizontal-gap state of any row whose score it
raises, so the values are those of the plain recurrence.
"""
from __future__ import annotations

import numpy as np

from ..runtime.jit import njit

V = 16          # lanes: 16 x int32 = one AVX-512 register, two AVX2 ones
LONG_END = 2000  # reported subjects longer than this get their end from :func:`find_end_striped`


@njit(cache=True, nogil=True, boundscheck=False)
def find_end_striped(q, s, M32, goe, ext, target):
    """(i, j), 1-based, of the end of the best local alignment of ``q`` and ``s`` scoring
    ``target`` (smallest j, then smallest i); (-1, -1) if no cell reaches ``target``. M32 int32."""
    m = q.shape[0]
    n = s.shape[0]
    if m == 0 or n == 0:
        return -1, -1
    seg = (m + V - 1) // V
    na = M32.shape[0]
    low = np.int32(-(1 << 28))
    g = np.int32(goe)
    x = np.int32(ext)
    zero = np.int32(0)
    # striped profile: P[a, k, l] = M32[query row l * seg + k, subject code a] (padding rows:
    # low, so they stay at 0 and never feed a real row: a lane's rows only feed later rows)
    P = np.empty((na, seg, V), dtype=np.int32)
    for a in range(na):
        for k in range(seg):
            for lane in range(V):
                i = lane * seg + k
                P[a, k, lane] = M32[q[i], a] if i < m else low
    H = np.zeros((seg, V), dtype=np.int32)       # previous column
    Hn = np.zeros((seg, V), dtype=np.int32)      # this column
    E = np.empty((seg, V), dtype=np.int32)
    E[:, :] = low
    h = np.zeros(V, dtype=np.int32)
    f = np.empty(V, dtype=np.int32)
    best = np.zeros(V, dtype=np.int32)
    for j in range(n):
        c = s[j]
        # diagonal of row 0 of each lane: the previous column's last row of the lane before
        for lane in range(V - 1, 0, -1):
            h[lane] = H[seg - 1, lane - 1]
        h[0] = zero
        for lane in range(V):
            f[lane] = low
        for k in range(seg):
            for lane in range(V):
                v = max(max(np.int32(h[lane] + P[c, k, lane]), E[k, lane]), max(f[lane], zero))
                Hn[k, lane] = v
                best[lane] = max(best[lane], v)
                t = np.int32(v - g)
                E[k, lane] = max(np.int32(E[k, lane] - x), t)
                f[lane] = max(np.int32(f[lane] - x), t)
                h[lane] = H[k, lane]
        # lazy F: vertical gaps carried from the last row of lane l - 1 into lane l
        for lane in range(V - 1, 0, -1):
            f[lane] = f[lane - 1]
        f[0] = low
        k = 0
        for _ in range(seg * V):     # every row once at most (a zero gap extension keeps f alive)
            more = False
            for lane in range(V):
                if f[lane] > np.int32(Hn[k, lane] - g):
                    more = True
            if not more:
                break
            for lane in range(V):
                v = max(Hn[k, lane], f[lane])
                Hn[k, lane] = v
                best[lane] = max(best[lane], v)
                E[k, lane] = max(E[k, lane], np.int32(v - g))
                f[lane] = np.int32(f[lane] - x)
            k += 1
            if k == seg:
                k = 0
                for lane in range(V - 1, 0, -1):
                    f[lane] = f[lane - 1]
                f[0] = low
        top = zero
        for lane in range(V):
            top = max(top, best[lane])
        if top >= target:
            found = -1
            for lane in range(V):
                for k in range(seg):
                    i = lane * seg + k
                    if i < m and Hn[k, lane] == target and (found < 0 or i < found):
                        found = i
            if found >= 0:
                return found + 1, j + 1
        H, Hn = Hn, H
    return -1, -1
