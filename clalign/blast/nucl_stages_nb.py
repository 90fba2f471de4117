"""BLASTN's preliminary gapped stage of one subject piece, compiled (no Python per hit, no GIL).

The plain form, the spec, is :func:`clalign.blast.nucl_search.prelim_chunk_ref`; this does the
same (``BLAST_GetGappedScore``): initial hits in their sorted order, each whose ungapped box is
contained in a kept HSP of its context (the interval tree of :mod:`itree_nb` under BLASTN's
rules, ``sep >= 0``) skipped, the others extended (greedy for megablast, dynamic programming for
blastn) on the 2-bit subject and kept when they reach their context's gapped cutoff; then the
common-endpoint purge and the score order (:func:`prelim_hsps`).

HSP rows here are int64 [score, q_start, q_end, s_start, s_end, context, q_gstart, s_gstart],
query positions shifted by the context's offset in the batch while in the tree (the contexts'
ranges are disjoint, so the shifted positions also order and group the purge as BLAST+'s
context-first keys do) and context-relative in what :func:`prelim_hsps` returns.
"""
from __future__ import annotations

from ..data.nucleotide import BLASTNA_SENTINEL
from ..runtime.jit import njit
import numpy as np

from . import itree_nb as it
from .nucl_gapped import dp_prelim_oriented
from .params import NDP_DONE
from .nucl_greedy import DEL, INS, SUB, greedy_prelim
from .nucl_greedy_core import _grow
from .nucl_traceback import dp_traceback, greedy_traceback, reevaluate_gapped
from .stages_nb import _lexorder, purge_and_order

#: BLASTNA's gap letter in alignment columns (its sentinel code too)
GAP = BLASTNA_SENTINEL

NCOL = 8
_NO_PRE = np.zeros((0, 8), dtype=np.int64)    # prelim_rows' ``pre`` when nothing is precomputed


@njit(cache=True, nogil=True)
def prelim_rows(rows, pre, q, qf, qr, ctx_off, ctx_len, cutoff, s_packed, s_len, greedy, matrix,
                reward, penalty, gap_open, gap_extend, xdrop, sep):
    """The preliminary HSP rows of one piece (purged, in score order, query positions relative
    to the context) from its initial hits ``rows`` (int64 (n, 7 or more): q_off, s_off, q_start,
    s_start, length, score, context; query positions in the batch ``q``). ``qf``, ``qr``: the
    batch as ``nucl_gapped.oriented_batch`` gives it (read by the dynamic programming only).
    ``pre``: int64 (n, 8) ``dp_prelim_oriented``'s results of every row computed in advance
    (the device's, ``kernels/blast_nucl_gapped.mako``), column 7 the status (``NDP_DONE``:
    taken as they are; else computed here), or (0, 8): none."""
    n = rows.shape[0]
    H = np.zeros((max(n, 1), NCOL), dtype=np.int64)
    nodes, st = it.new_tree(q.shape[0] + 1, s_len + 1, 4 * it.ADD_NODES)
    ab = np.zeros(2, dtype=np.int64)              # the DP's scratch, once per piece
    best = np.empty(1 if greedy else ctx_len.max() + 2, dtype=np.int64)
    best_gap = np.empty_like(best)
    m = 0
    for k in range(n):
        c = rows[k, 6]
        a = ctx_off[c]
        uq, us, ul = rows[k, 2], rows[k, 3], rows[k, 4]
        if m > 0 and it.contains_in(nodes, H, rows[k, 5], uq, uq + ul, us, us + ul, c, sep):
            continue
        if pre.shape[0] > k and pre[k, 7] == NDP_DONE:
            r = (pre[k, 0], pre[k, 1], pre[k, 2], pre[k, 3], pre[k, 4], pre[k, 5], pre[k, 6])
        elif greedy:
            r = greedy_prelim(q[a:a + ctx_len[c]], ctx_len[c], s_packed, s_len, uq - a, us, ul,
                              reward, penalty, gap_open, gap_extend, xdrop)
        else:
            r = dp_prelim_oriented(matrix, qf, qr, a, ctx_len[c], s_packed, s_len, rows[k, 0] - a,
                                   rows[k, 1], us + ul, rows[k, 5], gap_open, gap_extend, xdrop,
                                   ab, best, best_gap)
        if r[0] < cutoff[c]:
            continue
        H[m, 0] = r[0]
        H[m, 1] = r[1] + a
        H[m, 2] = r[2] + a
        H[m, 3] = r[3]
        H[m, 4] = r[4]
        H[m, 5] = c
        H[m, 6] = r[5]
        H[m, 7] = r[6]
        nodes = it.reserve(nodes, st)
        it.add_in(nodes, st, H, m, sep)
        m += 1
    idx = _purge_in_score_order(H, m, ctx_off)
    out = np.empty((idx.shape[0], NCOL), dtype=np.int64)
    for k in range(idx.shape[0]):
        out[k] = H[idx[k]]
        out[k, 1] -= ctx_off[out[k, 5]]
        out[k, 2] -= ctx_off[out[k, 5]]
    return out


