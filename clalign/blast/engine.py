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
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..data.alphabet import PROTEIN
from ..stats import (SearchStatistics, composition, karlin_cutoff, robinson_frequencies,
                     spouge_cutoff, ungapped_params)
from .gapped import HSP_MAX_WINDOW, extend_all
from .hsp import HSP, evalue_key, hitlist_key, purge_common_endpoints, score_key
from .itree import IntervalTree
from .lookup_query import mask_query, query_lookup, scan_lookup
from .matrix import blast_matrix
from .options import (GAP_TRIGGER_BITS, GAP_XDROP_BITS, GAP_XDROP_FINAL_BITS, RESTRICTED_MULT,
                      RESTRICTED_WORST_EVALUE, UNGAPPED_XDROP_BITS, BlastpOptions)
from .traceback import gapped_traceback
from .ungapped_nb import sort_init_hsps, two_hit_db

LN2 = math.log(2.0)
BLAST_SEQSRC_MINLENGTH = 10


@dataclass
class Subjects:
    """Subject sequences as BLAST+ sees them (trailing ``*`` kept), OID order."""

    residues: np.ndarray  # uint8 NCBIstdaa, concatenated
    offsets: np.ndarray   # int64 (n + 1,)
    ids: list

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
        """From a clalign Database, appending the trailing stops its reader stripped."""
        stops = np.asarray(db.stops, dtype=np.int64)
        if not stops.any():
            return cls(np.asarray(db.residues, dtype=np.uint8), np.asarray(db.offsets, dtype=np.int64),
                       db.ids.tolist())
        lengths = np.diff(np.asarray(db.offsets, dtype=np.int64)) + stops
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        out = np.full(int(offsets[-1]), 25, dtype=np.uint8)  # '*'
        src = np.asarray(db.residues, dtype=np.uint8)
        for i in range(len(lengths)):
            a, b = int(db.offsets[i]), int(db.offsets[i + 1])
            out[offsets[i]:offsets[i] + (b - a)] = src[a:b]
        return cls(out, offsets, db.ids.tolist())


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


class QuerySkipped(Exception):
    """A query BLAST+ skips with a warning (e.g. all X: no ungapped statistics)."""


def search_statistics(subjects: Subjects, opts: BlastpOptions) -> SearchStatistics:
    return SearchStatistics.for_search(opts.matrix, opts.gap_open, opts.gap_extend,
                                       subjects.total_length, len(subjects.ids),
                                       dbsize=opts.dbsize or None, searchsp=opts.searchsp or None)


def setup_query(codes: np.ndarray, subjects: Subjects, opts: BlastpOptions,
                stats: SearchStatistics = None) -> QuerySetup:
    m = blast_matrix(opts.matrix)
    stats = stats or search_statistics(subjects, opts)
    codes, mask = mask_query(codes, opts)
    kbp_u = ungapped_params(m, composition(codes, 28, ambiguous=(_X,)),
                            robinson_frequencies(PROTEIN.letters))
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


def initial_hsps(qs: QuerySetup, subjects: Subjects, first=0, last=None, threads=1) -> np.ndarray:
    """Ungapped HSPs of subjects first..last-1, sorted (subject, then BLAST+'s order); with
    ``threads`` > 1 the subjects are split into chunks of about equal residue counts scanned by
    a thread each (the compiled scan releases the GIL)."""
    last = len(subjects.ids) if last is None else last

    def scan(a, b):
        if qs.opts.compressed or qs.opts.window == 0:
            return scan_lookup(qs, subjects, a, b)
        return two_hit_db(qs.codes, qs.matrix, qs.lookup.starts, qs.lookup.qoffs, subjects.residues,
                          subjects.offsets, a, b, qs.opts.window, qs.opts.word_size,
                          qs.xdrop_ungapped, qs.cutoff_ungapped)

    if threads <= 1 or last - first < 2 * threads:
        return sort_init_hsps(scan(first, last))
    from concurrent.futures import ThreadPoolExecutor

    cuts = np.searchsorted(subjects.offsets[first:last + 1],
                           np.linspace(subjects.offsets[first], subjects.offsets[last], 4 * threads + 1))
    bounds = sorted(set(int(c) + first for c in cuts) | {first, last})
    with ThreadPoolExecutor(max_workers=threads) as pool:
        parts = list(pool.map(lambda ab: scan(*ab), zip(bounds[:-1], bounds[1:])))
    return sort_init_hsps(np.concatenate(parts))


