"""Compiled (numba) two-hit word finder over a whole database: the CPU path of phases 2-4.

Same rule as ``ungapped.two_hit_reference`` (see that module), run for every subject of a
concatenated residue array. The diagonal state is one array of ``qlen + max_slen + 1`` entries
reset per subject through a per-subject stamp, as BLAST+'s ``diag_offset`` does.
"""
from __future__ import annotations

import numpy as np
from ..runtime.jit import njit

from .lookup import CHARSIZE


@njit(cache=True, nogil=True, inline="always")
def _grow_rows(res, n):
    """int32 rows ``res[:n]`` in an array twice as long (a loop: numba compiles a costly error
    path for an array-to-slice assignment)."""
    bigger = np.empty((2 * n, res.shape[1]), dtype=np.int32)
    for i in range(n):
        for c in range(res.shape[1]):
            bigger[i, c] = res[i, c]
    return bigger


@njit(cache=True, nogil=True)
def _extend_two_hit(matrix, q, s, s_base, slen, s_left_off, s_right_off, q_right_off, dropoff, w, out):
    qlen = q.shape[0]
    score = 0
    left_score = 0
    right_d = 0
    for i in range(w):
        score += matrix[q[q_right_off + i], s[s_base + s_right_off + i]]
        if score > left_score:
            left_score = score
            right_d = i + 1
    q_right_off += right_d
    s_right_off += right_d
    s_last_off = s_right_off
    # left extension from (q_right_off - 1, s_right_off - 1)
    qo = q_right_off - 1
    so = s_right_off - 1
    n = min(so, qo)
    best_i = n + 1
    score = 0
    maxscore = 0
    i = n
    while i >= 0:
        score += matrix[q[qo - n + i], s[s_base + so - n + i]]
        if score > maxscore:
            maxscore = score
            best_i = i
        if maxscore - score >= dropoff:
            break
        i -= 1
    left_d = n - best_i + 1
    left_score = maxscore
    right_score = 0
    right_len = 0
    right = left_d >= s_right_off - s_left_off
    if right:
        n = min(slen - s_right_off, qlen - q_right_off)
        best_i = -1
        maxscore = left_score
        score = left_score
        i = 0
        while i < n:
            score += matrix[q[q_right_off + i], s[s_base + s_right_off + i]]
            if score > maxscore:
                maxscore = score
                best_i = i
            if score <= 0 or maxscore - score >= dropoff:
                break
            i += 1
        right_score = maxscore
        right_len = best_i + 1
        s_last_off = s_right_off + i
    out[0] = max(left_score, right_score)
    out[1] = q_right_off - left_d
    out[2] = s_right_off - left_d
    out[3] = left_d + right_len
    out[4] = 1 if right else 0
    out[5] = s_last_off


@njit(cache=True, nogil=True)
def two_hit_db(q, matrix, starts, qoffs, residues, offsets, first, last, window, w, dropoff, cutoff):
    """Initial HSPs of subjects first..last-1: int32 (n, 7) rows (subject, score, q_start,
    s_start, length, q_off, s_off) in subject order, unsorted within a subject."""
    qlen = q.shape[0]
    max_slen = 0
    for k in range(first, last):
        max_slen = max(max_slen, offsets[k + 1] - offsets[k])
    ndiag = qlen + max_slen + 1
    last_hit = np.zeros(ndiag, dtype=np.int32)
    flag = np.zeros(ndiag, dtype=np.uint8)
    stamp = np.full(ndiag, -1, dtype=np.int32)
    cap = 1024
    res = np.empty((cap, 7), dtype=np.int32)
    nres = 0
    ext = np.empty(6, dtype=np.int32)
    mask = (1 << (CHARSIZE * w)) - 1
    for k in range(first, last):
        base = offsets[k]
        slen = offsets[k + 1] - base
        if slen < w:
            continue
        code = 0
        for i in range(w - 1):
            code = ((code << CHARSIZE) | residues[base + i]) & mask
        for s_off in range(slen - w + 1):
            code = ((code << CHARSIZE) | residues[base + s_off + w - 1]) & mask
            for j in range(starts[code], starts[code + 1]):
                q_off = qoffs[j]
                d = q_off - s_off + max_slen
                if stamp[d] != k:
                    stamp[d] = k
                    flag[d] = 0
                    last_hit[d] = s_off
                    continue
                if flag[d] != 0:
                    if s_off < last_hit[d]:
                        continue
                    last_hit[d] = s_off
                    flag[d] = 0
                    continue
                diff = s_off - last_hit[d]
                if diff >= window:
                    last_hit[d] = s_off
                    continue
                if diff < w:
                    continue
                _extend_two_hit(matrix, q, residues, base, slen, last_hit[d] + w, s_off, q_off,
                                dropoff, w, ext)
                if ext[0] >= cutoff:
                    if nres == cap:
                        res = _grow_rows(res, cap)
                        cap *= 2
                    res[nres, 0] = k
                    res[nres, 1] = ext[0]
                    res[nres, 2] = ext[1]
                    res[nres, 3] = ext[2]
                    res[nres, 4] = ext[3]
                    res[nres, 5] = q_off
                    res[nres, 6] = s_off
                    nres += 1
                if ext[4] != 0:
                    flag[d] = 1
                    last_hit[d] = ext[5] - (w - 1)
                else:
                    last_hit[d] = s_off
    return res[:nres].copy()


def sort_init_hsps(rows: np.ndarray) -> np.ndarray:
    """Rows ordered by subject, then ``Blast_InitHitListSortByScore`` within a subject."""
    order = np.lexsort((rows[:, 2], -rows[:, 4], rows[:, 3], -rows[:, 1], rows[:, 0]))
    return rows[order]
