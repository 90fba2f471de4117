"""``blastn`` as a library call: nucleotide queries (FASTA) against a nucleotide database, results
as BLAST+ 2.12 ``blastn`` reports them.

The database is a FASTA file, a ``clalign makedb -dbtype nucl`` folder or a ``makeblastdb``
nucleotide database (:func:`clalign.data.nucleotide.open_nucleotide`); its 2-bit bytes (with
makeblastdb's random bases at ambiguous positions) are scanned and extended in the preliminary
stage, the restored ambiguity codes are used at traceback, as in BLAST+. All queries form one
batch (contexts plus and minus strand), searched subject by subject; per query the best
``prelim_hitlist_size`` subjects go to traceback, the best ``-max_target_seqs`` are reported.

Output records follow BLAST+'s tabular conventions: query coordinates on the plus strand;
a minus-strand HSP has ``sstart > send``, its ``qseq`` is the query's plus strand and ``sseq``
the reverse complement of the subject.
"""
from __future__ import annotations

import io
import sys
import time

import numpy as np

from ..data.nucleotide import NCBI4NA_TO_BLASTNA, open_nucleotide
from ..output import Alignment, QueryHits, write_tabular
from .hsp import hitlist_key
from .nucl_hsp import DEL, INS, evalue_order
from .nucl_search import prelim_subject, traceback_subject
from .nucl_setup import BlastnOptions, read_queries, setup_search
from .nucl_words import DiagState

LETTERS = np.frombuffer(b"ACGTRYMKWSBDHVN-", dtype=np.uint8)
COMPLEMENT = np.array([3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 13, 12, 11, 10, 14, 15], dtype=np.uint8)


def _prelim_hitlist_size(n: int) -> int:
    return min(max(2 * n, 10), n + 50)


def _aligned(q, s, h):
    """(query codes, subject codes) of the alignment columns, 15 for a gap."""
    qa, sa = [], []
    qi, si = h.q_start, h.s_start
    for op, num in h.ops:
        if op == DEL:
            qa.append(np.full(num, 15, dtype=np.uint8))
            sa.append(np.asarray(s[si:si + num], dtype=np.uint8))
            si += num
        elif op == INS:
            qa.append(np.asarray(q[qi:qi + num], dtype=np.uint8))
            sa.append(np.full(num, 15, dtype=np.uint8))
            qi += num
        else:
            qa.append(np.asarray(q[qi:qi + num], dtype=np.uint8))
            sa.append(np.asarray(s[si:si + num], dtype=np.uint8))
            qi += num
            si += num
    return np.concatenate(qa), np.concatenate(sa)


def alignment_record(query, qid, sid, oid, title, h, q_ctx, minus, s_codes, s_len):
    """An :class:`~clalign.output.Alignment` of an HSP in BLAST+'s tabular orientation."""
    qa, sa = _aligned(q_ctx, s_codes, h)
    qlen = len(query.codes)
    if minus:
        qa, sa = COMPLEMENT[qa[::-1]], COMPLEMENT[sa[::-1]]
        qstart = qlen - h.q_end + 1
    else:
        qstart = h.q_start + 1
    qseq = LETTERS[qa].tobytes().decode()
    sseq = LETTERS[sa].tobytes().decode()
    a = Alignment.make(qid, sid, qlen, s_len, h.score, h.bit_score, h.evalue, qstart,
                       h.s_start + 1, qseq, sseq, subject_index=oid, subject_title=title,
                       query_title=query.title, sstrand="minus" if minus else "plus")
    if minus:
        from dataclasses import replace
        a = replace(a, sstart=h.s_end, send=h.s_start + 1)
    return a


def _text(x):
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def _warn_stderr(qid, message):
    print(f"clalign: warning: query {qid}: {message}", file=sys.stderr)


