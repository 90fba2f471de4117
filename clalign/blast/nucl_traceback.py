"""BLASTN final stage for one HSP: start point, gapped alignment with traceback, gap reduction
and the re-scoring with ambiguities, as BLAST+ 2.12 (``blast_traceback.c``, ``blast_gapalign.c``,
``blast_hits.c``).

Per HSP of the preliminary stage (offsets relative to its query context and subject):

1. start point: :func:`start_for_gapped_nucl` (``BlastGetStartForGappedAlignmentNucl``: keep the
   preliminary gapped start if it sits in more than 10 identities, else the middle of the first
   run of more than 15, else of the longest run) or, when the preliminary start is (0, 0),
   :func:`offsets_for_gapped` (``BlastGetOffsetsForGappedAlignment``; may drop the HSP);
2. ``AdjustSubjectRange`` (subjects of 90,000 bases or more are cut to a window);
3. megablast: :func:`~clalign.blast.nucl_greedy.greedy_gapped` with traceback on the restored
   subject, then :func:`~clalign.blast.nucl_traceback_reduce.reduce_gaps` (``s_ReduceGaps``); ``-task blastn``: ``ALIGN_EX`` through
   :func:`clalign.blast.traceback.gapped_traceback` with the BLASTNA matrix;
4. after the HSP-list purge, :func:`reevaluate_gapped` (``Blast_HSPReevaluateWithAmbiguitiesGapped``):
   the score with the BLASTNA matrix (ambiguities score as the matrix says, the greedy aligner
   only knew mismatches), trimmed to its best part and re-extended over exact matches.

Sequences are BLASTNA codes (query context; subject with its ambiguity codes restored, e.g.
``NCBI4NA_TO_BLASTNA[db.ncbi4na(i)]``), uint8; the matrix is ``blastna_matrix(...)`` as int32
(the type BLASTP's DP is compiled for, so ``ALIGN_EX`` is not compiled twice). Edit scripts are run-length ``(ops, nums)`` with the
codes of :mod:`clalign.blast.traceback` (SUB 3, INS 6 = query letter against a gap, DEL 0);
:func:`script_columns` gives one op per column as :class:`clalign.blast.hsp.HSP` stores them.
Compiled with numba (``nogil``); ``.py_func`` is the plain-Python reference.
"""
from __future__ import annotations

from ..runtime.jit import njit
import numpy as np

from .gapped import HSP_MAX_WINDOW, adjust_subject_range
from .nucl_greedy import DEL, INS, SUB, greedy_gapped
from .nucl_traceback_reduce import _eq, reduce_gaps
from .traceback import gapped_traceback

MAX_IDENT_RUN = 10


@njit(cache=True, nogil=True)
def start_for_gapped_nucl(q, s, q_off, q_end, s_off, s_end, q_gs, s_gs):
    """``BlastGetStartForGappedAlignmentNucl``: the (query, subject) start for the final stage of
    an HSP ``[q_off, q_end) x [s_off, s_end)`` whose preliminary gapped start is (q_gs, s_gs)."""
    run = MAX_IDENT_RUN
    offset = min(s_gs - s_off, q_gs - q_off)
    score = -1
    i = q_gs
    j = s_gs
    while i < q_end:
        same = _eq(q, i, s, j)
        i += 1
        j += 1
        if not same:
            break
        score += 1
        if score > run:
            return q_gs, s_gs
    i = q_gs
    j = s_gs
    while i >= 0:
        same = _eq(q, i, s, j)
        i -= 1
        j -= 1
        if not same:
            break
        score += 1
        if score > run:
            return q_gs, s_gs
    run = int(run * 1.5)
    q_start = q_gs - offset
    s_start = s_gs - offset
    q_len = min(s_end - s_start, q_end - q_start)
    max_score = 0
    max_offset = q_start
    score = 0
    match = False
    prev = False
    index = q_start
    while index < q_start + q_len:
        match = _eq(q, index, s, s_start + index - q_start)
        if match != prev:
            prev = match
            if match:
                score = 1
            elif score > max_score:
                max_score = score
                max_offset = index - score // 2
        elif match:
            score += 1
            if score > run:
                max_offset = index - run // 2
                return max_offset, max_offset + s_start - q_start
        index += 1
    if match and score > max_score:
        max_score = score
        max_offset = index - score // 2
    if max_score > 0:
        return max_offset, max_offset + s_start - q_start
    return q_gs, s_gs


