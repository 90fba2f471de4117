"""Gapped score-only extension as BLAST+'s preliminary stage does it (``blast_gapalign.c``).

``semi_gapped`` is ``Blast_SemiGappedAlign`` in score-only mode: an X-drop affine-gap DP that
grows from a start point in one direction, keeping only the band of subject cells that have not
dropped ``x_dropoff`` below the best score (its loop bounds, MININT markers and the extra cell
it appends each row are kept, because they decide which cells exist). ``restricted`` is
``s_RestrictedGappedAlign``: gaps may open only every RESTRICT_SIZE offsets from the start
(Cameron et al. 2004), which blastp uses when the best ungapped score of a subject is below
0.68 x the gapped cutoff. Direction is given by letter access: row ``a`` (1-based) reads query
``q[qb + dq * a]``, cell ``b`` (0-based) reads subject ``s[sb + ds * b]``.

``prot_gapped`` is ``s_BlastProtGappedAlignment`` (left part includes the start residue,
``AdjustSubjectRange`` for subjects of 90,000 residues or more) and ``gapped_start`` is
``BlastGetStartForGappedAlignment`` (best 11-residue window of the ungapped HSP).

These functions are written once, numba-compatible; calling them through ``.py_func`` is the
plain-Python reference, the jitted form is the CPU path.
"""
from __future__ import annotations

from ..runtime.jit import njit
import numpy as np

MININT = -(1 << 30)        # INT4_MIN / 2
RESTRICT_SIZE = 10
HSP_MAX_WINDOW = 11
MAX_SUBJECT_OFFSET = 90000
MAX_TOTAL_GAPS = 3000


@njit(cache=True, nogil=True)
def semi_gapped(matrix, q, qb, dq, M, s, sb, ds, N, gap_open, gap_extend, x_dropoff, out):
    """Score-only X-drop extension; returns best score, sets out[0:2] = (a_offset, b_offset)."""
    out[0] = 0
    out[1] = 0
    goe = gap_open + gap_extend
    if x_dropoff < goe:
        x_dropoff = goe
    if N <= 0 or M <= 0:
        return 0
    best = np.empty(N + 2, dtype=np.int32)
    best_gap = np.empty(N + 2, dtype=np.int32)
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
        i += 1
    b_size = i
    best_score = 0
    first_b = 0
    for a in range(1, M + 1):
        row = matrix[q[qb + dq * a]]
        score = MININT
        score_gap_row = MININT
        last_b = first_b
        for b in range(first_b, b_size):
            score_gap_col = best_gap[b]
            next_score = best[b] + row[s[sb + ds * b]]
            if score < score_gap_col:
                score = score_gap_col
            if score < score_gap_row:
                score = score_gap_row
            if best_score - score > x_dropoff:
                if b == first_b:
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
                best_gap[b] = max(score - goe, score_gap_col)
                score_gap_row = max(score - goe, score_gap_row)
                best[b] = score
            score = next_score
        if first_b == b_size:
            break
        if last_b < b_size - 1:
            b_size = last_b + 1
        else:
            while score_gap_row >= best_score - x_dropoff and b_size <= N:
                best[b_size] = score_gap_row
                best_gap[b_size] = score_gap_row - goe
                score_gap_row -= gap_extend
                b_size += 1
        if b_size <= N:
            best[b_size] = MININT
            best_gap[b_size] = MININT
            b_size += 1
    return best_score


@njit(cache=True, nogil=True)
def restricted(matrix, q, qb, dq, M, s, sb, ds, N, gap_open, gap_extend, x_dropoff, out):
    """``s_RestrictedGappedAlign``: as ``semi_gapped`` but gaps open only every 10 offsets."""
    out[0] = 0
    out[1] = 0
    goe = gap_open + gap_extend
    if x_dropoff < goe:
        x_dropoff = goe
    if N <= 0 or M <= 0:
        return 0
    best = np.empty(N + 2, dtype=np.int32)
    best_gap = np.empty(N + 2, dtype=np.int32)
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
        i += 1
    b_size = i
    best_score = 0
    first_b = 0
    b_gap = 0
    for a in range(1, M + 1):
        row = matrix[q[qb + dq * a]]
        score = MININT
        score_gap_row = MININT
        last_b = first_b
        row_gap = a % RESTRICT_SIZE == 0
        for b in range(first_b, b_size):
            next_score = best[b] + row[s[sb + ds * b]]
            at_gap = b == b_gap
            if at_gap:
                b_gap += RESTRICT_SIZE
                score_gap_col = best_gap[b]
                if score < score_gap_col:
                    score = score_gap_col
            if row_gap and score < score_gap_row:
                score = score_gap_row
            if best_score - score > x_dropoff:
                best[b] = MININT
                if b == first_b:
                    first_b += 1
            else:
                last_b = b
                if score > best_score:
                    best_score = score
                    out[0] = a
                    out[1] = b
                if at_gap:
                    score_gap_col -= gap_extend
                    best_gap[b] = max(score - goe, score_gap_col)
                if row_gap:
                    score_gap_row -= gap_extend
                    score_gap_row = max(score - goe, score_gap_row)
                best[b] = score
            score = next_score
        if not row_gap:
            score_gap_row = score
        if first_b == b_size:
            break
        r = first_b % RESTRICT_SIZE
        b_gap = first_b
        if r > 0:
            b_gap += RESTRICT_SIZE - r
        if last_b < b_size - 1:
            b_size = last_b + 1
        else:
            while score_gap_row >= best_score - x_dropoff and b_size <= N:
                best[b_size] = score_gap_row
                best_gap[b_size] = score_gap_row - goe
                score_gap_row -= gap_extend
                b_size += 1
        if b_size <= N:
            best[b_size] = MININT
            best_gap[b_size] = MININT
            b_size += 1
    return best_score


