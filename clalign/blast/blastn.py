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
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..data.nucleotide import NCBI4NA_TO_BLASTNA, open_nucleotide
from ..output import Alignment, QueryHits, write_tabular
from ..runtime.jit import preload
from .hsp import hitlist_key
from .nucl_hsp import DEL, EVALUE_EPSILON, INS, add_subject_hits, evalue_order
from .nucl_search import (prelim_combine, prelim_piece, prelim_subject, subject_array,
                          subject_chunks)
from .nucl_setup import BlastnOptions, invalid_queries, read_queries, setup_search
from .nucl_words import DiagState

LETTERS = np.frombuffer(b"ACGTRYMKWSBDHVN-", dtype=np.uint8)
COMPLEMENT = np.array([3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 13, 12, 11, 10, 14, 15], dtype=np.uint8)


#: compiled stages whose cached code ``run_blastn`` loads on a thread from its start
#: (``runtime.jit.preload``), in the order of need: the query set-up (DUST, batch, lookup table,
#: letter counts, compressed query), the word finder, the preliminary gapped stage, the
#: traceback, the CPU scan (before the word finder without a device). The first load pays
#: numba's own start, as DUST's first call did; the others were each made by the first worker
#: calling the stage, the other workers waiting on numba's lock.
_SETUP = ("clalign.blast.nucl_dust_nb:_dust_many", "clalign.blast.nucl_setup:_fill_contexts",
          "clalign.blast.nucl_flat_nb:_walk_parts", "clalign.blast.nucl_flat_nb:_sort_parts",
          "clalign.blast.nucl_setup:_context_counts", "clalign.blast.nucl_words:_compress_range")
_SEARCH = ("clalign.blast.nucl_words:word_finder", "clalign.blast.nucl_stages_nb:prelim_rows",
           "clalign.blast.nucl_stages_nb:subject_blastna", "clalign.blast.nucl_stages_nb:traceback_unit")
_SCAN = ("clalign.blast.nucl_scan:scan_subject",)
PRELOAD = _SETUP + _SCAN + _SEARCH
PRELOAD_DEVICE = _SETUP + _SEARCH + _SCAN


def _prelim_hitlist_size(n: int) -> int:
    return min(max(2 * n, 10), n + 50)


def _aligned(q, s, h):
    """(query codes, subject codes) of the alignment columns, 15 for a gap: the plain form of
    ``nucl_stages_nb.record_columns`` (tests)."""
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
    """An :class:`~clalign.output.Alignment` of an HSP in BLAST+'s tabular orientation; the
    columns and the counts :meth:`Alignment.make` derives letter by letter come from one
    compiled call (:func:`~clalign.blast.nucl_stages_nb.record_columns`; identities = equal
    codes, positives = identities)."""
    from .nucl_stages_nb import record_columns

    script = np.array(h.ops, dtype=np.int64).reshape(-1, 2)
    qa, sa, nident, gaps, opens, qres, sres = record_columns(
        q_ctx, s_codes, h.q_start, h.s_start, script[:, 0], script[:, 1], bool(minus), COMPLEMENT)
    qlen = len(query.codes)
    qstart = qlen - h.q_end + 1 if minus else h.q_start + 1
    if minus:
        sstart, send = h.s_end, h.s_start + 1
    else:
        sstart, send = h.s_start + 1, h.s_start + sres
    return Alignment(str(qid), str(sid), int(qlen), int(s_len), int(h.score), float(h.bit_score),
                     float(h.evalue), int(qstart), int(qstart) + qres - 1, int(sstart), int(send),
                     LETTERS[qa].tobytes().decode(), LETTERS[sa].tobytes().decode(), nident, nident,
                     gaps, opens, subject_index=oid, subject_title=title,
                     query_title=query.title, sstrand="minus" if minus else "plus")


def _text(x):
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def _warn_stderr(qid, message):
    print(f"clalign: warning: query {qid}: {message}", file=sys.stderr)


