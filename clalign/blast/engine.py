"""BLASTP search of one query against a set of subjects, stage by stage as BLAST+ 2.12 runs it.

Setup (``BLAST_GapAlignSetUp`` and friends): per-query ungapped Karlin block (ungapped X-drop
``ceil(7 ln2 / lambda)``, gap trigger ``(22 ln2 + ln K) / lambda``), gapped block and Gumbel
parameters for the matrix and gap costs, gapped cutoff ``BLAST_SpougeEtoS(evalue, ..., query
length, 10)`` (10: BLAST+'s stand-in for the shortest subject length) or, with ``-searchsp``
where BLAST+ drops Spouge's correction, ``BLAST_Cutoffs`` on the effective search space;
ungapped cutoff ``min(gap trigger, gapped cutoff)``; gapped X-drops ``15 ln2 / lambda_gapped``
(preliminary) and ``25 ln2 / lambda_gapped`` (final).

Per subject, preliminary stage (``BLAST_GetGappedScore``): initial HSPs best first; each not
contained in a kept gapped HSP is extended from the centre of its best 11-residue window, with the
restricted DP when the subject's best ungapped score is below 0.68 x cutoff (all redone exactly
when a restricted score falls between 0.68 x cutoff and cutoff); then common-endpoint purge, score
order, Spouge E-values, E-value cut. The best ``prelim_hitlist_size`` subjects (best E-value,
best score, OID) go to the traceback stage (``Blast_TracebackFromHSPList``) with the final
X-drop, then purge, containment, E-values and the final hit list.

Both gapped stages run compiled (``stages_nb``, no GIL) on whole runs of subjects, cut into
chunks for a thread pool shared by the concurrent queries; E-values, cuts and the hit-list order
are vectorised here. The plain per-subject forms, the spec, are in ``reference``.
"""
from __future__ import annotations

import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..data.alphabet import PROTEIN
from ..runtime.jit import numpy_forms
from ..runtime.stageproc import StageError
from ..stats import (KarlinParams, SearchStatistics, composition, karlin_cutoff,
                     robinson_frequencies, spouge_cutoff, ungapped_params)
from ..stats.karlin import ROBINSON
from ..stats.karlin_nb import std_frequencies, ungapped_karlin
from .hsp import HSP, evalue_key, evalue_rank
from .lookup_query import mask_query, query_lookup, scan_lookup
from .matrix import blast_matrix
from .options import (GAP_TRIGGER_BITS, GAP_XDROP_BITS, GAP_XDROP_FINAL_BITS, RESTRICTED_MULT,
                      RESTRICTED_WORST_EVALUE, UNGAPPED_XDROP_BITS, BlastpOptions)
from .device_gapped_host import device_extensions, replay_pre
from .stages_nb import NO_PRE, prelim_chunk, traceback_chunk
from .ungapped_nb import sort_init_hsps, two_hit_db

LN2 = math.log(2.0)
BLAST_SEQSRC_MINLENGTH = 10


def _frozen(a, dtype) -> np.ndarray:
    """``a`` as a contiguous read-only array of ``dtype``: the one array type the compiled
    stages are specialised for."""
    out = np.ascontiguousarray(a, dtype=dtype).view()
    out.flags.writeable = False
    return out


@dataclass
class Subjects:
    """Subject sequences as BLAST+ sees them (trailing ``*`` kept), OID order."""

    residues: np.ndarray  # uint8 NCBIstdaa, concatenated
    offsets: np.ndarray   # int64 (n + 1,)
    ids: object           # a sequence of ids (a list, or the database's lazily decoded table)

    def __post_init__(self):
        # one array type for the compiled stages whatever the reader made (a writeable array, a
        # read-only buffer or memory map): numba compiles a specialisation per type, and a second
        # one met mid-search blocks every worker for seconds (seen on the H100: 8 s per stage)
        self.residues = _frozen(self.residues, np.uint8)
        self.offsets = _frozen(self.offsets, np.int64)

    @property
    def total_length(self) -> int:
        return int(self.offsets[-1])

    @property
    def min_length(self) -> int:
        """What BLAST+ takes as the shortest subject: CSeqDB never fills the volumes' minimum,
        so a database search always uses BLAST_SEQSRC_MINLENGTH (10)."""
        return BLAST_SEQSRC_MINLENGTH

    @classmethod
    def from_database(cls, db) -> "Subjects":
        """From a clalign Database, appending the trailing stops its reader stripped; the ids stay
        the database's table (BLAST databases decode a defline only when a hit prints it)."""
        stops = np.asarray(db.stops, dtype=np.int64)
        if not stops.any():
            return cls(np.asarray(db.residues, dtype=np.uint8), np.asarray(db.offsets, dtype=np.int64),
                       db.ids)
        lengths = np.diff(np.asarray(db.offsets, dtype=np.int64)) + stops
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        out = np.full(int(offsets[-1]), 25, dtype=np.uint8)  # '*'
        old = np.asarray(db.offsets, dtype=np.int64)
        src = np.asarray(db.residues, dtype=np.uint8)[:old[-1]]
        out[np.arange(len(src)) + np.repeat(offsets[:-1] - old[:-1], np.diff(old))] = src
        return cls(out, offsets, db.ids)


