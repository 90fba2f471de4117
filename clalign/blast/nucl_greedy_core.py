"""The greedy aligners of BLAST+ 2.12 (``greedy_align.c``), one direction each; see
:mod:`clalign.blast.nucl_greedy` for the extension built on them.

Zhang et al.'s greedy aligner walks distances instead of scores: ``last[d][k]`` is the largest
subject offset reachable on diagonal ``k`` (query offset = subject offset + k) with distance
``d``, each diagonal slid along its run of exact matches.

- :func:`greedy_align` (``BLAST_GreedyAlign``, gap costs 0/0): distance = mismatches + gap
  letters; a gap letter then costs ``reward/2 - penalty`` (``reward`` made even first). Returns
  the distance of the best end, not a score.
- :func:`affine_greedy_align` (``BLAST_AffineGreedyAlign``): distance in units of the GCD of
  ``reward - penalty``, ``gap_open`` and ``gap_extend + reward/2``; returns the score.

Both keep BLAST+'s exact loop bounds, sentinel writes and tie rules (they decide ends and gap
positions). BLAST+ bounds the distance (``GREEDY_MAX_COST``) and reruns with twice the bound
until the search converges, which gives the result of an unbounded search: that is done here.

Sequences: the query is BLASTNA codes (0..3 bases, larger ambiguous); the subject is either
packed NCBI2na (``packed``: the preliminary stage, ambiguous subject bases read as the random
bases stored there) or BLASTNA codes one a byte (traceback; an ambiguous *query* base never
matches there, while in packed mode it never equals a 2-bit base anyway). Direction: forward
compares ``q[q0 + i]`` with ``s[s0 + i]``; reverse compares ``q[q0 - 1 - i]`` with
``s[s0 - 1 - i]``. Edit operations use BLAST+'s codes (:mod:`clalign.blast.traceback`): SUB 3,
INS 6 (query letter against a gap), DEL 0 (subject letter against a gap); a traceback is
returned as run-length ``(ops, nums)`` from the far end back to the start point, as BLAST+'s
``GapPrelimEditBlock`` holds it.

Numba-compiled (``nogil``); ``.py_func`` is the plain-Python reference. Flags and op codes are
passed as run-time values: a literal argument makes numba compile another variant.
"""
from __future__ import annotations

import math

from ..runtime.jit import njit
import numpy as np

DEL = 0
SUB = 3
INS = 6
_OPS = np.array([DEL, SUB, INS], dtype=np.int64)   # read at run time (see _push)
INVALID = -2                 # kInvalidOffset
INVALID_DIAG = 100000000     # kInvalidDiag


@njit(cache=True, nogil=True)
def match_run(q, q0, n1, s, s0, n2, i1, i2, reverse, packed):
    """``s_FindFirstMismatch``: exact matches from offsets (i1, i2) before a mismatch or an end."""
    start = i1
    while i1 < n1 and i2 < n2:
        if reverse:
            qc = q[q0 - 1 - i1]
            p = s0 - 1 - i2
        else:
            qc = q[q0 + i1]
            p = s0 + i2
        if packed:
            if qc != (s[p >> 2] >> (6 - 2 * (p & 3))) & 3:
                break
        elif qc >= 4 or qc != s[p]:
            break
        i1 += 1
        i2 += 1
    return i1 - start


@njit(cache=True, nogil=True)
def _push(ops, nums, n, op, num):
    """``GapPrelimEditBlockAdd``: append ``num`` ops, merged into the last run of the same op.
    Callers pass ``n``, ``op`` and ``num`` as run-time int64 values (``_OPS[k]``, ``one``), so
    that numba compiles this once rather than once per literal."""
    if num == 0:
        return ops, nums, n
    if n > 0 and ops[n - 1] == op:
        nums[n - 1] += num
        return ops, nums, n
    if n == ops.shape[0]:
        o2 = np.zeros(2 * n + 8, dtype=np.int8)
        m2 = np.zeros(2 * n + 8, dtype=np.int64)
        o2[:n] = ops[:n]
        m2[:n] = nums[:n]
        ops, nums = o2, m2
    ops[n] = op
    nums[n] = num
    return ops, nums, n + 1


