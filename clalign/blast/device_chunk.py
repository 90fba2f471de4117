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
of buffers, one per query in flight) takes them up on a copy queue, the turn only sets the
kernel's arguments and enqueues one launch per block and the counters' read-back (nothing
waits), and the read-back of the rows happens after the turn while the device runs the next
query's launches.
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


def _static_local(wg: int, pv_words: int, pv_local: bool) -> int:
    """Bytes of local memory the kernel declares besides its two dynamic buffers: the matrix,
    the scan buffer (int2), six int arrays of WG, three ints, the presence bits when local, and
    256 bytes of slack for the compiler."""
    return 28 * 28 * 4 + wg * 8 + 6 * wg * 4 + 12 + (4 * pv_words if pv_local else 0) + 256


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
        self.avail = caps.local_mem - _static_local(self.wg, pv_words, self.values["PV_LOCAL"])
        if self.avail < 4 * 32:
            raise InputError(f"{caps.name}: too little local memory for blast_chunk at WG={self.wg}")
        self.groups = max(1, caps.compute_units) * self.values["GROUPS"]
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
                  "qoffs": np.ascontiguousarray(lk.qoffs, dtype=np.int32) if len(lk.qoffs)
                  else np.zeros(1, np.int32),
                  "query": np.ascontiguousarray(qs.codes, dtype=np.uint8),
                  "matrix": np.ascontiguousarray(qs.matrix[:28, :28], dtype=np.int32).ravel()}
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
        return cl.enqueue_copy(queue, slot.host_counters, slot.counter_buf, is_blocking=False)

    def rerun(self, blk, b, job, slot, need):
        """Block ``b`` again with room for ``need`` rows (its launch found more than reserved);
        called with the device's lock held, waits for the launch."""
        slot.grow(b, need)
        queue = self.rt.queue
        cl.enqueue_fill_buffer(queue, slot.counters[b], np.uint32(0), 0, 16)
        k = self.kernel(job.local)
        self._set_args(k, blk, job, slot, b, self._state(job))
        ev = cl.enqueue_nd_range_kernel(queue, k, (self.wg * self.groups,), (self.wg,))
        got = np.zeros(4, dtype=np.uint32)
        cl.enqueue_copy(queue, got, slot.counters[b], wait_for=[ev])
        job.events.append(ev)
        slot.host_counters[b, :4] = got


@dataclass
class Job:
    """One query's launch parameters and packed host arrays (``ChunkKernel.prepare``)."""

    qs: object
    qlen: int
    window: int
    nstate: int
    local: bool
    cap: int
    arrays: dict
    events: list = None


class Slot:
    """Device buffers of one query in flight, reused by the next: the query's arrays, per block
    a counters sub-buffer (four uints, at the device's sub-buffer alignment in one buffer, so one
    fill clears them and one read brings them back) and an output buffer of ``capacity`` rows."""

    def __init__(self, rt, blocks, min_rows):
        self.rt, mf = rt, cl.mem_flags
        align = max(16, rt.device.mem_base_addr_align // 8)
        self.stride = align
        n = max(1, len(blocks))
        self.counter_buf = cl.Buffer(rt.ctx, mf.READ_WRITE, align * n)
        self.counters = [self.counter_buf.get_sub_region(b * align, 16) for b in range(len(blocks))]
        self.host_counters = np.zeros((n, align // 4), dtype=np.uint32)
        self.capacity = [max(min_rows, blk.n >> 8) for blk in blocks]
        self.out = [cl.Buffer(rt.ctx, mf.READ_WRITE, 28 * c) for c in self.capacity]
        self.q = {}
        self._host = None
        self._matrix = None    # the score matrix whose copy the slot's buffer holds

    @staticmethod
    def nbytes(blocks, min_rows) -> int:
        """Device bytes of one slot's output buffers (the query's arrays aside)."""
        return sum(28 * max(min_rows, blk.n >> 8) for blk in blocks)

    def grow(self, b, rows):
        self.capacity[b] = rows
        self.out[b] = cl.Buffer(self.rt.ctx, cl.mem_flags.READ_WRITE, 28 * rows)

    def load(self, job, queue):
        """Upload the job's arrays (buffers grown when too small) and clear the counters, on
        ``queue`` without waiting; returns the events."""
        evs = []
        for name, a in job.arrays.items():
            if name == "matrix" and self._matrix is job.qs.matrix and "matrix" in self.q:
                continue       # the same (read-only) matrix as this slot's last query
            buf = self.q.get(name)
            if buf is None or buf.size < a.nbytes:
                buf = self.q[name] = cl.Buffer(self.rt.ctx, cl.mem_flags.READ_ONLY,
                                               max(a.nbytes, 2 * (buf.size if buf else 0), 64))
            evs.append(cl.enqueue_copy(queue, buf, a, is_blocking=False))
        evs.append(cl.enqueue_fill_buffer(queue, self.counter_buf, np.uint32(0), 0,
                                          self.counter_buf.size))
        self._host = job.arrays      # alive until the copies are done
        self._matrix = job.qs.matrix if not job.qs.matrix.flags.writeable else None
        return evs


class SlotPool:
    """At most ``limit`` slots, made on demand (a search of few queries makes few; the
    start-up makes none), fewer where their output buffers would take more than an eighth of
    the device's memory; ``get`` waits for a free one when all are in use."""

    def __init__(self, rt, blocks, min_rows, limit):
        self.rt, self.blocks, self.min_rows = rt, blocks, min_rows
        per = max(1, Slot.nbytes(blocks, min_rows))
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

