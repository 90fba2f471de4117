"""The gapped aligners the BLASTN stages call, behind three functions (greedy for megablast,
dynamic programming for blastn/blastn-short; the aligners are :mod:`nucl_greedy`,
:mod:`nucl_gapped` and :mod:`nucl_traceback`).

- :func:`prelim_extend` (``BLAST_GetGappedScore``'s extension of one initial hit, score only, on
  the 2-bit subject): ``(score, q_start, q_end, s_start, s_end, q_seed, s_seed)``, query offsets
  relative to the context, ends exclusive.
- :func:`traceback_extend` (``Blast_TracebackFromHSPList``'s start choice, subject window and
  realignment with the final X-drop on the BLASTNA subject, ``s_len`` bases followed by one
  sentinel as BLAST+'s buffers have it): updates the HSP (score, extents,
  gapped start, edit script ``[[op, count], ...]``); False when no start was found.
- :func:`reevaluate` (``Blast_HSPReevaluateWithAmbiguitiesGapped``): True = delete the HSP.
"""
from __future__ import annotations

import numpy as np

from . import nucl_gapped, nucl_greedy, nucl_traceback


def _runs(ops, nums):
    return [[int(o), int(n)] for o, n in zip(ops.tolist(), nums.tolist())]


def _context(st, c):
    b = st.batch
    a, n = int(b.offsets[c]), int(b.lengths[c])
    return b.seq[a:a + n]


def prelim_extend(st, context, s_packed, s_len, q_off, s_off, u_q_start, u_s_start, u_length,
                  u_score):
    o = st.opts
    q = _context(st, context)
    if o.greedy:
        r = nucl_greedy.greedy_prelim(q, len(q), s_packed, s_len, u_q_start, u_s_start, u_length,
                                      o.reward, o.penalty, o.gap_open, o.gap_extend, st.xdrop_gap)
    else:
        r = nucl_gapped.dp_prelim(st.matrix, q, len(q), s_packed, s_len, q_off, s_off,
                                  u_s_start + u_length, u_score, o.gap_open, o.gap_extend,
                                  st.xdrop_gap)
    return tuple(int(x) for x in r)


def traceback_extend(st, h, s_codes, s_len) -> bool:
    o = st.opts
    q = _context(st, h.context)
    args = (st.matrix, q, s_codes, s_len, h.q_start, h.q_end, h.s_start, h.s_end, h.q_gstart,
            h.s_gstart)
    if o.greedy:
        r = nucl_traceback.greedy_traceback(*args, o.reward, o.penalty, o.gap_open, o.gap_extend,
                                            st.xdrop_final)
    else:
        r = nucl_traceback.dp_traceback(*args, o.gap_open, o.gap_extend, st.xdrop_final)
    if not r[0]:
        return False
    h.score, h.q_start, h.q_end, h.s_start, h.s_end = (int(x) for x in r[1:6])
    h.q_gstart, h.s_gstart = int(r[6]), int(r[7])
    h.ops = _runs(r[8], r[9])
    return True


def reevaluate(st, h, s_codes, s_len) -> bool:
    o = st.opts
    q = _context(st, h.context)
    ops = np.array([x[0] for x in h.ops], dtype=np.int8)
    nums = np.array([x[1] for x in h.ops], dtype=np.int64)
    r = nucl_traceback.reevaluate_gapped(st.matrix, q, s_codes, s_len, h.q_start, h.s_start, ops, nums,
                                         o.reward, o.penalty, o.gap_open, o.gap_extend,
                                         int(st.cutoff_gapped[h.context]))
    h.score = int(r[1])
    if not r[0]:
        return True
    h.q_start, h.q_end, h.s_start, h.s_end = (int(x) for x in r[2:6])
    h.ops = _runs(r[6], r[7])
    return False
