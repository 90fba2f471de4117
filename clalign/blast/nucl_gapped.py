"""Dynamic-programming gapped extension of BLASTN hits (``-task blastn``), as BLAST+ 2.12.

The preliminary stage (``s_BlastDynProgNtGappedAlignment`` and ``s_BlastAlignPackedNucl`` in
``blast_gapalign.c``) aligns the BLASTNA query against the *packed* NCBI2na subject, so an
ambiguous subject base scores as the random base makeblastdb stored there; only the final stage
(:mod:`clalign.blast.nucl_traceback`) sees the restored codes. The X-drop DP is the same as
``Blast_SemiGappedAlign`` (rows: subject letters, cells: query letters, BLASTNA matrix
``[subject base][query code]``); the start point is moved to the next subject byte boundary
(1 to 4 letters right of the hit) so that the right part starts on a whole byte, and both
X-drops are lowered to the ungapped score when that is smaller.

Also here: :func:`x_dropoffs` (bits to raw scores as ``BlastExtensionParametersNew``) and
:func:`gap_trigger` (``BlastInitialWordParametersNew``). Compiled with numba (``nogil``);
``.py_func`` is the plain-Python reference.
"""
from __future__ import annotations

import math

from ..data.nucleotide import BLASTNA_SENTINEL
from ..runtime.jit import njit
import numpy as np

MININT = -(1 << 30)
COMPRESSION_RATIO = 4
LN2 = 0.69314718055994530941723212145818


def x_dropoffs(prelim_bits: float, final_bits: float, lambda_gapped: float):
    """(gap_x_dropoff, gap_x_dropoff_final) raw scores: ``(Int4)(bits * ln 2 / lambda)``, the
    final one at least the preliminary one. ``lambda_gapped``: the smallest gapped lambda of the
    search's contexts (one value for blastn); blastn's defaults are 30/100 bits (``-task
    blastn``) and 25/100 (megablast)."""
    x = int(prelim_bits * LN2 / lambda_gapped)
    return x, int(max(final_bits * LN2 / lambda_gapped, x))


def gap_trigger(bits: float, lambda_ungapped: float, k_ungapped: float) -> int:
    """Ungapped score that sends a hit to gapped extension (blastn: 27 bits):
    ``(Int4)((bits ln 2 + ln K) / lambda)`` with the context's ungapped K and lambda
    (``BlastInitialWordParametersNew``)."""
    return int((bits * LN2 + math.log(k_ungapped)) / lambda_ungapped)


@njit(cache=True, nogil=True)
def _sbase(s, p):
    return (s[p >> 2] >> (6 - 2 * (p & 3))) & 3


@njit(cache=True, nogil=True)
def align_packed(matrix, q, q0, N, s, s0, M, reverse, gap_open, gap_extend, x_dropoff, out):
    """``s_BlastAlignPackedNucl``: score-only X-drop DP of query cells against packed subject rows.

    Forward: row a (1-based) is subject base ``s0 + a - 1``, cell b consumes query ``q[q0 + b]``;
    reverse: row a is subject base ``s0 - a`` and cell b consumes ``q[q0 - 1 - b]`` (a letter
    outside ``q``: BLASTNA_SENTINEL). Returns the best score; out = (a, b) of the best cell (letters of subject
    and query used). The cells' letters and the scratch rows are made here per call; the
    preliminary stage gives :func:`align_oriented` its own, made once."""
    qq = np.empty(max(N, 0) + 1, dtype=np.uint8)
    for b in range(qq.shape[0]):
        qi = q0 - 1 - b if reverse else q0 + b
        qq[b] = q[qi] if 0 <= qi < q.shape[0] else BLASTNA_SENTINEL   # the last cell's letter is never used
    best = np.empty(max(N, 0) + 2, dtype=np.int64)
    return align_oriented(matrix, qq, 0, N, s, s0, M, reverse, gap_open, gap_extend, x_dropoff,
                          out, best, np.empty_like(best))


