"""BLASTP's preliminary gapped stage and traceback stage, compiled, for many subjects per call.

The plain forms in :mod:`clalign.blast.engine` (``prelim_subject``, ``traceback_subject``) are
the spec; these do the same per subject with no Python in the loop, and release the GIL:

- ``prelim_chunk`` (``BLAST_GetGappedScore``): initial HSPs best first, each not contained in a
  kept HSP (``itree_nb``) extended from its best 11-residue window, restricted when the subject's
  best ungapped score is below 0.68 x cutoff (the subject redone exactly when a restricted score
  lands in [0.68 cutoff, cutoff)); then the common-endpoint purge and score order;
- ``traceback_chunk`` (``Blast_TracebackFromHSPList``): the same replay with the final X-drop and
  traceback, purge, score order and the second containment pass.

E-values and the hit-list order are vectorised in the engine. HSP rows here are int64
[oid, score, q_start, q_end, s_start, s_end, q_off, s_off] (ends exclusive).
"""
from __future__ import annotations

from ..runtime.jit import njit
import numpy as np

from . import itree_nb as it
from .gapped import HSP_MAX_WINDOW, gapped_start, prot_gapped
from .traceback import gapped_traceback

NCOL = 8
#: The device's precomputed extensions (``device_gapped``): int32 rows of NPRE columns (score,
#: q_start, q_end, s_start, s_end, q_off, s_off, status), status the DP mode it was made in
PRE_NONE, PRE_FULL, PRE_RESTRICTED = 0, 1, 2
NPRE = 8
#: ``pre`` when there is none (the CPU path): every extension is computed here
NO_PRE = np.zeros((0, NPRE), dtype=np.int32)


@njit(cache=True, nogil=True, inline="always")
def grow_rows(a, n, cap):
    """A copy of int64 rows ``a[:n]`` with room for ``cap`` rows. Copies in this package's
    compiled code are loops: an array-to-slice assignment makes numba compile a costly error
    path (shape message formatting) in every function that has one."""
    b = np.empty((cap, a.shape[1]), dtype=np.int64)
    for i in range(n):
        for c in range(a.shape[1]):
            b[i, c] = a[i, c]
    return b


@njit(cache=True, nogil=True, inline="always")
def grow_bytes(a, n, cap):
    """A copy of uint8 ``a[:n]`` with room for ``cap`` (see ``grow_rows``)."""
    b = np.empty(cap, dtype=np.uint8)
    for i in range(n):
        b[i] = a[i]
    return b


@njit(cache=True, nogil=True)
def _before(keys, i, j):
    """Whether column i of ``keys`` sorts strictly before column j (row 0 most significant)."""
    for r in range(keys.shape[0]):
        if keys[r, i] != keys[r, j]:
            return keys[r, i] < keys[r, j]
    return False