@njit(cache=True, nogil=True)
def _grow(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def greedy_align(q, q0, n1, s, s0, n2, reverse, packed, xdrop, match_cost, mismatch_cost, traceback):
    """``BLAST_GreedyAlign`` (costs already even). Returns (distance, query extent, subject
    extent, seed query offset, seed subject offset, seed length, ops, nums, n_ops)."""
    ops = np.zeros(16, dtype=np.int8)
    nums = np.zeros(16, dtype=np.int64)
    nop = n1 - n1
    one = nop + 1
    xdrop_offset = (xdrop + match_cost // 2) // (match_cost + mismatch_cost) + 1
    zero = n1 - n1
    index = match_run(q, q0, n1, s, s0, n2, zero, zero, reverse, packed)
    a1 = index
    a2 = index
    seed_q = 0
    seed_s = 0
    longest = index
    if index == n1 or index == n2:
        if traceback:
            ops, nums, nop = _push(ops, nums, nop, _OPS[1], index)
        return 0, a1, a2, seed_q, seed_s, longest, ops, nums, nop
    # row d covers diagonals [-d-2, d+2]: cell (d, k) at base[d] + k + d + 2
    base = np.zeros(64, dtype=np.int64)
    off = np.empty(64 * 64, dtype=np.int64)
    base[0] = 0
    base[1] = 5
    base[2] = 5 + 7
    off[base[0] + 2] = index
    max_score = np.zeros(xdrop_offset + 64, dtype=np.int64)   # max_score[d] at [d + xdrop_offset]
    max_score[xdrop_offset] = index * match_cost
    diag_lower = -1
    diag_upper = 1
    end1 = False
    end2 = False
    best_dist = 0
    best_diag = 0
    half = match_cost // 2
    d = 1
    while True:
        if d + 2 >= base.shape[0]:
            base = _grow(base, 2 * base.shape[0])
        base[d + 1] = base[d] + 2 * d + 5
        off = _grow(off, base[d + 1] + 2 * d + 9)
        max_score = _grow(max_score, xdrop_offset + d + 2)
        pb = base[d - 1] + d + 1        # cell (d-1, k) at pb + k
        cb = base[d] + d + 2
        off[pb + diag_lower - 1] = INVALID
        off[pb + diag_lower] = INVALID
        off[pb + diag_upper] = INVALID
        off[pb + diag_upper + 1] = INVALID
        xs = max_score[d] + (match_cost + mismatch_cost) * d - xdrop
        xdrop_score = int(math.ceil(xs / half))
        curr_extent = 0
        curr_s = 0
        curr_diag = 0
        lo = diag_lower
        hi = diag_upper
        for k in range(lo, hi + 1):
            i2 = max(off[pb + k + 1], off[pb + k]) + 1
            i2 = max(i2, off[pb + k - 1])
            i1 = i2 + k
            if i2 < 0 or i1 + i2 < xdrop_score:
                if k == diag_lower:
                    diag_lower += 1
                else:
                    off[cb + k] = INVALID
                continue
            diag_upper = k
            index = match_run(q, q0, n1, s, s0, n2, i1, i2, reverse, packed)
            if index > longest:
                seed_q = i1
                seed_s = i2
                longest = index
            i1 += index
            i2 += index
            off[cb + k] = i2
            if i1 + i2 > curr_extent:
                curr_extent = i1 + i2
                curr_s = i2
                curr_diag = k
            if i2 == n2:
                diag_lower = k + 1
                end2 = True
            if i1 == n1:
                diag_upper = k - 1
                end1 = True
        curr_score = curr_extent * half - d * (match_cost + mismatch_cost)
        if curr_score >= max_score[xdrop_offset + d - 1]:
            max_score[xdrop_offset + d] = curr_score
            best_dist = d
            best_diag = curr_diag
            a2 = curr_s
            a1 = curr_s + best_diag
        else:
            max_score[xdrop_offset + d] = max_score[xdrop_offset + d - 1]
        if diag_lower > diag_upper:
            break
        if not end2:
            diag_lower -= 1
        if not end1:
            diag_upper += 1
        d += 1
    if not traceback:
        return best_dist, a1, a2, seed_q, seed_s, longest, ops, nums, nop
    d = best_dist
    i2 = a2
    diag = best_diag
    while d > 0:
        pb = base[d - 1] + d + 1
        lo_ = off[pb + diag - 1]
        mid = off[pb + diag]
        up = off[pb + diag + 1]
        if lo_ > max(mid, up):
            new_diag = diag - 1
            new_i2 = lo_
        elif mid > up:
            new_diag = diag
            new_i2 = mid
        else:
            new_diag = diag + 1
            new_i2 = up
        if new_diag == diag:
            if i2 - new_i2 > 0:
                ops, nums, nop = _push(ops, nums, nop, _OPS[1], i2 - new_i2)
        elif new_diag < diag:
            if i2 - new_i2 > 0:
                ops, nums, nop = _push(ops, nums, nop, _OPS[1], i2 - new_i2)
            ops, nums, nop = _push(ops, nums, nop, _OPS[2], one)
        else:
            if i2 - new_i2 - 1 > 0:
                ops, nums, nop = _push(ops, nums, nop, _OPS[1], i2 - new_i2 - 1)
            ops, nums, nop = _push(ops, nums, nop, _OPS[0], one)
        d -= 1
        diag = new_diag
        i2 = new_i2
    ops, nums, nop = _push(ops, nums, nop, _OPS[1], off[2])
    return best_dist, a1, a2, seed_q, seed_s, longest, ops, nums, nop


@njit(cache=True, nogil=True)
def _gcd(a, b):
    a = abs(a)
    b = abs(b)
    while b:
        a, b = b, a % b
    return a


@njit(cache=True, nogil=True)
def _in(k, lo, hi, d, pen):
    """Diagonal k inside the saved range of distance d (negative d: empty)."""
    return k >= lo[d + pen] and k <= hi[d + pen]


@njit(cache=True, nogil=True)
def affine_greedy_align(q, q0, n1, s, s0, n2, reverse, packed, xdrop, match_score, mismatch_score,
                        gap_open, gap_extend, traceback):
    """``BLAST_AffineGreedyAlign``: as :func:`greedy_align` but returns a score (in the units of
    doubled costs when ``match_score`` is odd); 0/0 gap costs call :func:`greedy_align` and
    return its distance."""
    if match_score % 2 == 1:
        match_score *= 2
        mismatch_score *= 2
        xdrop *= 2
        gap_open *= 2
        gap_extend *= 2
    if gap_open == 0 and gap_extend == 0:
        return greedy_align(q, q0, n1, s, s0, n2, reverse, packed, xdrop, match_score,
                            mismatch_score, traceback)
    ops = np.zeros(16, dtype=np.int8)
    nums = np.zeros(16, dtype=np.int64)
    nop = n1 - n1
    one = nop + 1
    half = match_score // 2
    op_cost = match_score + mismatch_score
    g_open = gap_open
    g_ext = gap_extend + half
    if g_open == 0:
        g = _gcd(op_cost, g_ext)
    else:
        g = _gcd(op_cost, _gcd(g_open, g_ext))
    if g > 1:
        op_cost //= g
        g_open //= g
        g_ext //= g
    factor = g
    goe = g_open + g_ext
    pen = max(op_cost, goe)
    xdrop_offset = (xdrop + half) // factor + 1
    zero = n1 - n1
    index = match_run(q, q0, n1, s, s0, n2, zero, zero, reverse, packed)
    a1 = index
    a2 = index
    seed_q = 0
    seed_s = 0
    longest = index
    if index == n1 or index == n2:
        if traceback:
            ops, nums, nop = _push(ops, nums, nop, _OPS[1], index)
        return index * match_score, a1, a2, seed_q, seed_s, longest, ops, nums, nop
    cap = 64
    max_score = np.zeros(xdrop_offset + cap, dtype=np.int64)
    lo = np.full(pen + cap, INVALID_DIAG, dtype=np.int64)    # diag_lower[d] at [d + pen]
    hi = np.full(pen + cap, -INVALID_DIAG, dtype=np.int64)
    rbase = np.zeros(cap, dtype=np.int64)                    # row d: cells rbase[d] + k - rlo[d]
    rlo = np.zeros(cap, dtype=np.int64)
    moff = np.empty(1024, dtype=np.int64)
    ioff = np.empty(1024, dtype=np.int64)
    doff = np.empty(1024, dtype=np.int64)
    moff[0] = index
    ioff[0] = INVALID
    doff[0] = INVALID
    rbase[0] = 0
    rlo[0] = 0
    used = 1
    max_score[xdrop_offset] = index * match_score
    lo[pen] = 0
    hi[pen] = 0
    cur_lo = -1
    cur_hi = 1
    end1_set = False
    end2_set = False
    end1_diag = 0
    end2_diag = 0
    nonempty = 1
    best_dist = 0
    best_diag = 0
    d = 1
    while True:
        if d + 2 >= rbase.shape[0]:
            rbase = _grow(rbase, 2 * rbase.shape[0])
            rlo = _grow(rlo, 2 * rlo.shape[0])
        if pen + d + 2 >= lo.shape[0]:
            n_old = lo.shape[0]
            lo = _grow(lo, 2 * n_old)
            hi = _grow(hi, 2 * n_old)
            lo[n_old:] = INVALID_DIAG
            hi[n_old:] = -INVALID_DIAG
        max_score = _grow(max_score, xdrop_offset + d + 2)
        width = cur_hi - cur_lo + 1
        if width < 0:
            width = 0
        rbase[d] = used
        rlo[d] = cur_lo
        moff = _grow(moff, used + width)
        ioff = _grow(ioff, used + width)
        doff = _grow(doff, used + width)
        used += width
        cb = rbase[d] - cur_lo
        xs = max_score[xdrop_offset + d - xdrop_offset] + factor * d - xdrop
        xdrop_score = int(math.ceil(xs / half))
        if xdrop_score < 0:
            xdrop_score = 0
        curr_extent = 0
        curr_s = 0
        curr_diag = 0
        tlo = cur_lo
        thi = cur_hi
        for k in range(tlo, thi + 1):
            i2 = INVALID
            dd = d - goe
            if _in(k + 1, lo, hi, dd, pen):
                i2 = moff[rbase[dd] + k + 1 - rlo[dd]]
            dd = d - g_ext
            if _in(k + 1, lo, hi, dd, pen) and i2 < doff[rbase[dd] + k + 1 - rlo[dd]]:
                i2 = doff[rbase[dd] + k + 1 - rlo[dd]]
            if i2 == INVALID:
                doff[cb + k] = INVALID
            else:
                doff[cb + k] = i2 + 1
            i2 = INVALID
            dd = d - goe
            if _in(k - 1, lo, hi, dd, pen):
                i2 = moff[rbase[dd] + k - 1 - rlo[dd]]
            dd = d - g_ext
            if _in(k - 1, lo, hi, dd, pen) and i2 < ioff[rbase[dd] + k - 1 - rlo[dd]]:
                i2 = ioff[rbase[dd] + k - 1 - rlo[dd]]
            ioff[cb + k] = i2
            i2 = max(ioff[cb + k], doff[cb + k])
            dd = d - op_cost
            if _in(k, lo, hi, dd, pen):
                i2 = max(i2, moff[rbase[dd] + k - rlo[dd]] + 1)
            i1 = i2 + k
            if i2 < 0 or i1 + i2 < xdrop_score:
                if k == cur_lo:
                    cur_lo += 1
                else:
                    moff[cb + k] = INVALID
                continue
            cur_hi = k
            index = match_run(q, q0, n1, s, s0, n2, i1, i2, reverse, packed)
            if index > longest:
                seed_q = i1
                seed_s = i2
                longest = index
            i1 += index
            i2 += index
            moff[cb + k] = i2
            if i1 + i2 > curr_extent:
                curr_extent = i1 + i2
                curr_s = i2
                curr_diag = k
            if i1 == n1:
                cur_hi = k
                end1_diag = k - 1
                end1_set = True
            if i2 == n2:
                cur_lo = k
                end2_diag = k + 1
                end2_set = True
        curr_score = curr_extent * half - d * factor
        if curr_score > max_score[xdrop_offset + d - 1]:
            max_score[xdrop_offset + d] = curr_score
            best_dist = d
            best_diag = curr_diag
            a2 = curr_s
            a1 = curr_s + best_diag
        else:
            max_score[xdrop_offset + d] = max_score[xdrop_offset + d - 1]
        if cur_lo <= cur_hi:
            nonempty += 1
            lo[pen + d] = cur_lo
            hi[pen + d] = cur_hi
        else:
            lo[pen + d] = INVALID_DIAG
            hi[pen + d] = -INVALID_DIAG
        if lo[d] <= hi[d]:           # distance d - pen
            nonempty -= 1
        if nonempty == 0:
            break
        d += 1
        cur_lo = min(lo[pen + d - goe], lo[pen + d - g_ext]) - 1
        cur_lo = min(cur_lo, lo[pen + d - op_cost])
        if end2_set:
            cur_lo = max(cur_lo, end2_diag)
        cur_hi = max(hi[pen + d - goe], hi[pen + d - g_ext]) + 1
        cur_hi = max(cur_hi, hi[pen + d - op_cost])
        if end1_set:
            cur_hi = min(cur_hi, end1_diag)
    if traceback:
        d = best_dist
        i2 = a2
        diag = best_diag
        state = SUB
        while d > 0:
            if state == SUB:
                # s_GetNextAffineTbackFromMatch
                cell = rbase[d] + diag - rlo[d]
                dd = d - op_cost
                state = -1
                if _in(diag, lo, hi, dd, pen):
                    new_i2 = moff[rbase[dd] + diag - rlo[dd]]
                    if new_i2 >= max(ioff[cell], doff[cell]):
                        d = dd
                        state = SUB
                if state == -1:
                    if ioff[cell] > doff[cell]:
                        new_i2 = ioff[cell]
                        state = INS
                    else:
                        new_i2 = doff[cell]
                        state = DEL
                ops, nums, nop = _push(ops, nums, nop, _OPS[1], i2 - new_i2)
                i2 = new_i2
            else:
                # s_GetNextAffineTbackFromIndel
                ops, nums, nop = _push(ops, nums, nop, state, one)
                new_diag = diag - 1 if state == INS else diag + 1
                dd = d - g_ext
                if _in(new_diag, lo, hi, dd, pen):
                    c = rbase[dd] + new_diag - rlo[dd]
                    new_i2 = ioff[c] if state == INS else doff[c]
                else:
                    new_i2 = INVALID
                dd = d - goe
                nxt = state
                if _in(new_diag, lo, hi, dd, pen) and new_i2 < moff[rbase[dd] + new_diag - rlo[dd]]:
                    d = dd
                    nxt = SUB
                else:
                    d -= g_ext
                if state == INS:
                    diag -= 1
                else:
                    diag += 1
                    i2 -= 1
                state = nxt
        ops, nums, nop = _push(ops, nums, nop, _OPS[1], moff[0])
    return max_score[xdrop_offset + best_dist], a1, a2, seed_q, seed_s, longest, ops, nums, nop
