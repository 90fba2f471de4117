"""The batched traceback: one compiled call aligns a query with a group of 32 reported subjects.

End cells come from inter-sequence lane kernels (subjects in the lanes, one vector operation per
cell for all of them): :func:`find_ends_lanes16` with 32 signed 16-bit lanes when every score of
the group is at most NARROW_MAX (no value can leave the 16-bit range then: every cell's score is
<= the pair's score, and gap states stay >= -(gap costs)), else
:func:`clalign.sw.align.find_ends_lanes` with 16 int32 lanes, twice; subjects longer than
``LONG_END`` by :func:`clalign.sw.striped_end.find_end_striped` (the query across the lanes), so
the lanes stop at the ends of the others. Starts and paths as in :mod:`clalign.sw.align` (same
tie rule).
"""
from __future__ import annotations

from ..runtime.jit import njit
import numpy as np

from .align import LANES, find_ends_lanes, find_start, global_path
from .striped_end import LONG_END, find_end_striped

GROUP = 32            # subjects per compiled call: 32 x int16 = one AVX-512 register, two AVX2 ones
NARROW_MAX = 32000    # highest score the 16-bit lane kernel takes
NARROW_GAP = 16000    # highest gap_open + gap_extend it takes


@njit(cache=True, nogil=True, boundscheck=False)
def find_ends_lanes16(q, subs, lens, M16, goe, ext, targets, out):
    """:func:`clalign.sw.align.find_ends_lanes` with GROUP signed 16-bit lanes (same rule,
    same results when every target <= NARROW_MAX and goe + ext <= NARROW_GAP)."""
    m = q.shape[0]
    maxlen = subs.shape[1]
    na = M16.shape[0]
    low = np.int16(-16384)
    H = np.zeros((m, GROUP), dtype=np.int16)
    E = np.empty((m, GROUP), dtype=np.int16)   # no np.full: one numba overload fewer to compile
    E[:, :] = low
    P = np.empty((na, GROUP), dtype=np.int16)
    diag = np.zeros(GROUP, dtype=np.int16)
    f = np.zeros(GROUP, dtype=np.int16)
    best = np.zeros(GROUP, dtype=np.int16)
    g = np.int16(goe)
    x = np.int16(ext)
    zero = np.int16(0)
    done = np.zeros(GROUP, dtype=np.bool_)
    ndone = 0
    for lane in range(GROUP):
        out[lane, 0] = -1
        out[lane, 1] = -1
        if lens[lane] <= 0 or targets[lane] <= 0:
            done[lane] = True
            ndone += 1
    for j in range(maxlen):
        if ndone == GROUP:
            break
        for a in range(na):
            for lane in range(GROUP):
                P[a, lane] = M16[a, subs[lane, j]]
        for lane in range(GROUP):
            diag[lane] = zero
            f[lane] = low
            best[lane] = zero
        for i in range(m):
            qi = q[i]
            for lane in range(GROUP):
                hv = H[i, lane]
                e = max(np.int16(E[i, lane] - x), np.int16(hv - g))
                h = max(max(np.int16(diag[lane] + P[qi, lane]), e), max(f[lane], zero))
                f[lane] = max(np.int16(f[lane] - x), np.int16(h - g))
                diag[lane] = hv
                H[i, lane] = h
                E[i, lane] = e
                best[lane] = max(best[lane], h)
        for lane in range(GROUP):
            if not done[lane] and best[lane] >= targets[lane]:
                for i in range(m):
                    if H[i, lane] == targets[lane]:
                        out[lane, 0] = i + 1
                        out[lane, 1] = j + 1
                        break
                done[lane] = True
                ndone += 1


