"""Smith-Waterman hits a biologist can use: E-values, bit scores, alignments, BLAST order.

After the device has scored a query against every subject, :class:`Reporter` computes every
subject's E-value (blastp 2.12's statistics, :mod:`clalign.stats`), keeps those with E-value <=
``evalue``, the best ``max_target_seqs`` of them in BLAST+'s order, and aligns only those
(:mod:`clalign.sw.align`) on CPU threads -- while the device already scores the next query.
Each hit becomes a :class:`clalign.output.Alignment` (coordinates, identities, CIGAR, strings).
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..data import PROTEIN, as_database
from ..errors import InputError, ParameterError
from ..output import Alignment
from ..stats import SearchStatistics
from .align import LANES, CELL_BUDGET, count_ops, find_ends_lanes, find_start, global_path, ops_strings

_EPS = 1.0e-180


@dataclass
class QueryResult:
    """The reported hits of one query (:class:`clalign.output.Alignment` records, BLAST order)."""

    query_id: str
    qlen: int
    hits: list = field(default_factory=list)
    seconds: float = 0.0           # device time of this query (kernels, rescoring, reads)
    title: str = ""
    align_seconds: float = 0.0     # CPU time of this query's tracebacks (summed over threads)


def select_hits(scores, evalues, max_targets: int, evalue: float) -> np.ndarray:
    """Indices of the reported subjects: E-value <= ``evalue``, then the best ``max_targets`` in
    BLAST+'s order (E-value, values below 1e-180 tied; score descending; later subject first)."""
    cand = np.flatnonzero((evalues <= evalue) & (np.asarray(scores) > 0))
    if cand.size == 0:
        return cand
    ev = evalues[cand]
    ev = np.where(ev < _EPS, 0.0, ev)
    order = np.lexsort((-cand, -np.asarray(scores)[cand].astype(np.int64), ev))
    return cand[order][:int(max_targets)]


class Reporter:
    """Statistics and tracebacks of one search (matrix, gap costs, database, thresholds)."""

    def __init__(self, scoring_matrix, matrix_name, gap_open, gap_extend, db, evalue=10.0, max_target_seqs=500,
                 dbsize=None, searchsp=None, threads=None):
        if not (evalue > 0):
            raise ParameterError(f"-evalue must be > 0 (got {evalue})")
        self.db = db
        self.M = np.ascontiguousarray(scoring_matrix, dtype=np.int64)
        self.M32 = self.M.astype(np.int32)
        self.gap_open, self.gap_extend = int(gap_open), int(gap_extend)
        self.goe = self.gap_open + self.gap_extend
        self.stats = SearchStatistics.for_search(matrix_name, gap_open, gap_extend, db.total_residues, len(db),
                                                 dbsize=dbsize, searchsp=searchsp)
        self.evalue = float(evalue)
        self.max_targets = int(max_target_seqs)
        self.lengths = np.asarray(db.lengths, dtype=np.int64)
        self.letters = PROTEIN.letters
        self.pool = ThreadPoolExecutor(max_workers=threads or os.cpu_count() or 1)

    def close(self):
        self.pool.shutdown(wait=True)

    # -- one query ------------------------------------------------------------------------
    def submit(self, qid, qcodes, scores):
        """Select this query's hits now; their tracebacks run on the thread pool. Returns a
        callable giving the hit list (waits for the tracebacks)."""
        qlen = len(qcodes)
        ev = self.stats.evalues(scores, qlen, self.lengths)
        idx = select_hits(scores, ev, self.max_targets, self.evalue)
        q = np.ascontiguousarray(qcodes, dtype=np.uint8)
        # groups of LANES subjects of similar length (the lane kernel runs to the longest)
        order = idx[np.argsort(self.lengths[idx], kind="stable")]
        groups = [order[k:k + LANES] for k in range(0, len(order), LANES)]
        futures = [self.pool.submit(self._align_group, qid, q, g, scores, ev) for g in groups]

        def collect():
            found = {}
            cpu = 0.0
            for fut in futures:
                part, sec = fut.result()
                found.update(part)
                cpu += sec
            return [found[int(i)] for i in idx], cpu
        return collect

    def _align_group(self, qid, q, group, scores, ev):
        """Tracebacks of up to LANES subjects: ends by the lane kernel, then start and path."""
        t0 = time.thread_time()
        n = len(group)
        lens = np.zeros(LANES, dtype=np.int64)
        lens[:n] = self.lengths[group]
        subs = np.zeros((LANES, max(1, int(lens.max()))), dtype=np.uint8)
        targets = np.zeros(LANES, dtype=np.int32)
        seqs = []
        for k, i in enumerate(group):
            s = self.db.sequence(int(i))
            subs[k, :len(s)] = s
            targets[k] = scores[i]
            seqs.append(np.ascontiguousarray(s, dtype=np.uint8))
        ends = np.zeros((LANES, 2), dtype=np.int64)
        find_ends_lanes(q, subs, lens, self.M32, self.goe, self.gap_extend, targets, ends)
        out = {}
        for k, i in enumerate(group):
            sc = int(targets[k])
            ie, je = int(ends[k, 0]), int(ends[k, 1])
            if ie < 0:
                raise RuntimeError(f"sw: internal error, no cell of subject {int(i)} reaches its score {sc}")
            s = seqs[k]
            i0, j0 = find_start(q, s, self.M, self.goe, self.gap_extend, ie, je, sc)
            got, rops = (global_path(q[i0 - 1:ie], s[j0 - 1:je], self.M, self.goe, self.gap_extend, CELL_BUDGET)
                         if i0 > 0 else (None, None))
            if got != sc:
                raise RuntimeError(f"sw: internal error, traceback of subject {int(i)} scores {got}, not {sc}")
            out[int(i)] = self._record(qid, q, int(i), sc, float(ev[i]), i0, j0, rops[::-1].copy(), s)
        return out, time.thread_time() - t0

    def _record(self, qid, q, i, score, evalue, i0, j0, ops, s):
        qlen = len(q)
        nident, positive, gaps, opens = count_ops(q, s, i0, j0, ops, self.M)
        qs, ss = ops_strings(q, s, i0, j0, ops, self.letters)
        qres = len(ops) - int(np.count_nonzero(ops == 2))     # query residues in the alignment
        sres = len(ops) - int(np.count_nonzero(ops == 1))
        return Alignment(qid, self.db.ids[i], qlen, int(self.lengths[i]), score, float(self.stats.bitscore(score)),
                         evalue, i0, i0 + qres - 1, j0, j0 + sres - 1, qs, ss, int(nident), int(positive), int(gaps),
                         int(opens), subject_index=i, subject_title=_title(self.db, i))