def run_blastn(query_path, db, opts: BlastnOptions, progress=None, warn=_warn_stderr, times=None,
               num_threads: int = 1, device=None):
    """[QueryHits] of every query, in file order. ``warn(query id, message)`` is told about
    queries BLAST+ warns about (no valid Karlin-Altschul parameters: no hits for them).
    ``times``: a dict that collects seconds per phase. Wall seconds: setup (queries, masks,
    lookup table, statistics), prelim (the whole preliminary stage), traceback (the whole
    traceback stage, records included). Seconds summed over the workers (with threads they
    overlap each other and can exceed the wall time): words (scan, mini-extension, diagonals,
    ungapped; inside prelim) and records (output records; inside traceback). ``num_threads`` > 1: subjects (and the 5,000,000-base pieces of long ones)
    and the traceback's subjects run on that many threads (the compiled stages release the
    GIL); results are the same, in the same order. ``device``: an OpenCL device ("P:D") for the
    scan, lookup and mini-extension (:mod:`nucl_device`; used when the tuning table's USE says so
    for that device) and, as its UNGAPPED says, the diagonal test and ungapped extension
    (:mod:`nucl_device_ungapped`: one diagonal store over the database in order, as BLAST+ on
    one thread). A query file blastn 2.12 would split into query chunks (``CHUNK_SIZE``
    under 1,000, :mod:`nucl_split`) is searched in the same chunks and their lists merged.
    The stages' cached compiled code is loaded on a thread from the start (``PRELOAD``)."""
    t0 = time.perf_counter()
    loader = preload(PRELOAD if device is None else PRELOAD_DEVICE)
    try:
        return _run(query_path, db, opts, progress, warn, times, num_threads, device, t0)
    finally:
        loader.join()                # no load left running into the interpreter's exit


def _run(query_path, db, opts, progress, warn, times, num_threads, device, t0):
    clock = time.perf_counter
    queries = read_queries(query_path)
    nt = open_nucleotide(db)
    st = setup_search(queries, opts, nt.total_bases, len(nt), threads=num_threads)
    if opts.ungapped:   # no gapped stage, sum statistics (nucl_ungapped_search)
        from .nucl_ungapped_search import run_ungapped
        return run_ungapped(queries, nt, st, progress, warn, times, device)
    times = {} if times is None else times
    times["setup"] = times.get("setup", 0.0) + clock() - t0
    for qi in invalid_queries(st):
        warn(queries[qi].qid, "could not calculate ungapped Karlin-Altschul parameters (invalid "
                              "query sequence, e.g. all N); no hits are reported for it, as BLAST+ does")
    from .nucl_split import batch_may_split, split_layout   # blastn's query chunks (nucl_split)
    lengths = [len(q.codes) for q in queries]
    split = split_layout(lengths, opts.task)
    if batch_may_split(lengths, opts.task):
        print("clalign: warning: a query is long enough for blastn 2.12 to split the batch of "
              "queries holding it into chunks; that split is not reproduced (searched whole), "
              "so weak hits may differ from blastn's", file=sys.stderr)
    pool = ThreadPoolExecutor(max_workers=num_threads) if num_threads > 1 else None
    try:
        return _search(st, queries, nt, opts, progress, times, pool, num_threads, device, split)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)


def _prelim_groups(nt, oids):
    """Work units of the preliminary stage: runs of consecutive subject pieces
    ``(oid, piece number, offset, length)``, about a megabase (or 64 pieces) each."""
    group, size = [], 0
    for oid in oids:
        for k, (off, n) in enumerate(subject_chunks(int(nt.lengths[oid]))):
            group.append((oid, k, off, n))
            size += n
            if size >= 1 << 20 or len(group) >= 64:
                yield group
                group, size = [], 0
    if group:
        yield group


class _DeviceWords:
    """The device's word starts handed to the workers: ``NuclDeviceWords.pairs`` is called under
    a lock, once per subject, and each piece's share kept until its worker takes it."""

    def __init__(self, dev, nt):
        self.dev, self.nt, self.lock, self.held = dev, nt, threading.Lock(), {}

    def piece(self, oid, k):
        with self.lock:
            got = self.held.get(oid)
            if got is None:
                got = self.held[oid] = [self.dev.pairs(oid), len(subject_chunks(int(self.nt.lengths[oid])))]
            got[1] -= 1
            if got[1] == 0:
                del self.held[oid]
            return got[0][k]


