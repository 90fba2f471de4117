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
from ..stats import SearchStatistics, gapped_params
from ..switch import short_switch

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
    if cand.size > max_targets:
        # keep everything up to the max_targets-th smallest E-value (ties included), then sort
        key = np.where(evalues[cand] < _EPS, 0.0, evalues[cand])
        kth = np.partition(key, max_targets - 1)[max_targets - 1]
        cand = cand[key <= kth]
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
        self.narrow = bool(np.abs(self.M).max() < 8192)
        self.M16 = np.clip(self.M, -8192, 8191).astype(np.int16)     # used only when self.narrow
        self.gap_open, self.gap_extend = int(gap_open), int(gap_extend)
        self.goe = self.gap_open + self.gap_extend
        self.stats = SearchStatistics.for_search(matrix_name, gap_open, gap_extend, db.total_residues, len(db),
                                                 dbsize=dbsize, searchsp=searchsp)
        self.evalue = float(evalue)
        self.max_targets = int(max_target_seqs)
        self.lengths = np.asarray(db.lengths, dtype=np.int64)
        self.letter_codes = np.frombuffer(PROTEIN.letters.encode("ascii") + b"-", dtype=np.uint8)
        # one core stays with the thread that drives the device
        self.pool = ThreadPoolExecutor(max_workers=threads or max(1, (os.cpu_count() or 2) - 1))
        self.pool.submit(self._warm)     # numba's import and cache loads overlap the device set-up and first query

    def _warm(self):
        """Import the traceback code and load every compiled function a query's reporting calls
        (numba's cache: ~0.5 s), in one pool thread while the device starts. Left to the queries'
        own jobs, the loads ran when several of them had started at once, and on the H100 the
        first took 2-3 s with every other job waiting for numba's compiler lock (docs/perf/sw.md)."""
        from .align import CELL_BUDGET
        from .lanes import GROUP, trace_group

        try:
            self.stats.evalues(np.ones(1, dtype=np.int32), 1, self.lengths[:1])
            lens = np.zeros(GROUP, dtype=np.int64)
            lens[0] = 1
            targets = np.zeros(GROUP, dtype=np.int32)
            targets[0] = max(0, int(self.M[0, 0]))
            trace_group(np.zeros(1, dtype=np.uint8), np.zeros((GROUP, 1), dtype=np.uint8), lens, targets, self.M16,
                        self.M32, self.M, self.goe, self.gap_extend, CELL_BUDGET, self.letter_codes, self.narrow)
        except Exception:       # noqa: BLE001 -- a warm-up only; the queries' own calls report real errors
            pass

    def close(self):
        self.pool.shutdown(wait=True)

    # -- one query ------------------------------------------------------------------------
    def submit(self, qid, qcodes, scores):
        """Queue this query's reporting (E-values, selection, tracebacks) on the thread pool and
        return a callable that waits for it and gives (hits, traceback CPU seconds)."""
        q = np.ascontiguousarray(qcodes, dtype=np.uint8)
        job = self.pool.submit(self._select, qid, q, scores)

        def collect():
            idx, futures = job.result()
            found, cpu = {}, 0.0
            for fut in futures:
                part, sec = fut.result()
                found.update(part)
                cpu += sec
            return [found[int(i)] for i in idx], cpu
        return collect

    def _select(self, qid, q, scores):
        """E-values of every subject, the reported ones, and their traceback jobs (groups of
        GROUP subjects of similar length: the lane kernel runs to the longest of a group; a
        subject above LONG_END alone, :mod:`clalign.sw.striped_end`).
        The traceback modules (numba) are imported here, in a pool thread, so a search's device
        work starts without waiting for them."""
        from .lanes import GROUP
        from .striped_end import LONG_END

        ev = self.stats.evalues(scores, len(q), self.lengths)
        idx = select_hits(scores, ev, self.max_targets, self.evalue)
        order = idx[np.argsort(self.lengths[idx], kind="stable")]
        nlong = int((self.lengths[order] > LONG_END).sum())
        # subjects above LONG_END one per job (each its own striped pass, on every thread at
        # once), the others GROUP per job; longest first
        long = [order[k:k + 1] for k in range(len(order) - nlong, len(order))][::-1]
        short = order[:len(order) - nlong]
        groups = long + [short[k:k + GROUP] for k in range(0, len(short), GROUP)][::-1]
        return idx, [self.pool.submit(self._align_group, qid, q, g, scores, ev) for g in groups]

    def _align_group(self, qid, q, group, scores, ev):
        """Records of up to GROUP subjects (one compiled call, then the Alignment objects)."""
        from .align import CELL_BUDGET
        from .lanes import GROUP, trace_group

        t0 = time.thread_time()
        n = len(group)
        lens = np.zeros(GROUP, dtype=np.int64)
        lens[:n] = self.lengths[group]
        subs = np.zeros((GROUP, max(1, int(lens.max()))), dtype=np.uint8)
        targets = np.zeros(GROUP, dtype=np.int32)
        for k, i in enumerate(group):
            sq = self.db.sequence(int(i))
            subs[k, :len(sq)] = sq
            targets[k] = scores[i]
        info, qt, st, off = trace_group(q, subs, lens, targets, self.M16, self.M32, self.M, self.goe,
                                        self.gap_extend, CELL_BUDGET, self.letter_codes, self.narrow)
        out = {}
        qlen = len(q)
        for k, i in enumerate(group):
            i = int(i)
            i0, i1, j0, j1, nident, positive, gaps, opens, ok = (int(v) for v in info[k])
            if not ok:
                raise RuntimeError(f"sw: internal error, no traceback of subject {i} reaches its score {targets[k]}")
            a, b = off[k], off[k + 1]
            sc = int(targets[k])
            out[i] = Alignment(qid, self.db.ids[i], qlen, int(self.lengths[i]), sc, float(self.stats.bitscore(sc)),
                               float(ev[i]), i0, i1, j0, j1, qt[a:b].tobytes().decode("ascii"),
                               st[a:b].tobytes().decode("ascii"), nident, positive, gaps, opens,
                               subject_index=i, subject_title=_title(self.db, i))
        return out, time.thread_time() - t0




