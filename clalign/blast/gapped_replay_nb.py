"""BLASTP's preliminary gapped stage replayed on precomputed extensions (compiled, no GIL).

``prelim_chunk_pre`` is ``stages_nb.prelim_chunk`` (``BLAST_GetGappedScore``: initial HSPs best
first, containment against the kept ones, the restricted DP and the subject's exact redo, purge,
score order) except that each extension it needs is taken from ``pre`` -- the device's
speculative extensions of every initial HSP (``device_gapped``) -- when ``pre`` holds it in the
mode the replay needs (status 1: full DP, 2: restricted DP); otherwise (an extension that
outgrew the device's band, or a restricted subject's exact redo) it is computed here as the CPU
path computes it. The output rows are the CPU path's, bit for bit.
"""
from __future__ import annotations

import numba
import numpy as np

from . import itree_nb as it
from .gapped import gapped_start, prot_gapped
from .stages_nb import NCOL, grow_rows, purge_and_order

PRE_NONE, PRE_FULL, PRE_RESTRICTED = 0, 1, 2
NPRE = 8   # pre columns: score, q_start, q_end, s_start, s_end, q_off, s_off, status


@numba.njit(cache=True, nogil=True)
def _pass_pre(matrix, q, residues, offsets, rows, a, b, use_restricted, cutoff, r_cut,
              gap_open, gap_extend, xdrop, pre, H, nodes, st, ext, cpu):
    """One replay of rows[a:b] (one subject): (kept count or -1 = redo exactly, nodes); cpu[0]
    counts the extensions computed here."""
    oid = rows[a, 0]
    base = offsets[oid]
    slen = offsets[oid + 1] - base
    it.init(nodes, st, q.shape[0] + 1, slen + 1)
    want = PRE_RESTRICTED if use_restricted else PRE_FULL
    n = np.int64(0)     # not the literal 0 (see stages_nb._prelim_pass)
    for k in range(a, b):
        q0, s0, length = rows[k, 2], rows[k, 3], rows[k, 4]
        if n > 0 and it.contains(nodes, H, rows[k, 1], q0, q0 + length, s0, s0 + length):
            continue
        if pre[k, 7] == want:
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


@numba.njit(cache=True, nogil=True)
def prelim_chunk_pre(matrix, q, residues, offsets, rows, first, last, cutoff, r_cut,
                     restricted_ok, gap_open, gap_extend, xdrop, pre, cpu):
    """``stages_nb.prelim_chunk`` for rows[first:last] with the extensions of ``pre`` (int32
    (n, 8), row for row with ``rows``); ``cpu`` (int64 (1,)) counts extensions done here."""
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
        for attempt in range(2):   # as stages_nb.prelim_chunk: a run-time bool, one compile
            n, nodes = _pass_pre(matrix, q, residues, offsets, rows, a, b, use_r and attempt == 0,
                                 cutoff, r_cut, gap_open, gap_extend, xdrop, pre, H, nodes, st,
                                 ext, cpu)
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