@dataclass
class QuerySetup:
    codes: np.ndarray
    matrix: np.ndarray
    lookup: object
    opts: BlastpOptions
    stats: SearchStatistics
    xdrop_ungapped: int
    cutoff_ungapped: int
    cutoff_gapped: int
    xdrop_gapped: int
    xdrop_final: int
    restricted_ok: bool


_X = PROTEIN.letters.index("X")


class PendingSubjects:
    """:class:`Subjects` whose residues are still being read: the offsets are known (a BLAST
    database's index gives them), ``residues`` and ``ids`` wait for ``future`` (a Future of the
    Subjects). Query set-ups and device launches, which need only the lengths, start meanwhile."""

    min_length = BLAST_SEQSRC_MINLENGTH

    def __init__(self, offsets: np.ndarray, future):
        self.offsets, self.future = _frozen(offsets, np.int64), future

    @property
    def total_length(self) -> int:
        return int(self.offsets[-1])

    @property
    def residues(self) -> np.ndarray:
        return self.future.result().residues

    @property
    def ids(self):
        return self.future.result().ids


class QuerySkipped(Exception):
    """A query BLAST+ skips with a warning (e.g. all X: no ungapped statistics)."""


def search_statistics(subjects: Subjects, opts: BlastpOptions) -> SearchStatistics:
    return SearchStatistics.for_search(opts.matrix, opts.gap_open, opts.gap_extend,
                                       subjects.total_length, len(subjects.offsets) - 1,
                                       dbsize=opts.dbsize or None, searchsp=opts.searchsp or None)


_STD = []


def _std_frequencies():
    """BLAST's background distribution per NCBIstdaa code (``Blast_ResFreqStdComp``), once."""
    if not _STD:
        _STD.append(std_frequencies(np.array([ROBINSON.get(ch, 0.0) for ch in PROTEIN.letters])))
    return _STD[0]


def ungapped_karlin_query(codes: np.ndarray, matrix: np.ndarray):
    """The query's ungapped Karlin block (``Blast_ScoreBlkKbpUngappedCalc``: its composition, X
    not counted, against the standard background), or None where BLAST+ has none; one compiled
    call (``stats.karlin_nb``), tested against ``stats.ungapped_params``."""
    if numpy_forms(ungapped_karlin):
        # numba still starting (a command's first queries) or kept away: the numpy form, a few ms, whose
        # lambda, K and H agree to 1e-12 and whose derived integers are equal (tests)
        return ungapped_params(matrix, composition(codes, 28, ambiguous=(_X,)),
                               robinson_frequencies(PROTEIN.letters))
    counts = np.bincount(codes, minlength=28)[:28].astype(np.float64)
    counts[_X] = 0.0
    lam, K, H = ungapped_karlin(matrix, counts, _std_frequencies())
    return KarlinParams(lam, K, H) if lam >= 0.0 else None


