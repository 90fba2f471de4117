"""Alignment records kept as columns (numpy arrays), made into :class:`Alignment` objects only
when one is asked for.

A search that makes many records (BLASTN's reads) keeps each work unit's records as a
:class:`RecordColumns` block: numbers in arrays, query and subject names by index, aligned
strings as the traceback's letter codes (decoded only for the columns that print them). The
writers (:mod:`.tabular`) format such blocks in bulk; :class:`HitRows` is the per-query sequence
a search returns, whose items are ordinary :class:`Alignment` records equal to those the search
would have made one by one.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .record import Alignment, QueryHits

#: the numeric columns of a block (int64 but for bitscore and evalue, float64)
NUMERIC = ("qlen", "slen", "score", "bitscore", "evalue", "qstart", "qend", "sstart", "send",
           "nident", "positive", "gaps", "gapopen", "length", "subject_index")
_STRANDS = ("plus", "minus")


class RecordColumns:
    """Records as columns. ``num``: NUMERIC name -> array (one value a record); ``query``:
    index into ``queries`` ((id, title) per query); ``subject``: index into ``subjects`` ((id,
    title) per index), also the record's ``subject_index``-determined name (one name per
    subject index); ``minus``: subject strand; ``col``: start of the record's columns in the
    aligned code buffers ``qa``/``sa`` (``length`` columns; ``letters[code]`` is the letter; lists
    of buffers to be joined, as ``concat`` leaves them, until the strings are asked for)."""

    __slots__ = ("num", "query", "queries", "subject", "subjects", "minus", "col", "qa", "sa", "letters")

    def __init__(self, num, query, queries, subject, subjects, minus, col, qa, sa, letters):
        self.num = {k: np.asarray(num[k]) for k in NUMERIC}
        self.query, self.queries = np.asarray(query, dtype=np.int64), queries
        self.subject, self.subjects = np.asarray(subject, dtype=np.int64), subjects
        self.minus = np.asarray(minus, dtype=bool)
        self.col = np.asarray(col, dtype=np.int64)
        self.qa, self.sa, self.letters = qa, sa, letters

    def __len__(self) -> int:
        return len(self.col)

    @classmethod
    def concat(cls, blocks):
        """One block of ``blocks`` (sharing ``queries``, ``subjects`` and ``letters``) in order."""
        blocks = list(blocks)
        first = blocks[0]
        starts = np.cumsum([0] + [len(b.buffers()[0]) for b in blocks[:-1]])
        num = {k: np.concatenate([b.num[k] for b in blocks]) for k in NUMERIC}
        return cls(num, np.concatenate([b.query for b in blocks]), first.queries,
                   np.concatenate([b.subject for b in blocks]), first.subjects,
                   np.concatenate([b.minus for b in blocks]),
                   np.concatenate([b.col + s for b, s in zip(blocks, starts.tolist())]),
                   [b.qa for b in blocks], [b.sa for b in blocks], first.letters)

    def buffers(self):
        """(qa, sa), the blocks' buffers joined on first use (by ``concat``: a list each)."""
        if isinstance(self.qa, list):
            self.qa, self.sa = np.concatenate(self.qa), np.concatenate(self.sa)
        return self.qa, self.sa

    def aligned(self, rows):
        """(qseq list, sseq list) of ``rows``."""
        qa, sa = self.buffers()
        rows = np.asarray(rows, dtype=np.int64)
        c0 = self.col[rows]
        c1 = c0 + self.num["length"][rows]
        if not len(rows):
            return [], []
        # one decode of the rows' span of the buffers (usually all of it), then a slice each
        lo, hi = int(c0.min()), int(c1.max())
        qt = self.letters[qa[lo:hi]].tobytes().decode("latin-1")
        st = self.letters[sa[lo:hi]].tobytes().decode("latin-1")
        sl = list(map(slice, (c0 - lo).tolist(), (c1 - lo).tolist()))
        return list(map(qt.__getitem__, sl)), list(map(st.__getitem__, sl))

    def alignments(self, rows):
        """[Alignment] of ``rows`` (Python ints, floats and strings, as a search makes them)."""
        rows = np.asarray(rows, dtype=np.int64)
        n = self.num
        qs, ss = self.aligned(rows)
        qi, si = self.query[rows].tolist(), self.subject[rows].tolist()
        Q, S = self.queries, self.subjects
        cols = [n[k][rows].tolist() for k in NUMERIC]
        qlen, slen, score, bits, ev, q0, q1, s0, s1, ident, pos, gaps, opens, _, oid = cols
        return [Alignment(Q[a][0], S[b][0], *v, subject_index=o, subject_title=S[b][1], query_title=Q[a][1],
                          sstrand=_STRANDS[m])
                for a, b, o, m, v in zip(qi, si, oid, self.minus[rows].tolist(),
                                         zip(qlen, slen, score, bits, ev, q0, q1, s0, s1, qs, ss, ident, pos,
                                             gaps, opens))]


