"""BLASTP phases 2-4 (word hits, two-hit rule, ungapped extension) on an OpenCL device.

``DeviceUngapped(subjects).initial_hsps(qs)`` gives the same rows as the CPU path
(``engine.initial_hsps``: subject, score, q_start, s_start, length, q_off, s_off, ordered by
``sort_init_hsps``). Subjects are uploaded once (blocks of at most ``BLOCK_RESIDUES`` residues
and 2**22 subjects, a SEPARATOR after each) and reused for every query.

Kernels (``KERNEL``; the tuning table picks 'subject' on CPU devices): 'chunk' (default,
``device_chunk``/``kernels/blast_chunk.mako``):
work-groups walk runs of subjects in chunks of positions, bin each chunk's hits by diagonal in
local memory and apply the two-hit rule and extension per bin; 'subject' and 'sorted'
(``device_legacy``/``kernels/blast_ungapped.mako``): the earlier designs, for comparison.

The chunk kernel's queries are pipelined: each query's host work (packing, its one upload on a
copy queue, the one read-back of its rows) happens outside the device's lock in the query's own
thread, with one of ``IN_FLIGHT`` reused sets of buffers; the lock covers only the enqueueing of
its launches, so the in-order queue always holds the next query's launches while the host reads
back the previous one's rows. Construction overlaps its parts too: the programs build (or load
from the caches) while the subjects are read and uploaded.
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from ..runtime.jit import njit, numpy_forms
import numpy as np
import pyopencl as cl

from ..errors import InputError, ParameterError
from ..runtime import Runtime, choose
from ..runtime.tuning import lookup
from . import device_legacy as legacy
from .device_chunk import MIN_OUT_ROWS, ChunkKernel, SlotPool, make_tasks
from .params import BLAST_CHUNK, BLAST_UNGAPPED, KEY_DIAG_BITS, KEY_POS_BITS, KEY_SUBJ_BITS, SEPARATOR
from .ungapped_nb import sort_init_hsps

BLOCK_RESIDUES = 1 << 25
#: Most queries of the chunk kernel in flight at once (each holds one reused set of buffers,
#: made on demand: ``device_chunk.SlotPool``): one running on the device, one or two queued
#: behind it, one being uploaded or read back. Measured on the H100 with 400 queries (docs/perf/
#: blastp.md, run s1): 4, 8 and 16 slots keep the device equally busy (span 8.6-8.8 s for 6.4 s
#: of kernels); what holds the queries back is their drivers, not the slots.
IN_FLIGHT = 4
#: Most threads filling the subject blocks' streams at start-up (one block each)
FILL_THREADS = 8


@njit(cache=True, nogil=True)
def _fill_stream(stream, residues, offsets, first, last, base, sep):
    """Subjects first..last-1 into ``stream`` at ``base``, ``sep`` after each and in the tail
    (element loops: a slice assignment compiles numba's shape-error path, seconds of compile)."""
    end = 0
    for k in range(last - first):
        a, b = offsets[first + k], offsets[first + k + 1]
        o = base[k]
        for i in range(b - a):
            stream[o + i] = residues[a + i]
        stream[o + b - a] = sep
        end = o + b - a + 1
    for i in range(end, stream.shape[0]):
        stream[i] = sep


def block_stream(subjects, first: int, last: int, pad: int):
    """(lengths int32, starts int64, stream length, stream) of subjects first..last-1 as the
    kernels read them: residues, a SEPARATOR after each, ``pad`` more at the end. Releases the
    GIL (blocks are filled on several threads)."""
    lens = np.diff(subjects.offsets[first:last + 1]).astype(np.int32)
    base = np.zeros(len(lens), dtype=np.int64)
    base[1:] = np.cumsum(lens[:-1] + 1)
    n = int(base[-1] + lens[-1] + 1) if len(lens) else 0
    stream = np.empty(n + pad, dtype=np.uint8)
    if numpy_forms(_fill_stream):   # numba kept out of this process (or still starting)
        a = int(subjects.offsets[first])
        ends = np.asarray(subjects.offsets[first + 1:last + 1], dtype=np.int64) - a
        stream[:n] = np.insert(subjects.residues[a:a + int(ends[-1]) if len(ends) else a],
                               ends, SEPARATOR)
        stream[n:] = SEPARATOR
    else:
        _fill_stream(stream, subjects.residues, subjects.offsets, first, last, base, SEPARATOR)
    return lens, base, n, stream


def psq_block(psq, starts, first: int, last: int, pad: int):
    """``block_stream``'s tuple for subjects first..last-1 of a BLAST database's ``.psq``
    (:func:`clalign.data.blastdb.protein_stream`): a copy of the slice with each sequence's NUL
    made a SEPARATOR (only those: a code inside a sequence is left as it is)."""
    a, b = int(starts[first]), int(starts[last])
    lens = (np.diff(starts[first:last + 1]) - 1).astype(np.int32)
    base = starts[first:last] - a
    stream = np.empty(b - a + pad, dtype=np.uint8)
    stream[:b - a] = psq[a:b]
    stream[starts[first + 1:last + 1] - 1 - a] = SEPARATOR
    stream[b - a:] = SEPARATOR
    return lens, base, b - a, stream


def block_bounds(lengths: np.ndarray, block_residues: int) -> list:
    """[(first, last)] subject runs of at most ``block_residues`` stream positions (residues
    plus a separator each; a longer subject alone) and 2**KEY_SUBJ_BITS subjects. Vectorised:
    the per-subject loop it replaces took ~1 s of the H100 run's start-up for 570,000 subjects."""
    stream = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64) + 1, out=stream[1:])
    out, first, n = [], 0, len(lengths)
    while first < n:
        last = int(np.searchsorted(stream, stream[first] + block_residues, side="right")) - 1
        last = min(max(last, first + 1), first + (1 << KEY_SUBJ_BITS), n)
        out.append((first, last))
        first = last
    return out


