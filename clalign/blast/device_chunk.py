"""Host side of ``kernels/blast_chunk.mako``: BLASTP phases 2-4 in one work-group-local launch.

Per block of subjects (uploaded once, ``device.DeviceUngapped``) the tasks are runs of whole
consecutive subjects of about ``TASK`` residues (a longer subject alone), longest first. Per
query the runtime places the diagonal state -- ``qlen + window`` ints rounded up to WG -- in
local memory when it fits beside a hit buffer of at least ``MIN_CAP`` entries (by default the
full CAP_MAX: on the H100 a state that shrank the hit buffer cost more rounds than global
memory's cached state costs), else in a per-work-group slice of global memory, and gives the hit buffer what local memory is left (at
most ``CAP_MAX`` entries). The presence bits go to local memory when they take at most a
sixteenth of it (on the H100's 48 KiB they stay global: measured as fast, and the hit buffer
gets the room). With ``BALANCE`` the hit buffer is two buffers of CAP entries (staging and
bins). ``GROUPS`` work-groups per compute unit loop over the tasks.

Per query (``device.DeviceUngapped.initial_hsps``) the host work stays out of the device's turn:
:meth:`ChunkKernel.prepare` packs the query's arrays, a :class:`Slot` (one of a few reused sets
of buffers, one per query in flight) lays them out behind the blocks' zeroed counters
(:class:`Arena`) and takes them up in one copy on a copy queue, the turn only sets the kernel's
arguments and enqueues one launch per block and the counters' read-back (nothing waits), and
the rows of all blocks come back after the turn in one rectangular read while the device runs
the next query's launches. Every OpenCL copy, flush and wait releases the interpreter lock and
takes it back (milliseconds each while 16 query drivers and the gapped stage share it: docs/
perf/blastp.md, runs s1 and 18), so a query makes as few as it can: one upload, one flush, its
turn, one wait for the counters, one read.
"""
from __future__ import annotations

import queue as _queue
import threading
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from ..errors import InputError
from ..runtime import choose
from ..runtime.tuning import lookup
from .params import BLAST_CHUNK, chunk_qbits

#: Least rows reserved for a block's initial HSPs (more when the block is long; a launch that
#: finds more is repeated with room for all).
MIN_OUT_ROWS = 1 << 14