def run_blastn(query_path, db, opts: BlastnOptions, progress=None, warn=_warn_stderr, times=None,
               device=None):
    """[QueryHits] of every query, in file order. ``warn(query id, message)`` is told about
    queries BLAST+ warns about (no valid Karlin-Altschul parameters: no hits for them).
    ``times``: a dict that collects seconds per phase (setup: queries, masks, lookup table,
    statistics; words: scan, mini-extension, diagonals, ungapped; prelim: the rest of the
    preliminary stage; traceback; records: output records). ``device``: an OpenCL device
    ("P:D") for the scan, lookup and mini-extension (:mod:`nucl_device`; used when the tuning
    table's USE says so for that device)."""
    clock = time.perf_counter
    t0 = clock()
    queries = read_queries(query_path)
    nt = open_nucleotide(db)
    st = setup_search(queries, opts, nt.total_bases, len(nt))
    if opts.ungapped:   # no gapped stage, sum statistics (nucl_ungapped_search)
        from .nucl_ungapped_search import run_ungapped
        return run_ungapped(queries, nt, st, progress, warn, times, device)
    times = {} if times is None else times
    times["setup"] = times.get("setup", 0.0) + clock() - t0
    t0 = clock()
    words0 = times.get("words", 0.0)
    b = st.batch
    for qi, q in enumerate(queries):
        if not st.ctx_valid[b.query_of == qi].all():
            warn(q.qid, "could not calculate ungapped Karlin-Altschul parameters (invalid query "
                        "sequence, e.g. all N); no hits are reported for it, as BLAST+ does")
    per_query = [[] for _ in queries]
    diag = DiagState(len(b.seq))
    dev = None
    if device is not None and st.flat is not None and st.ctx_valid.any():
        from .nucl_device import device_words   # scan/lookup/mini-extension on the device
        dev = device_words(nt, st, device, times)
    for oid in range(len(nt) if st.ctx_valid.any() else 0):
        s_len = int(nt.lengths[oid])
        hsps = prelim_subject(st, diag, nt.packed(oid), s_len, times,
                              None if dev is None else dev.pairs(oid))
        if progress is not None:
            progress(oid)
        if not hsps:
            continue
        groups = {}
        for h in hsps:
            groups.setdefault(int(b.query_of[h.context]), []).append(h)
        for qi, hs in groups.items():
            best = min(h.evalue for h in hs)
            per_query[qi].append((hitlist_key(best, max(h.score for h in hs), oid), oid, hs))
    times["prelim"] = times.get("prelim", 0.0) + clock() - t0 - (times.get("words", 0.0) - words0)
    t0 = clock()
    rec0 = times.get("records", 0.0)
    # traceback subject by subject (each subject's codes restored once), then per query
    jobs = {}
    for qi in range(len(queries)):
        lists = sorted(per_query[qi], key=lambda t: t[0])[:_prelim_hitlist_size(opts.max_target_seqs)]
        for _, oid, hs in lists:
            jobs.setdefault(oid, []).append((qi, hs))
    final = [[] for _ in queries]
    records = {}
    for oid in sorted(jobs):
        s_codes = np.append(NCBI4NA_TO_BLASTNA[nt.ncbi4na(oid)], np.uint8(15))  # + sentinel
        s_len = int(nt.lengths[oid])
        for qi, hs in jobs[oid]:
            out = traceback_subject(st, hs, s_codes, s_len)
            if out:
                best = min(h.evalue for h in out)
                final[qi].append((hitlist_key(best, max(h.score for h in out), oid), oid, out))
                t1 = clock()
                records[qi, oid] = _records(st, queries[qi], nt, oid, out, s_codes)
                times["records"] = times.get("records", 0.0) + clock() - t1
    times["traceback"] = (times.get("traceback", 0.0) + clock() - t0
                          - (times.get("records", 0.0) - rec0))
    results = []
    for qi, query in enumerate(queries):
        final[qi].sort(key=lambda t: t[0])
        hits = []
        for _, oid, out in final[qi][:opts.max_target_seqs]:
            recs = records[qi, oid]
            if opts.max_hsps > 0:
                recs = recs[:opts.max_hsps]
            hits += recs
        results.append(QueryHits(query.qid, len(query.codes), hits, query.title))
    return results


def _records(st, query, nt, oid, hsps, s_codes):
    """Alignment records of one (query, subject) pair's final HSPs, best first."""
    from ..data.deflines import subject_ids

    b = st.batch
    ids = subject_ids(nt)
    sid, title = ids.sacc(oid), ids.stitle(oid)   # BLAST+'s accession.version and title
    out = []
    for h in sorted(hsps, key=evalue_order):
        a0 = int(b.offsets[h.context])
        q_ctx = b.seq[a0:a0 + int(b.lengths[h.context])]
        out.append(alignment_record(query, query.qid, sid, oid, title, h, q_ctx,
                                    bool(b.minus[h.context]), s_codes, int(nt.lengths[oid])))
    return out


def tabular_lines(results, **kw):
    """``-outfmt 6`` rows of ``run_blastn``'s results."""
    fh = io.StringIO()
    write_tabular(fh, results, program="BLASTN 2.12.0+", **kw)
    return fh.getvalue().splitlines()
