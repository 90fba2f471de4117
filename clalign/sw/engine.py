"""Smith-Waterman database search on an OpenCL device (after CUDASW++3.0).

One query is aligned against every database subject by the inter-task kernel
(``kernels/sw_intertask.mako``): subjects are taken in length-sorted order, ``WORDS * 32/WIDTH``
per work-item, one lane of a packed 32-bit word each. The first pass runs at 8 or 16 bits per
lane; every subject whose lane saturated is rescored on the device at the next width (16, then
32 bits), so every score is exact. Databases larger than the device's memory go through in
batches (contiguous in database order, sorted by length inside), the upload of the next batch
overlapping the search of the current one on a second queue.

On CPU devices the first pass is the vector kernel (``kernels/sw_vector.mako``, ``KERNEL="vector"``):
``VEC`` subjects per work-item in the elements of a ``short{VEC}`` vector, 16-bit saturating,
with the subjects whose lane may have saturated rescored by the 32-bit inter-task pass.

Subjects longer than a threshold chosen from the device's measured rates go to the intra-task
kernel (``kernels/sw_intratask.mako``, one work-group per pair) on a second queue, concurrently
with the first pass. Modules: ``plan`` (kernel choice), ``batch`` (uploads, lane layout),
``passes`` / ``intratask`` (kernel launches), ``worker`` (one device slot), ``threshold``,
``multi`` (several devices), ``scoring`` (matrix, profiles).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from ..data import PROTEIN, as_database, read_fasta
from ..data.inputs import as_sequence, check_codes, sequence_or_path
from ..errors import InputError
from ..runtime import Runtime
from .batch import Layout, make_layout  # noqa: F401  (re-exported for tools)
from .multi import MIN_RATE, search_devices
from .params import ALPHA, SENTINEL, SW_PARAMS  # noqa: F401
from .passes import INTER_TEMPLATE
from .plan import make_plan
from .scoring import Scoring, build_profile  # noqa: F401
from .threshold import device_rates
from .worker import ScoreOverflowError, Worker  # noqa: F401


# ------------------------------------------------------------------------------------------
# Results
@dataclass(frozen=True)
class Hit:
    """One database hit of a query."""

    query_id: str
    subject_index: int      # index in database order
    subject_id: str
    score: int
    qlen: int
    slen: int


@dataclass
class QueryResult:
    """The best hits of one query, sorted by score descending, ties in database order."""

    query_id: str
    qlen: int
    hits: list = field(default_factory=list)
    seconds: float = 0.0    # wall time of this query's device work (kernels, rescoring, reads)

    @property
    def gcups(self) -> float:
        return 0.0 if self.seconds <= 0 else self._cells / self.seconds / 1e9

    _cells: int = 0


def _as_codes(seq, name="query") -> np.ndarray:
    seq = as_sequence(seq, name)
    if isinstance(seq, np.ndarray):
        return check_codes(seq, PROTEIN.size, name)
    s = (seq.decode("ascii", "replace") if isinstance(seq, bytes) else seq).strip().upper()
    if s.endswith("*"):
        s = s[:-1]
    return PROTEIN.encode(s)


def parse_queries(queries):
    """[(id, codes)] from a residue string, a list of str / (id, seq), or a FASTA path."""
    import os

    if isinstance(queries, (str, os.PathLike, bytes, np.ndarray)):
        kind, s = sequence_or_path(queries, "queries")
        if kind == "path":
            out = [(rec.id, _as_codes(rec.sequence)) for rec in read_fasta(s)]
            if not out:
                raise InputError("no sequences in query file", s)
            return out
        return [("query", _as_codes(s))]
    if queries is None or not hasattr(queries, "__iter__"):
        raise TypeError(f"queries: expected a sequence, a list of sequences or a FASTA path, got {queries!r}")
    out = []
    for i, q in enumerate(queries):
        if isinstance(q, tuple):
            out.append((str(q[0]), _as_codes(q[1])))
        else:
            out.append((f"query_{i + 1}", _as_codes(q, f"queries[{i}]")))
    return out


class SWEngine:
    """Scoring, kernel plan and one worker per given device; searches databases query by query.

    ``device``: None (the default device), ``"P:D[,P:D...]"`` or a list of devices: with several,
    the database is split between them by their measured rates (see :mod:`clalign.sw.multi`).
    """

    def __init__(self, matrix="BLOSUM62", gap_open=11, gap_extend=1, device=None, **overrides):
        self.scoring = Scoring.make(matrix, gap_open, gap_extend)
        self.workers = [Worker(rt, make_plan(rt.caps, self.scoring, overrides)) for rt in Runtime.all(device)]
        self.device_report: list = []     # per device of the last search: (label, count, unit, cells, seconds)
        self._started: set = set()        # programs prepare() already handed to a build thread

    # -- the first device's plan (single-device callers, tests and tools) -----------------
    @property
    def rt(self):
        return self.workers[0].rt

    @property
    def caps(self):
        return self.workers[0].caps

    @property
    def plan(self):
        return self.workers[0].plan

    @property
    def kernel(self) -> str:
        return self.plan.kernel

    @property
    def first_width(self) -> int:
        return self.plan.first_width

    def widths(self):
        return self.plan.widths()

    def vector_passes(self):
        return self.plan.vector_passes()

    def profile_layout(self, width: int, qlen: int) -> str:
        return self.plan.profile_layout(width, qlen)

    def schedule(self, lengths) -> str:
        return self.plan.schedule(lengths)

    def values(self, width, layout, sched) -> dict:
        return self.plan.values(width, layout, sched)

    def program(self, values):
        return self.rt.program(INTER_TEMPLATE, SW_PARAMS, values)

    def plan_batches(self, db):
        """[(start, stop)] of the database in batches the first device holds."""
        return self.workers[0].plan_batches(as_database(db))

    @property
    def kernel_seconds(self) -> float:
        return sum(w.kernel_seconds for w in self.workers)

    @property
    def last_passes(self) -> list:
        return self.workers[0].last_passes

    @property
    def last_kernels(self) -> list:
        return self.workers[0].last_kernels

    # -- kernel choice per database --------------------------------------------------------
    def long_threshold(self, worker, lengths, verbose=None) -> int:
        """Subjects longer than this go to the intra-task kernel on ``worker``'s device: the
        override, else from the device's measured rates (:mod:`clalign.sw.threshold`)."""
        thr = worker.threshold_for(lengths, verbose)
        if verbose is not None:
            if worker.plan.long_threshold is not None:
                why = "long_threshold override"
            else:
                rates = device_rates(worker)
                why = (f"measured rates: first pass {rates['inter']:.1f} GCUPS, one lane {rates['lane']:.4f}, "
                       f"intra-task {rates['intra']:.1f}")
            L = np.asarray(lengths, dtype=np.int64)
            nl = int((L > thr).sum())
            share = float(L[L > thr].sum()) / max(1, int(L.sum())) * 100
            verbose(f"sw: {worker.rt.label}: {nl} subject(s) longer than {thr} aa ({share:.2f} % of the residues) "
                    f"-> intra-task kernel ({worker.plan.ivalues['KIND']}), the rest -> {worker.plan.kernel} kernel "
                    f"({why})")
        return thr

    def active_workers(self, verbose=None) -> list:
        """The workers a search uses: all, less those far slower than the fastest (multi.MIN_RATE)."""
        if len(self.workers) == 1:
            return self.workers
        rates = [device_rates(w, verbose)["inter"] for w in self.workers]
        top = max(rates)
        out = [w for w, r in zip(self.workers, rates) if r >= MIN_RATE * top]
        if verbose is not None:
            for w, r in zip(self.workers, rates):
                if r < MIN_RATE * top:
                    verbose(f"sw: {w.rt.label} left out: its rate {r:.1f} GCUPS is below {MIN_RATE:.0%} of the "
                            f"fastest device's {top:.1f}")
        return out

    def prepare(self, queries, lengths, verbose=None) -> list:
        """Start loading or building, in background threads, every program a search of ``queries``
        ((id, codes), in search order) against subjects of ``lengths`` needs (only those:
        :meth:`Worker.programs_for`), so that the builds overlap each other (where the driver
        compiles concurrently) and the caller's host work (imports, database, statistics); a
        kernel launch that needs a program still building waits for that build. Returns the
        futures of the builds started now (programs already started are skipped)."""
        futs = []
        qlens = [len(c) for _, c in queries]
        for w in self.active_workers(verbose):
            todo = []
            for item in w.programs_for(qlens, lengths):
                key = (w.rt.device.int_ptr, item[0], tuple(sorted(item[2].items())))
                if key not in self._started:
                    self._started.add(key)
                    todo.append(item)
            if todo:
                futs += w.rt.prebuild(todo, threads=len(todo))
        return futs

    # -- public --------------------------------------------------------------------------
    def search(self, queries, db, progress=True, report=None, verbose=None, on_query=None):
        """Scores (np.int32, database order) of each (id, codes) query, plus seconds per query.
        ``on_query(qi, scores)`` is called as soon as a query's scores are complete (hit reporting
        overlaps the device work of the next queries; from the device's thread, one call at a time,
        when several devices take whole queries; after all devices finish when they split the
        database)."""
        db = as_database(db)
        if db.alphabet is not PROTEIN and getattr(db.alphabet, "name", "") != "protein":
            raise InputError(f"sw needs a protein database (got {db.alphabet.name})", getattr(db, "path", None))
        n = len(db)
        lengths = np.asarray(db.lengths)
        workers = self.active_workers(verbose)
        self.prepare(queries, lengths)
        if n and verbose is not None:
            for w in workers:
                self.long_threshold(w, lengths, verbose)
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=max(1, int(db.total_residues) * sum(len(c) for _, c in queries)), unit="cell",
                       unit_scale=True,
                       file=sys.stderr, disable=None, desc="sw", leave=False)
        try:
            results, seconds, self.device_report = search_devices(workers, queries, db, bar, on_query)
        finally:
            if bar is not None:
                bar.close()
        if report is not None:
            total = db.total_residues
            for qi, (qid, codes) in enumerate(queries):
                cells = len(codes) * total
                report(f"sw: {qid}: qlen {len(codes)}, {seconds[qi]:.3f} s, "
                       f"{cells / max(seconds[qi], 1e-12) / 1e9:.2f} GCUPS")
            cells = sum(len(c) for _, c in queries) * total
            tt = sum(seconds)
            report(f"sw: {len(queries)} queries, {n} subjects, {total} residues: "
                   f"{tt:.3f} s, {cells / max(tt, 1e-12) / 1e9:.2f} GCUPS")
            if len(self.device_report) > 1:
                for label, count, what, dcells, dsec in self.device_report:
                    report(f"sw: device {label}: {count} {what}, {dcells / max(dsec, 1e-12) / 1e9:.2f} GCUPS "
                           f"({dsec:.3f} s busy)")
        return results, seconds


