"""BLASTN per-subject stages as BLAST+ 2.12 runs them (``blast_engine.c``, ``blast_gapalign.c``,
``blast_traceback.c``, ``blast_hits.c``).

Preliminary stage of one subject (all queries of the batch at once):

1. word finder (:mod:`nucl_scan`, :mod:`nucl_words`): initial hits sorted by score;
2. ``BLAST_GetGappedScore``: each initial hit whose ungapped box is not contained in a kept
   gapped HSP of its strand (:class:`~clalign.blast.nucl_hsp.NuclTree`) is extended (greedy
   from the middle of the ungapped hit for megablast; dynamic programming for blastn) on the
   2-bit subject, kept when it reaches the context's gapped cutoff;
3. common-endpoint purge, score order, E-values, E-value cut.

Traceback stage of one (query, subject) list (``Blast_TracebackFromHSPList``): HSPs best first,
each not contained in an already traced one is realigned from its gapped start (moved by
``BlastGetStartForGappedAlignmentNucl``) on the subject with its ambiguity codes restored, with
the final X-drop; then the common-endpoint purge that cuts instead of deleting, re-evaluation
with ambiguities (``Blast_HSPReevaluateWithAmbiguitiesGapped``: the best-scoring stretch of the
edit script, ends stretched over exact matches), ``-perc_identity``, the purging purge, score
order, containment, E-values and the E-value cut.
"""
from __future__ import annotations

import time

import numpy as np

from ..stats.nucl import nucl_evalue_bits
from .nucl_hsp import (DEL, SUB, NHSP, NuclTree, merge_subject_chunk_rows, merge_subject_chunks,
                       purge_common_endpoints, score_order)
from .nucl_scan import scan_subject
from .nucl_words import EXACT_WORD_BELOW, EXTENDERS, word_finder

MAX_DBSEQ_LEN = 5000000          # subjects are searched in chunks of this many bases
DBSEQ_CHUNK_OVERLAP = 100



def _gapped_module():
    from . import nucl_gapped_stage
    return nucl_gapped_stage


def word_hits(flat, batch, cq, extender, s_packed, s_len, cutoff, xdrop, reduced, matrix,
              score_table, diag, words=None) -> np.ndarray:
    """Saved ungapped hits of one subject in processing order, rows (q_off, s_off, q_start,
    s_start, length, score, context): the scan (:func:`nucl_scan.scan_subject`, the unit a device
    kernel replaces) in buffer-sized pieces, each handed to the compiled word finder.
    ``words``: (hq, hs) word starts already scanned and mini-extended (the device's,
    :mod:`nucl_device`), in scan order; the word finder then takes them as direct hits."""
    f = flat
    rows = np.zeros((64, 7), dtype=np.int64)
    total = 0
    if f is None or s_len < f.width:
        diag.exit_subject(s_len)
        return rows[:0]
    cap = max(1 << 14, f.max_cell) if words is None else 0
    hq = np.empty(cap, dtype=np.int64)
    hs = np.empty(cap, dtype=np.int64)
    s = np.asarray(s_packed, dtype=np.uint8)
    if s.size * 4 < s_len + 4:   # BLAST+ may read a byte past the end; give it one
        s = np.concatenate([s, np.zeros(2, dtype=np.uint8)])
    s = subject_array(s)
    ext = EXTENDERS[extender]
    off = 0
    if words is not None:
        hq, hs = words
        ext = EXTENDERS["direct"]
    while off <= s_len - f.width:
        if words is None:
            n, off = scan_subject(f.cell_start, f.q_offs, f.width, f.scan_step, s, s_len, off, hq, hs)
        else:
            n, off = len(hq), s_len
        first = 0
        while True:
            got, resume = word_finder(
                hq, hs, first, n, ext, batch.seq, cq, s, s_len, f.cell_start, f.q_offs, f.width,
                f.word_size, batch.offsets, batch.lengths, cutoff, xdrop, reduced,
                f.word_size < EXACT_WORD_BELOW, matrix, score_table, diag.hash, diag.level, diag.length,
                int(diag.offset[0]), diag.backbone, diag.c_diag, diag.c_level, diag.c_next,
                diag.occ, rows[total:])
            total += got
            if resume < 0:
                break
            if total + 2 >= len(rows):
                rows = np.concatenate([rows, np.zeros_like(rows)])
            if diag.hash and diag.occ[0] + 2 >= diag.c_diag.size:
                diag.grow()
            first = resume
    diag.exit_subject(s_len)
    return rows[:total]


