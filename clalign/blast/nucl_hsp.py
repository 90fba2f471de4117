"""BLASTN HSP records and BLAST+ 2.12's HSP-list rules for nucleotide searches (``blast_hits.c``,
``blast_itree.c``).

- :class:`NHSP`: one HSP, query offsets relative to its context (strand), ends exclusive, the
  edit script as BLAST+'s run-length ``(op, count)`` lists (ops: SUB 3, DEL 0 = subject letter
  against a gap, INS 6 = query letter against a gap).
- :class:`NuclTree`: the interval tree of :mod:`clalign.blast.itree` with BLAST+'s nucleotide
  details: tree positions are ``strand offset + query offset`` (``s_GetQueryStrandOffset``:
  the context's own offset, see :func:`strand_offsets`), HSPs of different contexts never
  contain or replace each other, and containment additionally needs the two HSPs' start or end
  diagonals closer than ``min_diag_separation`` when that is set (``MB_HSP_CLOSE``).
- :func:`purge_common_endpoints`: ``Blast_HSPListPurgeHSPsWithCommonEndpoints`` including the
  blastn variant without purging, where an HSP sharing a start (end) with a better one is cut to
  start after (end before) it (``s_CutOffGapEditScript``) and moved behind the kept ones.
- :func:`score_order` (``ScoreCompareHSPs``), :func:`evalue_order` (``s_EvalueCompareHSPs``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .hsp import EVALUE_EPSILON, hitlist_key
from .itree import IntervalTree

SUB, DEL, INS = 3, 0, 6


@dataclass
class NHSP:
    context: int
    score: int
    q_start: int
    q_end: int
    s_start: int
    s_end: int
    q_gstart: int = 0
    s_gstart: int = 0
    evalue: float = 0.0
    bit_score: float = 0.0
    ops: list = field(default_factory=list)     # [[op, count], ...] left to right
    num_ident: int = 0
    align_length: int = 0


class _Boxed:
    """An HSP as the tree sees it: query positions shifted by its strand offset."""
    __slots__ = ("h", "qs", "score", "q_start", "q_end", "s_start", "s_end")

    def __init__(self, h: NHSP, qs: int):
        self.h, self.qs, self.score = h, qs, h.score
        self.q_start, self.q_end = qs + h.q_start, qs + h.q_end
        self.s_start, self.s_end = h.s_start, h.s_end


def strand_offsets(ctx_off, minus):
    """``s_GetQueryStrandOffset`` of every context. BLAST+ keeps two contexts per blastn query
    (frames +1, -1; the strand not searched has length 0), so walking back over contexts of the
    same frame sign never moves: each context is its own strand, with its own offset."""
    tolist = getattr(ctx_off, "tolist", None)   # an array's ints at once
    return tolist() if tolist is not None else [int(x) for x in ctx_off]


class NuclTree(IntervalTree):
    """Interval tree of kept HSPs of one subject (``Blast_IntervalTreeInit(0, qlen+1, 0, slen+1)``)."""

    def __init__(self, concat_len: int, s_len: int, strand_off, min_diag_separation: int):
        super().__init__(concat_len + 1, s_len + 1)
        self.strand_off = strand_off
        self.sep = min_diag_separation

    def _box(self, h: NHSP):
        return _Boxed(h, self.strand_off[h.context])

    def _inside(self, h, t):
        if h.qs != t.qs or not IntervalTree._inside(h, t):
            return False
        if self.sep == 0:
            return True
        return (abs((t.q_start - t.s_start) - (h.q_start - h.s_start)) < self.sep
                or abs((t.q_end - t.s_end) - (h.q_end - h.s_end)) < self.sep)

    @staticmethod
    def _better(h, t, which):
        if h.qs != t.qs:
            return None
        return IntervalTree._better(h, t, which)

    def contains_hsp(self, h: NHSP) -> bool:
        return self.contains(self._box(h))

    def add_hsp(self, h: NHSP):
        self.add(self._box(h))


def score_order(h: NHSP):
    """``ScoreCompareHSPs``."""
    return (-h.score, h.s_start, -h.s_end, h.q_start, -h.q_end)


def evalue_order(h: NHSP):
    """``s_EvalueCompareHSPs``: E-value (below 1e-180 equal), then ScoreCompareHSPs."""
    e = 0.0 if h.evalue < EVALUE_EPSILON else h.evalue
    return (e,) + score_order(h)


def _cut(h: NHSP, q_cut: int, s_cut: int, cut_begin: bool):
    """``s_CutOffGapEditScript``."""
    esp = h.ops
    qid = sid = 0
    q_cut -= h.q_start
    s_cut -= h.s_start
    found = False
    index = opid = 0
    for index in range(len(esp)):
        op, num = esp[index]
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
    if not found:
        return
    if cut_begin:
        new = []
        if opid < esp[index][1]:
            new.append([esp[index][0], esp[index][1] - opid])
        new += [list(x) for x in esp[index + 1:]]
        h.ops = new
        h.q_start += qid
        h.s_start += sid
    else:
        new = [list(x) for x in esp[:index + 1]]
        if opid < esp[index][1]:
            new[index][1] = opid
        h.ops = new
        h.q_end = h.q_start + qid
        h.s_end = h.s_start + sid


def _start_key(h):
    return (h.context, h.q_start, h.s_start, -h.score, -h.q_end, -h.s_end)


def _end_key(h):
    return (h.context, h.q_end, h.s_end, -h.score, -h.q_start, -h.s_start)


def purge_common_endpoints(hsps, purge: bool):
    """Returns (list, count): with ``purge`` the kept HSPs only (count = their number); without,
    the kept HSPs (first ``count``) followed by the ones cut short (BLAST+ leaves those in the
    array for the re-evaluation that follows)."""
    arr = list(hsps)
    count = len(arr)
    for key, same, start in ((_start_key, lambda a, b: (a.q_start, a.s_start) == (b.q_start, b.s_start), True),
                             (_end_key, lambda a, b: (a.q_end, a.s_end) == (b.q_end, b.s_end), False)):
        head = sorted(arr[:count], key=key)
        arr = head + arr[count:]
        i = 0
        while i < count:
            j = 1
            while (i + j < count and arr[i] is not None and arr[i + j] is not None
                   and arr[i].context == arr[i + j].context and same(arr[i], arr[i + j])):
                count -= 1
                h = arr[i + j]
                keep = False
                if not purge:
                    if start and h.q_end > arr[i].q_end:
                        _cut(h, arr[i].q_end, arr[i].s_end, True)
                        keep = True
                    elif not start and h.q_start < arr[i].q_start:
                        _cut(h, arr[i].q_start, arr[i].s_start, False)
                        keep = True
                del arr[i + j]
                arr.insert(count, h if keep else None)
            i += j
    if purge:
        arr = [h for h in arr if h is not None]
        return arr, len(arr)
    return arr, count


OVERLAP_DIAG_CLOSE = 10


_ROW_FIELDS = ("score", "q_start", "q_end", "s_start", "s_end", "context", "q_gstart", "s_gstart")


def _merge_two(h1: NHSP, h2: NHSP) -> bool:
    """``s_BlastMergeTwoHSPs`` (gapped search) on HSP objects: :func:`_merge_two_row` (the rule)
    on their rows, ``h1`` updated from its row."""
    r1 = [getattr(h1, f) for f in _ROW_FIELDS]
    if not _merge_two_row(r1, [getattr(h2, f) for f in _ROW_FIELDS]):
        return False
    for f, v in zip(_ROW_FIELDS, r1):
        setattr(h1, f, v)
    return True


def _to_front(arr, pred):
    """BLAST+'s in-place swap of the elements satisfying ``pred`` to the front
    (:func:`_to_front_order`'s swaps); returns their count."""
    order, n = _to_front_order([bool(pred(h)) for h in arr])
    arr[:] = [arr[i] for i in order.tolist()]
    return n


def merge_subject_chunks(combined, new, split: int, overlap: int):
    """``Blast_HSPListsMerge`` for consecutive chunks of one subject (offsets already shifted to
    the whole subject): HSPs of the new chunk that start within ``overlap`` of ``split`` and
    continue an HSP of the earlier chunks (end/start diagonals closer than 10, same context)
    are merged into it; the rest are appended and the list is sorted by score."""
    if not new:
        return combined
    if combined is None:
        return new
    combined, new = list(combined), list(new)
    n1 = _to_front(combined, lambda h: h.s_end > split)
    n2 = _to_front(new, lambda h: h.s_start < split + overlap)
    if n1 and n2:
        for i in range(n1):
            h1 = combined[i]
            for j in range(n2):
                h2 = new[j]
                if h2 is None or h1.context != h2.context:
                    continue
                if abs((h1.q_end - h1.s_end) - (h2.q_start - h2.s_start)) < OVERLAP_DIAG_CLOSE:
                    if _merge_two(h1, h2):
                        new[j] = None
    out = combined + [h for h in new if h is not None]
    out.sort(key=score_order)
    return out


def add_subject_hits(per_query, query_of, oid, hsps):
    """One subject's HSPs into each query's hit list (``per_query[q]``) as (hit-list key, oid,
    that query's HSPs), the key from the best E-value and score (``hsp.hitlist_key``);
    ``query_of[context]`` is the query of each HSP's context."""
    groups = {}
    for h in hsps:
        groups.setdefault(int(query_of[h.context]), []).append(h)
    for qi, hs in groups.items():
        best = min(h.evalue for h in hs)
        per_query[qi].append((hitlist_key(best, max(h.score for h in hs), oid), oid, hs))


def _to_front_order(mask):
    """The positions :func:`_to_front` leaves the elements in (``order[k]``: the element now at
    ``k``) for the predicate values ``mask``, and the count in front: only the swaps are done."""
    order = np.arange(len(mask))
    hits = np.flatnonzero(mask).tolist()
    for k, i in enumerate(hits):
        order[k], order[i] = order[i], order[k]
    return order, len(hits)


def merge_subject_chunk_rows(combined, new, split: int, overlap: int):
    """:func:`merge_subject_chunks` of HSPs as preliminary rows (int64: score, q_start, q_end,
    s_start, s_end, context, q_gstart, s_gstart; None for no list): the same swaps to the front,
    the same pairs merged in the same order, the same stable sort, without an object per HSP."""
    if new is None or not len(new):
        return combined
    if combined is None:
        return new
    o1, n1 = _to_front_order(combined[:, 4] > split)
    o2, n2 = _to_front_order(new[:, 3] < split + overlap)
    combined, new = combined[o1], new[o2]
    alive = np.ones(len(new), dtype=bool)
    if n1 and n2:
        front, cand = combined[:n1].tolist(), new[:n2].tolist()
        for h1 in front:
            for j, h2 in enumerate(cand):
                if (alive[j] and h1[5] == h2[5]
                        and abs((h1[2] - h1[4]) - (h2[1] - h2[3])) < OVERLAP_DIAG_CLOSE
                        and _merge_two_row(h1, h2)):
                    alive[j] = False
        combined[:n1] = front
    out = np.concatenate((combined, new[alive]))
    return out[np.lexsort((-out[:, 2], out[:, 1], -out[:, 4], out[:, 3], -out[:, 0]))]


def _merge_two_row(h1, h2) -> bool:
    """``s_BlastMergeTwoHSPs`` (gapped search) on row lists (``h1`` changed in place): h1 grows
    to cover h2 when h2's start or end lies in h1's box; the score becomes the better one or the
    pair's score density over the union."""
    sc1, qs1, qe1, ss1, se1 = h1[:5]
    sc2, qs2, qe2, ss2, se2 = h2[:5]

    def inside(q, s):
        return qs1 <= q <= qe1 and ss1 <= s <= se1

    if not (inside(qs2, ss2) or inside(qe2, se2)):
        return False
    density = (sc1 + sc2) * 1.0 / ((qe1 - qs1) + (qe2 - qs2))
    h1[1], h1[3] = min(qs1, qs2), min(ss1, ss2)
    h1[2], h1[4] = max(qe1, qe2), max(se1, se2)
    if sc2 > sc1:
        h1[6], h1[7], h1[0] = h2[6], h2[7], sc2
    h1[0] = max(int(density * (h1[2] - h1[1])), h1[0])
    return True