@dataclass
class _Block:
    first: int
    last: int
    n: int                  # stream length (residues + separators) without the tail pad
    max_slen: int
    res: cl.Buffer
    base: cl.Buffer         # int64 per subject: start in res
    lens: cl.Buffer
    lens_host: np.ndarray
    chunk: object = None    # device_chunk.ChunkTasks (KERNEL=chunk)
    order: cl.Buffer = None  # blast_scan tasks (KERNEL=subject)
    ntasks: int = 0
    nbuckets: cl.Buffer = None
    diag: cl.Buffer = None  # diagonal state of blast_scan, grown on demand
    diag_size: int = 0
    ready: object = None    # cl.Event of the residues' upload while it may still run
    host: np.ndarray = None  # the uploaded stream, alive until ``ready`` completes

    def wait_list(self):
        """[the upload's event] while it runs, then [] (and the host copy is let go)."""
        ev = self.ready
        if ev is None:
            return []
        if ev.command_execution_status == cl.command_execution_status.COMPLETE:
            self.ready = self.host = None
            return []
        return [ev]


@dataclass
class PhaseTimes:
    """Seconds per phase (device kernels from profiling events; sort and copies on the host)
    and counts (word hits, two-hit extensions, initial HSPs)."""

    hits: float = 0.0
    sort: float = 0.0
    two_hit: float = 0.0
    copies: float = 0.0
    counts: dict = field(default_factory=lambda: {"hits": 0, "extensions": 0, "init_hsps": 0})
    launches: list = field(default_factory=list)   # (start, end) ns of each chunk launch
    lock: object = field(default_factory=threading.Lock, repr=False)

    def kernel_span(self):
        """(seconds from the first launch's start to the last one's end, seconds of the
        union of the launches): how busy the queries kept the device."""
        if not self.launches:
            return 0.0, 0.0
        iv = sorted(self.launches)
        busy, end = 0, iv[0][0]
        for a, b in iv:
            busy += max(0, b - max(a, end))
            end = max(end, b)
        return (end - iv[0][0]) * 1e-9, busy * 1e-9


