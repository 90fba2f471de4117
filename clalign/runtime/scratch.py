"""Device buffers a thread reuses from launch to launch (per OpenCL context, by name).

Why: a search launches a few kernels per model, from several threads. Made and released per
launch, their buffers cost the driver an allocation at first use and a release at the end, and
pyopencl holds the interpreter lock through both (inside ``enqueue_nd_range_kernel`` and the
buffers' destructors). On the H100 host those held the lock ~22 of the 29 seconds the
1,000-model hmmsearch's device stage held it (py-spy ``--gil``, run y18). A buffer here grows
by doubling and is never shrunk; it lives as long as its thread.

Use: ``s = scratch(ctx)``, then ``s.upload(queue, name, array, keep)`` (a non-blocking copy:
``keep`` holds the host arrays until the caller has finished the queue) and
``s.buffer(name, nbytes)``. A buffer is only valid until the same thread asks for that name
again: callers finish their queue before returning.
"""
from __future__ import annotations

import threading

import numpy as np

_LOCAL = threading.local()


def scratch(ctx) -> "Scratch":
    """This thread's scratch buffers of context ``ctx``."""
    d = getattr(_LOCAL, "d", None)
    if d is None:
        d = _LOCAL.d = {}
    s = d.get(ctx.int_ptr)
    if s is None or s.ctx is not ctx:
        s = d[ctx.int_ptr] = Scratch(ctx)
    return s


class Scratch:
    """Named device buffers of one context, for one thread."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.bufs: dict = {}

    def buffer(self, name: str, nbytes: int):
        """A buffer of at least ``nbytes`` bytes (read-write; contents undefined)."""
        import pyopencl as cl

        b = self.bufs.get(name)
        if b is None or b.size < nbytes:
            size = max(16, int(nbytes), 2 * b.size if b is not None else 0)
            b = self.bufs[name] = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, size=size)
        return b

    def upload(self, queue, name: str, array, keep: list):
        """:meth:`buffer` ``name`` holding ``array`` (copied without blocking; the array is
        appended to ``keep``, which the caller holds until the queue is finished)."""
        import pyopencl as cl

        a = np.ascontiguousarray(array)
        b = self.buffer(name, a.nbytes)
        if a.nbytes:
            cl.enqueue_copy(queue, b, a, is_blocking=False)
            keep.append(a)
        return b