_ENGINES: dict = {}


def get_engine(matrix="BLOSUM62", gap_open=11, gap_extend=1, device=None, **overrides) -> SWEngine:
    """A cached engine per (device, scoring, overrides)."""
    # by content: an id() would be reused by a later matrix object once this one is collected,
    # and that search would silently get this engine's scores
    mkey = matrix if isinstance(matrix, str) else (
        type(matrix).__name__, getattr(matrix, "name", None),
        np.ascontiguousarray(getattr(matrix, "scores", matrix), dtype=np.int32).tobytes())
    dkey = tuple(d.int_ptr for d in device) if isinstance(device, (list, tuple)) else str(device)
    key = (dkey, mkey, gap_open, gap_extend, tuple(sorted(overrides.items())))
    eng = _ENGINES.get(key)
    if eng is None:
        eng = _ENGINES[key] = SWEngine(matrix, gap_open, gap_extend, device, **overrides)
    return eng


def sw_scores(query, db, matrix="BLOSUM62", gap_open=11, gap_extend=1, device=None, **overrides) -> np.ndarray:
    """Exact Smith-Waterman scores (np.int32) of ``query`` against every subject, in database order.

    ``query``: residue string (or uint8 codes); ``db``: Database, prepared-database folder or FASTA
    path. Gap of k residues scores -(gap_open + k*gap_extend). ``overrides`` set template
    parameters (WIDTH, WORDS, ROWS, PROFILE, SCHEDULE, WG, SIMD; KERNEL="intertask"|"vector" and the
    vector kernel's VEC, COLS, STRIP; the intra-task kernel's INTRA_TH, INTRA_TW, INTRA_WG) or the
    engine knobs ``batch_residues``, ``groups_per_cu``, ``long_threshold``. ``device`` may list several
    devices (``"0:0,0:1"`` or a list): the database is split between them.
    """
    kind, query = sequence_or_path(query, "query")     # the one API rule (clalign.data.inputs)
    if kind == "path":
        raise InputError("a file name where one sequence was expected (sw_search reads FASTA files)", query)
    codes = _as_codes(query)
    eng = get_engine(matrix, gap_open, gap_extend, device, **overrides)
    res, _ = eng.search([("query", codes)], db, progress=False)
    return res[0]


