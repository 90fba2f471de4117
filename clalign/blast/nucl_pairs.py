"""BLASTN's hit lists as arrays: from the preliminary HSPs of every subject to the traceback's
work units, and from the units' records to each query's output, with no Python per HSP.

What ``blastn._search`` did per HSP and per (query, subject) pair in Python (``add_subject_hits``,
a sorted list per query, a dict of jobs per subject, a list per query of final subjects), done
on the arrays of all pairs at once, in the same order:

* a (query, subject) pair holds that query's preliminary HSPs of the subject in the subject's
  list order; its hit-list key is ``hsp.hitlist_key(best E-value, best score, oid)``;
* each query keeps the ``prelim_hitlist_size`` pairs of lowest key; the kept pairs go to
  traceback by subject (ascending), within a subject by query, cut into units of at most
  ``step`` pairs (``step`` = a ``4 * threads``-th of all kept pairs);
* after traceback each query keeps its ``max_target_seqs`` pairs of lowest key (recomputed from
  the final HSPs), each with its first ``max_hsps`` records.
"""
from __future__ import annotations

import numpy as np

from .hsp import evalue_rank


def _rank_in_group(group):
    """Position of each element within its run of equal ``group`` values (sorted input)."""
    start = _starts(group)
    return np.arange(len(group)) - np.repeat(start, np.diff(np.r_[start, len(group)]))


def _starts(*keys):
    """Starts of the runs of equal keys (all arrays of one length, sorted together)."""
    n = len(keys[0])
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
        for k in keys:
            change[1:] |= k[1:] != k[:-1]
    return np.flatnonzero(change)


def _exclusive_cumsum(counts):
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


