"""``blastn -ungapped`` as BLAST+ 2.12 runs it: no gapped stage, sum statistics.

Set-up (``BlastHitSavingParametersUpdate``, ``BlastInitialWordParametersUpdate``,
``BLAST_CalcEffLengths`` with ``gapped_calculation`` off), per context with its ungapped
Karlin block ``kbp`` (query composition against uniform bases):

- length adjustment and effective search space from ``kbp`` (alpha = Lambda/H, beta -2 for
  1/-1 and 2/-3, else 0);
- hit cutoff: the score of E = ``-evalue`` on that search space;
- word (ungapped extension) cutoff: the score of E = 0.05 on ``min(avg subject length,
  2 x context length) x avg subject length`` with the gap-decay correction (rate 0.5), at
  most the hit cutoff; reduced cutoff 0.8 of it;
- ungapped X-drop: 20 bits for blastn and blastn-short; megablast sets no ungapped X-drop, so
  BLAST+ uses the context's word cutoff as X-drop (``x_dropoff_init`` 0; the gapped search
  does the same with its own cutoff, :func:`~.nucl_context_stats.ungapped_xdrop`): blastn 2.12's
  output changes with an explicit ``-xdrop_ungap 20`` for megablast only, and the cutoff rule
  reproduces it at ``-evalue`` 1e-3, 10 and 1000.

E-values are per HSP (``Blast_HSPListGetEvalues``): blastn's ``-sum_stats`` is off by default,
so ungapped HSPs are not linked (blastn 2.12 prints plain Karlin-Altschul E-values for them).

Per subject (``s_BlastSearchEngineCore`` / ``BLAST_PreliminarySearchEngine``): the ungapped
hits of the word finder become HSPs (score order; chunks of long subjects merged); each is
re-scored on the subject with its ambiguity codes restored, keeping the best-scoring stretch
(``Blast_HSPReevaluateWithAmbiguitiesUngapped``; dropped below the word cutoff) and tested
for ``-perc_identity``; E-values and bit scores from ``kbp``, cut at ``-evalue``. There is no traceback stage; the hit lists are
those of the gapped search (best E-value first, ``-max_target_seqs`` subjects; the
preliminary list is not enlarged for an ungapped search).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..stats.evalue import bit_score, karlin_cutoff
from ..stats.nucl import NuclGappedParams, nucl_search_space, ungapped_alpha_beta
from .nucl_hsp import NHSP, SUB, add_subject_hits, merge_subject_chunks, score_order
from .nucl_search import DBSEQ_CHUNK_OVERLAP, initial_hits, subject_chunks
from .nucl_context_stats import ungapped_xdrop
from .nucl_setup import TASK_UNGAPPED_XDROP_BITS, invalid_queries, ungapped_block

CUTOFF_E_BLASTN = 0.05      # CUTOFF_E_BLASTN: expected ungapped extensions kept per subject


@dataclass
class UngappedStats:
    karlin: list            # per context: ungapped KarlinParams (None: invalid context)
    len_adj: np.ndarray
    searchsp: np.ndarray
    cutoff_hit: np.ndarray   # hit-saving cutoff (E = -evalue)
    cutoff_word: np.ndarray  # ungapped extension cutoff


def word_cutoff(evalue: float, karlin, searchsp: float) -> int:
    """``BLAST_Cutoffs`` (``dodecay`` with no decay rate: blastn has no linking parameters)."""
    e = max(evalue, 1.0e-297)
    return max(1, int(math.ceil(math.log(karlin.K * float(searchsp) / e) / karlin.lam)))


def ungapped_setup(st, db_length: int, db_num_seqs: int):
    """(:class:`Setup` with the ungapped cutoffs and search spaces, :class:`UngappedStats`)."""
    o = st.opts
    b = st.batch
    nctx = len(b.offsets)
    dbl = o.dbsize or db_length
    avg = db_length // max(db_num_seqs, 1)
    ks = [None] * nctx
    adj = np.zeros(nctx, dtype=np.int64)
    ssp = np.zeros(nctx, dtype=np.float64)
    big = 2 ** 31 - 1
    ch = np.full(nctx, big, dtype=np.int64)
    cw = np.full(nctx, big, dtype=np.int64)
    xdrop = np.array(st.xdrop_ungapped, dtype=np.int64)
    for c in range(nctx):
        if not st.ctx_valid[c]:
            continue
        a, n = int(b.offsets[c]), int(b.lengths[c])
        ku = ungapped_block(b.seq[a:a + n], st.matrix)
        ks[c] = ku
        alpha, beta = ungapped_alpha_beta(o.reward, o.penalty, ku)
        params = NuclGappedParams(ku, alpha, beta, False)
        adj[c], sp = nucl_search_space(params, n, dbl, db_num_seqs)
        ssp[c] = o.searchsp or sp
        ch[c] = max(1, karlin_cutoff(o.evalue, ku, ssp[c]))
        word = word_cutoff(CUTOFF_E_BLASTN, ku, min(avg, 2 * n) * avg)
        cw[c] = min(word, ch[c])
        xdrop[c] = ungapped_xdrop(TASK_UNGAPPED_XDROP_BITS[o.task], ku.lam, cw[c])
    st2 = replace(st, cutoff_ungapped=cw, reduced_cutoff=(0.8 * cw).astype(np.int64),
                  searchsp=ssp, cutoff_gapped=ch, xdrop_ungapped=xdrop)
    return st2, UngappedStats(ks, adj, ssp, ch, cw)


def _reevaluate(h: NHSP, q, s, matrix, cutoff: int) -> bool:
    """``Blast_HSPReevaluateWithAmbiguitiesUngapped``: the best-scoring stretch of the HSP with
    the subject's ambiguity codes; False when it scores below ``cutoff`` (HSP dropped)."""
    n = h.q_end - h.q_start
    sc = matrix[np.asarray(q[h.q_start:h.q_end], dtype=np.int64) & 15,
                np.asarray(s[h.s_start:h.s_start + n], dtype=np.int64)].tolist()
    total = best = 0
    cur = b_start = b_end = 0
    for i, v in enumerate(sc):
        total += v
        if total < 0:
            total = 0
            cur = i + 1
            if best < cutoff:
                b_start = b_end = i + 1
                best = 0
        elif total > best:
            best = total
            b_end = i + 1
            b_start = cur
    h.score = best
    if best < cutoff:
        return False
    q0, s0 = h.q_start, h.s_start
    h.q_start, h.q_end = q0 + b_start, q0 + b_end
    h.s_start, h.s_end = s0 + b_start, s0 + b_end
    h.ops = [[SUB, b_end - b_start]]
    return True


