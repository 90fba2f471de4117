"""``blastp`` as a library call: queries (FASTA) against a database, BLAST+ 2.12's results.

``run_blastp`` yields one :class:`clalign.output.QueryHits` per query, in file order, holding
:class:`clalign.output.Alignment` records (the one output module writes them: ``-outfmt 6/7``
with any columns). Queries and subjects keep trailing ``*`` as BLAST+ does (the FASTA reader
strips and counts them, we put them back), so lengths and statistics match ``makeblastdb``
databases of the same file. With ``num_threads`` > 1 queries are driven concurrently and their
compiled work (scan, gapped and traceback stages, all releasing the GIL) runs in subject chunks on
``num_threads`` shared workers, so the CPU extends some queries while the device scans others.
Start-up overlaps too: the device's runtime and programs are made while the database is read,
its subjects upload while the queries are read and set up (all queries' setups go to the
workers first, in query order), and only a query's device phase waits for the device.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from ..data.alphabet import PROTEIN
from ..data.database import as_database
from ..data.fasta import parse_fasta
from ..output import Alignment, QueryHits, write_tabular
from ..runtime.jit import away, preload
from .engine import (PendingSubjects, QuerySkipped, Subjects, _add_times, _event, search_query,
                     search_statistics, setup_query)
from .matrix import blast_matrix
from .options import BlastpOptions
from .traceback import DEL, INS

STOP = 25  # NCBIstdaa '*'
_O, _X = PROTEIN.letters.index("O"), PROTEIN.letters.index("X")
_LETTERS = np.frombuffer(PROTEIN.letters.encode(), dtype=np.uint8)


def read_queries(path):
    """[(id, title, codes)] of a protein FASTA file, trailing stops kept."""
    p = parse_fasta(path, "protein")
    out, off = [], 0
    for k, n in enumerate(p.lengths.tolist()):
        codes = np.concatenate([np.asarray(p.residues[off:off + n], dtype=np.uint8),
                                np.full(int(p.stops[k]), STOP, dtype=np.uint8)])
        off += n
        qid = p.ids[k].decode("utf-8", "replace")
        desc = p.descriptions[k].decode("utf-8", "replace")
        out.append((qid, f"{qid} {desc}".strip(), codes))
    return out


def aligned_strings(q: np.ndarray, s: np.ndarray, hsp):
    """(qseq, sseq) with '-' for gaps, from an HSP's per-column ops."""
    ops = np.asarray(hsp.ops)
    qi = np.cumsum(ops != DEL) - 1 + hsp.q_start
    si = np.cumsum(ops != INS) - 1 + hsp.s_start
    qa = np.where(ops == DEL, ord("-"), _LETTERS[q[np.clip(qi, 0, len(q) - 1)]])
    sa = np.where(ops == INS, ord("-"), _LETTERS[s[np.clip(si, 0, len(s) - 1)]])
    return qa.astype(np.uint8).tobytes().decode(), sa.astype(np.uint8).tobytes().decode()


def search_codes(codes):
    """The query as BLAST+ searches with it: O (pyrrolysine) read as X (``GetSequenceProtein``;
    the printed alignment keeps the O, as BLAST+'s formatter reads the original sequence)."""
    if (codes == _O).any():
        codes = codes.copy()
        codes[codes == _O] = _X
    return codes


def _text(x):
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def _query_hits(qid, title, codes, subjects, hits, matrix, titles):
    out = []
    for oid, hsps in hits:
        s = subjects.residues[subjects.offsets[oid]:subjects.offsets[oid + 1]]
        sid = _text(subjects.ids[oid])
        for h in hsps:
            qseq, sseq = getattr(h, "aligned", None) or aligned_strings(codes, s, h)
            out.append(Alignment.make(qid, sid, len(codes), len(s), h.score, h.bit_score, h.evalue,
                                      h.q_start + 1, h.s_start + 1, qseq, sseq, scores=matrix,
                                      letters=PROTEIN.letters, counts=getattr(h, "counts", None),
                                      subject_index=oid,
                                      subject_title=titles(oid), query_title=title))
    return QueryHits(qid, len(codes), out, title)


def _warn_stderr(qid, message):
    print(f"clalign: warning: query {qid}: {message}", file=sys.stderr)