@njit(cache=True, nogil=True)
def align_oriented(matrix, qq, qb, N, s, s0, M, reverse, gap_open, gap_extend, x_dropoff, out,
                   best, best_gap):
    """:func:`align_packed` with cell b's letter at ``qq[qb + b]`` (the query already in the
    direction of the cells, ``N + 1`` letters from ``qb``) and the scratch rows ``best`` and
    ``best_gap`` (at least ``N + 2`` each) given: no allocation, no direction test, no bounds
    test and no negative-index wrap-around (unsigned indices) per cell."""
    out[0] = 0
    out[1] = 0
    goe = gap_open + gap_extend
    if x_dropoff < goe:
        x_dropoff = goe
    if N <= 0 or M <= 0:
        return 0
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
    floor = -x_dropoff              # best_score - x_dropoff: a cell below it is dropped
    best_a = 0
    best_b = 0
    first_b = 0
    for a in range(1, M + 1):
        p = s0 - a if reverse else s0 + a - 1
        row = matrix[_sbase(s, p)]
        score = MININT
        score_gap_row = MININT
        last_b = first_b
        for b in range(first_b, b_size):
            ub = np.uint64(b)
            score_gap_col = best_gap[ub]
            next_score = best[ub] + row[qq[np.uint64(qb + b)]]
            score = max(score, score_gap_col, score_gap_row)
            if score < floor:
                if b == first_b:
                    first_b += 1
                else:
                    best[ub] = MININT
            else:
                last_b = b
                if score > best_score:
                    best_score = score
                    floor = score - x_dropoff
                    best_a = a
                    best_b = b
                best_gap[ub] = max(score - goe, score_gap_col - gap_extend)
                score_gap_row = max(score - goe, score_gap_row - gap_extend)
                best[ub] = score
            score = next_score
        if first_b == b_size:
            break
        if last_b < b_size - 1:
            b_size = last_b + 1
        else:
            while score_gap_row >= floor and b_size <= N:
                best[b_size] = score_gap_row
                best_gap[b_size] = score_gap_row - goe
                score_gap_row -= gap_extend
                b_size += 1
        if b_size <= N:
            best[b_size] = MININT
            best_gap[b_size] = MININT
            b_size += 1
    out[0] = best_a
    out[1] = best_b
    return best_score


def oriented_batch(q):
    """(forward, reverse) uint8 copies of a query batch ``q`` for :func:`dp_prelim_oriented`:
    ``q`` with one BLASTNA_SENTINEL before and after it, and that reversed. Cells past a context's
    end (either way) then read the sentinel between contexts, as :func:`align_packed` does."""
    qf = np.full(q.shape[0] + 2, BLASTNA_SENTINEL, dtype=np.uint8)
    qf[1:-1] = q
    return qf, qf[::-1].copy()


#: :func:`oriented_batch` compiled, for the compiled callers (the search's own call stays plain
#: Python: no compiled entry point on blastn's start for one copy per search).
_oriented = njit(cache=True, nogil=True)(oriented_batch)


@njit(cache=True, nogil=True)
def dp_prelim(matrix, q, q_len, s_packed, s_len, q_off, s_off, u_s_end, u_score, gap_open,
              gap_extend, x_dropoff):
    """``-task blastn``'s preliminary gapped extension of one ungapped HSP (``BLAST_GetGappedScore``,
    dynamic-programming branch, then ``s_BlastDynProgNtGappedAlignment``).

    ``q``: the query context's BLASTNA codes (``q_len`` of them); ``s_packed``: the subject's
    NCBI2na bytes (``s_len`` bases); ``(q_off, s_off)``: the initial HSP's offsets as the
    ungapped stage saved them (the word hit), context-relative; ``u_s_end``: ungapped subject
    end (exclusive) and ``u_score`` its score. The start moves 3 letters right when the
    ungapped alignment reaches 8 letters past it. Returns (score, q_start, q_end, s_start,
    s_end, q_gapped_start, s_gapped_start), ends exclusive; the gapped start is what the HSP
    keeps for the traceback. (Per call: the oriented query and scratch rows; the compiled
    preliminary stage calls :func:`dp_prelim_oriented` with its own.)"""
    qf, qr = _oriented(q[:q_len])
    best = np.empty(q_len + 2, dtype=np.int64)
    return dp_prelim_oriented(matrix, qf, qr, 0, q_len, s_packed, s_len, q_off,
                              s_off, u_s_end, u_score, gap_open, gap_extend, x_dropoff,
                              np.zeros(2, dtype=np.int64), best, np.empty_like(best))