def setup_query(codes: np.ndarray, subjects: Subjects, opts: BlastpOptions,
                stats: SearchStatistics = None) -> QuerySetup:
    """Everything one query needs before its search (the module's docstring): the searched
    codes (SEG), the lookup table, the ungapped Karlin block and the cutoffs and X-drops. Nearly
    all of it runs in compiled calls that release the GIL (queries are set up on the workers
    beside the device's drivers)."""
    m = blast_matrix(opts.matrix)
    stats = stats or search_statistics(subjects, opts)
    codes, mask = mask_query(codes, opts)
    kbp_u = ungapped_karlin_query(np.asarray(codes, dtype=np.uint8), m)
    if kbp_u is None:
        raise QuerySkipped("could not calculate ungapped Karlin-Altschul parameters (no hits "
                           "reported for it, as BLAST+ does)")
    kbp_g = stats.karlin
    qlen = len(codes)
    if stats.spouge:
        cutoff_g = spouge_cutoff(opts.evalue, kbp_g, stats.params.gumbel, qlen, subjects.min_length,
                                 stats.db_length)
    else:
        cutoff_g = max(1, karlin_cutoff(opts.evalue, kbp_g, stats.effective_search_space(qlen)))
    trigger = int((GAP_TRIGGER_BITS * LN2 + kbp_u.logK) / kbp_u.lam)
    xdrop_g = int(GAP_XDROP_BITS * LN2 / kbp_g.lam)
    return QuerySetup(
        codes=np.asarray(codes, dtype=np.uint8), matrix=m,
        lookup=query_lookup(codes, m, opts, mask), opts=opts, stats=stats,
        xdrop_ungapped=int(math.ceil(UNGAPPED_XDROP_BITS * LN2 / kbp_u.lam)),
        cutoff_ungapped=min(trigger, cutoff_g), cutoff_gapped=cutoff_g,
        xdrop_gapped=xdrop_g,
        xdrop_final=int(max(GAP_XDROP_FINAL_BITS * LN2 / kbp_g.lam, xdrop_g)),
        restricted_ok=opts.evalue <= RESTRICTED_WORST_EVALUE)


def initial_hsps(qs: QuerySetup, subjects: Subjects, first=0, last=None, threads=1,
                 pool=None, times=None) -> np.ndarray:
    """Ungapped HSPs of subjects first..last-1, sorted (subject, then BLAST+'s order); with
    ``threads`` > 1 the subjects are split into chunks of about equal residue counts scanned on
    ``pool`` (or a pool of ``threads`` made here; the compiled scan releases the GIL)."""
    last = len(subjects.offsets) - 1 if last is None else last

    def scan(ab):
        if qs.opts.compressed or qs.opts.window == 0:
            return scan_lookup(qs, subjects, ab[0], ab[1])
        return two_hit_db(qs.codes, qs.matrix, qs.lookup.starts, qs.lookup.qoffs, subjects.residues,
                          subjects.offsets, ab[0], ab[1], qs.opts.window, qs.opts.word_size,
                          qs.xdrop_ungapped, qs.cutoff_ungapped)

    if threads <= 1 or last - first < 2 * threads:
        return sort_init_hsps(_map(scan, [(first, last)], None, times, "scan_cpu")[0])
    cuts = np.searchsorted(subjects.offsets[first:last + 1],
                           np.linspace(subjects.offsets[first], subjects.offsets[last], 4 * threads + 1))
    bounds = sorted(set(int(c) + first for c in cuts) | {first, last})
    items = list(zip(bounds[:-1], bounds[1:]))
    if pool is not None:
        return sort_init_hsps(np.concatenate(_map(scan, items, pool, times, "scan_cpu")))
    with ThreadPoolExecutor(max_workers=threads) as own:
        return sort_init_hsps(np.concatenate(_map(scan, items, own, times, "scan_cpu")))


ROWS_PER_CHUNK = 4096   # initial HSPs per preliminary-stage task (a few ms of extensions)


def _chunks(starts, n_rows, parts):
    """Cut points (indices into ``starts``, subject-group starts) for ~``parts`` equal row runs."""
    if parts <= 1 or len(starts) < 2 * parts:
        return [0, len(starts)]
    cuts = np.searchsorted(starts, np.linspace(0, n_rows, parts + 1)[1:-1])
    return sorted(set(cuts.tolist()) | {0, len(starts)})


_TIMES_LOCK = threading.Lock()


def _add_times(times, pairs):
    if times is not None:
        with _TIMES_LOCK:
            for k, v in pairs:
                times[k] = times.get(k, 0.0) + v


def _event(times, key, t0, t1):
    """With a list under ``times["_events"]``: record (key, thread, start, end) perf_counter
    seconds, the timeline ``tools/bench_blastp --trace`` writes out."""
    if times is not None and "_events" in times:
        times["_events"].append((key, threading.get_ident(), t0, t1))


def _map(fn, items, pool, times=None, key=None):
    """[fn(x) for x in items], on ``pool`` when there are several; with ``times``, the CPU
    seconds of the calls' threads are added under ``key`` (waits excluded)."""
    if times is not None:
        work = fn

        def fn(x):
            t, w = time.thread_time(), time.perf_counter()
            r = work(x)
            _add_times(times, ((key, time.thread_time() - t),))
            _event(times, key, w, time.perf_counter())
            return r
    return list(pool.map(fn, items)) if pool is not None and len(items) > 1 else [fn(x) for x in items]