def _search(qid, codes, subjects, opts, stats, dev, times, warn, threads=1, pool=None, qs=None,
            stage=None):
    try:
        return search_query(search_codes(codes), subjects, opts, stats, dev, threads=threads,
                            times=times, pool=pool, qs=qs, stage=stage, shown=codes)
    except QuerySkipped as exc:
        warn(qid, str(exc))
        return []


def _psq_stream(db):
    """``protein_stream`` of a BLAST database path, else None (errors: as_database's to report)."""
    if not isinstance(db, (str, os.PathLike)):
        return None
    from ..data.blastdb import protein_stream

    try:
        return protein_stream(db)
    except Exception:   # noqa: BLE001 - the database is opened again next, which reports it
        return None


def _prepare_gapped(dev):
    """Build the device's preliminary gapped stage (program, subjects) ahead of the first query
    that needs it; an error here is raised again, where it belongs, by that query's own call."""
    from .device_gapped import for_device

    try:
        g = for_device(dev)
        if g is not None:
            g.prepare()
    except Exception:
        pass


#: compiled stages whose cached code ``run_blastp`` loads ahead of need, in the order of need
#: (``runtime.jit.preload``). Without a device: the query set-up (lookup table, Karlin block),
#: the CPU word finder, the gapped and traceback passes, the statistics, the output.
_SETUP = ("clalign.blast.lookup:_table_nb", "clalign.stats.karlin_nb:std_frequencies",
          "clalign.stats.karlin_nb:ungapped_karlin")
PRELOAD = _SETUP + ("clalign.blast.ungapped_nb:two_hit_db", "clalign.blast.stages_nb:prelim_chunk",
                    "clalign.stats._fast:spouge_evalues", "clalign.blast.stages_nb:traceback_chunk",
                    "clalign.output.record:counts_dispatcher()")
#: With a device: the block streams, then the gapped stage's replay and the traceback, the set-up
#: last. The queries' set-up runs while numba starts, in its numpy forms (the lookup table, the
#: Karlin block), so the first compiled code a device search waits for is the replay: in
#: PRELOAD's order the H100's 16 workers waited 1.68-2.32 s for ``prelim_chunk`` behind the Karlin
#: loads, with the device idle (docs/perf/blastp.md, run Y8); the set-up's compiled forms serve
#: the queries set up after.
PRELOAD_DEVICE = ("clalign.blast.device:_fill_stream", "clalign.blast.stages_nb:prelim_chunk",
                  "clalign.blast.stages_nb:traceback_chunk", "clalign.stats._fast:spouge_evalues",
                  "clalign.output.record:counts_dispatcher()") + _SETUP


#: Cores from which a device search runs its gapped stages in a process of their own by default:
#: the child starts numba on a core of its own. H100 host, 16 cores (docs/perf/blastp.md, run
#: y30): 2.23 s against 2.34 s at the median, 8 interleaved rounds; this 2-core VM (PoCL): the
#: child's start shares the two cores with the device, 0.86-1.08 s against 0.76-0.79 s.
STAGE_PROCESS_MIN_CPUS = 8
#: Most queries for which a device search runs its gapped stages in that process by default. It
#: takes numba's start off this process's interpreter lock, which pays in a search of seconds;
#: in its mode this process's query set-ups use their numpy forms (~13 ms of interpreter time a
#: query against ~1 ms compiled: 20 queries' lookup tables 0.27 vs 0.023 s on the VM) and each
#: query's rows cross a pipe, which would cost a search of hundreds of queries more than numba's
#: start. Above this, threads, as measured before (docs/perf/blastp.md run F11: 400 queries,
#: 10.2-10.4×).
STAGE_PROCESS_MAX_QUERIES = 64