@njit(cache=True, nogil=True)
def _purge_in_score_order(H, m, ctx_off):
    """Rows of ``H[:m]`` (shifted query positions) left by the purging common-endpoint purge,
    in ``score_order`` on context-relative query positions. The stable sort starts from the
    shifted score order, which already puts equal keys of different contexts context first, as
    the spec's sort of the end-ordered list leaves them."""
    idx = purge_and_order(H, m)
    keys = np.empty((5, m), dtype=np.int64)
    for i in range(m):
        a = ctx_off[H[i, 5]]
        keys[0, i] = -H[i, 0]
        keys[1, i] = H[i, 3]
        keys[2, i] = -H[i, 4]
        keys[3, i] = H[i, 1] - a
        keys[4, i] = -(H[i, 2] - a)
    return _lexorder(keys, idx)


def prelim_hsps(st, rows, s_packed, s_len: int) -> np.ndarray:
    """The preliminary HSPs of one piece, purged, in ``score_order``: int64 rows as the module
    says, query positions relative to the context. ``rows``: the initial hits, and where they
    carry 15 columns (the device's saved hits with its DP), the last 8 are ``prelim_rows``'
    ``pre``."""
    o, b = st.opts, st.batch
    qf, qr = st.oriented_query()
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    pre = np.ascontiguousarray(rows[:, 7:15]) if rows.shape[1] >= 15 else _NO_PRE
    return prelim_rows(rows, pre, b.seq, qf, qr, b.offsets, b.lengths, st.cutoff_gapped, s_packed, s_len,
                       o.greedy, st.matrix, o.reward, o.penalty, o.gap_open, o.gap_extend,
                       st.xdrop_gap, o.min_diag_separation)


@njit(cache=True, nogil=True)
def _fails_identity(ops, nums, p, n, q, s, q_start, s_start, perc):
    """``-perc_identity``: whether the script's identical pairs (codes compared as they are) are
    below ``perc`` percent of its columns."""
    qi, si, ident, length = q_start, s_start, 0, 0
    for k in range(p, p + n):
        length += nums[k]
        if ops[k] == SUB:
            for t in range(nums[k]):
                if q[qi + t] == s[si + t]:
                    ident += 1
            qi += nums[k]
            si += nums[k]
        elif ops[k] == DEL:
            si += nums[k]
        else:
            qi += nums[k]
    return ident * 100.0 < length * perc


@njit(cache=True, nogil=True)
def _cut(T, h, ops, nums, q_cut, s_cut, cut_begin):
    """``s_CutOffGapEditScript`` of row ``h`` (script at ``T[h, 8]``, ``T[h, 9]`` runs), in place."""
    p, n = T[h, 8], T[h, 9]
    qid = 0
    sid = 0
    q_cut -= T[h, 1]
    s_cut -= T[h, 3]
    found = False
    index = 0
    opid = 0
    while index < n:
        op, num = ops[p + index], nums[p + index]
        opid = 0
        while opid < num:
            if op == SUB:
                qid += 1
                sid += 1
                opid += 1
            elif op == DEL:
                sid += num
                opid += num
            else:
                qid += num
                opid += num
            if qid >= q_cut and sid >= s_cut:
                found = True
                break
        if found:
            break
        index += 1
    if not found:
        return
    if cut_begin:
        k = 0
        if opid < nums[p + index]:
            ops[p] = ops[p + index]
            nums[p] = nums[p + index] - opid
            k = 1
        for t in range(index + 1, n):
            ops[p + k] = ops[p + t]
            nums[p + k] = nums[p + t]
            k += 1
        T[h, 9] = k
        T[h, 1] += qid
        T[h, 3] += sid
    else:
        if opid < nums[p + index]:
            nums[p + index] = opid
        T[h, 9] = index + 1
        T[h, 2] = T[h, 1] + qid
        T[h, 4] = T[h, 3] + sid