def _title(db, i) -> str:
    d = db.descriptions[i]
    return f"{db.ids[i]} {d}" if d else db.ids[i]


def sw_search(queries, db, matrix="BLOSUM62", gap_open=11, gap_extend=1, top=500, evalue=10.0, device=None,
              progress=False, report=None, dbsize=None, searchsp=None, threads=None, verbose=None, **overrides):
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
    gapped_params(matrix, gap_open, gap_extend)          # unsupported pairs fail before any device work
    eng = get_engine(matrix, gap_open, gap_extend, device, **overrides)
    # Longest queries first: each query's tracebacks overlap the device work of the next one, so
    # the only traceback work left after the device finishes is the shortest query's.
    order = sorted(range(len(qs)), key=lambda k: -len(qs[k][1]))
    # The programs this search needs load or build in background threads from here on, beside
    # the statistics set-up and the traceback code's import below.
    eng.prepare([qs[k] for k in order], db.lengths)
    # numba is imported here, in this thread, before the device work, as it was before issue 14's
    # start-up work: with its import moved to the reporting threads the H100 runs 15-16 saw the
    # first cache loads of the traceback code take 2-3 s during the search (0.5 s otherwise) and
    # every query's reporting wait behind them (docs/perf/sw.md). Costs ~0.3-0.5 s of start-up
    # on a repeated run; on a fresh one it overlaps the kernel builds. (clalign's modules defer
    # numba's import to a function's first call, runtime.jit: so it is imported by name.)
    import numba  # noqa: F401
    rep = Reporter(eng.scoring.scores[:28, :28], matrix, gap_open, gap_extend, db, evalue, top, dbsize, searchsp,
                   threads)
    pending = {}

    def on_query(pos, scores):
        qi = order[pos]
        qid, codes = qs[qi]
        pending[qi] = rep.submit(qid, codes, scores)

    # The device loop takes the GIL back after each blocking OpenCL call; with traceback threads
    # running Python between their compiled calls, a short switch interval keeps it from
    # waiting up to the default 5 ms each time (clalign.switch).
    try:
        with short_switch():
            allscores, secs = eng.search([qs[k] for k in order], db, progress=progress, report=report,
                                         verbose=verbose, on_query=on_query)
            for pos, qi in enumerate(order):
                if qi not in pending:         # an empty database: no batch ran
                    on_query(pos, allscores[pos])
            seconds = {qi: secs[pos] for pos, qi in enumerate(order)}
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