def initial_hits(st, diag, s_packed, s_len: int, words=None) -> np.ndarray:
    """:func:`word_hits` of one subject sorted as ``Blast_InitHitListSortByScore`` (score desc,
    s_start, length desc, q_start); ``diag``: the search's :class:`~nucl_words.DiagState`.
    ``words`` may also be the device's saved hits of this piece, already sorted
    (:mod:`nucl_device_ungapped`; an int64 array of those rows): returned as they are."""
    if isinstance(words, np.ndarray):
        return words
    rows = word_hits(st.flat, st.batch, st.compressed_query, st.extender, s_packed, s_len,
                     st.cutoff_ungapped, st.xdrop_ungapped, st.reduced_cutoff, st.matrix,
                     st.score_table, diag, words)
    order = np.lexsort((-rows[:, 4], rows[:, 2], -rows[:, 4], rows[:, 3], -rows[:, 5]))
    return rows[order]


def prelim_chunk_ref(st, rows, s_packed, s_len: int):
    """The plain form of the preliminary stage of one subject piece (the spec of
    :func:`nucl_stages_nb.prelim_hsps`): [NHSP] purged and in score order from the piece's
    sorted initial hits ``rows``."""
    g = _gapped_module()
    b = st.batch
    tree = NuclTree(len(b.seq), s_len, st.strand_off, st.opts.min_diag_separation)
    kept = []
    for q_off, s_off, uq, us, ul, us_score, c in rows.tolist():
        a = int(b.offsets[c])
        tmp = NHSP(c, us_score, uq - a, uq - a + ul, us, us + ul)
        if tree.contains_hsp(tmp):
            continue
        r = g.prelim_extend(st, c, s_packed, s_len, q_off - a, s_off, uq - a, us, ul, us_score)
        if r[0] >= st.cutoff_gapped[c]:
            h = NHSP(c, r[0], r[1], r[2], r[3], r[4], r[5], r[6])
            kept.append(h)
            tree.add_hsp(h)
    kept, _ = purge_common_endpoints(kept, purge=True)
    kept.sort(key=score_order)
    return kept


def _prelim_chunk_rows(st, diag, s_packed, s_len: int, times=None, words=None) -> np.ndarray:
    """Preliminary gapped HSPs of one subject (chunk), purged and in score order (compiled:
    :func:`nucl_stages_nb.prelim_hsps`): int64 rows (score, q_start, q_end, s_start, s_end,
    context, q_gstart, s_gstart), query positions relative to the context."""
    from .nucl_stages_nb import prelim_hsps

    t0 = time.perf_counter()
    rows = initial_hits(st, diag, s_packed, s_len, words)
    if times is not None:
        times["words"] = times.get("words", 0.0) + time.perf_counter() - t0
    if not len(rows):
        return np.zeros((0, 8), dtype=np.int64)
    return prelim_hsps(st, rows, s_packed, s_len)


def _prelim_chunk(st, diag, s_packed, s_len: int, times=None, words=None):
    """:func:`_prelim_chunk_rows` as [NHSP]."""
    return hsps_of_rows(_prelim_chunk_rows(st, diag, s_packed, s_len, times, words))


def hsps_of_rows(rows):
    """[NHSP] of preliminary rows (:func:`_prelim_chunk_rows`' columns)."""
    return [NHSP(c, sc, qs, qe, ss, se, qg, sg) for sc, qs, qe, ss, se, c, qg, sg in rows.tolist()]


def rows_of_hsps(hsps) -> np.ndarray:
    """The rows of [NHSP] (:func:`hsps_of_rows` reversed)."""
    return np.array([(h.score, h.q_start, h.q_end, h.s_start, h.s_end, h.context, h.q_gstart,
                      h.s_gstart) for h in hsps], dtype=np.int64).reshape(-1, 8)


