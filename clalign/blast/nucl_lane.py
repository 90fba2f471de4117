"""One lane of BLASTN's device blocks: an in-order queue with its own buffers, counters and
kernel objects, so that two blocks can be in flight at once (``BLASTN_SCAN.LANES``).

A block's host work between its kernels (the pieces, the keep/redo plan, the reads) leaves the
device idle; with two lanes the other lane's kernels run meanwhile. The kernels read their
counts from the counters buffer, so a block's first phase waits for the device once; every copy
(blocking or not) and event wait lets go of the interpreter lock in pyopencl, so a block's small
uploads travel together (:meth:`Lane.upload_packed`) and counters are zeroed by fills. Nothing
here is shared between lanes except the program and the read-only search buffers, and the
times dictionary (under a lock).
"""
from __future__ import annotations

import threading

import numpy as np
import pyopencl as cl

from .params import LANE_COUNTERS


class Lane:
    """A queue, buffers by role, the counters buffer and per-lane kernel objects (``set_args``
    and the launch must not interleave with another thread's)."""

    def __init__(self, rt, queue, times: dict, lock: threading.Lock, wg: int):
        self.rt, self.queue, self.times, self.lock, self.wg = rt, queue, times, lock, wg
        self.counters = cl.Buffer(rt.ctx, cl.mem_flags.READ_WRITE, 4 * LANE_COUNTERS)
        self.bufs = {}               # buffers by role, reused (grown when too small)
        self.events = []             # (event, times key) of the block's launches
        self.held = []               # host arrays of uploads not waited on
        self._kernels = {}
        self.seen = None             # most (pairs, word starts) per scan position of a block
        #: sub-buffer origins' alignment (bytes) of :meth:`upload_packed`
        self.align = max(16, int(queue.device.mem_base_addr_align) // 8)

    def kernel(self, prg, name: str):
        got = self._kernels.get((id(prg), name))
        if got is None:
            got = self._kernels[(id(prg), name)] = cl.Kernel(prg, name)
        return got

    def add(self, key, seconds):
        with self.lock:
            self.times[key] = self.times.get(key, 0.0) + seconds

    def launch(self, kernel, n, key, wg=None):
        """Enqueue ``kernel`` on ``n`` work-items (rounded up to work-groups of ``wg``, default
        the lane's); not waited on: the queue is in order and the next blocking read waits
        (kernel times: :meth:`kernel_times`)."""
        wg = wg or self.wg
        ev = cl.enqueue_nd_range_kernel(self.queue, kernel, (-(-n // wg) * wg,), (wg,))
        self.events.append((ev, key))

    def kernel_times(self):
        """Add the block's kernel times (profiling events) once a blocking read has passed them;
        the uploads' host arrays are free then too. An event already complete is not waited on
        (pyopencl's wait lets go of the interpreter lock, which the workers may then hold)."""
        done = cl.command_execution_status.COMPLETE
        for ev, key in self.events:
            if ev.command_execution_status != done:
                ev.wait()
            self.add(key, (ev.profile.end - ev.profile.start) * 1e-9)
        self.events = []
        self.held = []

    def buffer(self, role: str, nbytes: int):
        """A device buffer of at least ``nbytes`` for ``role``, kept for the next blocks (one
        allocation per role and size class instead of a dozen per block). Reuse is safe on the
        in-order queue: a later write is queued behind every earlier reader."""
        got = self.bufs.get(role)
        if got is None or got.size < nbytes:
            size = max(16, nbytes, min(nbytes + nbytes // 4, int(self.rt.caps.max_alloc)))
            got = self.bufs[role] = cl.Buffer(self.rt.ctx, cl.mem_flags.READ_WRITE, size)
        return got

    def upload(self, role: str, a):
        """``buffer(role)`` holding the array ``a``: a copy not waited on (``a`` is held until
        the block's last read, which the in-order queue puts after it)."""
        a = np.ascontiguousarray(a)
        buf = self.buffer(role, a.nbytes)
        if a.nbytes:
            self.write(buf, a)
        return buf

    def upload_packed(self, role: str, arrays):
        """The arrays in one buffer of ``role`` through one copy (pyopencl lets go of the
        interpreter lock on every copy, so a block's small uploads go together): a sub-buffer
        per array, each at an aligned origin (empty arrays get 4 bytes)."""
        arrays = [np.ascontiguousarray(a) for a in arrays]
        at, end = [], 0
        for a in arrays:
            at.append(end)
            end += -(-max(a.nbytes, 4) // self.align) * self.align
        host = np.zeros(end, np.uint8)
        for a, o in zip(arrays, at):
            host[o:o + a.nbytes] = a.reshape(-1).view(np.uint8)
        buf = self.buffer(role, end)
        self.write(buf, host)
        return [buf.get_sub_region(o, max(a.nbytes, 4)) for a, o in zip(arrays, at)]

    def write(self, buf, a):
        cl.enqueue_copy(self.queue, buf, a, is_blocking=False)
        self.held.append(a)

    def read_counters(self):
        got = np.zeros(LANE_COUNTERS, np.uint32)
        cl.enqueue_copy(self.queue, got, self.counters)
        return got

    def fetch(self, out, buf):
        """``buf``'s first ``out.nbytes`` read into the host array ``out``, not waited on; returns
        the read's event (:meth:`wait`). Reads queued together share one wait: the queue is in
        order, so the last one's event passes every command before it."""
        ev = cl.enqueue_copy(self.queue, out, buf, is_blocking=False)
        self.held.append(out)
        return ev

    def wait(self, ev):
        """The host waits for ``ev`` (and, the queue being in order, everything queued before)."""
        ev.wait()

    def read(self, buf, n, width, dtype=np.uint32):
        out = np.empty((n, width), dtype)
        if n:
            cl.enqueue_copy(self.queue, out, buf)
        return out

    def zero(self, index=None, value=0):
        """Counter ``index`` (default all four) set to ``value`` (0): a fill queued behind the
        launches, no read, no host array (and, unlike a copy, pyopencl's fill keeps the
        interpreter lock)."""
        at, n = (0, 4 * LANE_COUNTERS) if index is None else (4 * index, 4)
        cl.enqueue_fill_buffer(self.queue, self.counters, np.uint32(value), at, n)
