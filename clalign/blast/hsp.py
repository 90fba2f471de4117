"""HSP records and BLAST+'s HSP-list rules (``blast_hits.c``; containment: ``itree``).

- ``purge_common_endpoints``: ``Blast_HSPListPurgeHSPsWithCommonEndpoints`` with purging
  (every protein program): of HSPs sharing a start point keep the first in (start, score desc,
  end desc) order, then of HSPs sharing an end point keep the first in (end, score desc,
  start desc) order;
- ``score_key`` (``ScoreCompareHSPs``), ``evalue_key`` (``s_EvalueCompareHSPs``: E-values below
  1e-180 tie) and ``hitlist_key`` (``s_EvalueCompareHSPLists``: best E-value, best score, then the
  higher OID first).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EVALUE_EPSILON = 1.0e-180


@dataclass
class HSP:
    """One alignment of a query and a subject; offsets 0-based, ends exclusive."""

    score: int
    q_start: int
    q_end: int
    s_start: int
    s_end: int
    q_gapped_start: int = 0
    s_gapped_start: int = 0
    evalue: float = 0.0
    bit_score: float = 0.0
    ops: np.ndarray = field(default=None, repr=False)  # one op per column (traceback codes)


def purge_common_endpoints(hsps):
    """HSPs left after BLAST+'s common start/end point purge (order: by end point)."""
    by_start = sorted(hsps, key=lambda h: (h.q_start, h.s_start, -h.score, -h.q_end, -h.s_end))
    kept = []
    for h in by_start:
        if kept and kept[-1].q_start == h.q_start and kept[-1].s_start == h.s_start:
            continue
        kept.append(h)
    by_end = sorted(kept, key=lambda h: (h.q_end, h.s_end, -h.score, -h.q_start, -h.s_start))
    out = []
    for h in by_end:
        if out and out[-1].q_end == h.q_end and out[-1].s_end == h.s_end:
            continue
        out.append(h)
    return out


def score_key(h: HSP):
    return (-h.score, h.s_start, -h.s_end, h.q_start, -h.q_end)


def _evalue_rank(e: float) -> float:
    return 0.0 if e < EVALUE_EPSILON else e


def evalue_rank(e) -> np.ndarray:
    """:func:`_evalue_rank` of an array: E-values below 1e-180 compare equal (0)."""
    e = np.asarray(e, dtype=np.float64)
    return np.where(e < EVALUE_EPSILON, 0.0, e)


def evalue_key(h: HSP):
    return (_evalue_rank(h.evalue),) + score_key(h)


def hitlist_key(best_evalue: float, best_score: int, oid: int):
    return (_evalue_rank(best_evalue), -best_score, -oid)


def lexsort_packed(keys) -> np.ndarray:
    """``np.lexsort(keys)`` (last key primary; ties in input order), faster: integer keys are
    offset by their minimum and packed, primary first, into as few int64 words as fit 63 bits
    each; one stable argsort of the first word, then the other words' lexsort of the rows
    where that word ties. BLASTN's device hits (six keys, ~88,000 rows a block) sort 5x faster."""
    keys = [np.asarray(k, np.int64) for k in keys]
    if not keys or len(keys[0]) == 0:
        return np.zeros(0, np.intp)
    words, cur, used = [], None, 0
    for k in reversed(keys):
        lo = int(k.min())
        bits = (int(k.max()) - lo).bit_length()
        if cur is not None and used + bits <= 63:
            cur = (cur << np.int64(bits)) | (k - lo)
            used += bits
        else:
            if cur is not None:
                words.append(cur)
            cur, used = (k - lo if bits <= 63 else k), bits
    words.append(cur)
    order = np.argsort(words[0], kind="stable")
    if len(words) > 1:
        w = words[0][order]
        tie = w[1:] == w[:-1]
        if tie.any():       # order the tied runs alone by the other words (lexsort is stable)
            mark = np.zeros(len(w), bool)
            mark[1:] = tie
            mark[:-1] |= tie
            at = np.flatnonzero(mark)
            run = np.cumsum(np.r_[True, ~tie])[at]
            sub = order[at]
            order[at] = sub[np.lexsort([x[sub] for x in words[:0:-1]] + [run])]
    return order
