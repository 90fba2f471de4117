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

import numpy as np

from ..stats.nucl import nucl_evalue_bits
from .nucl_hsp import DEL, INS, SUB, NHSP, NuclTree, purge_common_endpoints, score_order
from .nucl_scan import scan_subject
from .nucl_words import EXTENDERS, word_finder

MAX_SUBJECT_OFFSET = 90000
MAX_TOTAL_GAPS = 3000


def _gapped_module():
    from . import nucl_gapped_stage
    return nucl_gapped_stage


def initial_hits(st, diag, s_packed, s_len: int) -> np.ndarray:
    """Rows (q_off, s_off, q_start, s_start, length, score, context) of one subject, sorted as
    ``Blast_InitHitListSortByScore``; ``diag``: the search's :class:`~nucl_words.DiagState`."""
    f = st.flat
    rows = np.zeros((64, 7), dtype=np.int64)
    total = 0
    if f is None or s_len < f.width:
        diag.exit_subject(s_len)
        return rows[:0]
    cap = max(1 << 14, int(np.diff(f.cell_start).max()) if f.cell_start.size > 1 else 1)
    hq = np.empty(cap, dtype=np.int64)
    hs = np.empty(cap, dtype=np.int64)
    s = np.asarray(s_packed, dtype=np.uint8)
    if s.size * 4 < s_len + 4:   # BLAST+ may read a byte past the end; give it one
        s = np.concatenate([s, np.zeros(2, dtype=np.uint8)])
    b = st.batch
    cq = st.compressed_query
    ext = EXTENDERS[st.extender]
    off = 0
    while off <= s_len - f.width:
        n, off = scan_subject(f.cell_start, f.q_offs, f.width, f.scan_step, s, s_len, off, hq, hs)
        first = 0
        while True:
            got, resume = word_finder(
                hq, hs, first, n, ext, b.seq, cq, s, s_len, f.cell_start, f.q_offs, f.width,
                f.word_size, b.offsets, b.lengths, st.cutoff_ungapped, st.xdrop_ungapped,
                st.reduced_cutoff, f.word_size < 11, st.matrix, st.score_table, diag.hash,
                diag.level, diag.length, int(diag.offset[0]), diag.backbone, diag.c_diag,
                diag.c_level, diag.c_next, diag.occ, rows[total:])
            total += got
            if resume < 0:
                break
            if total + 2 >= len(rows):
                rows = np.concatenate([rows, np.zeros_like(rows)])
            if diag.hash and diag.occ[0] + 2 >= diag.c_diag.size:
                diag.grow()
            first = resume
    diag.exit_subject(s_len)
    rows = rows[:total]
    order = np.lexsort((-rows[:, 4], rows[:, 2], -rows[:, 4], rows[:, 3], -rows[:, 5]))
    return rows[order]


def prelim_subject(st, diag, s_packed, s_len: int):
    """Preliminary HSPs of one subject, [NHSP] with E-values, all queries of the batch."""
    rows = initial_hits(st, diag, s_packed, s_len)
    if not len(rows):
        return []
    g = _gapped_module()
    b = st.batch
    tree = NuclTree(len(b.seq), s_len, st.strand_off, st.opts.min_diag_separation)
    kept = []
    for q_off, s_off, uq, us, ul, us_score, c in rows.tolist():
        a = int(b.offsets[c])
        tmp = NHSP(c, us_score, uq - a, uq - a + ul, us, us + ul)
        if tree.contains_hsp(tmp):
            continue
        r = g.prelim_extend(st, c, s_packed, s_len, q_off - a, s_off, uq - a, us, ul)
        if r[0] >= st.cutoff_gapped[c]:
            h = NHSP(c, r[0], r[1], r[2], r[3], r[4], r[5], r[6])
            kept.append(h)
            tree.add_hsp(h)
    kept, _ = purge_common_endpoints(kept, purge=True)
    kept.sort(key=score_order)
    out = []
    for h in kept:
        h.evalue, h.bit_score = nucl_evalue_bits(h.score, st.gapped, st.searchsp[h.context])
        if h.evalue <= st.opts.evalue:
            out.append(h)
    return out


def start_for_gapped_nucl(q, s, h: NHSP):
    """``BlastGetStartForGappedAlignmentNucl``: keep the gapped start if it sits in a run of
    more than 10 identities, else move it to the middle of the longest run (or into the first run
    longer than 15) on its diagonal inside the HSP."""
    def sq(a, i):
        return int(a[i]) if 0 <= i < len(a) else -1

    run = 10
    offset = min(h.s_gstart - h.s_start, h.q_gstart - h.q_start)
    qs, ss = h.q_gstart, h.s_gstart
    score = -1
    i = 0
    while qs + i < h.q_end:
        eq = sq(q, qs + i) == sq(s, ss + i)
        i += 1
        if not eq:
            break
        score += 1
        if score > run:
            return
    i = 0
    while qs - i >= 0:
        eq = sq(q, qs - i) == sq(s, ss - i)
        i += 1
        if not eq:
            break
        score += 1
        if score > run:
            return
    run = int(run * 1.5)
    q0, s0 = h.q_gstart - offset, h.s_gstart - offset
    n = min(h.s_end - s0, h.q_end - q0)
    best, best_off, score, match, prev = 0, q0, 0, False, False
    for k in range(n):
        index = q0 + k
        match = sq(q, index) == sq(s, s0 + k)
        if match != prev:
            prev = match
            if match:
                score = 1
            elif score > best:
                best, best_off = score, index - score // 2
        elif match:
            score += 1
            if score > run:
                h.q_gstart = index - run // 2
                h.s_gstart = h.q_gstart + s0 - q0
                return
    if match and score > best:
        best, best_off = score, (q0 + n) - score // 2
    if best > 0:
        h.q_gstart = best_off
        h.s_gstart = best_off + s0 - q0


