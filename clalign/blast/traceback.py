"""Gapped alignment with traceback, as BLAST+'s final stage (``ALIGN_EX`` and
``BLAST_GappedAlignmentWithTraceback`` in ``blast_gapalign.c``).

``align_ex`` runs the same X-drop DP as ``gapped.semi_gapped`` while recording one script byte
per cell (the chosen operation plus "gap continues" bits), row storage starting at the row's
first live cell as BLAST+ lays it out, then walks back from the best cell with BLAST+'s rule
(inside a gap, stay in it while the cell says the gap continues). Operations use BLAST+'s codes:
DEL (0, gap in the query), SUB (3), INS (6, gap in the subject).

``gapped_traceback`` aligns left (including the start pair) and right of the start point,
joins the two halves and trims leading/trailing gaps the way BLAST+ does. It returns the score,
the half-open extents and one op per alignment column.
"""
from __future__ import annotations

from ..runtime.jit import njit
import numpy as np

from .gapped import MININT, adjust_subject_range

DEL = 0
SUB = 3
INS = 6
_OP_MASK = 0x07
_EXT_A = 0x10
_EXT_B = 0x40


@njit(cache=True, nogil=True)
def align_ex(matrix, q, qb, dq, M, s, sb, ds, N, gap_open, gap_extend, x_dropoff, out):
    """X-drop DP with traceback; returns (best score, ops from the far end back to the start)."""
    out[0] = 0
    out[1] = 0
    goe = gap_open + gap_extend
    if x_dropoff < goe:
        x_dropoff = goe
    if N <= 0 or M <= 0:
        return 0, np.zeros(0, dtype=np.uint8)
    num_extra = x_dropoff // gap_extend + 3 if gap_extend > 0 else N + 3
    best = np.empty(N + 2, dtype=np.int32)
    best_gap = np.empty(N + 2, dtype=np.int32)
    cap = 4 * (num_extra + N // 4 + 16)
    script = np.zeros(cap, dtype=np.uint8)
    row_ptr = np.zeros(M + 1, dtype=np.int64)
    row_first = np.zeros(M + 1, dtype=np.int32)
    score = -goe
    best[0] = 0
    best_gap[0] = -goe
    i = 1
    while i <= N:
        if score < -x_dropoff:
            break
        best[i] = score
        best_gap[i] = score - goe
        score -= gap_extend
        script[i] = DEL
        i += 1
    used = i + 1
    b_size = i
    best_score = 0
    first_b = 0
    for a in range(1, M + 1):
        need = used + 1 + (b_size - first_b) + num_extra + 4
        if need > cap:
            while cap < need:
                cap *= 2
            bigger = np.zeros(cap, dtype=np.uint8)
            for j in range(script.shape[0]):    # a loop: no numba slice-copy error path
                bigger[j] = script[j]
            script = bigger
        ptr = used + 1
        row_ptr[a] = ptr
        row_first[a] = first_b
        orig_b = first_b
        row = matrix[q[qb + dq * a]]
        score = MININT
        score_gap_row = MININT
        last_b = first_b
        b = first_b
        while b < b_size:
            score_gap_col = best_gap[b]
            next_score = best[b] + row[s[sb + ds * b]]
            op = SUB
            if score < score_gap_col:
                op = INS
                score = score_gap_col
            if score < score_gap_row:
                op = DEL
                score = score_gap_row
            if best_score - score > x_dropoff:
                if first_b == b:
                    first_b += 1
                else:
                    best[b] = MININT
            else:
                last_b = b
                if score > best_score:
                    best_score = score
                    out[0] = a
                    out[1] = b
                score_gap_row -= gap_extend
                score_gap_col -= gap_extend
                if score_gap_col < score - goe:
                    best_gap[b] = score - goe
                else:
                    best_gap[b] = score_gap_col
                    op += _EXT_B
                if score_gap_row < score - goe:
                    score_gap_row = score - goe
                else:
                    op += _EXT_A
                best[b] = score
            score = next_score
            script[ptr + b - orig_b] = op
            b += 1
        if first_b == b_size:
            break
        if last_b < b_size - 1:
            b_size = last_b + 1
        else:
            while score_gap_row >= best_score - x_dropoff and b_size <= N:
                best[b_size] = score_gap_row
                best_gap[b_size] = score_gap_row - goe
                score_gap_row -= gap_extend
                script[ptr + b_size - orig_b] = DEL
                b_size += 1
        used += max(b, b_size) - orig_b + 1
        if b_size <= N:
            best[b_size] = MININT
            best_gap[b_size] = MININT
            b_size += 1
    a = out[0]
    b = out[1]
    ops = np.empty(a + b, dtype=np.uint8)
    n_ops = 0
    cur = SUB
    while a > 0 or b > 0:
        nxt = script[row_ptr[a] + b - row_first[a]]
        if cur == DEL:
            cur = nxt & _OP_MASK
            if nxt & _EXT_A:
                cur = DEL
        elif cur == INS:
            cur = nxt & _OP_MASK
            if nxt & _EXT_B:
                cur = INS
        else:
            cur = nxt & _OP_MASK
        if cur == DEL:
            b -= 1
        elif cur == INS:
            a -= 1
        else:
            a -= 1
            b -= 1
        ops[n_ops] = cur
        n_ops += 1
    return best_score, ops[:n_ops].copy()


@njit(cache=True, nogil=True)
def gapped_traceback(matrix, q, s, s_base, slen, q_start, s_start, gap_open, gap_extend, x_dropoff,
                     ext):
    """Final gapped alignment through (q_start, s_start); ext = (q_start, q_end, s_start, s_end),
    ends exclusive. Returns (score, ops left to right)."""
    qlen = q.shape[0]
    shift, s_start_adj, s_len_adj = adjust_subject_range(s_start, slen, q_start, qlen)
    base = s_base + shift
    ab = np.zeros(2, dtype=np.int32)
    # left, including the start pair: rows q[q_start + 1 - a], cells s[s_start - b]
    score_left, left_ops = align_ex(matrix, q, q_start + 1, -1, q_start + 1, s, base + s_start_adj,
                                    -1, s_start_adj + 1, gap_open, gap_extend, x_dropoff, ab)
    qs = q_start - ab[0] + 1
    ss = s_start_adj - ab[1] + 1
    score_right = 0
    right_ops = np.zeros(0, dtype=np.uint8)
    if q_start < qlen and s_start_adj < s_len_adj:
        score_right, right_ops = align_ex(matrix, q, q_start, 1, qlen - q_start - 1, s,
                                          base + s_start_adj + 1, 1, s_len_adj - s_start_adj - 1,
                                          gap_open, gap_extend, x_dropoff, ab)
        qe = q_start + ab[0] + 1
        se = s_start_adj + ab[1] + 1
    else:
        qe = q_start - 1
        se = s_start_adj - 1
    n = left_ops.shape[0] + right_ops.shape[0]
    ops = np.empty(n, dtype=np.uint8)
    for i in range(left_ops.shape[0]):
        ops[i] = left_ops[i]
    for i in range(right_ops.shape[0]):
        ops[left_ops.shape[0] + i] = right_ops[right_ops.shape[0] - 1 - i]
    lo = 0
    while lo < n and ops[lo] != SUB:
        run = 1
        while lo + run < n and ops[lo + run] == ops[lo]:
            run += 1
        score_left += gap_open + run * gap_extend
        if ops[lo] == DEL:
            ss += run
        else:
            qs += run
        lo += run
    hi = n
    while hi > lo and ops[hi - 1] != SUB:
        run = 1
        while hi - 1 - run >= lo and ops[hi - 1 - run] == ops[hi - 1]:
            run += 1
        score_right += gap_open + run * gap_extend
        if ops[hi - 1] == DEL:
            se -= run
        else:
            qe -= run
        hi -= run
    ext[0] = qs
    ext[1] = qe
    ext[2] = ss + shift
    ext[3] = se + shift
    return score_left + score_right, ops[lo:hi].copy()