class DeviceUngapped:
    """Word hits, two-hit rule and ungapped extension of queries against fixed subjects."""

    def __init__(self, subjects, device=None, override=None, block_residues=BLOCK_RESIDUES,
                 stream=None):
        """``subjects``: :class:`engine.Subjects`, or a Future of them (the runtime is made and
        the programs start building while it completes). ``stream``: the same subjects as a
        BLAST database's ``(psq, starts)`` (``protein_stream``), or a Future of it or of None:
        the blocks are then filled from it without waiting for ``subjects`` (whose offsets the
        caller checks against it: ``blastp._read_subjects``)."""
        t0 = time.perf_counter()
        self.setup_times = {}   # seconds of the set-up's parts (tools/bench_blastp reports them)
        self.rt = Runtime.get(device)
        self.setup_times["runtime"] = time.perf_counter() - t0
        override = dict(override or {})
        names = set(BLAST_UNGAPPED.names())
        unknown = set(override) - names - set(BLAST_CHUNK.names())
        if unknown:
            raise ParameterError(f"blastp device: unknown parameter(s) {sorted(unknown)}")
        self.values = choose(BLAST_UNGAPPED, {}, lookup(BLAST_UNGAPPED.family, self.rt.caps),
                             {k: v for k, v in override.items() if k in names})
        self.kernel = self.values["KERNEL"]
        if self.kernel == "chunk":
            self.chunk = ChunkKernel(self.rt, {k: v for k, v in override.items()
                                               if k in BLAST_CHUNK.names()})
            self.wg = self.chunk.wg
            self.chunk.prebuild()
        else:
            self.prg = self.rt.program("blast_ungapped.mako", BLAST_UNGAPPED, self.values)
            self.k_hits = cl.Kernel(self.prg, "blast_hits")
            self.k_two_hit = cl.Kernel(self.prg, "blast_two_hit")
            self.k_scan = cl.Kernel(self.prg, "blast_scan")
            self.wg = self.values["WG"]
        self.events = None   # a list to record (key, thread, start, end) of each query's turn
        self.lock = threading.Lock()   # kernels' arguments are per object: one query at a time
        self.word = self.values["WORD"]
        t1 = time.perf_counter()
        self.setup_times["programs"] = t1 - t0 - self.setup_times["runtime"]
        if isinstance(stream, Future):
            stream = stream.result()
        if stream is None and isinstance(subjects, Future):
            subjects = subjects.result()
        t2 = time.perf_counter()
        self.setup_times["wait_subjects"] = t2 - t1
        self.times = PhaseTimes()
        if stream is not None:
            psq, starts = stream
            lengths = np.diff(starts) - 1
            fill = lambda ab: psq_block(psq, starts, ab[0], ab[1], self.word)
        else:
            lengths = np.diff(subjects.offsets)
            fill = lambda ab: block_stream(subjects, ab[0], ab[1], self.word)
        if len(lengths) and lengths.max() >= (1 << KEY_POS_BITS):
            raise InputError(f"subjects longer than {(1 << KEY_POS_BITS) - 1} residues are not "
                             "supported on the device path")
        # the residues go up asynchronously on the copy queue, block after block: a query's
        # launch on a block waits for that block's upload only (``_Block.wait_list``)
        # the blocks' streams are filled on several threads and uploaded in order as they come
        self.copy_queue = self.rt.new_queue()
        bounds = block_bounds(lengths, block_residues)
        workers = max(1, min(len(bounds), os.cpu_count() or 1, FILL_THREADS))
        if workers > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                self.blocks = [self._upload(ab, f) for ab, f in zip(bounds, pool.map(fill, bounds))]
        else:
            self.blocks = [self._upload(ab, fill(ab)) for ab in bounds]
        self.copy_queue.flush()
        self.setup_times["fill"] = time.perf_counter() - t2
        # from a stream, the residues may still be being read: ``subjects`` waits for them when
        # first asked (the preliminary gapped stage's upload), not the launches
        self._subjects = subjects
        pending = [ev for blk in self.blocks for ev in blk.wait_list()]
        if self.kernel != "chunk" and pending:   # the earlier kernels take no wait lists
            cl.wait_for_events(pending)
        if self.kernel == "chunk":   # buffer slots of the queries in flight, made on demand
            self._slots = SlotPool(self.rt, self.blocks, MIN_OUT_ROWS, IN_FLIGHT)
        self.setup_times["upload"] = time.perf_counter() - t2

    @property
    def subjects(self):
        """The :class:`engine.Subjects` (waiting for them while they are read)."""
        if isinstance(self._subjects, Future):
            self._subjects = self._subjects.result()
        return self._subjects

    def _upload(self, bounds, filled):
        first, last = bounds
        lens, base, n, stream = filled
        mf = cl.mem_flags
        ctx = self.rt.ctx
        buf = lambda a: cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        res = cl.Buffer(ctx, mf.READ_ONLY, stream.nbytes)
        ready = cl.enqueue_copy(self.copy_queue, res, stream, is_blocking=False)
        blk = _Block(first, last, n, int(lens.max()) if len(lens) else 0, res, buf(base),
                     buf(lens), lens, ready=ready, host=stream)
        if self.kernel == "chunk":
            blk.chunk = make_tasks(ctx, base, lens, self.chunk.values["TASK"])
        elif self.kernel == "subject":
            tasks, nb = legacy.scan_tasks(lens, self.values["SPLIT"])
            blk.order, blk.ntasks, blk.nbuckets = buf(tasks), len(tasks), buf(nb)
        return blk

    def _event(self, key, t0, t1):
        if self.events is not None:   # a timeline (tools/bench_blastp --trace)
            self.events.append((key, threading.get_ident(), t0, t1))

    def initial_hsps(self, qs) -> np.ndarray:
        """Initial HSPs of one query set up by ``engine.setup_query`` (sorted as the CPU path).
        Thread-safe: concurrent queries share the device (the chunk kernel's are pipelined)."""
        if self.kernel == "chunk":
            return sort_init_hsps(self._chunk_hsps(qs))
        t0 = time.perf_counter()
        with self.lock:
            t1 = time.perf_counter()
            try:
                rows = self._initial_hsps(qs)
            finally:
                self._event("dev_wait", t0, t1)
                self._event("dev_held", t1, time.perf_counter())
        return sort_init_hsps(rows)   # outside the lock: the next query's kernels start meanwhile

    def _chunk_hsps(self, qs) -> np.ndarray:
        """One query through the chunk kernel: prepare (its arrays packed in one upload) and a
        free slot, the upload, the turn (enqueue only), then the wait for the counters and one
        read of all blocks' rows, outside the lock."""
        t0 = time.perf_counter()
        nb = len(self.blocks)
        job = self.chunk.prepare(qs)
        slot = self._slots.get()
        ok = False
        try:
            uploads = slot.load(job, self.copy_queue)
            self.copy_queue.flush()    # another queue's commands wait for it: submit it
            t1 = time.perf_counter()
            with self.lock:
                t2 = time.perf_counter()
                done = self.chunk.enqueue(self.blocks, job, slot, uploads)
                self.rt.queue.flush()
            t3 = time.perf_counter()
            cl.wait_for_events([done, *job.events])   # the launches' too: their profiling times
            counts = slot.counts()
            over = np.flatnonzero(counts[:, 1] > np.asarray(slot.capacity))
            if len(over):   # launches that found more rows than reserved, redone with room
                which = range(nb) if slot.grow(int(counts[over, 1].max())) else over.tolist()
                with self.lock:
                    self.chunk.rerun(self.blocks, which, job, slot)
                counts = slot.counts()
            rows = slot.read_rows(self.copy_queue, counts[:, 1])
            rows[:, 0] += np.repeat(np.array([blk.first for blk in self.blocks], dtype=np.int32),
                                    counts[:, 1])
            ok = True
        finally:
            if not ok:   # an error: whatever this query enqueued ends before the slot is reused
                try:
                    self.rt.queue.finish()
                    self.copy_queue.finish()
                except cl.Error:
                    pass
            self._slots.put(slot)
        t4 = time.perf_counter()
        with self.times.lock:
            for ev in job.events:
                self.times.two_hit += (ev.profile.end - ev.profile.start) * 1e-9
                self.times.launches.append((ev.profile.start, ev.profile.end))
            self.times.counts["hits"] += int(counts[:, 2].sum())
            self.times.counts["extensions"] += int(counts[:, 3].sum())
            self.times.counts["init_hsps"] += len(rows)
        self._event("dev_prep", t0, t1)
        self._event("dev_wait", t1, t2)
        self._event("dev_held", t2, t3)
        self._event("dev_read", t3, t4)
        return rows

    def _initial_hsps(self, qs) -> np.ndarray:
        """The earlier kernels ('subject', 'sorted'), one query at a time under the lock."""
        ctx, mf = self.rt.ctx, cl.mem_flags
        lk = qs.lookup
        present = np.packbits(lk.present.astype(np.uint8), bitorder="little").view(np.uint8)
        present = np.concatenate([present, np.zeros((-len(present)) % 4, np.uint8)]).view(np.uint32)
        bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))
                for a in (present, lk.starts.astype(np.int32),
                          lk.qoffs.astype(np.int32) if len(lk.qoffs) else np.zeros(1, np.int32),
                          qs.codes.astype(np.uint8), qs.matrix[:28, :28].astype(np.int32).ravel())]
        b_present, b_starts, b_qoffs, b_query, b_matrix = bufs
        counter = cl.Buffer(ctx, mf.READ_WRITE, 4)
        out_rows = []
        for blk in self.blocks:
            if blk.max_slen + len(qs.codes) >= (1 << KEY_DIAG_BITS):
                raise InputError("query and subject too long for the device key layout")
            if self.kernel == "subject":
                rows = legacy.run_scan(self, blk, qs, b_query, b_matrix, b_present, b_starts,
                                       b_qoffs, counter)
            else:
                keys = legacy.run_hits(self, blk, b_present, b_starts, b_qoffs, counter)
                if len(keys) == 0:
                    continue
                rows = legacy.run_two_hit(self, blk, keys, qs, b_query, b_matrix, counter)
            rows[:, 0] += blk.first
            out_rows.append(rows)
        rows = np.concatenate(out_rows) if out_rows else np.zeros((0, 7), dtype=np.int32)
        self.times.counts["init_hsps"] += len(rows)
        return rows