def _evalue_array(qs: QuerySetup, scores, slens) -> np.ndarray:
    """E-values as ``SearchStatistics.evalue`` gives them (the array form is bit-equal for
    Spouge's; the rarely used plain Karlin-Altschul form stays scalar)."""
    qlen = len(qs.codes)
    if qs.stats.spouge:
        return qs.stats.evalues(scores, qlen, slens)
    return np.array([qs.stats.evalue(int(s), qlen, int(n)) for s, n in zip(scores, slens)],
                    dtype=np.float64)


def _best_per_subject(qs, subjects, P):
    """Of rows P (subject groups, each in score order): which have E-value <= -evalue, those
    rows, their E-values, group starts and the groups' order by ``hitlist_key`` (best E-value,
    best score, then the higher OID)."""
    oids = P[:, 0]
    slens = subjects.offsets[oids + 1] - subjects.offsets[oids]
    e = _evalue_array(qs, P[:, 1], slens)
    keep = e <= qs.opts.evalue
    P, e = P[keep], e[keep]
    if len(P) == 0:
        return keep, P, e, np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, P[1:, 0] != P[:-1, 0]])
    best_e = np.minimum.reduceat(e, starts)
    order = np.lexsort((-P[starts, 0], -P[starts, 1], evalue_rank(best_e)))
    return keep, P, e, starts, order


def prelim_hits(qs: QuerySetup, subjects: Subjects, rows: np.ndarray, pool=None, parts=1,
                times=None, pre=None):
    """Preliminary stage of one query (``stages_nb.prelim_chunk`` over ``parts`` subject chunks
    on ``pool``): (rows of the kept subjects in hit-list order, cut to ``prelim_hitlist_size``,
    each subject's HSPs in score order; their group starts, with the end appended). ``pre``:
    the device's extensions of ``rows`` (``device_gapped``), replayed instead of computed (same
    rows)."""
    starts = np.flatnonzero(np.r_[True, rows[1:, 0] != rows[:-1, 0]])
    cuts = _chunks(starts, len(rows), parts)
    bounds = [(int(starts[a]), int(starts[b]) if b < len(starts) else len(rows))
              for a, b in zip(cuts[:-1], cuts[1:])]
    rows = np.ascontiguousarray(rows, dtype=np.int64)   # one compiled signature for every caller
    args = (qs.matrix, qs.codes, subjects.residues, subjects.offsets, rows)
    tail = (qs.cutoff_gapped, int(RESTRICTED_MULT * qs.cutoff_gapped), bool(qs.restricted_ok),
            qs.opts.gap_open, qs.opts.gap_extend, qs.xdrop_gapped)
    if pre is None:
        parts_out = _map(lambda ab: prelim_chunk(*args, ab[0], ab[1], *tail, NO_PRE,
                                                 np.zeros(1, dtype=np.int64)),
                         bounds, pool, times, "gapped_cpu")
    else:
        parts_out = _map(lambda ab: replay_pre(args, ab, tail, pre, times), bounds, pool, times,
                         "gapped_cpu")
    P = np.concatenate(parts_out) if len(parts_out) > 1 else parts_out[0]
    _, P, _, gstarts, order = _best_per_subject(qs, subjects, P)
    order = order[:qs.opts.prelim_hitlist_size]
    gends = np.r_[gstarts[1:], len(P)]
    sizes = gends[order] - gstarts[order]
    idx = np.repeat(gstarts[order] - np.r_[0, np.cumsum(sizes)[:-1]], sizes) + np.arange(sizes.sum())
    return P[idx], np.r_[0, np.cumsum(sizes)].astype(np.int64)


