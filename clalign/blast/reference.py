"""The plain per-subject form of BLASTP's gapped stages: the spec of ``stages_nb``.

``prelim_stage`` / ``prelim_subject`` (``BLAST_GetGappedScore``) and ``traceback_subject``
(``Blast_TracebackFromHSPList``) work on HSP records and the Python interval tree
(:mod:`clalign.blast.itree`), one subject at a time; ``search_query_reference`` is a whole query
searched with them. The engine runs the compiled forms (``engine.search_query``); tests hold the
two equal.
"""
from __future__ import annotations

import numpy as np

from .engine import QuerySetup, Subjects, initial_hsps, setup_query
from .gapped import HSP_MAX_WINDOW, extend_all
from .hsp import HSP, evalue_key, hitlist_key, purge_common_endpoints, score_key
from .itree import IntervalTree
from .options import RESTRICTED_MULT, BlastpOptions
from .traceback import gapped_traceback


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


def search_query_reference(codes: np.ndarray, subjects, opts: BlastpOptions, stats=None):
    """[(oid, [HSP, ...]), ...] in BLAST+'s output order, every stage in its plain form."""
    qs = setup_query(codes, subjects, opts, stats)
    rows = initial_hsps(qs, subjects)
    if len(rows) == 0:
        return []
    prelim = prelim_stage(qs, subjects, rows)
    prelim.sort(key=lambda t: t[0])
    final = []
    for _, oid, hsps in prelim[:opts.prelim_hitlist_size]:
        out = traceback_subject(qs, subjects, oid, hsps)
        if out:
            final.append((hitlist_key(min(h.evalue for h in out), out[0].score, oid), oid, out))
    final.sort(key=lambda t: t[0])
    result = []
    for _, oid, hsps in final[:opts.hitlist_size]:
        hsps = sorted(hsps, key=evalue_key)
        if opts.max_hsps > 0:
            hsps = hsps[:opts.max_hsps]
        result.append((oid, hsps))
    return result