def run_blastp(query_path, db, opts: BlastpOptions, num_threads: int = 1, device=None,
               times=None, warn=_warn_stderr, stage_process=None):
    """Yield a QueryHits per query, in query order.

    ``warn(query id, message)`` is told about queries BLAST+ would skip (default: stderr).
    ``device``: an OpenCL device spec ("P:D", a pyopencl Device) to run the word-hit, two-hit
    and ungapped phases there (the gapped phases stay on the CPU); None = all on the CPU. Word
    sizes other than 3 (``-task blastp-fast``) and the one-hit finder run on the CPU.
    With ``num_threads`` > 1, queries are driven concurrently and their compiled CPU work is cut
    into subject chunks run on ``num_threads`` shared workers, so with a device the CPU's gapped
    work on some queries overlaps the device's work on others. ``times``: dict collecting seconds
    per stage. ``stage_process``: with a device and ``num_threads`` > 1, run the gapped stages
    in a process of their own (``stage_remote``; numba then stays out of this process); False
    keeps them on this process's threads (same results); None (default): a process where the
    machine has at least :data:`STAGE_PROCESS_MIN_CPUS` cores and the search at most
    :data:`STAGE_PROCESS_MAX_QUERIES` queries."""
    dev, bg = None, None
    if not opts.device_ok:
        device = None   # the device kernels take the standard word-size-3 two-hit finder
    remote, keep_away, queries = None, contextlib.ExitStack(), None
    if stage_process is None and device is not None and num_threads > 1:
        queries = read_queries(query_path)
        stage_process = ((os.cpu_count() or 1) >= STAGE_PROCESS_MIN_CPUS
                         and len(queries) <= STAGE_PROCESS_MAX_QUERIES)
    if device is not None and num_threads > 1 and stage_process:
        from . import stage_remote

        remote = stage_remote.start(num_threads)
    if remote is not None:
        keep_away.enter_context(away())
        loader = None
    else:
        loader = preload(PRELOAD_DEVICE if device is not None else PRELOAD)
    if device is not None:
        # the device object in the background: runtime and programs while the database is
        # read, then the subjects' upload while the queries are set up
        from . import device as dmod

        bg = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clalign-device")
        ready, stream = Future(), Future()

        def make_device():
            t0 = time.perf_counter()
            made = dmod.DeviceUngapped(ready, device, stream=stream)
            if times is not None:
                times["device_setup"] = time.perf_counter() - t0
            bg.submit(_prepare_gapped, made)   # next on this thread, while the queries start
            return made

        dev = bg.submit(make_device)
    reader = None
    try:
        t_read = time.perf_counter()
        src = None
        try:
            if bg is not None:   # a BLAST database's own stream: the device fills from it at once
                src = _psq_stream(db)
                stream.set_result(src)
            if src is None:
                database = as_database(db, "protein")
                subjects = Subjects.from_database(database)
        except BaseException as exc:
            if bg is not None:
                if not stream.done():
                    stream.set_result(None)
                ready.set_exception(exc)
            raise
        if src is None:
            if bg is not None:
                ready.set_result(subjects)
            if times is not None:
                times["read_db"] = time.perf_counter() - t_read
        else:
            # the index gives the lengths: the residues are copied on a thread while the queries
            # are set up and launched (only the CPU stages and the output read them)
            reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clalign-read")
            lengths = np.diff(src[1]) - 1
            offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            database = reader.submit(_read_subjects, db, offsets, ready, times, t_read)
            subjects = PendingSubjects(offsets, ready)
        if remote is not None:
            remote.share_subjects(subjects)
        yield from _run(query_path, database, subjects, opts, num_threads, dev, times, warn,
                        remote, queries)
    finally:
        try:
            if reader is not None:
                reader.shutdown(wait=True)
            if bg is not None:
                bg.shutdown(wait=True)   # a device still uploading finishes before we return
            if loader is not None:
                loader.join()            # no load left running into the interpreter's exit
        finally:
            if remote is not None:
                remote.close()
                if times is not None:
                    times["share_subjects"] = remote.share_seconds
            keep_away.close()


def _read_subjects(db, offsets, ready, times, t0):
    """The database and its Subjects (into ``ready``), on the reader thread; returns the database."""
    try:
        database = as_database(db, "protein")
        subjects = Subjects.from_database(database)
        if not np.array_equal(subjects.offsets, offsets):
            raise RuntimeError("blastp: the database's index and residues disagree")
    except BaseException as exc:
        ready.set_exception(exc)
        raise
    ready.set_result(subjects)
    if times is not None:
        times["read_db"] = time.perf_counter() - t0
    return database