def traceback_hits(qs: QuerySetup, subjects: Subjects, P, pstarts, pool=None, parts=1,
                   times=None):
    """Traceback stage of one query: [(oid, [HSP, ...])] in BLAST+'s output order, cut to
    ``hitlist_size``, each subject's HSPs in E-value order, at most ``max_hsps``."""
    cuts = _chunks(pstarts[:-1], len(P), parts)
    args = (qs.matrix, qs.codes, subjects.residues, subjects.offsets)
    tail = (qs.opts.gap_open, qs.opts.gap_extend, qs.xdrop_final)

    def run(ab):
        a, b = ab
        sub = pstarts[a:b + 1]
        return traceback_chunk(*args, P[sub[0]:sub[-1]], sub - sub[0], *tail)

    outs = _map(run, list(zip(cuts[:-1], cuts[1:])), pool, times, "traceback_cpu")
    T = np.concatenate([o[0] for o in outs])
    ops, ops_off, base = [], [], 0
    for _, o, off in outs:
        ops.append(o)
        ops_off.append(off[:-1] + base)
        base += len(o)
    ops = np.concatenate(ops)
    ops_off = np.r_[np.concatenate(ops_off), base].astype(np.int64)
    keep, T, e, starts, order = _best_per_subject(qs, subjects, T)
    if len(T) == 0:
        return []
    index = np.flatnonzero(keep)
    order = order[:qs.opts.hitlist_size]
    ends = np.r_[starts[1:], len(T)]
    bits = qs.stats.bitscore(T[:, 1])
    result = []
    for g in order.tolist():
        hsps = []
        for k in range(int(starts[g]), int(ends[g])):
            r = T[k].tolist()
            j = int(index[k])
            hsps.append(HSP(r[1], r[2], r[3], r[4], r[5], r[6], r[7], evalue=float(e[k]),
                            bit_score=float(bits[k]), ops=ops[ops_off[j]:ops_off[j + 1]]))
        hsps.sort(key=evalue_key)
        if qs.opts.max_hsps > 0:
            hsps = hsps[:qs.opts.max_hsps]
        result.append((int(T[starts[g], 0]), hsps))
    return result


def search_query(codes: np.ndarray, subjects: Subjects, opts: BlastpOptions, stats=None,
                 device=None, threads=1, times=None, pool=None, qs=None, stage=None, shown=None):
    """[(oid, [HSP, ...]), ...] in BLAST+'s output order for one query; ``device``: a
    ``device.DeviceUngapped`` for phases 2-4 (else the compiled CPU path); with ``threads`` > 1
    the CPU phases are split over subject chunks run on ``pool`` (a thread pool shared by
    concurrent queries; one of ``threads`` workers is made here when None); ``times``: a dict
    that collects seconds per stage; ``qs``: the query's ``setup_query`` when made ahead (a
    Future of it too: the wait counts as setup); ``stage``: a ``stage_remote.Remote`` that runs
    the gapped stages in the stage process (``shown``: the query as printed, for the output's
    counts), else (or when that process is gone) they run here."""
    own = None
    if threads > 1 and pool is None:
        own = pool = ThreadPoolExecutor(max_workers=threads)
    try:
        return _search(codes, subjects, opts, stats, device, threads, times, pool, qs, stage,
                       shown)
    finally:
        if own is not None:
            own.shutdown()



def _search(codes, subjects, opts, stats, device, threads, times, pool, qs=None, stage=None,
            shown=None):
    t0 = time.perf_counter()
    if qs is None:
        qs = setup_query(codes, subjects, opts, stats)
    elif hasattr(qs, "result"):
        qs = qs.result()
    t1 = time.perf_counter()
    pre = None
    if hasattr(device, "result"):     # a device still being set up in the background
        device = device.result()
    if device is not None:
        rows = device.initial_hsps(qs)
        pre = device_extensions(device, qs, rows, times)
    else:
        rows = initial_hsps(qs, subjects, threads=threads, pool=pool, times=times)
    t2 = t3 = time.perf_counter()
    result = []
    if len(rows):
        parts = min(4 * threads, 1 + len(rows) // ROWS_PER_CHUNK) if pool is not None else 1
        try:
            if stage is None:
                raise StageError("no stage process")
            result, prelim_wall = stage.gapped(qs, rows, pre, parts, threads if pool else 1, times,
                                               codes if shown is None else shown)
            t3 = t2 + prelim_wall
        except StageError:
            P, pstarts = prelim_hits(qs, subjects, rows, pool, parts, times, pre)
            t3 = time.perf_counter()
            if len(P):
                result = traceback_hits(qs, subjects, P, pstarts, pool, threads if pool else 1,
                                        times)
    t4 = time.perf_counter()
    _add_times(times, (("setup", t1 - t0), ("ungapped", t2 - t1), ("gapped", t3 - t2),
                       ("traceback", t4 - t3)))
    for key, a, b in (("q_setup", t0, t1), ("q_ungapped", t1, t2), ("q_gapped", t2, t3),
                      ("q_traceback", t3, t4)):
        _event(times, key, a, b)
    return result
