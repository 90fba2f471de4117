"""The gapped aligners the BLASTN stages call, behind two functions (greedy for megablast, dynamic
programming for blastn/blastn-short; the aligners themselves are :mod:`nucl_greedy` and
:mod:`nucl_gapped`).

- :func:`prelim_extend` (``BLAST_GetGappedScore``'s extension of one initial hit, score only, on
  the 2-bit subject): ``(score, q_start, q_end, s_start, s_end, q_seed, s_seed)``, query offsets
  relative to the context, ends exclusive.
- :func:`traceback_extend` (``Blast_TracebackFromHSPList``'s realignment through the gapped start,
  BLASTNA subject, final X-drop): ``(score, q_start, q_end, s_start, s_end, ops)`` with ``ops``
  the edit script as ``[[op, count], ...]`` left to right.
"""
from __future__ import annotations

from ..errors import ParameterError


def _greedy():
    from . import nucl_greedy
    return nucl_greedy


def _dp():
    try:
        from . import nucl_gapped
    except ImportError:
        raise ParameterError("-task blastn/blastn-short: the dynamic-programming gapped stage "
                             "is not available in this build (use -task megablast)") from None
    return nucl_gapped


def _runs(ops, nums, n):
    return [[int(ops[i]), int(nums[i])] for i in range(n)]


def prelim_extend(st, context, s_packed, s_len, q_off, s_off, u_q_start, u_s_start, u_length):
    o = st.opts
    b = st.batch
    a, n = int(b.offsets[context]), int(b.lengths[context])
    q = b.seq[a:a + n]
    if o.greedy:
        r = _greedy().greedy_prelim(q, n, s_packed, s_len, u_q_start, u_s_start, u_length,
                                    o.reward, o.penalty, o.gap_open, o.gap_extend, st.xdrop_gap)
        return tuple(int(x) for x in r)
    g = _dp()
    r = g.dp_prelim(q, n, s_packed, s_len, q_off, s_off, u_s_start + u_length, st.matrix,
                    o.gap_open, o.gap_extend, st.xdrop_gap)
    return tuple(int(x) for x in r)


def traceback_extend(st, q, s, s_len, q_start, s_start):
    o = st.opts
    if o.greedy:
        g = _greedy()
        r = g.greedy_gapped(q, len(q), s, s_len, q_start, s_start, False, True, o.reward,
                            o.penalty, o.gap_open, o.gap_extend, st.xdrop_final)
        ops, nums, nop = r[7], r[8], r[9]
        try:
            from .nucl_traceback import reduce_gaps
        except ImportError:
            reduce_gaps = None
        if reduce_gaps is not None:
            ops, nums, nop = reduce_gaps(ops, nums, nop, q, s, r[1], r[3])
        return int(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), _runs(ops, nums, nop)
    r = _dp().dp_traceback(q, len(q), s, s_len, q_start, s_start, st.matrix, o.gap_open,
                           o.gap_extend, st.xdrop_final)
    return int(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), _runs(r[5], r[6], r[7])