def _identity_ok(h: NHSP, q, s, perc: float) -> bool:
    n = h.q_end - h.q_start
    ident = int(np.count_nonzero(np.asarray(q[h.q_start:h.q_end])
                                 == np.asarray(s[h.s_start:h.s_start + n])))
    h.num_ident, h.align_length = ident, n
    return not ident * 100.0 < n * perc


def prelim_subject_ungapped(st, us: UngappedStats, diag, nt, oid: int, times=None, words=None):
    """Final HSPs (E-values, bit scores) of one subject for all queries of the batch."""
    import time

    b = st.batch
    s_len = int(nt.lengths[oid])
    s_packed = nt.packed(oid)
    combined = None
    for k, (off, n) in enumerate(subject_chunks(s_len)):
        t0 = time.perf_counter()
        rows = initial_hits(st, diag, s_packed[off // 4:(off + n + 3) // 4], n,
                            None if words is None else words[k])
        if times is not None:
            times["words"] = times.get("words", 0.0) + time.perf_counter() - t0
        hsps = []
        for q_off, s_off, uq, us_, ul, score, c in rows.tolist():
            a = int(b.offsets[c])
            hsps.append(NHSP(c, score, uq - a, uq - a + ul, us_ + off, us_ + off + ul,
                             q_off - a, s_off + off))
        hsps.sort(key=score_order)
        combined = merge_subject_chunks(combined, hsps, off, DBSEQ_CHUNK_OVERLAP)
    if not combined:
        return []
    from ..data.nucleotide import BLASTNA_SENTINEL, NCBI4NA_TO_BLASTNA
    s_codes = np.append(NCBI4NA_TO_BLASTNA[nt.ncbi4na(oid)], np.uint8(BLASTNA_SENTINEL))
    kept = []
    for h in combined:
        a = int(b.offsets[h.context])
        q = b.seq[a:a + int(b.lengths[h.context])]
        if not _reevaluate(h, q, s_codes, st.matrix, int(us.cutoff_word[h.context])):
            continue
        if not _identity_ok(h, q, s_codes, st.opts.perc_identity):
            continue
        kept.append(h)
    if not kept:
        return []
    kept.sort(key=score_order)
    out = []
    for h in kept:
        k = us.karlin[h.context]
        h.evalue = float(us.searchsp[h.context]) * math.exp(-k.lam * h.score + k.logK)
        if h.evalue <= st.opts.evalue:
            h.bit_score = float(bit_score(h.score, us.karlin[h.context]))
            out.append(h)
    return out


def run_ungapped(queries, nt, st, progress=None, warn=None, times=None, device=None):
    """``run_blastn`` for ``-ungapped`` (same arguments after set-up; [QueryHits])."""
    import time

    from ..output import QueryHits
    from .blastn import _records
    from .nucl_words import DiagState

    clock = time.perf_counter
    times = {} if times is None else times
    t0 = clock()
    o = st.opts
    b = st.batch
    st, us = ungapped_setup(st, nt.total_bases, len(nt))
    for qi in invalid_queries(st) if warn is not None else ():
        warn(queries[qi].qid, "could not calculate ungapped Karlin-Altschul parameters (invalid "
                              "query sequence, e.g. all N); no hits are reported for it, as BLAST+ does")
    times["setup"] = times.get("setup", 0.0) + clock() - t0
    t0 = clock()
    words0 = times.get("words", 0.0)
    dev = None
    if device is not None and st.flat is not None and st.ctx_valid.any():
        from .nucl_device import device_words
        dev = device_words(nt, st, device, times)
    per_query = [[] for _ in queries]
    diag = DiagState(len(b.seq))
    for oid in range(len(nt) if st.ctx_valid.any() else 0):
        hsps = prelim_subject_ungapped(st, us, diag, nt, oid, times,
                                       None if dev is None else dev.pairs(oid))
        if progress is not None:
            progress(oid)
        add_subject_hits(per_query, b.query_of, oid, hsps)
    times["prelim"] = times.get("prelim", 0.0) + clock() - t0 - (times.get("words", 0.0) - words0)
    t0 = clock()
    from ..data.deflines import subject_ids

    ids = subject_ids(nt)   # BLAST+'s accession.version and title, decoded for printed hits only
    results = []
    for qi, query in enumerate(queries):
        hits = []
        for _, oid, hs in sorted(per_query[qi], key=lambda t: t[0])[:o.max_target_seqs]:
            from ..data.nucleotide import BLASTNA_SENTINEL, NCBI4NA_TO_BLASTNA
            s_codes = np.append(NCBI4NA_TO_BLASTNA[nt.ncbi4na(oid)], np.uint8(BLASTNA_SENTINEL))
            recs = _records(st, query, nt, oid, (ids.sacc(oid), ids.stitle(oid)), hs, s_codes)
            if o.max_hsps > 0:
                recs = recs[:o.max_hsps]
            hits += recs
        results.append(QueryHits(query.qid, len(query.codes), hits, query.title))
    times["records"] = times.get("records", 0.0) + clock() - t0
    return results