class Arena:
    """One device buffer of named regions at fixed offsets, filled by one copy per use
    (:meth:`pack` lays the arrays out on the host as they lie on the device). The regions'
    sub-buffers are made once per allocation, never per use (a first form that made and
    released sub-buffers per query died with a segmentation fault on the H100 host, cause not
    isolated: docs/perf/blastp.md, run b1). An array that outgrows its region replaces the
    buffer (the regions it outgrew doubled); the old one is kept alive with its sub-buffers.
    The first ``heads`` x ``align`` bytes (zeroed by every copy) hold ``heads`` sub-buffers of
    ``head_size`` bytes (the chunk kernel's per-block counters)."""

    def __init__(self, ctx, align: int, flags, heads: int = 0, head_size: int = 16):
        self.ctx, self.align, self.flags = ctx, align, flags
        self.heads, self.head_size = heads, head_size
        self.caps, self.offsets, self.sub, self.head_subs = {}, {}, {}, []
        self.buf = None
        self._retired = []

    def fit(self, sizes: dict) -> bool:
        """Regions of at least ``sizes`` bytes (name -> bytes, in layout order); True when the
        buffer was replaced."""
        small = [n for n, b in sizes.items() if self.caps.get(n, -1) < b]
        if self.buf is not None and not small:
            return False
        for n in small:
            self.caps[n] = max(sizes[n], 2 * self.caps.get(n, 0), 16)
        at, self.offsets = self.heads * self.align, {}
        for n in self.caps:
            at = -(-at // self.align) * self.align
            self.offsets[n] = at
            at += self.caps[n]
        if self.buf is not None:
            self._retired.append((self.buf, self.sub, self.head_subs))
        self.buf = cl.Buffer(self.ctx, self.flags, max(at, 16))
        self.sub = {n: self.buf.get_sub_region(o, self.caps[n]) for n, o in self.offsets.items()}
        self.head_subs = [self.buf.get_sub_region(k * self.align, self.head_size)
                          for k in range(self.heads)]
        return True

    def pack(self, arrays: dict) -> np.ndarray:
        """The host image of the buffer's first bytes for one copy: zeros in the head and
        between regions, each array at its region's offset (``fit`` first)."""
        end = max([self.heads * self.align]
                  + [self.offsets[n] + a.nbytes for n, a in arrays.items()])
        host = np.zeros(end, dtype=np.uint8)
        for n, a in arrays.items():
            o = self.offsets[n]
            host[o:o + a.nbytes] = np.ascontiguousarray(a).view(np.uint8).ravel()
        return host


def sub_align(rt) -> int:
    """Bytes between sub-buffer origins on ``rt``'s device (at least 16: one block's counters)."""
    return max(16, rt.device.mem_base_addr_align // 8)


def _static_local(wg: int, pv_words: int, pv_local: bool, defer: bool, queue: int) -> int:
    """Bytes of local memory the kernel declares besides its two dynamic buffers: the matrix,
    the scan buffer (int2), six int arrays of WG, three ints, the presence bits when local, the
    extension queue (``queue`` uints per work-item and two counters) with DEFER, and 256 bytes
    of slack for the compiler."""
    return (28 * 28 * 4 + wg * 8 + 6 * wg * 4 + 12 + (4 * pv_words if pv_local else 0)
            + (4 * queue * wg + 8 if defer else 0) + 256)


@dataclass
class ChunkTasks:
    """Tasks of one block: int32 stream start, end and first subject, longest first."""

    start: cl.Buffer
    end: cl.Buffer
    subj: cl.Buffer
    base32: cl.Buffer
    count: int


def make_tasks(ctx, base: np.ndarray, lens: np.ndarray, task: int) -> ChunkTasks:
    """Runs of consecutive subjects whose starts fall in the same ``task``-residue window."""
    mf = cl.mem_flags
    n = len(lens)
    tid = base // task
    first = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1]]) if n else np.zeros(0, np.int64)
    last = np.r_[first[1:], n] - 1
    start = base[first]
    end = base[last] + lens[last]
    order = np.argsort(-(end - start), kind="stable")
    buf = lambda a: cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                              hostbuf=np.ascontiguousarray(a, dtype=np.int32) if len(a) else
                              np.zeros(1, np.int32))
    return ChunkTasks(buf(start[order]), buf(end[order]), buf(first[order]), buf(base),
                      len(first))