@njit(cache=True, nogil=True)
def _end_keys(T, m, start):
    keys = np.empty((5, m), dtype=np.int64)
    a, b, c, d = (1, 3, 2, 4) if start else (2, 4, 1, 3)
    for i in range(m):
        keys[0, i] = T[i, a]
        keys[1, i] = T[i, b]
        keys[2, i] = -T[i, 0]
        keys[3, i] = -T[i, c]
        keys[4, i] = -T[i, d]
    return keys


@njit(cache=True, nogil=True)
def _purge_cutting(T, m, ops, nums):
    """``Blast_HSPListPurgeHSPsWithCommonEndpoints`` without purging (``nucl_hsp``'s spec): the
    row order (-1 = removed) and the count of kept rows; the ones cut short follow them."""
    arr = np.arange(m)
    count = m
    for start in (True, False):
        keys = _end_keys(T, m, start)
        arr[:count] = _lexorder(keys, arr[:count].copy())
        i = 0
        while i < count:
            while i + 1 < count and arr[i] >= 0 and arr[i + 1] >= 0:
                x, h = arr[i], arr[i + 1]
                if T[x, 5] != T[h, 5]:
                    break
                if start and not (T[x, 1] == T[h, 1] and T[x, 3] == T[h, 3]):
                    break
                if not start and not (T[x, 2] == T[h, 2] and T[x, 4] == T[h, 4]):
                    break
                count -= 1
                keep = False
                if start and T[h, 2] > T[x, 2]:
                    _cut(T, h, ops, nums, T[x, 2], T[x, 4], True)
                    keep = True
                elif not start and T[h, 1] < T[x, 1]:
                    _cut(T, h, ops, nums, T[x, 1], T[x, 3], False)
                    keep = True
                for t in range(i + 1, count):
                    arr[t] = arr[t + 1]
                arr[count] = h if keep else -1
            i += 1
    return arr, count