@njit(cache=True, nogil=True)
def dp_prelim_oriented(matrix, qf, qr, a, q_len, s_packed, s_len, q_off, s_off, u_s_end, u_score,
                       gap_open, gap_extend, x_dropoff, ab, best, best_gap):
    """:func:`dp_prelim` of the context at ``a`` of a batch given as :func:`oriented_batch`'s
    ``qf``, ``qr``, with scratch ``ab`` (2) and ``best``, ``best_gap`` (``q_len + 2`` or more)."""
    if u_s_end >= s_off + 8:
        s_off += 3
        q_off += 3
    x = x_dropoff
    if u_score < x:
        x = u_score
    adj = COMPRESSION_RATIO - s_off % COMPRESSION_RATIO
    q_length = q_off + adj
    s_length = s_off + adj
    if q_length > q_len or s_length > s_len:
        q_length -= COMPRESSION_RATIO
        s_length -= COMPRESSION_RATIO
    rev = q_len >= 0   # run-time flags: numba compiles a variant per literal argument
    score_left = align_oriented(matrix, qr, qr.shape[0] - 1 - a - q_length, q_length, s_packed,
                                s_length, s_length, rev, gap_open, gap_extend, x, ab, best,
                                best_gap)
    q_start = q_length - ab[1]
    s_start = s_length - ab[0]
    score_right = 0
    if q_length < q_len and s_length < s_len:
        score_right = align_oriented(matrix, qf, 1 + a + q_length, q_len - q_length, s_packed,
                                     s_length, s_len - s_length, not rev, gap_open, gap_extend,
                                     x, ab, best, best_gap)
        q_end = q_length + ab[1]
        s_end = s_length + ab[0]
    else:
        q_end = q_length
        s_end = s_length
    return score_left + score_right, q_start, q_end, s_start, s_end, q_off, s_off


@njit(cache=True, nogil=True)
def dp_prelim_all(matrix, q, ctx_offsets, ctx_lengths, s_packed, s_len, rows, gap_open,
                  gap_extend, x_dropoff):
    """:func:`dp_prelim` of many ungapped HSPs of one subject in one compiled call. ``q``: the
    concatenated query batch; ``rows`` int64 (n, 5): context, q_off (context-relative), s_off,
    ungapped subject end, ungapped score. Returns int64 (n, 7) as :func:`dp_prelim`; containment
    is the caller's, as for :func:`~clalign.blast.nucl_greedy.greedy_prelim_all`."""
    n = rows.shape[0]
    out = np.zeros((n, 7), dtype=np.int64)
    qf, qr = _oriented(q)
    ab = np.zeros(2, dtype=np.int64)
    best = np.empty(ctx_lengths.max() + 2 if ctx_lengths.shape[0] else 2, dtype=np.int64)
    best_gap = np.empty_like(best)
    for k in range(n):
        c = rows[k, 0]
        r = dp_prelim_oriented(matrix, qf, qr, ctx_offsets[c], ctx_lengths[c], s_packed, s_len,
                               rows[k, 1], rows[k, 2], rows[k, 3], rows[k, 4], gap_open,
                               gap_extend, x_dropoff, ab, best, best_gap)
        for j in range(7):
            out[k, j] = r[j]
    return out