@njit(cache=True, nogil=True)
def _lexorder(keys, idx):
    """``idx`` stably ordered by the columns of ``keys`` (row 0 most significant), as Python's
    ``sorted`` with a tuple key orders them (bottom-up merge sort)."""
    n = idx.shape[0]
    a = idx.copy()
    b = np.empty(n, dtype=np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _before(keys, a[j], a[i]):   # ties keep the left run first
                    b[k] = a[j]
                    j += 1
                else:
                    b[k] = a[i]
                    i += 1
                k += 1
            while i < mid:
                b[k] = a[i]
                i += 1
                k += 1
            while j < hi:
                b[k] = a[j]
                j += 1
                k += 1
        a, b = b, a
        width *= 2
    return a


@njit(cache=True, nogil=True)
def purge_and_order(H, n):
    """Rows of ``H[:n]`` left by ``hsp.purge_common_endpoints``, in ``hsp.score_key`` order.
    H columns: score, q_start, q_end, s_start, s_end."""
    if n <= 1:
        return np.arange(n)
    keys = np.empty((5, n), dtype=np.int64)
    for i in range(n):
        keys[0, i] = H[i, 1]
        keys[1, i] = H[i, 3]
        keys[2, i] = -H[i, 0]
        keys[3, i] = -H[i, 2]
        keys[4, i] = -H[i, 4]
    by_start = _lexorder(keys, np.arange(n))
    kept = np.empty(n, dtype=np.int64)
    m = 0
    for i in by_start:
        if m > 0 and H[kept[m - 1], 1] == H[i, 1] and H[kept[m - 1], 3] == H[i, 3]:
            continue
        kept[m] = i
        m += 1
    for i in range(n):
        keys[0, i] = H[i, 2]
        keys[1, i] = H[i, 4]
        keys[2, i] = -H[i, 0]
        keys[3, i] = -H[i, 1]
        keys[4, i] = -H[i, 3]
    by_end = _lexorder(keys, kept[:m])
    out = np.empty(m, dtype=np.int64)
    k = 0
    for i in by_end:
        if k > 0 and H[out[k - 1], 2] == H[i, 2] and H[out[k - 1], 4] == H[i, 4]:
            continue
        out[k] = i
        k += 1
    for i in range(n):   # score_key: (-score, s_start, -s_end, q_start, -q_end)
        keys[0, i] = -H[i, 0]
        keys[1, i] = H[i, 3]
        keys[2, i] = -H[i, 4]
        keys[3, i] = H[i, 1]
        keys[4, i] = -H[i, 2]
    return _lexorder(keys, out[:k])


@njit(cache=True, nogil=True)
def _prelim_pass(matrix, q, residues, offsets, rows, a, b, use_restricted, cutoff, r_cut,
                 gap_open, gap_extend, xdrop, pre, H, nodes, st, ext, cpu):
    """One replay of a subject's initial HSPs rows[a:b]: (number kept in H or -1 = redo exactly,
    the node array, maybe grown). An extension ``pre`` holds in the DP mode this pass needs is
    taken from it; any other is computed here and counted in ``cpu[0]``."""
    oid = rows[a, 0]
    base = offsets[oid]
    slen = offsets[oid + 1] - base
    it.init(nodes, st, q.shape[0] + 1, slen + 1)
    want = PRE_RESTRICTED if use_restricted else PRE_FULL
    n = np.int64(0)     # not the literal 0: numba would compile it.add for Literal[int](0) too
    for k in range(a, b):
        q0, s0, length = rows[k, 2], rows[k, 3], rows[k, 4]
        if n > 0 and it.contains(nodes, H, rows[k, 1], q0, q0 + length, s0, s0 + length):
            continue
        if pre.shape[0] > 0 and pre[k, 7] == want:
            g = pre[k, 0]
            for c in range(4):
                ext[c] = pre[k, 1 + c]
            q_off = pre[k, 5]
            s_off = pre[k, 6]
        else:
            q_off = gapped_start(matrix, q, residues[base:base + slen], q0, s0, length)
            s_off = rows[k, 6] + q_off - rows[k, 5]
            g = prot_gapped(matrix, q, residues, base, slen, q_off, s_off, gap_open, gap_extend,
                            xdrop, use_restricted, ext)
            cpu[0] += 1
        if use_restricted and r_cut <= g < cutoff:
            return -1, nodes
        if g >= cutoff:
            H[n, 0] = g
            H[n, 1] = ext[0]
            H[n, 2] = ext[1]
            H[n, 3] = ext[2]
            H[n, 4] = ext[3]
            H[n, 5] = q_off
            H[n, 6] = s_off
            nodes = it.reserve(nodes, st)
            it.add(nodes, st, H, n)
            n += 1
    return n, nodes


@njit(cache=True, nogil=True)
def prelim_chunk(matrix, q, residues, offsets, rows, first, last, cutoff, r_cut, restricted_ok,
                 gap_open, gap_extend, xdrop, pre, cpu):
    """Preliminary gapped HSPs of the subjects of rows[first:last] (rows sorted by subject, then
    best first, as ``sort_init_hsps`` gives them): int64 (n, 8) rows, per subject in score order.
    ``pre``: the device's extensions, row for row with ``rows`` (``NO_PRE``: none), replayed
    instead of computed where they hold the mode needed; ``cpu`` (int64 (1,)) counts the
    extensions computed here. The rows are the same either way."""
    out = np.empty((max(16, (last - first) // 4), NCOL), dtype=np.int64)
    n_out = 0
    H = np.empty((16, 7), dtype=np.int64)
    nodes = np.zeros((4 * it.ADD_NODES, 6), dtype=np.int64)
    st = np.zeros(3, dtype=np.int64)
    ext = np.zeros(4, dtype=np.int32)
    a = first
    while a < last:
        b = a + 1
        while b < last and rows[b, 0] == rows[a, 0]:
            b += 1
        if b - a > H.shape[0]:
            H = np.empty((2 * (b - a), 7), dtype=np.int64)
        use_r = restricted_ok and rows[a, 1] < r_cut
        for attempt in range(2):   # restricted first if allowed, then exact if it says so
            # (a run-time bool: a literal False would make numba compile the pass twice)
            n, nodes = _prelim_pass(matrix, q, residues, offsets, rows, a, b,
                                    use_r and attempt == 0, cutoff, r_cut, gap_open, gap_extend,
                                    xdrop, pre, H, nodes, st, ext, cpu)
            if n >= 0:
                break
        order = purge_and_order(H, n)
        if n_out + order.shape[0] > out.shape[0]:
            out = grow_rows(out, n_out, 2 * out.shape[0] + order.shape[0])
        for i in order:
            out[n_out, 0] = rows[a, 0]
            for c in range(7):
                out[n_out, 1 + c] = H[i, c]
            n_out += 1
        a = b
    return out[:n_out].copy()


@njit(cache=True, nogil=True)
def offsets_for_gapped(matrix, q, s, base, qs, qe, ss, se, out):
    """``BlastGetOffsetsForGappedAlignment`` (start point when the saved one is (0, 0)) on
    subject ``s[base:]``; False when no window scores above 0."""
    q_len, s_len = qe - qs, se - ss
    if q_len <= HSP_MAX_WINDOW:
        out[0] = qs + q_len // 2
        out[1] = ss + q_len // 2
        return True
    score = 0
    for i in range(HSP_MAX_WINDOW):
        score += matrix[q[qs + i], s[base + ss + i]]
    best = score
    best_off = qs + HSP_MAX_WINDOW - 1
    for i in range(HSP_MAX_WINDOW, min(q_len, s_len)):
        score += matrix[q[qs + i], s[base + ss + i]] - matrix[q[qs + i - HSP_MAX_WINDOW],
                                                               s[base + ss + i - HSP_MAX_WINDOW]]
        if score > best:
            best = score
            best_off = qs + i
    if best > 0:
        out[0] = best_off
        out[1] = best_off - qs + ss
        return True
    tail = 0
    for i in range(HSP_MAX_WINDOW):
        tail += matrix[q[qe - HSP_MAX_WINDOW + i], s[base + se - HSP_MAX_WINDOW + i]]
    if tail > 0:
        out[0] = qe - HSP_MAX_WINDOW // 2
        out[1] = se - HSP_MAX_WINDOW // 2
        return True
    return False


@njit(cache=True, nogil=True)
def traceback_chunk(matrix, q, residues, offsets, P, starts, gap_open, gap_extend, xdrop):
    """Final HSPs of the subjects whose preliminary rows are P[starts[i]:starts[i+1]] (score
    order). Returns (int64 (n, 8) rows, per subject in score order; uint8 ops of all of them,
    concatenated; int64 (n + 1,) offsets into the ops)."""
    out = np.empty((max(16, P.shape[0]), NCOL), dtype=np.int64)
    ops_all = np.empty(1 << 12, dtype=np.uint8)
    ops_off = np.zeros(P.shape[0] + 2, dtype=np.int64)
    n_out = 0
    n_ops = 0
    H = np.empty((16, 7), dtype=np.int64)
    nodes = np.zeros((4 * it.ADD_NODES, 6), dtype=np.int64)
    st = np.zeros(3, dtype=np.int64)
    ext = np.zeros(4, dtype=np.int32)
    start = np.zeros(2, dtype=np.int64)
    tmp_ops = np.empty(1 << 12, dtype=np.uint8)
    for g in range(starts.shape[0] - 1):
        a, b = starts[g], starts[g + 1]
        if b - a > H.shape[0]:
            H = np.empty((2 * (b - a), 7), dtype=np.int64)
        oid = P[a, 0]
        base = offsets[oid]
        slen = offsets[oid + 1] - base
        it.init(nodes, st, q.shape[0] + 1, slen + 1)
        tmp_off = np.zeros(b - a + 1, dtype=np.int64)   # ops of kept HSP i: tmp_ops[tmp_off[i]:]
        n = np.int64(0)
        for k in range(a, b):
            if n > 0 and it.contains(nodes, H, P[k, 1], P[k, 2], P[k, 3], P[k, 4], P[k, 5]):
                continue
            q0, s0 = P[k, 6], P[k, 7]
            if q0 == 0 and s0 == 0:
                if not offsets_for_gapped(matrix, q, residues, base, P[k, 2], P[k, 3], P[k, 4],
                                          P[k, 5], start):
                    continue
                q0, s0 = start[0], start[1]
            score, ops = gapped_traceback(matrix, q, residues, base, slen, q0, s0, gap_open,
                                          gap_extend, xdrop, ext)
            H[n, 0] = score
            H[n, 1] = ext[0]
            H[n, 2] = ext[1]
            H[n, 3] = ext[2]
            H[n, 4] = ext[3]
            H[n, 5] = q0
            H[n, 6] = s0
            if tmp_off[n] + ops.shape[0] > tmp_ops.shape[0]:
                tmp_ops = grow_bytes(tmp_ops, tmp_off[n], 2 * (tmp_off[n] + ops.shape[0]))
            for j in range(ops.shape[0]):
                tmp_ops[tmp_off[n] + j] = ops[j]
            tmp_off[n + 1] = tmp_off[n] + ops.shape[0]
            nodes = it.reserve(nodes, st)
            it.add(nodes, st, H, n)
            n += 1
        order = purge_and_order(H, n)
        it.init(nodes, st, q.shape[0] + 1, slen + 1)
        added = 0
        for i in order:
            if added > 0 and it.contains(nodes, H, H[i, 0], H[i, 1], H[i, 2], H[i, 3], H[i, 4]):
                continue
            nodes = it.reserve(nodes, st)
            it.add(nodes, st, H, i)
            added += 1
            if n_out == out.shape[0]:
                out = grow_rows(out, n_out, 2 * out.shape[0])
                more = np.zeros(2 * out.shape[0] + 2, dtype=np.int64)
                for j in range(ops_off.shape[0]):
                    more[j] = ops_off[j]
                ops_off = more
            out[n_out, 0] = oid
            for c in range(7):
                out[n_out, 1 + c] = H[i, c]
            n_i = tmp_off[i + 1] - tmp_off[i]
            if n_ops + n_i > ops_all.shape[0]:
                ops_all = grow_bytes(ops_all, n_ops, 2 * (n_ops + n_i))
            for j in range(n_i):
                ops_all[n_ops + j] = tmp_ops[tmp_off[i] + j]
            n_ops += n_i
            n_out += 1
            ops_off[n_out] = n_ops
    return out[:n_out].copy(), ops_all[:n_ops].copy(), ops_off[:n_out + 1].copy()