def _prelim_all(st, nt, oids, times, pool, dev=None):
    """(oid, preliminary HSPs) of every subject in OID order, on the pool when there is one;
    ``dev``: the device's word finder (:func:`nucl_device.device_words`) or None."""
    if pool is None:
        diag = DiagState(len(st.batch.seq))
        for oid in oids:
            yield oid, prelim_subject(st, diag, nt.packed(oid), int(nt.lengths[oid]), times,
                                      None if dev is None else dev.pairs(oid))
        return
    local = threading.local()
    words = None if dev is None else _DeviceWords(dev, nt)

    def work(group):
        diag = getattr(local, "diag", None)
        if diag is None:
            diag = local.diag = DiagState(len(st.batch.seq))
        out, last, s = [], -1, None
        for oid, k, off, n in group:
            if oid != last:
                s, last = subject_array(nt.packed(oid)), oid
            out.append((oid, off, prelim_piece(st, diag, s, off, n, times,
                                               None if words is None else words.piece(oid, k))))
        return out

    cur, pieces = -1, []
    for res in pool.map(work, _prelim_groups(nt, oids)):
        for oid, off, hsps in res:
            if oid != cur and cur >= 0:
                yield cur, prelim_combine(st, pieces)
                pieces = []
            cur = oid
            pieces.append((off, hsps))
    if cur >= 0:
        yield cur, prelim_combine(st, pieces)


