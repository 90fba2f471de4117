"""Read-only search buffers filled by copies on a thread of their own, off the caller's path.

``cl.Buffer(..., COPY_HOST_PTR, hostbuf=...)`` copies inside the constructor with the interpreter
lock held (pyopencl does not release it there); for 100,000 reads the lookup table's query
offsets, its cell starts, the batch and the compressed query are ~0.6 GB, which the main thread
spent copying before the device's first block could be queued (docs/perf/blastn.md, y49).
:class:`Uploads` makes the buffers empty at once and fills them with non-blocking
``enqueue_copy`` calls (which release the lock) on a thread and a queue of its own; each queue
that runs kernels reading them calls :meth:`Uploads.order` once before its first launch: an
``enqueue_barrier`` waiting for the copies' events, so everything that queue runs after it sees
the data. The host arrays are held as long as this object lives (OpenCL's rule for copies not
waited on).
"""
from __future__ import annotations

import threading

import numpy as np
import pyopencl as cl


class Uploads:
    """Device copies of host arrays, queued on a thread (:meth:`add`, then :meth:`start`)."""

    def __init__(self, rt):
        self.rt = rt
        self._items = []             # (buffer, host array), in the order added
        self._events = []            # pyopencl's events of host copies: they hold the host arrays
        self._queue = None           # kept as long as its copies may run
        self._error = None
        self._thread = None

    def add(self, a) -> cl.Buffer:
        """A read-only buffer that will hold ``a`` (an empty array: 4 zero bytes, as a
        ``COPY_HOST_PTR`` buffer of ``np.zeros(4, np.uint8)`` held before)."""
        a = np.ascontiguousarray(a) if len(a) else np.zeros(4, np.uint8)
        buf = cl.Buffer(self.rt.ctx, cl.mem_flags.READ_ONLY, a.nbytes)
        self._items.append((buf, a))
        return buf

    def start(self):
        """Queue every copy (non-blocking, on a new queue, flushed) on a daemon thread."""
        def run():
            try:
                q = self._queue = self.rt.new_queue()
                self._events = [cl.enqueue_copy(q, buf, a, is_blocking=False)
                                for buf, a in self._items]
                q.flush()            # other queues wait on these events: they must be submitted
            except BaseException as exc:   # raised by order(), in the thread that needs the data
                self._error = exc

        self._thread = threading.Thread(target=run, name="clalign-nucl-upload", daemon=True)
        self._thread.start()

    def order(self, queue) -> None:
        """Make ``queue``'s later commands wait for the copies (a barrier; waits for the thread
        to have queued them, without the interpreter lock). Each lane calls it once, before its
        first launch (``Lane.before_first``)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        if self._events:
            cl.enqueue_barrier(queue, wait_for=self._events)