@njit(cache=True, nogil=True)
def trace_group(q, subs, lens, targets, M16, M32, M, goe, ext, budget, letters, narrow=True):
    """Alignments of one query against up to GROUP subjects (rows of ``subs``, lengths ``lens``,
    SW scores ``targets``), all compiled: ends by a lane kernel (16-bit lanes when every score
    fits and ``narrow`` -- the matrix holds 16-bit values, M16 -- else two 32-bit passes), then
    start and path per subject.

    Returns (info, qtext, stext, offsets): info[k] = (qstart, qend, sstart, send, nident,
    positive, gaps, gapopen, ok) and the aligned letters of lane k (``letters`` + '-' as bytes)
    at qtext/stext[offsets[k]:offsets[k + 1]]; ok = 0 flags an internal inconsistency.
    """
    ends = np.zeros((GROUP, 2), dtype=np.int64)
    # subjects above LONG_END: their own striped pass (the lanes would all run to the longest)
    lane_targets = targets.copy()
    top = 0
    for k in range(GROUP):     # not targets.max(): one numba overload fewer to compile
        if lens[k] > LONG_END:
            lane_targets[k] = 0
        top = max(top, lane_targets[k])
    if narrow and top <= NARROW_MAX and goe + ext <= NARROW_GAP:
        find_ends_lanes16(q, subs, lens, M16, goe, ext, lane_targets, ends)
    else:
        for h in range(0, GROUP, LANES):
            find_ends_lanes(q, subs[h:h + LANES], lens[h:h + LANES], M32, goe, ext, lane_targets[h:h + LANES],
                            ends[h:h + LANES])
    for k in range(GROUP):      # after the lanes: their kernels reset every lane's end first
        if lens[k] > LONG_END and targets[k] > 0:
            e = find_end_striped(q, subs[k, :lens[k]], M32, goe, ext, targets[k])
            ends[k, 0] = e[0]
            ends[k, 1] = e[1]
    info = np.zeros((GROUP, 9), dtype=np.int64)
    offsets = np.zeros(GROUP + 1, dtype=np.int64)
    parts = []
    gap = letters[letters.shape[0] - 1]
    for k in range(GROUP):
        sc = targets[k]
        if sc <= 0 or lens[k] <= 0:
            parts.append(np.zeros(0, dtype=np.uint8))
            offsets[k + 1] = offsets[k]
            info[k, 8] = 1 if sc <= 0 else 0
            continue
        ie, je = ends[k, 0], ends[k, 1]
        s = subs[k, :lens[k]]
        ok = ie > 0
        i0 = j0 = 1
        if ok:
            i0, j0 = find_start(q, s, M, goe, ext, ie, je, sc)
            ok = i0 > 0
        rops = np.zeros(0, dtype=np.uint8)
        if ok:
            got, rops = global_path(q[i0 - 1:ie], s[j0 - 1:je], M, goe, ext, budget)
            ok = got == sc
        nops = rops.shape[0]
        buf = np.empty(2 * nops, dtype=np.uint8)
        i, j = i0 - 1, j0 - 1
        nident = positive = gaps = opens = 0
        prev = -1
        for t in range(nops):
            op = rops[nops - 1 - t]
            if op == 0:
                a, b = q[i], s[j]
                buf[t] = letters[a]
                buf[nops + t] = letters[b]
                if a == b:
                    nident += 1
                if M[a, b] > 0:
                    positive += 1
                i += 1
                j += 1
            else:
                gaps += 1
                if op != prev:
                    opens += 1
                if op == 1:
                    buf[t] = letters[q[i]]
                    buf[nops + t] = gap
                    i += 1
                else:
                    buf[t] = gap
                    buf[nops + t] = letters[s[j]]
                    j += 1
            prev = op
        info[k, 0] = i0
        info[k, 1] = i
        info[k, 2] = j0
        info[k, 3] = j
        info[k, 4] = nident
        info[k, 5] = positive
        info[k, 6] = gaps
        info[k, 7] = opens
        info[k, 8] = 1 if ok else 0
        parts.append(buf)
        offsets[k + 1] = offsets[k] + nops
    qtext = np.empty(offsets[GROUP], dtype=np.uint8)
    stext = np.empty(offsets[GROUP], dtype=np.uint8)
    for k in range(GROUP):
        nops = offsets[k + 1] - offsets[k]
        buf = parts[k]
        for t in range(nops):     # loops: a slice copy makes numba compile a costly error path
            qtext[offsets[k] + t] = buf[t]
            stext[offsets[k] + t] = buf[nops + t]
    return info, qtext, stext, offsets