class ChunkKernel:
    """Programs (state local / global) and per-query launch of blast_chunk."""

    def __init__(self, rt, override=None):
        self.rt = rt
        caps = rt.caps
        pv_words = (1 << 15) // 32
        pv_local = 4 * pv_words <= caps.local_mem // 16
        base = choose(BLAST_CHUNK, {"PV_LOCAL": pv_local}, lookup(BLAST_CHUNK.family, caps), override)
        base["QBITS"] = chunk_qbits(base["WG"])
        self.values = BLAST_CHUNK.validate(base)
        self.wg = self.values["WG"]
        self.avail = caps.local_mem - _static_local(self.wg, pv_words, self.values["PV_LOCAL"],
                                                    self.values["DEFER"], self.values["QUEUE"])
        if self.avail < 4 * 32:
            raise InputError(f"{caps.name}: too little local memory for blast_chunk at WG={self.wg}")
        self.groups = max(1, caps.compute_units) * self.values["GROUPS"]
        self.align = sub_align(rt)
        self._kernels = {}
        self._global_state = None
        self._retired = []

    def kernel(self, state_local: bool):
        k = self._kernels.get(state_local)
        if k is None:
            prg = self.rt.program("blast_chunk.mako", BLAST_CHUNK,
                                  {**self.values, "STATE_LOCAL": state_local})
            k = self._kernels[state_local] = cl.Kernel(prg, "blast_chunk")
        return k

    def placement(self, qlen: int, window: int):
        """(nstate, state in local memory?, hit buffer entries) for one query."""
        wg, v = self.wg, self.values
        if qlen >= (1 << v["QBITS"]):
            raise InputError(f"queries of {qlen} residues are too long for the device path "
                             f"(at most {(1 << v['QBITS']) - 1} at WG={wg})")
        nstate = -(-(qlen + max(window, 0) + 1) // wg) * wg
        words = self.avail // 4
        per = 2 if v["BALANCE"] else 1                # hit buffer words per entry
        if v["STATE"] == "local" or (v["STATE"] == "auto" and nstate + per * v["MIN_CAP"] <= words):
            cap = min(v["CAP_MAX"], (words - nstate) // per)
            if cap < 32:
                raise InputError(f"the diagonal state of a {qlen}-residue query does not fit in "
                                 "local memory (STATE=local)")
            return nstate, True, cap
        return nstate, False, min(v["CAP_MAX"], words // per)

    def prebuild(self):
        """Start building (or loading from the caches) the programs that ``placement`` can
        choose, in the background; a later :meth:`kernel` call waits for its build."""
        places = {"local": (True,), "global": (False,)}.get(self.values["STATE"], (True, False))
        return self.rt.prebuild([("blast_chunk.mako", BLAST_CHUNK, {**self.values, "STATE_LOCAL": s})
                                 for s in places], threads=2)

    def prepare(self, qs) -> "Job":
        """Host side of one query, outside the device's turn: placement and packed arrays."""
        qlen, window = len(qs.codes), int(qs.opts.window)
        nstate, local, cap = self.placement(qlen, window)
        lk = qs.lookup
        present = np.packbits(lk.present.astype(np.uint8), bitorder="little").view(np.uint8)
        present = np.concatenate([present, np.zeros((-len(present)) % 4, np.uint8)]).view(np.uint32)
        arrays = {"present": present, "starts": np.ascontiguousarray(lk.starts, dtype=np.int32),
                  "matrix": np.ascontiguousarray(qs.matrix[:28, :28], dtype=np.int32).ravel(),
                  "query": np.ascontiguousarray(qs.codes, dtype=np.uint8),
                  "qoffs": np.ascontiguousarray(lk.qoffs, dtype=np.int32) if len(lk.qoffs)
                  else np.zeros(1, np.int32)}
        return Job(qs, qlen, window, nstate, local, cap, arrays)

    def _set_args(self, k, blk, job, slot, b, state):
        tasks = blk.chunk
        q = slot.q
        k.set_args(tasks.start, tasks.end, tasks.subj, np.int32(tasks.count), slot.counters[b],
                   blk.res, tasks.base32, blk.lens, q["query"], np.int32(job.qlen), q["present"],
                   q["starts"], q["qoffs"], q["matrix"], np.int32(job.window),
                   np.int32(job.qs.xdrop_ungapped), np.int32(job.qs.cutoff_ungapped), state,
                   np.int32(job.nstate), np.int32(-(-(blk.n + 1) // job.nstate) * job.nstate),
                   cl.LocalMemory(4 * job.cap * (2 if self.values["BALANCE"] else 1)),
                   np.int32(job.cap), slot.out[b], np.uint32(slot.capacity[b]))

    def _state(self, job):
        """The diagonal state argument: local memory, or the shared global slices (grown for a
        longer query; a replaced buffer is kept, launches still queued may use it)."""
        if job.local:
            return cl.LocalMemory(4 * job.nstate)
        need = 4 * job.nstate * self.groups
        if self._global_state is None or self._global_state.size < need:
            if self._global_state is not None:
                self._retired.append(self._global_state)
            self._global_state = cl.Buffer(self.rt.ctx, cl.mem_flags.READ_WRITE, need)
        return self._global_state

    def enqueue(self, blocks, job, slot, wait_for):
        """The device's turn: one launch per block and the counters' read-back, all enqueued on
        the in-order queue after ``wait_for`` (the slot's uploads); returns the read's event."""
        for blk in blocks:
            if -(-(blk.n + 1) // job.nstate) * job.nstate + job.qlen >= 2 ** 31:
                raise InputError("block too long for the device path's diagonal numbering")
        queue = self.rt.queue
        k = self.kernel(job.local)
        state = self._state(job)
        job.events = []
        wait_for = list(wait_for or ())
        for b, blk in enumerate(blocks):
            self._set_args(k, blk, job, slot, b, state)
            job.events.append(cl.enqueue_nd_range_kernel(queue, k, (self.wg * self.groups,),
                                                         (self.wg,),
                                                         wait_for=wait_for + blk.wait_list() or None))
            wait_for = []
        return cl.enqueue_copy(queue, slot.host_counters, slot.arena.buf, is_blocking=False)

    def rerun(self, blocks, which, job, slot):
        """Blocks ``which`` again (their launches found more rows than the slot had room for;
        ``Slot.grow`` made it) and the counters read back; called with the device's lock held,
        waits for the launches."""
        queue = self.rt.queue
        k = self.kernel(job.local)
        state = self._state(job)
        evs = []
        for b in which:
            cl.enqueue_fill_buffer(queue, slot.counters[b], np.uint32(0), 0, 16)
            self._set_args(k, blocks[b], job, slot, b, state)
            evs.append(cl.enqueue_nd_range_kernel(queue, k, (self.wg * self.groups,), (self.wg,)))
        read = cl.enqueue_copy(queue, slot.host_counters, slot.arena.buf, is_blocking=False)
        cl.wait_for_events([read, *evs])
        job.events.extend(evs)


@dataclass
class Job:
    """One query's launch parameters and packed host arrays (``ChunkKernel.prepare``)."""

    qs: object
    qlen: int
    window: int
    nstate: int
    local: bool
    cap: int
    arrays: dict     # present, starts, matrix, query, qoffs (fixed sizes first: Arena's layout)
    events: list = None


class Slot:
    """Device buffers of one query in flight, reused by the next: ``arena`` holds per block a
    counters sub-buffer (four uints at the device's sub-buffer alignment: one read brings them
    all back) and then the query's arrays (one upload writes both); ``out_buf`` holds per block
    ``stride`` rows (sub-buffers ``out``: one rectangular read brings all blocks' rows back).
    ``capacity``: rows a block's launch may write (the kernel counts the rest)."""

    def __init__(self, rt, blocks, min_rows):
        self.rt = rt
        self.align = sub_align(rt)
        self.nblocks = len(blocks)
        self.host_counters = np.zeros((max(1, self.nblocks), self.align // 4), dtype=np.uint32)
        self.arena = Arena(rt.ctx, self.align, cl.mem_flags.READ_WRITE, heads=self.nblocks)
        self._host = None
        self._retired = []
        self.out_buf = None
        self._make_out(self.stride_for(blocks, min_rows, self.align))

    @property
    def counters(self):
        """Per block, the sub-buffer of its four counters."""
        return self.arena.head_subs

    @property
    def q(self):
        """The query's arrays by name (sub-buffers of ``arena``)."""
        return self.arena.sub

    @staticmethod
    def stride_for(blocks, min_rows, align) -> int:
        """Rows per block in the output buffer: the most a block reserves (``min_rows``, or a
        row per 256 stream positions), rounded so each block's rows start at a sub-buffer
        boundary (28 bytes a row)."""
        rows = max([min_rows] + [blk.n >> 8 for blk in blocks])
        step = align // 4     # 28 * step is a multiple of align (a power of two >= 16)
        return -(-rows // step) * step

    @classmethod
    def nbytes(cls, blocks, min_rows, align=16) -> int:
        """Device bytes of one slot's output buffer (the query's arrays aside)."""
        return 28 * max(1, len(blocks)) * cls.stride_for(blocks, min_rows, align)

    def _make_out(self, stride):
        """A new output buffer (the old one kept alive with its sub-buffers, see Arena)."""
        if self.out_buf is not None:
            self._retired.append((self.out_buf, self.out))
        self.stride = stride
        n = max(1, self.nblocks)
        self.out_buf = cl.Buffer(self.rt.ctx, cl.mem_flags.READ_WRITE, 28 * stride * n)
        self.out = [self.out_buf.get_sub_region(28 * stride * b, 28 * stride)
                    for b in range(self.nblocks)]
        self.capacity = [stride] * self.nblocks

    def grow(self, rows) -> bool:
        """Room for ``rows`` rows in every block; True when the output buffer was replaced (the
        rows every block wrote are gone: all are redone)."""
        if rows <= self.stride:
            self.capacity = [self.stride] * self.nblocks
            return False
        step = self.align // 4
        self._make_out(-(-rows // step) * step)
        return True

    def counts(self) -> np.ndarray:
        """int64 (blocks, 4) counters read back: next task, rows, word hits, extensions."""
        return self.host_counters[:self.nblocks, :4].astype(np.int64)

    def load(self, job, queue):
        """Upload the job's arrays behind zeroed counters in one copy (regions grown when too
        small) on ``queue`` without waiting; returns [its event]."""
        self.arena.fit({name: a.nbytes for name, a in job.arrays.items()})
        host = self._host = self.arena.pack(job.arrays)    # alive until the copy is done
        return [cl.enqueue_copy(queue, self.arena.buf, host, is_blocking=False)]

    def read_rows(self, queue, totals) -> np.ndarray:
        """int32 (sum(totals), 7): the first ``totals[b]`` rows of every block, block after
        block, in one blocking rectangular read (``max(totals)`` rows of each block)."""
        totals = np.asarray(totals, dtype=np.int64)
        most = int(totals.max()) if len(totals) else 0
        if most == 0:
            return np.zeros((0, 7), dtype=np.int32)
        host = np.empty((self.nblocks, most, 7), dtype=np.int32)
        cl.enqueue_copy(queue, host, self.out_buf, buffer_origin=(0, 0), host_origin=(0, 0),
                        region=(28 * most, self.nblocks), buffer_pitches=(28 * self.stride,),
                        host_pitches=(28 * most,), is_blocking=True)
        return host[np.arange(most)[None, :] < totals[:, None]]


class SlotPool:
    """At most ``limit`` slots, made on demand (a search of few queries makes few; the
    start-up makes none), fewer where their output buffers would take more than an eighth of
    the device's memory; ``get`` waits for a free one when all are in use."""

    def __init__(self, rt, blocks, min_rows, limit):
        self.rt, self.blocks, self.min_rows = rt, blocks, min_rows
        per = max(1, Slot.nbytes(blocks, min_rows, sub_align(rt)))
        self.limit = max(2, min(limit, rt.device.global_mem_size // 8 // per))
        self.made = 0
        self._free = _queue.SimpleQueue()
        self._lock = threading.Lock()

    def get(self) -> Slot:
        try:
            return self._free.get_nowait()
        except _queue.Empty:
            pass
        with self._lock:
            make = self.made < self.limit
            self.made += make
        if make:
            try:
                return Slot(self.rt, self.blocks, self.min_rows)
            except BaseException:
                with self._lock:
                    self.made -= 1
                raise
        return self._free.get()

    def put(self, slot: Slot):
        self._free.put(slot)

    def idle(self) -> int:
        """Slots made and free now."""
        return self._free.qsize()

