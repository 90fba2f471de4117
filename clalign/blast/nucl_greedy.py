"""Greedy gapped extension of BLASTN hits (megablast), as BLAST+ 2.12's
``BLAST_GreedyGappedAlignment`` (``blast_gapalign.c``) on the aligners of
:mod:`clalign.blast.nucl_greedy_core`: the extension through a start point (right part from the
start, left part before it), the score of 0/0 gap costs from the distance, the estimate of the
best start for the final stage, the two edit scripts joined, and the preliminary stage of
megablast (start at the middle of the ungapped alignment, packed subject, score only).

Numba-compiled (``nogil``); ``.py_func`` is the plain-Python reference.
"""
from __future__ import annotations

from ..runtime.jit import njit
import numpy as np

from .nucl_greedy_core import DEL, INS, SUB, affine_greedy_align  # noqa: F401  (codes re-exported)


@njit(cache=True, nogil=True)
def greedy_gapped(q, q_len, s, s_base, s_len, q_off, s_off, packed, traceback, reward, penalty,
                  gap_open, gap_extend, xdrop):
    """``BLAST_GreedyGappedAlignment`` through the start point (q_off, s_off) of one query context
    ``q[:q_len]`` and the subject window of ``s_len`` bases from base ``s_base`` of ``s`` (offsets
    and results relative to the window; packed subjects need ``s_base`` 0): right extension from the start point
    (inclusive), then left extension (exclusive), both with X-drop ``xdrop`` (raw score).

    Returns (score, q_start, q_end, s_start, s_end, q_seed, s_seed, ops, nums, n_ops): ends
    exclusive; ``(q_seed, s_seed)`` BLAST+'s estimate of the best start point for the final
    stage (middle of the longest exact run inside the alignment's box; with ``traceback`` it is
    the start point itself); ``ops/nums``: the edit script left to right (``traceback`` only),
    before :func:`clalign.blast.nucl_traceback.reduce_gaps`. Score with 0/0 gap costs:
    ``(extents) * reward / 2 - distance * (reward - penalty)`` (C integer arithmetic)."""
    fwd = q_len < 0   # False and True as run-time values: numba compiles a variant per literal
    rev = not fwd
    packed = packed or fwd
    traceback = traceback or fwd
    r = affine_greedy_align(q, q_off, q_len - q_off, s, s_base + s_off, s_len - s_off, fwd, packed,
                            xdrop, reward, -penalty, gap_open, gap_extend, traceback)
    lft = affine_greedy_align(q, q_off, q_off, s, s_base + s_off, s_off, rev, packed, xdrop,
                              reward, -penalty, gap_open, gap_extend, traceback)
    score = r[0] + lft[0]
    q_ext_r, s_ext_r = r[1], r[2]
    q_ext_l, s_ext_l = lft[1], lft[2]
    if gap_open == 0 and gap_extend == 0:
        score = (q_ext_r + s_ext_r + q_ext_l + s_ext_l) * reward // 2 - score * (reward - penalty)
    elif reward % 2 == 1:
        score = score // 2 if score >= 0 else -((-score) // 2)
    q_seed = q_off
    s_seed = s_off
    ops = np.zeros(0, dtype=np.int8)
    nums = np.zeros(0, dtype=np.int64)
    nop = 0
    if traceback:
        # Blast_PrelimEditBlockToGapEditScript: left block as it is, right block reversed
        lo_, ln_, lk = lft[6], lft[7], lft[8]
        ro, rn, rk = r[6], r[7], r[8]
        merge = rk > 0 and lk > 0 and ro[rk - 1] == lo_[lk - 1]
        size = lk + rk - (1 if merge else 0)
        ops = np.zeros(size, dtype=np.int8)
        nums = np.zeros(size, dtype=np.int64)
        for i in range(lk):
            ops[i] = lo_[i]
            nums[i] = ln_[i]
        nop = lk
        if rk > 0:
            i = rk - 1
            if merge:
                nums[nop - 1] += rn[rk - 1]
                i = rk - 2
            while i >= 0:
                ops[nop] = ro[i]
                nums[nop] = rn[i]
                nop += 1
                i -= 1
    else:
        q_box_l = q_off - q_ext_l
        s_box_l = s_off - s_ext_l
        q_box_r = q_off + q_ext_r
        s_box_r = s_off + s_ext_r
        q_l = q_off - lft[3]
        s_l = s_off - lft[4]
        q_r = q_off + r[3]
        s_r = s_off + r[4]
        len_l = 0
        len_r = 0
        if q_r < q_box_r and s_r < s_box_r:
            len_r = min(min(q_box_r - q_r, s_box_r - s_r), r[5]) // 2
        else:
            q_r = q_off
            s_r = s_off
        if q_l > q_box_l and s_l > s_box_l:
            len_l = min(min(q_l - q_box_l, s_l - s_box_l), lft[5]) // 2
        else:
            q_l = q_off
            s_l = s_off
        if len_r > len_l:
            q_seed = q_r + len_r
            s_seed = s_r + len_r
        else:
            q_seed = q_l - len_l
            s_seed = s_l - len_l
    return (score, q_off - q_ext_l, q_off + q_ext_r, s_off - s_ext_l, s_off + s_ext_r,
            q_seed, s_seed, ops, nums, nop)


@njit(cache=True, nogil=True)
def greedy_prelim(q, q_len, s_packed, s_len, u_q_start, u_s_start, u_length, reward, penalty,
                  gap_open, gap_extend, xdrop):
    """Megablast's preliminary gapped extension of one ungapped HSP (``BLAST_GetGappedScore``,
    greedy branch): start at the middle of the ungapped alignment (``start + length // 2`` on
    both sequences), packed subject, score only. Offsets are relative to the query context and
    the subject. Returns (score, q_start, q_end, s_start, s_end, q_seed, s_seed): the HSP the
    preliminary stage keeps when ``score >= cutoff``, with its gapped start (q_seed, s_seed)."""
    yes = q_len >= 0   # run-time flags (see greedy_gapped)
    r = greedy_gapped(q, q_len, s_packed, q_len - q_len, s_len, u_q_start + u_length // 2, u_s_start + u_length // 2,
                      yes, not yes, reward, penalty, gap_open, gap_extend, xdrop)
    return r[0], r[1], r[2], r[3], r[4], r[5], r[6]


@njit(cache=True, nogil=True)
def greedy_prelim_all(q, ctx_offsets, ctx_lengths, s_packed, s_len, rows, reward, penalty,
                      gap_open, gap_extend, xdrop):
    """:func:`greedy_prelim` of many ungapped HSPs of one subject in one compiled call (threads
    run it without the GIL). ``q``: the concatenated query batch; ``rows`` int64 (n, 4):
    context, ungapped query start (context-relative), subject start, length. Every row is
    extended: which ones BLAST+ skips as contained in an earlier HSP is decided afterwards (an
    extension does not depend on the others). Returns int64 (n, 7) as :func:`greedy_prelim`."""
    n = rows.shape[0]
    out = np.zeros((n, 7), dtype=np.int64)
    for k in range(n):
        c = rows[k, 0]
        q0 = ctx_offsets[c]
        qc = q[q0:q0 + ctx_lengths[c]]
        r = greedy_prelim(qc, ctx_lengths[c], s_packed, s_len, rows[k, 1], rows[k, 2], rows[k, 3],
                          reward, penalty, gap_open, gap_extend, xdrop)
        for j in range(7):
            out[k, j] = r[j]
    return out
