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

from ..data.nucleotide import BLASTNA_LETTERS, NCBI4NA_TO_BLASTNA, open_nucleotide
from ..output import Alignment, write_tabular
from ..output.columns import QueryTable
from ..runtime.gcpause import paused
from ..runtime.jit import preload
from .nucl_hsp import DEL, INS, evalue_order
from .nucl_lookup import _COMPLEMENT as COMPLEMENT   # BLASTNA's complement, one table
from .hsp import evalue_rank
from .nucl_pairs import FinalHits, PrelimHits
from .nucl_preload import stages
from .nucl_search import (hsps_of_rows, prelim_combine_rows, prelim_piece_rows, prelim_subject_rows,
                          rows_of_hsps, subject_array, subject_chunks)
from .nucl_setup import BlastnOptions, invalid_queries, read_queries, setup_search
from .nucl_words import DiagState

LETTERS = np.frombuffer(BLASTNA_LETTERS.encode(), dtype=np.uint8)


def _start_device(device):
    """The device's runtime (platform, context, probe, queue) and the tuning table's choice for
    BLASTN (:func:`nucl_device.use_device`, which imports the table's providers) made on a
    thread, beside the query set-up, which the device's first block needs; errors are left to
    the search's own calls, which ask for the same runtime and report them."""
    from ..cl_early import ahead

    def make():
        from .nucl_device import use_device

        use_device(device)

    ahead("clalign-blastn-device", make)


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
               num_threads: int = 1, device=None, table: bool = False):
    """[QueryHits] of every query, in file order (``table``: a sequence of them, possibly a
    :class:`~clalign.output.columns.QueryTable`, which the writers read without an object
    per query). ``warn(query id, message)`` is told about
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
    The stages' cached compiled code is loaded on a thread from the start (``nucl_preload.stages``); Python's
    full garbage collections are paused meanwhile (:mod:`clalign.runtime.gcpause`)."""
    t0 = time.perf_counter()
    loader = preload(stages(device))   # what the command's early preload left out
    if device is not None:
        _start_device(device)
    try:
        with paused():               # no full collections of the process's objects mid-search
            got = _run(query_path, db, opts, progress, warn, times, num_threads, device, t0)
        return got if table or isinstance(got, list) else list(got)
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
    a lock, once per subject, and each piece's share kept until its worker takes it (and sorts
    it, outside the lock: ``NuclDeviceWords.hits``)."""

    def __init__(self, dev, nt):
        self.dev, self.nt, self.lock, self.held = dev, nt, threading.Lock(), {}

    def piece(self, oid, k):
        with self.lock:
            got = self.held.get(oid)
            if got is None:
                got = self.held[oid] = [self.dev.pairs(oid, raw=True),
                                        len(subject_chunks(int(self.nt.lengths[oid])))]
            got[1] -= 1
            if got[1] == 0:
                del self.held[oid]
            chunk = got[0][k]
        return self.dev.hits(chunk)


def _prelim_rows_all(st, nt, oids, times, pool, dev=None):
    """(oid, preliminary rows, their E-values and bit scores) of every subject in OID order
    (:func:`nucl_search.prelim_combine_rows`), on the pool when there is one; ``dev``: the
    device's word finder (:func:`nucl_device.device_words`) or None."""
    if pool is None:
        diag = DiagState(len(st.batch.seq))
        for oid in oids:
            yield (oid,) + prelim_subject_rows(st, diag, nt.packed(oid), int(nt.lengths[oid]), times,
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
            out.append((oid, off, prelim_piece_rows(st, diag, s, off, n, times,
                                                    None if words is None else words.piece(oid, k))))
        return out

    cur, pieces = -1, []
    for res in pool.map(work, _prelim_groups(nt, oids)):
        for oid, off, rows in res:
            if oid != cur and cur >= 0:
                yield (cur,) + prelim_combine_rows(st, pieces)
                pieces = []
            cur = oid
            pieces.append((off, rows))
    if cur >= 0:
        yield (cur,) + prelim_combine_rows(st, pieces)


def _prelim_all(st, nt, oids, times, pool, dev=None):
    """(oid, preliminary HSPs with E-values) of every subject in OID order: :func:`_prelim_rows_all`
    as [NHSP] (the query chunks' search, :func:`nucl_split.split_prelim`)."""
    for oid, rows, e, bits in _prelim_rows_all(st, nt, oids, times, pool, dev):
        hsps = hsps_of_rows(rows)
        for h, ev, bs in zip(hsps, e.tolist(), bits.tolist()):
            h.evalue, h.bit_score = ev, bs
        yield oid, hsps


def _search(st, queries, nt, opts, progress, times, pool, threads, device=None, split=None):
    from ..data.deflines import subject_ids

    clock = time.perf_counter
    t0 = clock()
    b = st.batch
    hits = PrelimHits(b.query_of)
    oids = range(len(nt) if st.ctx_valid.any() else 0)
    dev = None
    if split is not None and st.ctx_valid.any():
        from .nucl_split import split_prelim
        prelim = ((oid, rows_of_hsps(hs), np.array([h.evalue for h in hs], dtype=np.float64), None)
                  for oid, hs in split_prelim(st, queries, nt, opts, split, _prelim_all,
                                              _prelim_hitlist_size(opts.max_target_seqs), times,
                                              pool, device))
    else:
        if device is not None and st.flat is not None and st.ctx_valid.any():
            from .nucl_device import device_words   # scan/lookup/mini-extension on the device
            dev = device_words(nt, st, device, times, hits=True)
        prelim = _prelim_rows_all(st, nt, oids, times, pool, dev)
    for oid, rows, e, _ in prelim:
        if progress is not None:
            progress(oid)
        hits.add(oid, rows, e)
    times["prelim"] = times.get("prelim", 0.0) + clock() - t0   # wall, words included
    t0 = clock()
    # traceback subject by subject (each subject's codes restored once): units of at most a
    # 4 * threads-th of all (query, subject) pairs (nucl_pairs)
    units = hits.units(_prelim_hitlist_size(opts.max_target_seqs), threads)
    ids = subject_ids(nt)
    names = _Names(queries, {oid: (ids.sacc(oid), ids.stitle(oid))   # BLAST+'s accession.version, title
                             for oid in sorted({u[0] for u in units})})
    codes = _SubjectCodes(nt, [u[0] for u in units])

    def work(unit):
        oid, qis, P, first = unit
        s_codes = codes.get(oid)
        try:
            got = _unit_records(st, names, oid, qis, P, first, s_codes, int(nt.lengths[oid]))
        finally:
            codes.release(oid)
        return oid, got   # the records' seconds summed here, added by the caller (no shared dict)

    final = FinalHits()
    for oid, (kq, best_e, best_s, block, bounds, rec_s) in (pool.map if pool is not None else map)(work, units):
        times["records"] = times.get("records", 0.0) + rec_s
        final.add_block(oid, kq, best_e, best_s, block, bounds)
    times["traceback"] = times.get("traceback", 0.0) + clock() - t0   # wall, records included
    table, rows, bounds = final.hit_spans(len(queries), opts.max_target_seqs, opts.max_hsps)
    # the results as arrays (each query's rows a span of one array), QueryHits made when asked for
    return QueryTable([q.qid for q in queries], names.qlen, [q.title for q in queries], table, rows,
                      bounds)


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
    that keep an HSP, seconds of the records' Python): :func:`_unit_records` of the pairs' rows,
    its records made into :class:`~clalign.output.Alignment` objects.
    ``nucl_search.traceback_subject`` and :func:`alignment_record` make the same pair by pair
    (their specs)."""
    P = rows_of_hsps([h for _, hs in pairs for h in hs])
    first = np.zeros(len(pairs) + 1, dtype=np.int64)
    np.cumsum([len(hs) for _, hs in pairs], out=first[1:])
    qis = np.array([qi for qi, _ in pairs], dtype=np.int64)
    kq, best_e, best_s, block, bounds, rec_s = _unit_records(st, _Names(queries, {oid: name}), oid, qis, P,
                                                             first, s_codes, s_len)
    recs = [] if block is None else block.alignments(np.arange(len(block)))
    b = bounds.tolist()
    return [(q, e, sc, recs[lo:hi]) for q, e, sc, lo, hi in
            zip(kq.tolist(), best_e.tolist(), best_s.tolist(), b[:-1], b[1:])], rec_s


class _Names:
    """What a work unit's records need of the queries and subjects: (id, title) per query, its
    length, and (id, title) per subject ``oid`` (those of the units)."""

    def __init__(self, queries, subjects):
        self.queries = [(str(q.qid), q.title) for q in queries]
        self.qlen = np.array([len(q.codes) for q in queries], dtype=np.int64)
        self.subjects = {oid: (str(sid), title) for oid, (sid, title) in subjects.items()}


def _unit_records(st, names, oid, qis, P, first, s_codes, s_len):
    """The traceback of a work unit's pairs (query ``qis[k]``, preliminary rows
    ``P[first[k]:first[k + 1]]``, one subject): (queries, best E-values, best scores, per pair
    that keeps an HSP; the records as an :class:`~clalign.output.columns.RecordColumns` block
    (None if none), pair ``k``'s its rows ``bounds[k]:bounds[k + 1]``, best first; seconds of
    the records' Python). One compiled call does every pair's traceback and the records' columns
    (:func:`nucl_stages_nb.traceback_unit`); E-values, the E-value cut, the order and the
    columns are made here with numpy, no Python per record (the aligned strings stay codes)."""
    from ..output.columns import RecordColumns
    from .nucl_stages_nb import traceback_unit

    o, b = st.opts, st.batch
    R, QA, SA = traceback_unit(P, first, b.seq, b.offsets, b.lengths,
                               np.ascontiguousarray(b.minus, dtype=np.bool_), s_codes, s_len, o.greedy,
                               st.matrix, o.reward, o.penalty, o.gap_open, o.gap_extend,
                               st.xdrop_final, o.min_diag_separation, float(o.perc_identity),
                               st.cutoff_gapped, COMPLEMENT)
    t0 = time.perf_counter()
    e, bits = st.evalues_bits(R[:, 0], R[:, 5])
    keep = np.flatnonzero(e <= o.evalue)
    R, e, bits = R[keep], e[keep], bits[keep]
    if not len(R):
        z = np.zeros(0, dtype=np.int64)
        return z, np.zeros(0), z, None, np.zeros(1, dtype=np.int64), time.perf_counter() - t0
    # each pair's HSPs in s_EvalueCompareHSPs order (stable), pairs in unit order
    order = np.lexsort((np.arange(len(R)), -R[:, 2], R[:, 1], -R[:, 4], R[:, 3], -R[:, 0],
                        evalue_rank(e), R[:, 8]))
    R, e, bits = R[order], e[order], bits[order]
    pair = R[:, 8]
    starts = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
    best_e = np.minimum.reduceat(e, starts)
    best_s = np.maximum.reduceat(R[:, 0], starts)
    kq = np.asarray(qis, dtype=np.int64)[pair[starts]]
    minus = np.asarray(b.minus, dtype=bool)[R[:, 5]]
    qi = np.asarray(qis, dtype=np.int64)[pair]
    qlen = names.qlen[qi]
    qs, qe, ss, se, qres, sres = R[:, 1], R[:, 2], R[:, 3], R[:, 4], R[:, 14], R[:, 15]
    qstart = np.where(minus, qlen - qe + 1, qs + 1)
    n = len(R)
    num = {"qlen": qlen, "slen": np.full(n, s_len, dtype=np.int64), "score": R[:, 0], "bitscore": bits,
           "evalue": e, "qstart": qstart, "qend": qstart + qres - 1, "sstart": np.where(minus, se, ss + 1),
           "send": np.where(minus, ss + 1, ss + sres), "nident": R[:, 11], "positive": R[:, 11],
           "gaps": R[:, 12], "gapopen": R[:, 13], "length": R[:, 10],
           "subject_index": np.full(n, oid, dtype=np.int64)}
    block = RecordColumns(num, qi, names.queries, num["subject_index"], names.subjects, minus, R[:, 9],
                          QA, SA, LETTERS)
    return kq, best_e, best_s, block, np.r_[starts, n], time.perf_counter() - t0


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
    return _tabular(results, kw).splitlines()


#: the line breaks ``str.splitlines`` knows besides "\n" ("\r\n" counts as one)
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def tabular_text(results, **kw):
    """The text the command writes: each of :func:`tabular_lines` followed by "\n", made without
    splitting and joining 100,000 lines again when no field holds another line break."""
    text = _tabular(results, kw)
    if any(c in text for c in _OTHER_BREAKS):
        return "".join(line + "\n" for line in text.splitlines())
    return text if not text or text.endswith("\n") else text + "\n"


def _tabular(results, kw) -> str:
    fh = io.StringIO()
    write_tabular(fh, results, program="BLASTN 2.12.0+", **kw)
    return fh.getvalue()
