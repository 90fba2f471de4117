"""One lane of BLASTN's device blocks: an in-order queue with its own buffers, counters and
kernel objects, so that two blocks can be in flight at once (``BLASTN_SCAN.LANES``).

A block's host work between its kernels (reading counts and run tables, sums, the keep/redo
plan) leaves the device idle; with two lanes the other lane's kernels run meanwhile. Nothing
here is shared between lanes except the program and the read-only search buffers, and the
times dictionary (under a lock).
"""
from __future__ import annotations

import threading

import numpy as np
import pyopencl as cl


class Lane:
    """A queue, buffers by role, the counters buffer and per-lane kernel objects (``set_args``
    and the launch must not interleave with another thread's)."""

    def __init__(self, rt, queue, times: dict, lock: threading.Lock, wg: int):
        self.rt, self.queue, self.times, self.lock, self.wg = rt, queue, times, lock, wg
        self.counters = cl.Buffer(rt.ctx, cl.mem_flags.READ_WRITE, 16)
        self.bufs = {}               # buffers by role, reused (grown when too small)
        self.events = []             # (event, times key) of the block's launches
        self.held = []               # host arrays of uploads not waited on
        self._kernels = {}
        #: called with the queue once, before the lane's first launch (``Uploads.order``: the
        #: search's read-only buffers copied first)
        self.before_first = None

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
        if self.before_first is not None:
            first, self.before_first = self.before_first, None
            first(self.queue)
        ev = cl.enqueue_nd_range_kernel(self.queue, kernel, (-(-n // wg) * wg,), (wg,))
        self.events.append((ev, key))

    def kernel_times(self):
        """Add the block's kernel times (profiling events) once a blocking read has passed them;
        the uploads' host arrays are free then too."""
        for ev, key in self.events:
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

    def write(self, buf, a):
        cl.enqueue_copy(self.queue, buf, a, is_blocking=False)
        self.held.append(a)

    def read_counters(self):
        got = np.zeros(4, np.uint32)
        cl.enqueue_copy(self.queue, got, self.counters)
        return got

    def read(self, buf, n, width, dtype=np.uint32):
        out = np.empty((n, width), dtype)
        if n:
            cl.enqueue_copy(self.queue, out, buf)
        return out

    def zero(self, index):
        """Counter ``index`` set to 0 (a write queued behind the launches, not a read)."""
        a = np.zeros(1, np.uint32)
        cl.enqueue_copy(self.queue, self.counters, a, dst_offset=4 * index, is_blocking=False)
        self.held.append(a)