def reevaluate_with_ambiguities(h: NHSP, q, s, cutoff: int, reward: int, penalty: int,
                                gap_open: int, gap_extend: int, matrix) -> bool:
    """``Blast_HSPReevaluateWithAmbiguitiesGapped``; True = delete the HSP."""
    factor = 1
    if gap_open == 0 and gap_extend == 0:
        if reward % 2 == 1:
            factor = 2
        go, ge = 0, (reward - 2 * penalty) * factor // 2
    else:
        go, ge = gap_open, gap_extend
    esp = [list(x) for x in h.ops]
    if not esp:
        return True
    qi, si = h.q_start, h.s_start
    score = total = 0
    bq0 = bq1 = cq0 = qi
    bs0 = bs1 = cs0 = si
    b_start = b_end = c_start = 0
    b_end_num = -1
    for idx in range(len(esp)):
        op_i = 0
        while op_i < esp[idx][1]:
            op, num = esp[idx]
            if op == SUB:
                total += factor * int(matrix[int(q[qi]) & 15, int(s[si])])
                qi += 1
                si += 1
                op_i += 1
            elif op == DEL:
                total -= go + ge * num
                si += num
                op_i += num
            else:
                total -= go + ge * num
                qi += num
                op_i += num
            if total < 0:
                if op_i < esp[idx][1]:
                    esp[idx][1] -= op_i
                    c_start = idx
                    op_i = 0
                else:
                    c_start = idx + 1
                total = 0
                cq0, cs0 = qi, si
                if score < cutoff:
                    bq0, bs0 = qi, si
                    score = 0
                    b_start = b_end = c_start
            elif total > score:
                score = total
                bq0, bs0, bq1, bs1 = cq0, cs0, qi, si
                b_start, b_end, b_end_num = c_start, idx, op_i
    score //= factor
    if b_start < len(esp) and b_end < len(esp):
        qp, sp, ext = bq0, bs0, 0
        while qp > 0 and sp > 0:
            qp -= 1
            sp -= 1
            if not (int(q[qp]) == int(s[sp]) and int(q[qp]) < 4):
                break
            ext += 1
        bq0 -= ext
        bs0 -= ext
        esp[b_start][1] += ext
        if b_end == b_start:
            b_end_num += ext
        score += ext * reward
        qp, sp, ext = bq1, bs1, 0
        while qp < len(q) and sp < len(s) and int(q[qp]) < 4 and int(q[qp]) == int(s[sp]):
            qp += 1
            sp += 1
            ext += 1
        bq1 += ext
        bs1 += ext
        esp[b_end][1] += ext
        b_end_num += ext
        score += ext * reward
    h.score = score
    if score < cutoff:
        return True
    h.q_start, h.q_end = bq0, bq0 + (bq1 - bq0)
    h.s_start, h.s_end = bs0, bs0 + (bs1 - bs0)
    if b_end != len(esp) - 1 or b_start > 0:
        esp = esp[b_start:b_end + 1]
    esp[-1][1] = b_end_num
    h.ops = esp
    return False


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


def _fails_identity(h, q, s, perc):
    ident, length = identities(h, q, s)
    h.num_ident, h.align_length = ident, length
    return ident * 100.0 < length * perc


def traceback_subject(st, hsps, s_codes, s_len: int):
    """Final HSPs of one (query, subject) pair from its preliminary ones (score order)."""
    g = _gapped_module()
    o = st.opts
    b = st.batch
    tree = NuclTree(len(b.seq), s_len, st.strand_off, o.min_diag_separation)
    kept = []
    for h in hsps:
        if tree.contains_hsp(h):
            continue
        a, n = int(b.offsets[h.context]), int(b.lengths[h.context])
        q = b.seq[a:a + n]
        start_for_gapped_nucl(q, s_codes, h)
        s_start, s_length, shift = h.s_gstart, s_len, 0
        if s_len >= MAX_SUBJECT_OFFSET:
            left = h.q_gstart + MAX_TOTAL_GAPS
            right = n - h.q_gstart + MAX_TOTAL_GAPS
            if s_start > left:
                shift, s_start = s_start - left, left
            s_length = min(s_len, h.s_gstart + right) - shift
        r = g.traceback_extend(st, q, s_codes[shift:shift + s_length], s_length, h.q_gstart, s_start)
        h.score, h.q_start, h.q_end = r[0], r[1], r[2]
        h.s_start, h.s_end = r[3] + shift, r[4] + shift
        h.ops = r[5]
        h.s_gstart = s_start + shift
        if not o.greedy and _fails_identity(h, q, s_codes, o.perc_identity):
            continue
        kept.append(h)
        tree.add_hsp(h)
    arr, count = purge_common_endpoints(kept, purge=False)
    extra = 0 if o.greedy else count
    for i in range(extra, len(arr)):
        h = arr[i]
        if h is None:
            continue
        a, n = int(b.offsets[h.context]), int(b.lengths[h.context])
        q = b.seq[a:a + n]
        if (reevaluate_with_ambiguities(h, q, s_codes, int(st.cutoff_gapped[h.context]), o.reward,
                                        o.penalty, o.gap_open, o.gap_extend, st.matrix)
                or _fails_identity(h, q, s_codes, o.perc_identity)):
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
        h.evalue, h.bit_score = nucl_evalue_bits(h.score, st.gapped, st.searchsp[h.context])
        if h.evalue <= o.evalue:
            out.append(h)
    return out