class HitRows(Sequence):
    """The records ``rows`` of a :class:`RecordColumns` block as a sequence of :class:`Alignment`
    (made when asked for); equal to a list of the same records. ``HitRows(table, None, base, lo,
    hi)``: the rows ``base[lo:hi]``, sliced only when asked for (a search's 100,000 queries share
    one ``base``, which the writers then take whole: :func:`rows_of`)."""

    __slots__ = ("table", "_rows", "base", "lo", "hi")

    def __init__(self, table: RecordColumns, rows, base=None, lo: int = 0, hi: int = 0):
        self.table, self.base, self.lo, self.hi = table, base, lo, hi
        self._rows = None if rows is None else np.asarray(rows, dtype=np.int64)

    @property
    def rows(self):
        if self._rows is None:
            self._rows = np.asarray(self.base[self.lo:self.hi], dtype=np.int64)
        return self._rows

    def __len__(self) -> int:
        return len(self._rows) if self._rows is not None else self.hi - self.lo

    def __getitem__(self, i):
        if isinstance(i, slice):
            return HitRows(self.table, self.rows[i])
        return self.table.alignments(self.rows[[i]])[0]

    def __iter__(self):
        return iter(self.table.alignments(self.rows))

    def __eq__(self, other):
        if isinstance(other, (list, tuple, Sequence)) and not isinstance(other, (str, bytes)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"HitRows({len(self)} records)"


# -- the rows of many queries, for the writers ------------------------------------------------------
_FLOATS = ("bitscore", "evalue")
_TEXT = ("query_id", "subject_id", "subject_title", "query_title", "sstrand")


class BlockRows:
    """Rows ``rows`` of a :class:`RecordColumns` block, as the writers read them: ``num(name)``
    (an array), ``text(name)`` (a list of str), ``text_codes(name)`` (the same as distinct
    texts and an index), ``aligned()``, ``group()`` (one code per subject: index and name),
    ``take(order)``."""

    def __init__(self, table: RecordColumns, rows):
        self.table, self.rows = table, np.asarray(rows, dtype=np.int64)
        self._aligned = None

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, order):
        return BlockRows(self.table, self.rows[order])

    def num(self, name):
        return self.table.num[name][self.rows]

    def text(self, name):
        t = self.table
        if name == "sstrand":
            return list(map(_STRANDS.__getitem__, t.minus[self.rows].tolist()))
        names, idx = (t.queries, t.query) if name.startswith("query") else (t.subjects, t.subject)
        k = 0 if name.endswith("_id") else 1
        return [names[i][k] for i in idx[self.rows].tolist()]

    def text_codes(self, name):
        """(texts, index): ``text(name)`` as each query's or subject's name once and each row's
        place in them (name: query_id or subject_id)."""
        t = self.table
        names, idx = (t.queries, t.query) if name.startswith("query") else (t.subjects, t.subject)
        k = 0 if name.endswith("_id") else 1
        if isinstance(names, list):
            return [n[k] for n in names], idx[self.rows]
        u, at = np.unique(idx[self.rows], return_inverse=True)    # subjects: a dict by index
        return [names[i][k] for i in u.tolist()], at.ravel()

    def aligned(self):
        if self._aligned is None:    # once for qseq, sseq and btop
            self._aligned = self.table.aligned(self.rows)
        return self._aligned

    def group(self):
        return self.table.subject[self.rows]   # a subject index names one subject