def subject_chunks(s_len: int):
    """``s_GetNextSubjectChunk`` without subject masks: (offset, length) of the pieces BLAST+
    searches a subject in (5,000,000 bases, each next one starting 100 bases before the end
    of the previous; offsets stay multiples of 4)."""
    out, nxt = [], 0
    while nxt < s_len:
        off = nxt - nxt % 4
        if off + MAX_DBSEQ_LEN < s_len:
            out.append((off, MAX_DBSEQ_LEN))
            nxt = off + MAX_DBSEQ_LEN - DBSEQ_CHUNK_OVERLAP
        else:
            out.append((off, s_len - off))
            nxt = s_len
    return out


def prelim_piece_rows(st, diag, s_packed, off: int, n: int, times=None, words=None) -> np.ndarray:
    """Preliminary HSPs of the piece ``(off, n)`` of one subject (:func:`subject_chunks`) as rows
    (:func:`_prelim_chunk_rows`), subject offsets shifted to the whole subject. Pieces are
    independent (each thread keeps its own ``diag``: stale diagonals never block a new subject
    or piece), so they may run concurrently. ``words``: the piece's word starts from the device
    (:meth:`nucl_device.NuclDeviceWords.pairs`), else the CPU scans."""
    rows = _prelim_chunk_rows(st, diag, s_packed[off // 4:(off + n + 3) // 4], n, times, words)
    rows[:, 3] += off
    rows[:, 4] += off
    rows[:, 7] += off
    return rows


def prelim_piece(st, diag, s_packed, off: int, n: int, times=None, words=None):
    """:func:`prelim_piece_rows` as [NHSP]."""
    return hsps_of_rows(prelim_piece_rows(st, diag, s_packed, off, n, times, words))


def prelim_combine(st, pieces):
    """[NHSP] of one subject with E-values from its pieces' HSP lists (in subject order), merged
    as ``Blast_HSPListsMerge`` does, cut at ``-evalue``."""
    combined = None
    for off, hsps in pieces:
        combined = merge_subject_chunks(combined, hsps, off, DBSEQ_CHUNK_OVERLAP)
    if not combined:
        return []
    e, bits = st.evalues_bits([h.score for h in combined], [h.context for h in combined])
    out = []
    for h, ev, bs in zip(combined, e.tolist(), bits.tolist()):
        h.evalue, h.bit_score = ev, bs
        if ev <= st.opts.evalue:
            out.append(h)
    return out


def prelim_combine_rows(st, pieces):
    """:func:`prelim_combine` of pieces given as rows (:func:`prelim_piece_rows`): (rows, their
    E-values, bit scores) of the HSPs kept, in the same order. One piece (a subject up to 5 Mb) needs no
    merge; several go through ``merge_subject_chunk_rows`` (``merge_subject_chunks`` on the rows)."""
    if len(pieces) == 1:
        rows = pieces[0][1]
    else:
        combined = None
        for off, r in pieces:
            combined = merge_subject_chunk_rows(combined, r, off, DBSEQ_CHUNK_OVERLAP)
        rows = combined if combined is not None else np.zeros((0, 8), dtype=np.int64)
    e, bits = st.evalues_bits(rows[:, 0], rows[:, 5])
    keep = e <= st.opts.evalue
    return rows[keep], e[keep], bits[keep]


def subject_array(s_packed) -> np.ndarray:
    """A subject's packed bytes as one array type for the compiled stages (read-only, C order,
    uint8), whatever the reader gave (a writeable array or a read-only memory map): numba
    compiles one specialisation per type, so a second type met mid-run compiles again."""
    s = np.ascontiguousarray(s_packed, dtype=np.uint8).view(np.ndarray)
    if s.flags.writeable:
        s = s.view()
        s.flags.writeable = False
    return s


def prelim_subject(st, diag, s_packed, s_len: int, times=None, words=None):
    """Preliminary HSPs of one subject, [NHSP] with E-values, all queries of the batch; a
    subject longer than 5,000,000 bases is searched chunk by chunk and the chunks' HSP lists
    merged as ``Blast_HSPListsMerge`` does. ``words``: per chunk, the device's word starts
    (:meth:`nucl_device.NuclDeviceWords.pairs`), else the CPU scans."""
    s_packed = subject_array(s_packed)
    return prelim_combine(st, [(off, prelim_piece(st, diag, s_packed, off, n, times,
                                                  None if words is None else words[k]))
                               for k, (off, n) in enumerate(subject_chunks(s_len))])


def prelim_subject_rows(st, diag, s_packed, s_len: int, times=None, words=None):
    """:func:`prelim_subject` as :func:`prelim_combine_rows` gives it: (rows, E-values, bits)."""
    s_packed = subject_array(s_packed)
    return prelim_combine_rows(st, [(off, prelim_piece_rows(st, diag, s_packed, off, n, times,
                                                            None if words is None else words[k]))
                                    for k, (off, n) in enumerate(subject_chunks(s_len))])


def identities(h: NHSP, q, s):
    """(identical pairs, alignment length) of an HSP's edit script (codes compared as they are)."""
    qi, si, ident, length = h.q_start, h.s_start, 0, 0
    for op, num in h.ops:
        length += num
        if op == SUB:
            ident += int(np.count_nonzero(np.asarray(q[qi:qi + num]) == np.asarray(s[si:si + num])))
            qi += num
            si += num
        elif op == DEL:
            si += num
        else:
            qi += num
    return ident, length


def _query(st, h):
    b = st.batch
    a = int(b.offsets[h.context])
    return b.seq[a:a + int(b.lengths[h.context])]


def _fails_identity(h, q, s, perc):
    ident, length = identities(h, q, s)
    h.num_ident, h.align_length = ident, length
    return ident * 100.0 < length * perc


def traceback_subject(st, hsps, s_codes, s_len: int):
    """Final HSPs of one (query, subject) pair from its preliminary ones (score order);
    ``s_codes``: the subject's BLASTNA codes (``s_len`` of them, then a sentinel 15). Compiled
    (:func:`nucl_stages_nb.traceback_rows`); E-values and the cut here."""
    from .nucl_stages_nb import traceback_rows

    o, b = st.opts, st.batch
    P = np.array([(h.score, h.q_start, h.q_end, h.s_start, h.s_end, h.context, h.q_gstart, h.s_gstart)
                  for h in hsps], dtype=np.int64).reshape(-1, 8)
    rows, ops, nums = traceback_rows(P, b.seq, b.offsets, b.lengths, s_codes, s_len, o.greedy,
                                     st.matrix, o.reward, o.penalty, o.gap_open, o.gap_extend,
                                     st.xdrop_final, o.min_diag_separation, float(o.perc_identity),
                                     st.cutoff_gapped)
    out = []
    for sc, qs, qe, ss, se, c, qg, sg, p, n in rows.tolist():
        e, bits = st.evalue_bits(sc, c)
        if e <= o.evalue:
            out.append(NHSP(c, sc, qs, qe, ss, se, qg, sg, e, bits,
                            [list(x) for x in zip(ops[p:p + n].tolist(), nums[p:p + n].tolist())]))
    return out


def traceback_subject_ref(st, hsps, s_codes, s_len: int):
    """The plain form of :func:`traceback_subject` (the spec of ``traceback_rows``)."""
    g = _gapped_module()
    o = st.opts
    b = st.batch
    tree = NuclTree(len(b.seq), s_len, st.strand_off, o.min_diag_separation)
    kept = []
    for h in hsps:
        if tree.contains_hsp(h):
            continue
        if not g.traceback_extend(st, h, s_codes, s_len):
            continue
        if not o.greedy and _fails_identity(h, _query(st, h), s_codes, o.perc_identity):
            continue
        kept.append(h)
        tree.add_hsp(h)
    arr, count = purge_common_endpoints(kept, purge=False)
    extra = 0 if o.greedy else count
    for i in range(extra, len(arr)):
        h = arr[i]
        if h is not None and (g.reevaluate(st, h, s_codes, s_len)
                              or _fails_identity(h, _query(st, h), s_codes, o.perc_identity)):
            arr[i] = None
    arr = [h for h in arr if h is not None]
    arr, _ = purge_common_endpoints(arr, purge=True)
    arr.sort(key=score_order)
    tree.reset()
    final = []
    for h in arr:
        if tree.contains_hsp(h):
            continue
        tree.add_hsp(h)
        final.append(h)
    out = []
    for h in final:
        h.evalue, h.bit_score = nucl_evalue_bits(h.score, st.gapped[h.context], st.searchsp[h.context])
        if h.evalue <= o.evalue:
            out.append(h)
    return out