@njit(cache=True, nogil=True)
def traceback_rows(P, q, ctx_off, ctx_len, s, s_len, greedy, matrix, reward, penalty, gap_open,
                   gap_extend, xdrop, sep, perc, cutoff):
    """``Blast_TracebackFromHSPList`` of one (query, subject) pair (``nucl_search``'s
    ``traceback_subject_ref`` is the spec): ``P`` its preliminary HSP rows in score order
    (context-relative), ``s`` the restored subject plus a sentinel. Returns (rows of the final
    HSPs in score order, context-relative, columns 8/9 = start/count of their scripts in
    ``ops``/``nums``, ops, nums)."""
    n = P.shape[0]
    T = np.zeros((max(n, 1), NCOL + 2), dtype=np.int64)
    cap = 64 * max(n, 1)
    ops = np.zeros(cap, dtype=np.int8)
    nums = np.zeros(cap, dtype=np.int64)
    pos = 0
    nodes, st = it.new_tree(q.shape[0] + 1, s_len + 1, 4 * it.ADD_NODES)
    m = 0
    for k in range(n):
        c = P[k, 5]
        a = ctx_off[c]
        if m > 0 and it.contains_in(nodes, T, P[k, 0], P[k, 1] + a, P[k, 2] + a, P[k, 3], P[k, 4],
                                    c, sep):
            continue
        qc = q[a:a + ctx_len[c]]
        if greedy:
            found, sc, qs, qe, ss, se, qg, sg, o, u = greedy_traceback(
                matrix, qc, s, s_len, P[k, 1], P[k, 2], P[k, 3], P[k, 4], P[k, 6], P[k, 7],
                reward, penalty, gap_open, gap_extend, xdrop)
        else:
            found, sc, qs, qe, ss, se, qg, sg, o, u = dp_traceback(
                matrix, qc, s, s_len, P[k, 1], P[k, 2], P[k, 3], P[k, 4], P[k, 6], P[k, 7],
                gap_open, gap_extend, xdrop)
        if not found:
            continue
        r = o.shape[0]
        if not greedy and _fails_identity(o, u, 0, r, qc, s, qs, ss, perc):
            continue
        ops, nums = _grow(ops, pos + r), _grow(nums, pos + r)
        ops[pos:pos + r] = o
        nums[pos:pos + r] = u
        T[m, 0] = sc
        T[m, 1] = qs + a
        T[m, 2] = qe + a
        T[m, 3] = ss
        T[m, 4] = se
        T[m, 5] = c
        T[m, 6] = qg
        T[m, 7] = sg
        T[m, 8] = pos
        T[m, 9] = r
        pos += r
        nodes = it.reserve(nodes, st)
        it.add_in(nodes, st, T, m, sep)
        m += 1
    arr, count = _purge_cutting(T, m, ops, nums)
    first = 0 if greedy else count
    for i in range(first, m):
        h = arr[i]
        if h < 0:
            continue
        c = T[h, 5]
        a = ctx_off[c]
        qc = q[a:a + ctx_len[c]]
        p, r = T[h, 8], T[h, 9]
        keep, sc, qs, qe, ss, se, o, u = reevaluate_gapped(
            matrix, qc, s, s_len, T[h, 1] - a, T[h, 3], ops[p:p + r], nums[p:p + r], reward,
            penalty, gap_open, gap_extend, cutoff[c])
        T[h, 0] = sc
        if not keep:
            arr[i] = -1
            continue
        r = o.shape[0]
        ops[p:p + r] = o
        nums[p:p + r] = u
        T[h, 1] = qs + a
        T[h, 2] = qe + a
        T[h, 3] = ss
        T[h, 4] = se
        T[h, 9] = r
        if _fails_identity(ops, nums, p, r, qc, s, qs, ss, perc):
            arr[i] = -1
    k = 0
    U = np.empty((m, NCOL + 2), dtype=np.int64)
    for i in range(m):
        if arr[i] >= 0:
            U[k] = T[arr[i]]
            k += 1
    if k == 0:
        return U[:0], ops, nums
    idx = _purge_in_score_order(U, k, ctx_off)
    it.init(nodes, st, q.shape[0] + 1, s_len + 1)
    out = np.empty((idx.shape[0], NCOL + 2), dtype=np.int64)
    f = 0
    for h in idx:
        if f > 0 and it.contains_in(nodes, U, U[h, 0], U[h, 1], U[h, 2], U[h, 3], U[h, 4],
                                    U[h, 5], sep):
            continue
        nodes = it.reserve(nodes, st)
        it.add_in(nodes, st, U, h, sep)
        out[f] = U[h]
        a = ctx_off[U[h, 5]]
        out[f, 1] -= a
        out[f, 2] -= a
        f += 1
    return out[:f], ops, nums


@njit(cache=True, nogil=True)
def record_columns(q, s, q_start, s_start, ops, nums, minus, complement):
    """An HSP's alignment columns for its output record (``blastn._aligned``, the spec, then
    complemented and reversed for a minus-strand HSP) and the counts ``Alignment.make`` derives
    from the letters: (query codes, subject codes, GAP = 15 in a gap; identities, gap columns, gap
    openings, query residues, subject residues)."""
    total = 0
    for r in range(ops.shape[0]):
        total += nums[r]
    qa = np.empty(total, dtype=np.uint8)
    sa = np.empty(total, dtype=np.uint8)
    k, qi, si = 0, q_start, s_start
    for r in range(ops.shape[0]):
        op = ops[r]
        for _ in range(nums[r]):
            if op == DEL:
                qa[k] = GAP
                sa[k] = s[si]
                si += 1
            elif op == INS:
                qa[k] = q[qi]
                sa[k] = GAP
                qi += 1
            else:
                qa[k] = q[qi]
                sa[k] = s[si]
                qi += 1
                si += 1
            k += 1
    if minus:
        qa = complement[qa[::-1]]
        sa = complement[sa[::-1]]
    ident = gaps = opens = gq_n = gs_n = 0
    prev_q = prev_s = False
    for k in range(total):
        gq, gs = qa[k] == GAP, sa[k] == GAP
        if gq or gs:
            gaps += 1
            if (gq and not prev_q) or (gs and not prev_s):
                opens += 1
        elif qa[k] == sa[k]:
            ident += 1
        gq_n += gq
        gs_n += gs
        prev_q, prev_s = gq, gs
    return qa, sa, ident, gaps, opens, total - gq_n, total - gs_n