class RecordRows:
    """A list of :class:`Alignment`-like records as the writers read them (see :class:`BlockRows`)."""

    def __init__(self, records):
        self.records = list(records)

    def __len__(self) -> int:
        return len(self.records)

    def take(self, order):
        return RecordRows(map(self.records.__getitem__, np.asarray(order).tolist()))

    def num(self, name):
        return np.array([getattr(a, name) for a in self.records],
                        dtype=np.float64 if name in _FLOATS else np.int64)

    def text(self, name):
        return [getattr(a, name) for a in self.records]

    def text_codes(self, name):
        return self.text(name), np.arange(len(self.records))

    def aligned(self):
        return [a.qseq for a in self.records], [a.sseq for a in self.records]

    def group(self):
        codes = {}
        return np.array([codes.setdefault((a.subject_index, a.subject_id), len(codes)) for a in self.records],
                        dtype=np.int64)


def rows_of(results):
    """(rows, hits per result) of QueryHits-like ``results``, the rows in result order: one
    :class:`BlockRows` when every result's hits are :class:`HitRows` of one block, else a
    :class:`RecordRows` of the records; a :class:`QueryTable`'s arrays as they are."""
    if isinstance(results, QueryTable):
        return results.block_rows()
    hits = [r.hits for r in results]
    counts = list(map(len, hits))
    block = [h for h in hits if type(h) is HitRows]
    tables = {h.table for h in block}
    if len(tables) == 1 and len(block) + counts.count(0) >= len(hits) \
            and all(type(h) is HitRows or not c for h, c in zip(hits, counts)):
        return BlockRows(tables.pop(), _joined_rows(block)), counts
    return RecordRows(a for h in hits for a in h), counts


def _joined_rows(block):
    """The rows of the :class:`HitRows` ``block``, one after the other: a slice of their shared
    ``base`` when they are its consecutive spans (as a search returns them), else joined."""
    base = block[0].base
    if base is not None and all(h.base is base and h._rows is None for h in block):
        lo = np.fromiter((h.lo for h in block), dtype=np.int64, count=len(block))
        hi = np.fromiter((h.hi for h in block), dtype=np.int64, count=len(block))
        if (lo[1:] == hi[:-1]).all():
            return np.asarray(base[int(lo[0]):int(hi[-1])], dtype=np.int64)
    return np.concatenate([h.rows for h in block])


class QueryTable(Sequence):
    """Every query's results as arrays, for a search with many queries: ids, lengths and titles
    per query, one :class:`RecordColumns` block (None: no records), and each query's rows as a
    span of one array (query ``k``'s ``rows[bounds[k]:bounds[k + 1]]``). A sequence of
    :class:`~clalign.output.QueryHits` made when asked for; the writers read the arrays
    (:func:`rows_of`) instead of 100,000 objects."""

    __slots__ = ("qids", "qlens", "titles", "table", "rows", "bounds")

    def __init__(self, qids, qlens, titles, table, rows, bounds):
        self.qids, self.titles, self.table = list(qids), list(titles), table
        self.qlens = np.asarray(qlens, dtype=np.int64)
        self.rows = np.asarray(rows, dtype=np.int64)
        self.bounds = np.asarray(bounds, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.qids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        k = range(len(self))[i]       # an int in range, negatives counted from the end
        lo, hi = int(self.bounds[k]), int(self.bounds[k + 1])
        hits = HitRows(self.table, None, self.rows, lo, hi) if hi > lo else []
        return QueryHits(self.qids[k], int(self.qlens[k]), hits, self.titles[k])

    def __iter__(self):
        return map(self.__getitem__, range(len(self)))

    def block_rows(self):
        """:func:`rows_of` of the table: (rows, hits per query)."""
        counts = np.diff(self.bounds).tolist()
        if self.table is None:
            return RecordRows([]), counts
        return BlockRows(self.table, self.rows[int(self.bounds[0]):int(self.bounds[-1])]), counts