def _search(st, queries, nt, opts, progress, times, pool, threads, device=None, split=None):
    from ..data.deflines import subject_ids

    clock = time.perf_counter
    t0 = clock()
    b = st.batch
    per_query = [[] for _ in queries]
    oids = range(len(nt) if st.ctx_valid.any() else 0)
    dev = None
    if split is not None and st.ctx_valid.any():
        from .nucl_split import split_prelim
        prelim = split_prelim(st, queries, nt, opts, split, _prelim_all,
                              _prelim_hitlist_size(opts.max_target_seqs), times, pool, device)
    else:
        if device is not None and st.flat is not None and st.ctx_valid.any():
            from .nucl_device import device_words   # scan/lookup/mini-extension on the device
            dev = device_words(nt, st, device, times, hits=True)
        prelim = _prelim_all(st, nt, oids, times, pool, dev)
    for oid, hsps in prelim:
        if progress is not None:
            progress(oid)
        if not hsps:
            continue
        add_subject_hits(per_query, b.query_of, oid, hsps)
    times["prelim"] = times.get("prelim", 0.0) + clock() - t0   # wall, words included
    t0 = clock()
    # traceback subject by subject (each subject's codes restored once), then per query
    jobs = {}
    for qi in range(len(queries)):
        lists = sorted(per_query[qi], key=lambda t: t[0])[:_prelim_hitlist_size(opts.max_target_seqs)]
        for _, oid, hs in lists:
            jobs.setdefault(oid, []).append((qi, hs))
    ids = subject_ids(nt)
    names = {oid: (ids.sacc(oid), ids.stitle(oid)) for oid in sorted(jobs)}  # BLAST+'s accession.version, title
    # (oid, pairs): an oid's (query, HSPs) pairs cut into pieces of at most a 4 * threads-th of
    # all pairs (about 4 units a worker; many subjects: one unit each, a unit costing one
    # compiled call and its set-up in Python)
    units = []
    step = max(1, -(-sum(len(p) for p in jobs.values()) // (4 * threads)))
    for oid in sorted(jobs):
        pairs = jobs[oid]
        units += [(oid, pairs[i:i + step]) for i in range(0, len(pairs), step)]
    codes = _SubjectCodes(nt, [oid for oid, _ in units])

    def work(unit):
        oid, pairs = unit
        s_codes = codes.get(oid)
        try:
            done, rec_s = traceback_unit_records(st, queries, oid, names[oid], pairs, s_codes,
                                                 int(nt.lengths[oid]))
        finally:
            codes.release(oid)
        return oid, done, rec_s   # rec_s summed here, added by the caller (no shared dict)

    final = [[] for _ in queries]
    records = {}
    for oid, done, rec_s in (pool.map if pool is not None else map)(work, units):
        times["records"] = times.get("records", 0.0) + rec_s
        for qi, best_e, best_s, recs in done:
            final[qi].append((hitlist_key(best_e, best_s, oid), oid, None))
            records[qi, oid] = recs
    times["traceback"] = times.get("traceback", 0.0) + clock() - t0   # wall, records included
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


class _SubjectCodes:
    """Each subject's BLASTNA codes with their ambiguities restored (plus a sentinel), made once
    for the work units that need it and dropped after the last one. The codes are made outside
    the lock (one compiled pass, :func:`nucl_stages_nb.subject_blastna`) by the first worker
    that asks; others asking for the same subject wait for it, other subjects go on."""

    def __init__(self, nt, oids):
        self.nt, self.lock, self.codes, self.users = nt, threading.Lock(), {}, {}
        for oid in oids:
            self.users[oid] = self.users.get(oid, 0) + 1

    def get(self, oid):
        from .nucl_stages_nb import subject_blastna

        with self.lock:
            got = self.codes.get(oid)
            mine = got is None
            if mine:
                got = self.codes[oid] = [threading.Event(), None]
        if mine:
            try:
                runs = np.ascontiguousarray(self.nt.ambiguities(oid), dtype=np.int64).reshape(-1, 3)
                got[1] = subject_blastna(subject_array(self.nt.packed(oid)), int(self.nt.lengths[oid]),
                                         runs, NCBI4NA_TO_BLASTNA)
            finally:
                got[0].set()
        else:
            got[0].wait()
        if got[1] is None:
            raise RuntimeError(f"subject {oid}: its codes could not be made")
        return got[1]

    def release(self, oid):
        with self.lock:
            self.users[oid] -= 1
            if not self.users[oid]:
                del self.codes[oid]


def traceback_unit_records(st, queries, oid, name, pairs, s_codes, s_len):
    """The traceback stage of a work unit (one subject ``oid``, its ``(query, preliminary
    HSPs)`` pairs): ([(query, best E-value, best score, output records best first)] of the pairs
    that keep an HSP, seconds of the records' Python). One compiled call does every pair's
    traceback and the records' columns (:func:`nucl_stages_nb.traceback_unit`); E-values, the
    E-value cut, the order and the records are made here, as ``nucl_search.traceback_subject``
    and :func:`alignment_record` make them pair by pair (their specs)."""
    from .nucl_stages_nb import traceback_unit

    o, b = st.opts, st.batch
    P = np.array([(h.score, h.q_start, h.q_end, h.s_start, h.s_end, h.context, h.q_gstart, h.s_gstart)
                  for _, hs in pairs for h in hs], dtype=np.int64).reshape(-1, 8)
    first = np.zeros(len(pairs) + 1, dtype=np.int64)
    np.cumsum([len(hs) for _, hs in pairs], out=first[1:])
    R, QA, SA = traceback_unit(P, first, b.seq, b.offsets, b.lengths,
                               np.ascontiguousarray(b.minus, dtype=np.bool_), s_codes, s_len, o.greedy,
                               st.matrix, o.reward, o.penalty, o.gap_open, o.gap_extend,
                               st.xdrop_final, o.min_diag_separation, float(o.perc_identity),
                               st.cutoff_gapped, COMPLEMENT)
    t0 = time.perf_counter()
    qtext, stext = LETTERS[QA].tobytes().decode(), LETTERS[SA].tobytes().decode()
    sid, title = name
    rows = R.tolist()
    out, i = [], 0
    while i < len(rows):
        k, kept = rows[i][8], []
        while i < len(rows) and rows[i][8] == k:
            r = rows[i]
            e, bits = st.evalue_bits(r[0], r[5])
            if e <= o.evalue:
                kept.append((0.0 if e < EVALUE_EPSILON else e, -r[0], r[3], -r[4], r[1], -r[2], e, bits, r))
            i += 1
        if not kept:
            continue
        qi = pairs[k][0]
        query = queries[qi]
        qlen = len(query.codes)
        best_e, best_s = min(t[6] for t in kept), max(t[8][0] for t in kept)
        kept.sort(key=lambda t: t[:6])   # s_EvalueCompareHSPs (nucl_hsp.evalue_order); stable
        recs = []
        for *_, e, bits, r in kept:
            sc, qs, qe, ss, se, c = r[:6]
            col, n, ident, gaps, opens, qres, sres = r[9:16]
            minus = bool(b.minus[c])
            qstart = qlen - qe + 1 if minus else qs + 1
            sstart, send = (se, ss + 1) if minus else (ss + 1, ss + sres)
            recs.append(Alignment(str(query.qid), str(sid), int(qlen), int(s_len), int(sc), float(bits),
                                  float(e), qstart, qstart + qres - 1, sstart, send, qtext[col:col + n],
                                  stext[col:col + n], ident, ident, gaps, opens, subject_index=oid,
                                  subject_title=title, query_title=query.title,
                                  sstrand="minus" if minus else "plus"))
        out.append((qi, best_e, best_s, recs))
    return out, time.perf_counter() - t0


def _records(st, query, nt, oid, name, hsps, s_codes):
    """Alignment records of one (query, subject) pair's final HSPs, best first."""
    b = st.batch
    sid, title = name
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