def _run(query_path, database, subjects, opts, num_threads, dev, times, warn, remote=None,
         queries=None):
    stats = search_statistics(subjects, opts)
    matrix = blast_matrix(opts.matrix)
    if queries is None:
        queries = read_queries(query_path)

    def titles(oid):
        d = database.result() if isinstance(database, Future) else database
        sid, desc = _text(d.ids[oid]), _text(d.descriptions[oid])
        return f"{sid} {desc}".strip()

    if num_threads <= 1:
        for qid, title, codes in queries:
            yield _query_hits(qid, title, codes, subjects,
                              _search(qid, codes, subjects, opts, stats, dev, times, warn),
                              matrix, titles)
        return
    # query setups ahead of their drivers, in start order (``lpt_order``), on the shared workers (the first
    # ``ahead`` at once: they run while the device object is made; then each driver submits the
    # setup ``ahead`` queries on, so thousands of queries neither queue their setups before the
    # first gapped work nor crowd the GIL at the start); query drivers (the device's phases,
    # vectorised bookkeeping) on one pool; the compiled CPU work of every query (scan, gapped
    # and traceback chunks) on the shared one, so all cores stay busy while the device works on
    # other queries
    cpu = ThreadPoolExecutor(max_workers=num_threads)
    drivers = ThreadPoolExecutor(max_workers=num_threads + DRIVERS_EXTRA)
    order = lpt_order([len(q[2]) for q in queries], LPT_WINDOW * num_threads)
    setups, ahead, lock = [None] * len(queries), 2 * num_threads, threading.Lock()

    def setup(k):   # k: a position in ``order``
        i = order[k]
        with lock:
            if setups[i] is None:
                setups[i] = cpu.submit(_timed_setup, search_codes(queries[i][2]), subjects, opts,
                                       stats, times)
            return setups[i]

    def drive(k):
        if k + ahead < len(order):
            setup(k + ahead)
        qid, _, codes = queries[order[k]]
        return _search(qid, codes, subjects, opts, stats, dev, times, warn, num_threads, cpu,
                       setup(k), remote)

    try:
        for k in range(min(ahead, len(order))):
            setup(k)
        futures = [None] * len(queries)
        for k, i in enumerate(order):
            futures[i] = drivers.submit(drive, k)
        for (qid, title, codes), fut in zip(queries, futures):
            yield _query_hits(qid, title, codes, subjects, fut.result(), matrix, titles)
    finally:
        drivers.shutdown(cancel_futures=True)
        cpu.shutdown(cancel_futures=True)


#: query drivers beyond ``num_threads`` (a driver mostly waits: for the device, for the shared
#: workers). With 16 drivers for 20 queries the last 4 started only when a query finished, at
#: 1.5 s of a 2.0 s search (docs/perf/blastp.md run 18); whether more pay is not measured yet
#: (``tools/bench_blastp_many --configs drivers4,...``), so none by default
DRIVERS_EXTRA = 4

#: queries are started longest first within windows of LPT_WINDOW x threads queries (in file order
#: from window to window, so output keeps flowing): a long query started last would leave its
#: gapped and traceback tail alone on the CPU after the device is done
LPT_WINDOW = 4


def lpt_order(lengths, window):
    """Positions 0..n-1 in the order the queries start: by window, longest first within one
    (ties in file order)."""
    out = []
    for w in range(0, len(lengths), max(1, window)):
        block = range(w, min(len(lengths), w + max(1, window)))
        out.extend(sorted(block, key=lambda i: -lengths[i]))
    return out


def _timed_setup(codes, subjects, opts, stats, times):
    """``setup_query`` on a worker; its seconds go to ``setup_cpu`` (``setup``: the drivers'
    waits for it)."""
    t0 = time.perf_counter()
    try:
        return setup_query(codes, subjects, opts, stats)
    finally:
        t1 = time.perf_counter()
        _add_times(times, (("setup_cpu", t1 - t0),))
        _event(times, "setup_cpu", t0, t1)


def tabular_lines(results, **kw):
    """``-outfmt 6`` rows (standard columns unless ``columns=``) of ``run_blastp``'s results."""
    fh = io.StringIO()
    write_tabular(fh, results, **kw)
    return fh.getvalue().splitlines()