@njit(cache=True, nogil=True)
def subject_blastna(packed, length, runs, ncbi4na_to_blastna):
    """Subject codes for traceback in one pass: the ``length`` 2-bit bases of ``packed`` as
    BLASTNA codes (A C G T = 0..3), the ambiguity runs (rows start, length, NCBI4NA code)
    written over them, plus the sentinel (the compiled form of
    ``NCBI4NA_TO_BLASTNA[nt.ncbi4na(i)]`` with BLASTNA_SENTINEL appended)."""
    out = np.empty(length + 1, dtype=np.uint8)
    full = length >> 2
    for b in range(full):
        x = packed[b]
        out[4 * b] = (x >> 6) & 3
        out[4 * b + 1] = (x >> 4) & 3
        out[4 * b + 2] = (x >> 2) & 3
        out[4 * b + 3] = x & 3
    for i in range(4 * full, length):
        out[i] = (packed[i >> 2] >> (6 - 2 * (i & 3))) & 3
    for r in range(runs.shape[0]):
        code = ncbi4na_to_blastna[runs[r, 2]]
        for i in range(runs[r, 0], runs[r, 0] + runs[r, 1]):
            out[i] = code
    out[length] = BLASTNA_SENTINEL
    return out


@njit(cache=True, nogil=True)
def traceback_unit(P, first, q, ctx_off, ctx_len, minus, s, s_len, greedy, matrix, reward,
                   penalty, gap_open, gap_extend, xdrop, sep, perc, cutoff, complement):
    """:func:`traceback_rows` and :func:`record_columns` of every (query, subject) pair of a
    work unit in one call (one subject ``s``; pair ``k``'s preliminary rows are
    ``P[first[k]:first[k + 1]]``), so that no Python runs per pair or HSP but the records'.
    Returns (R, QA, SA): R int64 rows of the final HSPs, pair by pair, each pair's in score order:
    columns 0-7 as ``traceback_rows`` (context-relative), 8 the pair, 9/10 the start and number
    of the HSP's alignment columns in QA/SA (codes, 15 = gap, as ``record_columns``: minus-strand
    HSPs complemented and reversed), 11-15 identities, gap columns, gap openings, query and
    subject residues."""
    npairs = first.shape[0] - 1
    R = np.zeros((max(npairs, 1), 16), dtype=np.int64)
    QA = np.zeros(1024, dtype=np.uint8)
    SA = np.zeros(1024, dtype=np.uint8)
    m = 0
    col = 0
    for k in range(npairs):
        rows, ops, nums = traceback_rows(P[first[k]:first[k + 1]], q, ctx_off, ctx_len, s, s_len,
                                         greedy, matrix, reward, penalty, gap_open, gap_extend,
                                         xdrop, sep, perc, cutoff)
        for i in range(rows.shape[0]):
            c = rows[i, 5]
            a = ctx_off[c]
            p, r = rows[i, 8], rows[i, 9]
            qa, sa, ident, gaps, opens, qres, sres = record_columns(
                q[a:a + ctx_len[c]], s, rows[i, 1], rows[i, 3], ops[p:p + r], nums[p:p + r],
                minus[c], complement)
            n = qa.shape[0]
            QA, SA = _grow(QA, col + n), _grow(SA, col + n)
            QA[col:col + n] = qa
            SA[col:col + n] = sa
            if m >= R.shape[0]:
                R2 = np.zeros((2 * R.shape[0], 16), dtype=np.int64)
                R2[:m] = R[:m]
                R = R2
            for j in range(8):
                R[m, j] = rows[i, j]
            R[m, 8] = k
            R[m, 9] = col
            R[m, 10] = n
            R[m, 11] = ident
            R[m, 12] = gaps
            R[m, 13] = opens
            R[m, 14] = qres
            R[m, 15] = sres
            col += n
            m += 1
    return R[:m], QA[:col], SA[:col]