def top_hits(scores, top):
    """Indices of the ``top`` best scores, score descending, ties in database order."""
    n = len(scores)
    k = min(int(top), n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    idx = np.arange(n)
    if k < n:
        # everything strictly above the k-th score, then ties with it in index order
        kth = np.partition(scores, n - k)[n - k]
        cand = np.flatnonzero(scores >= kth)
    else:
        cand = idx
    o = np.lexsort((cand, -scores[cand].astype(np.int64)))
    return cand[o][:k]


def sw_search(queries, db, matrix="BLOSUM62", gap_open=11, gap_extend=1, top=10, device=None,
              progress=False, report=None, verbose=None, **overrides):
    """Best ``top`` hits per query (list of :class:`QueryResult`).

    ``queries``: a residue string, a list of strings or (id, sequence) pairs, or a FASTA path.
    Hits are sorted by score descending, ties in database order.
    """
    qs = parse_queries(queries)
    db = as_database(db)
    eng = get_engine(matrix, gap_open, gap_extend, device, **overrides)
    scores, seconds = eng.search(qs, db, progress=progress, report=report, verbose=verbose)
    out = []
    lengths = np.asarray(db.lengths)
    for (qid, codes), sc, sec in zip(qs, scores, seconds):
        r = QueryResult(qid, len(codes), seconds=sec)
        r._cells = len(codes) * db.total_residues
        for i in top_hits(sc, top):
            i = int(i)
            r.hits.append(Hit(qid, i, db.ids[i], int(sc[i]), len(codes), int(lengths[i])))
        out.append(r)
    return out