def _extend(qs, subjects, rows, restricted):
    flags = np.full(len(rows), bool(restricted), dtype=np.bool_) if np.isscalar(restricted) \
        else np.asarray(restricted, dtype=np.bool_)
    return extend_all(qs.matrix, qs.codes, subjects.residues, subjects.offsets, rows, flags,
                      qs.opts.gap_open, qs.opts.gap_extend, qs.xdrop_gapped)


def _gapped_pass(qs, slen, rows, res, restricted):
    """Replay ``BLAST_GetGappedScore`` for one subject over precomputed extensions ``res``:
    the interval tree decides which initial HSPs are extended; None = redo unrestricted."""
    kept = []
    tree = IntervalTree(len(qs.codes) + 1, slen + 1)
    r_cut = int(RESTRICTED_MULT * qs.cutoff_gapped)
    for r, x in zip(rows.tolist(), res.tolist()):
        score, q0, s0, length = r[1], r[2], r[3], r[4]
        if tree.contains(HSP(score, q0, q0 + length, s0, s0 + length)):
            continue
        g = x[0]
        if restricted and r_cut <= g < qs.cutoff_gapped:
            return None
        if g >= qs.cutoff_gapped:
            kept.append(HSP(g, x[1], x[2], x[3], x[4], x[5], x[6]))
            tree.add(kept[-1])
    return kept


def prelim_subject(qs: QuerySetup, subjects: Subjects, oid: int, rows: np.ndarray, res=None):
    """Preliminary gapped HSPs of one subject (score order, E-values set), maybe empty;
    ``res``: its rows' extensions under the subject's restricted choice, if computed already."""
    slen = int(subjects.offsets[oid + 1] - subjects.offsets[oid])
    restricted = qs.restricted_ok and int(rows[0, 1]) < int(RESTRICTED_MULT * qs.cutoff_gapped)
    if res is None:
        res = _extend(qs, subjects, rows, restricted)
    kept = _gapped_pass(qs, slen, rows, res, restricted)
    if kept is None:
        kept = _gapped_pass(qs, slen, rows, _extend(qs, subjects, rows, False), False)
    hsps = sorted(purge_common_endpoints(kept), key=score_key)
    return _evalues(qs, hsps, slen)


def _evalues(qs, hsps, slen):
    out = []
    for h in hsps:
        h.evalue = qs.stats.evalue(h.score, len(qs.codes), slen)
        if h.evalue <= qs.opts.evalue:
            out.append(h)
    return out


def _offsets_for_gapped(m, q, s, h):
    """``BlastGetOffsetsForGappedAlignment`` (used when the saved start is (0, 0))."""
    q_len, s_len = h.q_end - h.q_start, h.s_end - h.s_start
    if q_len <= HSP_MAX_WINDOW:
        return h.q_start + q_len // 2, h.s_start + q_len // 2
    score = sum(int(m[q[h.q_start + i], s[h.s_start + i]]) for i in range(HSP_MAX_WINDOW))
    best, best_off = score, h.q_start + HSP_MAX_WINDOW - 1
    for i in range(HSP_MAX_WINDOW, min(q_len, s_len)):
        score += int(m[q[h.q_start + i], s[h.s_start + i]]) - int(
            m[q[h.q_start + i - HSP_MAX_WINDOW], s[h.s_start + i - HSP_MAX_WINDOW]])
        if score > best:
            best, best_off = score, h.q_start + i
    if best > 0:
        return best_off, best_off - h.q_start + h.s_start
    tail = sum(int(m[q[h.q_end - HSP_MAX_WINDOW + i], s[h.s_end - HSP_MAX_WINDOW + i]])
               for i in range(HSP_MAX_WINDOW))
    if tail > 0:
        return h.q_end - HSP_MAX_WINDOW // 2, h.s_end - HSP_MAX_WINDOW // 2
    return None


def traceback_subject(qs: QuerySetup, subjects: Subjects, oid: int, hsps):
    """Final HSPs of one subject (score order, E-values and bit scores set)."""
    base = int(subjects.offsets[oid])
    slen = int(subjects.offsets[oid + 1]) - base
    s = subjects.residues
    sub = s[base:base + slen]
    kept = []
    tree = IntervalTree(len(qs.codes) + 1, slen + 1)
    ext = np.zeros(4, dtype=np.int32)
    for h in hsps:
        if tree.contains(h):
            continue
        q0, s0 = h.q_gapped_start, h.s_gapped_start
        if q0 == 0 and s0 == 0:
            start = _offsets_for_gapped(qs.matrix, qs.codes, sub, h)
            if start is None:
                continue
            q0, s0 = start
        score, ops = gapped_traceback(qs.matrix, qs.codes, s, base, slen, q0, s0, qs.opts.gap_open,
                                      qs.opts.gap_extend, qs.xdrop_final, ext)
        kept.append(HSP(int(score), int(ext[0]), int(ext[1]), int(ext[2]), int(ext[3]), q0, s0,
                        ops=ops))
        tree.add(kept[-1])
    final = []
    tree.reset()
    for h in sorted(purge_common_endpoints(kept), key=score_key):
        if not tree.contains(h):
            final.append(h)
            tree.add(h)
    final = _evalues(qs, final, slen)
    for h in final:
        h.bit_score = qs.stats.bitscore(h.score)
    return final