def _title(db, i) -> str:
    d = db.descriptions[i]
    return f"{db.ids[i]} {d}" if d else db.ids[i]


def sw_search(queries, db, matrix="BLOSUM62", gap_open=11, gap_extend=1, top=500, evalue=10.0, device=None,
              progress=False, report=None, dbsize=None, searchsp=None, threads=None, **overrides):
    """Smith-Waterman search with blastp-style results: per query (list of :class:`QueryResult`)
    the hits with E-value <= ``evalue``, at most ``top`` (``-max_target_seqs``) in BLAST+'s order,
    each a :class:`clalign.output.Alignment` (evalue, bitscore, coordinates, identities, CIGAR,
    aligned strings). Statistics are blastp 2.12's for ``matrix`` and the gap costs (a gap of k
    residues costs gap_open + k * gap_extend); pairs BLAST+ has no statistics for are refused.
    ``dbsize``/``searchsp`` are BLAST+'s -dbsize/-searchsp. Other arguments as :func:`sw_scores`.
    """
    from .engine import get_engine, parse_queries

    qs = parse_queries(queries)
    titles = _query_titles(queries, qs)
    db = as_database(db)
    if int(top) < 1:
        raise ParameterError(f"max_target_seqs must be >= 1 (got {top})")
    if not isinstance(matrix, str):
        raise ParameterError("sw_search needs a matrix name BLAST+ has statistics for (BLOSUM45/50/62/80/90, "
                             "PAM30/70/250)")
    eng = get_engine(matrix, gap_open, gap_extend, device, **overrides)
    rep = Reporter(eng.scoring.scores[:28, :28], matrix, gap_open, gap_extend, db, evalue, top, dbsize, searchsp,
                   threads)
    pending = {}

    def on_query(qi, scores):
        qid, codes = qs[qi]
        pending[qi] = rep.submit(qid, codes, scores)

    try:
        allscores, seconds = eng.search(qs, db, progress=progress, report=report, on_query=on_query)
        for qi in range(len(qs)):
            if qi not in pending:         # an empty database: no batch ran
                on_query(qi, allscores[qi])
        out = []
        for qi, (qid, codes) in enumerate(qs):
            hits, cpu = pending[qi]()
            out.append(QueryResult(qid, len(codes), hits, seconds[qi], titles[qi], cpu))
    finally:
        rep.close()
    return out


def _query_titles(queries, parsed):
    """Whole definition lines of FASTA queries (for '# Query:'), else the ids."""
    if isinstance(queries, (str, os.PathLike)) and os.path.isfile(os.fspath(queries)):
        from ..data import read_fasta

        try:
            return [f"{r.id} {r.description}".strip() for r in read_fasta(os.fspath(queries))]
        except InputError:
            pass
    return [qid for qid, _ in parsed]
