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

import numba
import numpy as np

from . import itree_nb as it
from .nucl_gapped import dp_prelim
from .nucl_greedy import greedy_prelim
from .stages_nb import purge_and_order

NCOL = 8


@numba.njit(cache=True, nogil=True)
def prelim_rows(rows, q, ctx_off, ctx_len, cutoff, s_packed, s_len, greedy, matrix, reward,
                penalty, gap_open, gap_extend, xdrop, sep):
    """Kept HSP rows (in extension order, shifted query positions) of one piece's initial hits
    ``rows`` (int64 (n, 7): q_off, s_off, q_start, s_start, length, score, context; query
    positions in the batch ``q``), and their number."""
    n = rows.shape[0]
    H = np.zeros((max(n, 1), NCOL), dtype=np.int64)
    nodes, st = it.new_tree(q.shape[0] + 1, s_len + 1, 4 * it.ADD_NODES)
    m = 0
    for k in range(n):
        c = rows[k, 6]
        a = ctx_off[c]
        uq, us, ul = rows[k, 2], rows[k, 3], rows[k, 4]
        if m > 0 and it.contains_in(nodes, H, rows[k, 5], uq, uq + ul, us, us + ul, c, sep):
            continue
        qc = q[a:a + ctx_len[c]]
        if greedy:
            r = greedy_prelim(qc, ctx_len[c], s_packed, s_len, uq - a, us, ul, reward, penalty,
                              gap_open, gap_extend, xdrop)
        else:
            r = dp_prelim(matrix, qc, ctx_len[c], s_packed, s_len, rows[k, 0] - a, rows[k, 1],
                          us + ul, rows[k, 5], gap_open, gap_extend, xdrop)
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
    return H, m


def prelim_hsps(st, rows, s_packed, s_len: int) -> np.ndarray:
    """The preliminary HSPs of one piece, purged, in ``score_order``: int64 rows as the module
    says, query positions relative to the context."""
    o, b = st.opts, st.batch
    H, m = prelim_rows(rows, b.seq, b.offsets, b.lengths, st.cutoff_gapped, s_packed, s_len,
                       o.greedy, st.matrix, o.reward, o.penalty, o.gap_open, o.gap_extend,
                       st.xdrop_gap, o.min_diag_separation)
    if m == 0:
        return H[:0]
    H = H[purge_and_order(H, m)]
    a = b.offsets[H[:, 5]]
    H[:, 1] -= a
    H[:, 2] -= a
    # score_order on context-relative query positions; lexsort is stable and the shifted order
    # already put equal keys of different contexts context first, as the spec's sort leaves them
    order = np.lexsort((-H[:, 2], H[:, 1], -H[:, 4], H[:, 3], -H[:, 0]))
    return H[order]