def prelim_stage(qs: QuerySetup, subjects: Subjects, rows: np.ndarray):
    """[(hitlist key, oid, HSPs)] of every subject with preliminary HSPs. Every initial HSP's
    extension is computed in one compiled call (restricted per subject as BLAST+ chooses); the
    interval-tree replay, purge and E-values follow per subject (subjects with one initial HSP,
    most of them, without a tree)."""
    starts = np.flatnonzero(np.r_[True, np.diff(rows[:, 0]) != 0])
    sizes = np.diff(np.r_[starts, len(rows)])
    r_cut = int(RESTRICTED_MULT * qs.cutoff_gapped)
    restricted = np.repeat(qs.restricted_ok & (rows[starts, 1] < r_cut), sizes)
    res = _extend(qs, subjects, rows, restricted)
    # a restricted score in [0.68 cutoff, cutoff) means "redo exactly" (single-HSP subjects here)
    redo = np.flatnonzero(restricted & (res[:, 0] >= r_cut) & (res[:, 0] < qs.cutoff_gapped)
                          & np.repeat(sizes == 1, sizes))
    if len(redo):
        res[redo] = _extend(qs, subjects, rows[redo], False)
    out = []
    qlen = len(qs.codes)
    for i, (a, n) in enumerate(zip(starts.tolist(), sizes.tolist())):
        oid = int(rows[a, 0])
        if n == 1:
            x = res[a]
            if x[0] < qs.cutoff_gapped:
                continue
            slen = int(subjects.offsets[oid + 1] - subjects.offsets[oid])
            e = qs.stats.evalue(int(x[0]), qlen, slen)
            if e <= qs.opts.evalue:
                h = HSP(int(x[0]), int(x[1]), int(x[2]), int(x[3]), int(x[4]), int(x[5]), int(x[6]),
                        evalue=e)
                out.append((hitlist_key(e, h.score, oid), oid, [h]))
            continue
        hsps = prelim_subject(qs, subjects, oid, rows[a:a + n], res[a:a + n])
        if hsps:
            out.append((hitlist_key(min(h.evalue for h in hsps), hsps[0].score, oid), oid, hsps))
    return out


def search_query(codes: np.ndarray, subjects: Subjects, opts: BlastpOptions, stats=None,
                 device=None, threads=1, times=None):
    """[(oid, [HSP, ...]), ...] in BLAST+'s output order for one query; ``device``: a
    ``device.DeviceUngapped`` for phases 2-4 (else the compiled CPU path on ``threads``);
    ``times``: a dict that collects seconds per stage."""
    t0 = time.perf_counter()
    qs = setup_query(codes, subjects, opts, stats)
    t1 = time.perf_counter()
    if device is not None:
        rows = device.initial_hsps(qs)
    else:
        rows = initial_hsps(qs, subjects, threads=threads)
    t2 = time.perf_counter()
    if len(rows) == 0:
        return []
    prelim = prelim_stage(qs, subjects, rows)
    prelim.sort(key=lambda t: t[0])
    t3 = time.perf_counter()
    final = []
    for _, oid, hsps in prelim[:opts.prelim_hitlist_size]:
        out = traceback_subject(qs, subjects, oid, hsps)
        if out:
            final.append((hitlist_key(min(h.evalue for h in out), out[0].score, oid), oid, out))
    final.sort(key=lambda t: t[0])
    if times is not None:
        for k, v in (("setup", t1 - t0), ("ungapped", t2 - t1), ("gapped", t3 - t2),
                     ("traceback", time.perf_counter() - t3)):
            times[k] = times.get(k, 0.0) + v
    result = []
    for _, oid, hsps in final[:opts.hitlist_size]:
        hsps = sorted(hsps, key=evalue_key)
        if opts.max_hsps > 0:
            hsps = hsps[:opts.max_hsps]
        result.append((oid, hsps))
    return result