@njit(cache=True, nogil=True)
def gapped_start(matrix, q, s, q_start, s_start, length):
    """``BlastGetStartForGappedAlignment`` for an ungapped HSP (same length on both)."""
    if length <= HSP_MAX_WINDOW:
        return q_start + length // 2
    score = 0
    for i in range(HSP_MAX_WINDOW):
        score += matrix[q[q_start + i], s[s_start + i]]
    max_score = score
    max_offset = q_start + HSP_MAX_WINDOW - 1
    for i in range(HSP_MAX_WINDOW, length):
        score -= matrix[q[q_start + i - HSP_MAX_WINDOW], s[s_start + i - HSP_MAX_WINDOW]]
        score += matrix[q[q_start + i], s[s_start + i]]
        if score > max_score:
            max_score = score
            max_offset = q_start + i
    if max_score > 0:
        return max_offset - HSP_MAX_WINDOW // 2
    return q_start


@njit(cache=True, nogil=True)
def adjust_subject_range(s_off, s_len, q_off, q_len):
    """``AdjustSubjectRange``: (start_shift, s_off, s_len) of the window used for long subjects."""
    if s_len < MAX_SUBJECT_OFFSET:
        return 0, s_off, s_len
    left = q_off + MAX_TOTAL_GAPS
    right = q_len - q_off + MAX_TOTAL_GAPS
    if s_off <= left:
        shift = 0
    else:
        shift = s_off - left
        s_off = left
    return shift, s_off, min(s_len, s_off + shift + right) - shift


@njit(cache=True, nogil=True)
def prot_gapped(matrix, q, s, s_base, slen, q_off, s_off, gap_open, gap_extend, x_dropoff,
                use_restricted, out):
    """Score-only gapped alignment through (q_off, s_off) of subject ``s[s_base:s_base+slen]``.

    Returns the score; out = (q_start, q_end, s_start, s_end) with ends exclusive."""
    qlen = q.shape[0]
    ab = np.zeros(2, dtype=np.int32)
    q_length = q_off + 1
    s_length = s_off + 1
    shift, s_length, subject_length = adjust_subject_range(s_length, slen, q_length, qlen)
    base = s_base + shift
    score_left = 0
    # left: rows read q[q_length - a], cells read s[s_length - 1 - b] (reverse_sequence)
    if use_restricted:
        score_left = restricted(matrix, q, q_length, -1, q_length, s, base + s_length - 1, -1,
                                s_length, gap_open, gap_extend, x_dropoff, ab)
    else:
        score_left = semi_gapped(matrix, q, q_length, -1, q_length, s, base + s_length - 1, -1,
                                 s_length, gap_open, gap_extend, x_dropoff, ab)
    out[0] = q_length - ab[0]
    out[2] = s_length - ab[1] + shift
    score_right = 0
    out[1] = q_off
    out[3] = s_off
    if q_length < qlen and s_length < subject_length:
        M = qlen - q_length
        N = subject_length - s_length
        if use_restricted:
            score_right = restricted(matrix, q, q_off, 1, M, s, s_base + s_off + 1, 1, N,
                                     gap_open, gap_extend, x_dropoff, ab)
        else:
            score_right = semi_gapped(matrix, q, q_off, 1, M, s, s_base + s_off + 1, 1, N,
                                      gap_open, gap_extend, x_dropoff, ab)
        out[1] = ab[0] + q_off + 1
        out[3] = ab[1] + s_off + 1
    return score_left + score_right


@njit(cache=True, nogil=True)
def extend_all(matrix, q, residues, offsets, rows, restricted, gap_open, gap_extend, x_dropoff):
    """The preliminary gapped extension of every initial HSP (rows as ``two_hit_db`` gives them),
    from the centre of its best 11-residue window, restricted where ``restricted[k]``; whether an
    extension is needed at all (containment) is decided afterwards, since the result of one
    extension does not depend on the others. Returns int32 (n, 7): score, q_start, q_end,
    s_start, s_end, q_off, s_off."""
    n = rows.shape[0]
    out = np.zeros((n, 7), dtype=np.int32)
    ext = np.zeros(4, dtype=np.int32)
    for k in range(n):
        oid = rows[k, 0]
        base = offsets[oid]
        slen = offsets[oid + 1] - base
        q_off = gapped_start(matrix, q, residues[base:base + slen], rows[k, 2], rows[k, 3], rows[k, 4])
        s_off = rows[k, 6] + q_off - rows[k, 5]
        g = prot_gapped(matrix, q, residues, base, slen, q_off, s_off, gap_open, gap_extend,
                        x_dropoff, restricted[k], ext)
        out[k, 0] = g
        out[k, 1] = ext[0]
        out[k, 2] = ext[1]
        out[k, 3] = ext[2]
        out[k, 4] = ext[3]
        out[k, 5] = q_off
        out[k, 6] = s_off
    return out