class PrelimHits:
    """The preliminary stage's HSPs, subject by subject (``add``), then the traceback's work
    units (``units``). ``query_of``: the query of each context."""

    def __init__(self, query_of):
        self.query_of = np.asarray(query_of, dtype=np.int64)
        self.rows, self.evalues, self.oids = [], [], []

    def add(self, oid: int, rows, evalues):
        """One subject's HSPs in its list order: int64 rows (score, q_start, q_end, s_start,
        s_end, context, q_gstart, s_gstart) and their E-values."""
        if len(rows):
            self.rows.append(np.asarray(rows, dtype=np.int64).reshape(-1, 8))
            self.evalues.append(np.asarray(evalues, dtype=np.float64))
            self.oids.append(np.full(len(rows), oid, dtype=np.int64))

    def units(self, hitlist_size: int, threads: int):
        """[(oid, queries, P, first)]: the traceback's work units in order, ``P`` the rows of the
        unit's pairs one after the other, pair ``k``'s in ``P[first[k]:first[k + 1]]``."""
        if not self.rows:
            return []
        R, E, O = np.concatenate(self.rows), np.concatenate(self.evalues), np.concatenate(self.oids)
        Q = self.query_of[R[:, 5]]
        order = np.lexsort((np.arange(len(R)), O, Q))          # by query, subject, list order
        R, E, O, Q = R[order], E[order], O[order], Q[order]
        starts = _starts(Q, O)
        counts = np.diff(np.r_[starts, len(R)])
        pq, po = Q[starts], O[starts]
        best_e = np.minimum.reduceat(E, starts)
        best_s = np.maximum.reduceat(R[:, 0], starts)
        by_key = np.lexsort((-po, -best_s, evalue_rank(best_e), pq))
        keep = by_key[_rank_in_group(pq[by_key]) < hitlist_size]
        keep = keep[np.lexsort((pq[keep], po[keep]))]          # by subject, then query
        cnt = counts[keep]
        first = _exclusive_cumsum(cnt)
        P = R[np.repeat(starts[keep] - first[:-1], cnt) + np.arange(int(first[-1]))]
        kq, ko = pq[keep], po[keep]
        step = max(1, -(-len(keep) // (4 * threads)))
        out = []
        bounds = np.r_[_starts(ko), len(keep)].tolist()
        for a, b in zip(bounds[:-1], bounds[1:]):
            for i in range(a, b, step):
                j = min(i + step, b)
                out.append((int(ko[i]), kq[i:j], P[first[i]:first[j]], first[i:j + 1] - first[i]))
        return out


class FinalHits:
    """The traceback's pairs, unit by unit (``add`` or ``add_block``), then each query's output
    (``hits`` or ``hit_rows``)."""

    def __init__(self):
        self.queries, self.best_e, self.best_s, self.oids, self.records = [], [], [], [], []
        self.blocks, self.bounds, self.nrows = [], [], 0   # one kind of unit: blocks or records

    def _add(self, oid, queries, best_e, best_s):
        self.queries.append(np.asarray(queries, dtype=np.int64))
        self.best_e.append(np.asarray(best_e, dtype=np.float64))
        self.best_s.append(np.asarray(best_s, dtype=np.int64))
        self.oids.append(np.full(len(self.queries[-1]), oid, dtype=np.int64))

    def add(self, oid: int, queries, best_e, best_s, records):
        """The pairs of one unit that keep an HSP: their queries, best E-values and scores, and
        records (a list per pair, best first)."""
        if len(records):
            self._add(oid, queries, best_e, best_s)
            self.records.extend(records)

    def add_block(self, oid: int, queries, best_e, best_s, block, bounds):
        """As ``add``, the records a block (``output.columns.RecordColumns``), pair ``k``'s its
        rows ``bounds[k]:bounds[k + 1]`` (best first)."""
        if len(queries):
            bounds = np.asarray(bounds, dtype=np.int64)
            self.bounds.append(bounds[:-1] + self.nrows)
            self.bounds.append(np.diff(bounds))
            self._add(oid, queries, best_e, best_s)
            self.blocks.append(block)
            self.nrows += len(block)

    def _kept(self, max_target_seqs):
        """(query, pair index) of each query's ``max_target_seqs`` pairs of lowest hit-list key,
        by query, then key."""
        Q, O = np.concatenate(self.queries), np.concatenate(self.oids)
        BE, BS = np.concatenate(self.best_e), np.concatenate(self.best_s)
        by_key = np.lexsort((-O, -BS, evalue_rank(BE), Q))
        keep = by_key[_rank_in_group(Q[by_key]) < max_target_seqs]
        return Q[keep], keep

    def hits(self, nqueries: int, max_target_seqs: int, max_hsps: int):
        """Per query (0..nqueries-1) its records in output order: its ``max_target_seqs`` pairs
        of lowest hit-list key, each pair's first ``max_hsps`` records (all when 0)."""
        out = [[] for _ in range(nqueries)]
        if not self.records:
            return out
        recs = self.records
        for q, i in zip(*(x.tolist() for x in self._kept(max_target_seqs))):
            r = recs[i]
            out[q] += r[:max_hsps] if max_hsps > 0 else r
        return out

    def hit_rows(self, nqueries: int, max_target_seqs: int, max_hsps: int):
        """``hits`` of the blocks' records: (one block of every unit's, per query the array of its
        rows in output order)."""
        table, rows, bounds = self.hit_spans(nqueries, max_target_seqs, max_hsps)
        b = bounds.tolist()
        return table, [rows[lo:hi] for lo, hi in zip(b[:-1], b[1:])]

    def hit_spans(self, nqueries: int, max_target_seqs: int, max_hsps: int):
        """:meth:`hit_rows` as (block, every query's rows one after the other, query ``q``'s
        ``rows[bounds[q]:bounds[q + 1]]``): no array per query."""
        from ..output.columns import RecordColumns

        if not self.blocks:
            return None, np.zeros(0, dtype=np.int64), np.zeros(nqueries + 1, dtype=np.int64)
        q, keep = self._kept(max_target_seqs)
        start, cnt = np.concatenate(self.bounds[0::2])[keep], np.concatenate(self.bounds[1::2])[keep]
        if max_hsps > 0:
            cnt = np.minimum(cnt, max_hsps)
        first = _exclusive_cumsum(cnt)
        rows = np.repeat(start - first[:-1], cnt) + np.arange(int(first[-1]))
        per_query = np.searchsorted(np.repeat(q, cnt), np.arange(nqueries + 1))
        return RecordColumns.concat(self.blocks), rows, per_query