@njit(cache=True, nogil=True)
def offsets_for_gapped(matrix, q, s, q_off, q_end, s_off, s_end):
    """``BlastGetOffsetsForGappedAlignment``: (found, q_start, s_start) from the best 11-letter
    window, else the window at the HSP's end if it scores above 0; not found drops the HSP."""
    q_length = q_end - q_off
    s_length = s_end - s_off
    if q_length <= HSP_MAX_WINDOW:
        return True, q_off + q_length // 2, s_off + q_length // 2
    score = 0
    for i in range(HSP_MAX_WINDOW):
        score += matrix[q[q_off + i], s[s_off + i]]
    max_score = score
    max_offset = q_off + HSP_MAX_WINDOW - 1
    for i in range(q_off + HSP_MAX_WINDOW, q_off + min(q_length, s_length)):
        k = i - q_off
        score -= matrix[q[i - HSP_MAX_WINDOW], s[s_off + k - HSP_MAX_WINDOW]]
        score += matrix[q[i], s[s_off + k]]
        if score > max_score:
            max_score = score
            max_offset = i
    if max_score > 0:
        return True, max_offset, max_offset - q_off + s_off
    score = 0
    for i in range(HSP_MAX_WINDOW):
        score += matrix[q[q_off + q_length - HSP_MAX_WINDOW + i], s[s_off + s_length - HSP_MAX_WINDOW + i]]
    if score > 0:
        return True, q_end - HSP_MAX_WINDOW // 2, s_end - HSP_MAX_WINDOW // 2
    return False, 0, 0


@njit(cache=True, nogil=True)
def final_start(matrix, q, s, q_off, q_end, s_off, s_end, q_gs, s_gs):
    """The traceback start of a blastn HSP: (found, q_start, s_start) (step 1 of the module)."""
    if q_gs == 0 and s_gs == 0:
        return offsets_for_gapped(matrix, q, s, q_off, q_end, s_off, s_end)
    a, b = start_for_gapped_nucl(q, s, q_off, q_end, s_off, s_end, q_gs, s_gs)
    return True, a, b


@njit(cache=True, nogil=True)
def greedy_traceback(matrix, q, s, s_len, q_off, q_end, s_off, s_end, q_gs, s_gs, reward, penalty,
                     gap_open, gap_extend, x_dropoff):
    """Megablast's final alignment of one HSP (steps 1-3): ``q`` the context's codes, ``s`` the
    whole restored subject (``s_len`` bases; ``s`` may hold more, e.g. a sentinel), the HSP's
    preliminary extents and gapped start, X-drop the final one. Returns (found, score, q_start, q_end, s_start, s_end, q_gs, s_gs, ops, nums): ``score``
    the greedy aligner's (mismatch-only) score, to be replaced by :func:`reevaluate_gapped`."""
    found, qs, ss = final_start(matrix, q, s, q_off, q_end, s_off, s_end, q_gs, s_gs)
    if not found:
        return (False, 0, 0, 0, 0, 0, 0, 0, np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.int64))
    q_len = q.shape[0]
    shift, s_adj, s_len_adj = adjust_subject_range(ss, s_len, qs, q_len)
    yes = q_len >= 0   # run-time flags: numba compiles a variant per literal argument
    r = greedy_gapped(q, q_len, s, shift, s_len_adj, qs, s_adj, not yes, yes, reward, penalty,
                      gap_open, gap_extend, x_dropoff)
    ops = r[7]
    nums = r[8]
    size = reduce_gaps(ops, nums, r[9], q, s, r[1], r[3] + shift, r[2], r[4] + shift)
    return (True, r[0], r[1], r[2], r[3] + shift, r[4] + shift, qs, s_adj + shift,
            ops[:size].copy(), nums[:size].copy())


@njit(cache=True, nogil=True)
def dp_traceback(matrix, q, s, s_len, q_off, q_end, s_off, s_end, q_gs, s_gs, gap_open, gap_extend,
                 x_dropoff):
    """``-task blastn``'s final alignment of one HSP (steps 1-3, ``ALIGN_EX``), arguments as
    :func:`greedy_traceback`. ``ALIGN_EX`` reads (and never uses) the letter after the last DP
    cell, which may be ``s[s_len]``: a subject array with one sentinel after it keeps that read
    inside the array. Returns (found, score, q_start, q_end, s_start, s_end, q_gs, s_gs, ops, nums)."""
    found, qs, ss = final_start(matrix, q, s, q_off, q_end, s_off, s_end, q_gs, s_gs)
    if not found:
        return (False, 0, 0, 0, 0, 0, 0, 0, np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.int64))
    ext = np.zeros(4, dtype=np.int32)
    score, cols = gapped_traceback(matrix, q, s, s_len - s_len, s_len, qs, ss, gap_open, gap_extend,
                                   x_dropoff, ext)
    ops, nums = script_runs(cols)
    return True, score, ext[0], ext[1], ext[2], ext[3], qs, ss, ops, nums


@njit(cache=True, nogil=True)
def script_runs(cols):
    """Run-length ``(ops, nums)`` of one-op-per-column ``cols``."""
    n = 0
    for i in range(cols.shape[0]):
        if i == 0 or cols[i] != cols[i - 1]:
            n += 1
    ops = np.zeros(n, dtype=np.int8)
    nums = np.zeros(n, dtype=np.int64)
    k = -1
    for i in range(cols.shape[0]):
        if i == 0 or cols[i] != cols[i - 1]:
            k += 1
            ops[k] = cols[i]
        nums[k] += 1
    return ops, nums


def script_columns(ops, nums) -> np.ndarray:
    """One op per alignment column (uint8) from a run-length script."""
    return np.repeat(np.asarray(ops, dtype=np.uint8), np.asarray(nums, dtype=np.int64))


@njit(cache=True, nogil=True)
def reevaluate_gapped(matrix, q, s, s_len, q_off, s_off, ops, nums, reward, penalty, gap_open,
                      gap_extend, cutoff):
    """``Blast_HSPReevaluateWithAmbiguitiesGapped`` of the HSP starting at (q_off, s_off) with
    script ``ops/nums`` (``q`` the context, ``s`` the restored subject of ``s_len`` bases, whole). Scores columns
    with the BLASTNA matrix (0/0 gap costs: a gap letter costs ``(reward - 2 penalty) / 2``, all
    doubled for odd rewards), keeps the best part (a part is closed when the running sum goes
    negative; once a part reached ``cutoff`` it is not replaced), then extends it over exact
    matches of unambiguous bases on both sides (``reward`` each).

    Returns (keep, score, q_start, q_end, s_start, s_end, ops, nums); ``keep`` False when the
    score is below ``cutoff`` (BLAST+ deletes the HSP)."""
    nums = nums.copy()
    size = ops.shape[0]
    factor = 1
    if gap_open == 0 and gap_extend == 0:
        if reward % 2 == 1:
            factor = 2
        g_open = 0
        g_ext = (reward - 2 * penalty) * factor // 2
    else:
        g_open = gap_open
        g_ext = gap_extend
    qi = q_off
    si = s_off
    score = 0
    total = 0
    bq0 = qi
    bq1 = qi
    cq0 = qi
    bs0 = si
    bs1 = si
    cs0 = si
    b_start = 0
    b_end = 0
    c_start = 0
    b_end_num = -1
    if size == 0:
        return False, 0, q_off, q_off, s_off, s_off, ops, nums
    for index in range(size):
        k = 0
        while k < nums[index]:
            if ops[index] == SUB:
                total += factor * matrix[q[qi] & 0x0F, s[si]]
                qi += 1
                si += 1
                k += 1
            elif ops[index] == DEL:
                total -= g_open + g_ext * nums[index]
                si += nums[index]
                k += nums[index]
            else:
                total -= g_open + g_ext * nums[index]
                qi += nums[index]
                k += nums[index]
            if total < 0:
                if k < nums[index]:
                    nums[index] -= k
                    c_start = index
                    k = 0
                else:
                    c_start = index + 1
                total = 0
                cq0 = qi
                cs0 = si
                if score < cutoff:
                    bq0 = qi
                    bs0 = si
                    score = 0
                    b_start = c_start
                    b_end = c_start
            elif total > score:
                score = total
                bq0 = cq0
                bs0 = cs0
                bq1 = qi
                bs1 = si
                b_start = c_start
                b_end = index
                b_end_num = k
    score = score // factor
    if b_start < size and b_end < size:
        qp = bq0
        sp = bs0
        ext = 0
        while qp > 0 and sp > 0:
            qp -= 1
            sp -= 1
            if not (q[qp] == s[sp] and q[qp] < 4):
                break
            ext += 1
        bq0 -= ext
        bs0 -= ext
        nums[b_start] += ext
        if b_end == b_start:
            b_end_num += ext
        score += ext * reward
        qp = bq1
        sp = bs1
        ext = 0
        while qp < q.shape[0] and sp < s_len and q[qp] < 4:
            same = q[qp] == s[sp]
            qp += 1
            sp += 1
            if not same:
                break
            ext += 1
        bq1 += ext
        bs1 += ext
        nums[b_end] += ext
        b_end_num += ext
        score += ext * reward
    if score < cutoff:
        return False, score, bq0, bq1, bs0, bs1, ops, nums
    if b_end != size - 1 or b_start > 0:
        ops = ops[b_start:b_end + 1].copy()
        nums = nums[b_start:b_end + 1].copy()
    nums[nums.shape[0] - 1] = b_end_num
    return True, score, bq0, bq1, bs0, bs1, ops, nums
