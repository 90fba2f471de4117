"""Compiled stages in a process of their own: a child interpreter that imports numba, loads the
stages' cached machine code and serves calls, with its own interpreter lock.

Why: in a device BLASTP command numba's start (import, CPU target, cache loads; ~0.55 s in a
quiet process) shares the interpreter lock with the device's feeders and drivers and stretches to
~1.5 s, while the gapped stage's workers wait for it (docs/perf/blastp.md, runs y26-y27). Here the
main process never imports numba; the child starts it beside the command.

Protocol: length-prefixed pickles on the child's stdin/stdout. A request is ``(id, "module:
function", args)``; the child runs it on one of ``threads`` call threads and answers ``(id, True,
result)`` or ``(id, False, (exception or None, its text, the child's traceback text))``; the parent
re-raises the exception with the traceback as its cause. Big arrays go once through shared
memory (:meth:`StageProcess.share`): a :class:`Shared` handle in a request is an array mapped
read-only in the child (each segment mapped once). The child's own splitting uses :func:`pool`.

Lifecycle: the child ignores SIGINT (the parent's clean stop handles signals) and exits when its
stdin closes (the parent's :meth:`close`, or its death). The parent unlinks its segments in
:meth:`close`. A child that cannot start or dies fails every pending and later call with
:class:`StageError`, which callers answer by running the stage in-process.
"""
from __future__ import annotations

import importlib
import itertools
import os
import pickle
import struct
import subprocess
import sys
import threading
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

_HEAD = struct.Struct("<Q")


class StageError(RuntimeError):
    """The stage process is not there (did not start, or died): run the stage in-process."""


class RemoteTraceback(Exception):
    """The child's traceback text, attached as the cause of an exception it raised."""

    def __str__(self):
        return self.args[0]


@dataclass(frozen=True)
class Shared:
    """An array in a shared-memory segment: what a request carries instead of the array."""

    name: str
    dtype: str
    shape: tuple


def _write(fh, obj, lock):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    with lock:
        fh.write(_HEAD.pack(len(data)))
        fh.write(data)
        fh.flush()


def _read(fh):
    head = fh.read(_HEAD.size)
    if len(head) < _HEAD.size:
        return None
    n, = _HEAD.unpack(head)
    data = fh.read(n)
    if len(data) < n:
        return None
    return pickle.loads(data)


class StageProcess:
    """The parent's end: ``submit``/``call`` a "module:function" in the child."""

    def __init__(self, threads: int, preload=(), argv=None):
        """Start the child (``argv``: another command line, for tests); raises StageError."""
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        cmd = argv or [sys.executable, "-m", "clalign.runtime.stageproc", str(int(threads)),
                       *preload]
        try:
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          env=env, close_fds=True)
        except OSError as exc:
            raise StageError(f"stage process: {exc}") from exc
        self._lock, self._wlock = threading.Lock(), threading.Lock()
        self._pending, self._ids, self._dead = {}, itertools.count(1), None
        self._segments = []
        self.shared = []            # names of the segments made (kept after ``close``)
        self._reader = threading.Thread(target=self._replies, name="clalign-stageproc", daemon=True)
        self._reader.start()

    @property
    def alive(self) -> bool:
        return self._dead is None

    def submit(self, spec: str, *args) -> Future:
        """A Future of ``spec(*args)`` run in the child; StageError when the child is gone."""
        fut = Future()
        with self._lock:
            if self._dead is not None:
                raise StageError(self._dead)
            rid = next(self._ids)
            self._pending[rid] = fut
        try:
            _write(self._proc.stdin, (rid, spec, args), self._wlock)
        except (OSError, ValueError) as exc:
            self._fail(f"stage process: {exc}")
        return fut

    def call(self, spec: str, *args):
        return self.submit(spec, *args).result()

    def share(self, array) -> Shared:
        """A copy of ``array`` in a new shared-memory segment (unlinked by ``close``)."""
        from multiprocessing import shared_memory

        a = np.ascontiguousarray(array)
        seg = shared_memory.SharedMemory(create=True, size=max(1, a.nbytes))
        self._segments.append(seg)
        self.shared.append(seg.name)
        np.ndarray(a.shape, a.dtype, buffer=seg.buf)[...] = a
        return Shared(seg.name, a.dtype.str, a.shape)

    def _replies(self):
        why = "stage process: it ended"
        try:
            while True:
                msg = _read(self._proc.stdout)
                if msg is None:
                    break
                rid, ok, value = msg
                with self._lock:
                    fut = self._pending.pop(rid, None)
                if fut is None:
                    continue
                if ok:
                    fut.set_result(value)
                else:
                    exc, text, tb = value
                    if exc is None:
                        exc = RuntimeError(text)
                    exc.__cause__ = RemoteTraceback(tb)
                    fut.set_exception(exc)
        except Exception as exc:   # noqa: BLE001 - a broken stream is a dead child
            why = f"stage process: {exc!r}"
        self._fail(why)

    def _fail(self, why):
        with self._lock:
            if self._dead is None:
                self._dead = why
            pending, self._pending = self._pending, {}
        for fut in pending.values():
            fut.set_exception(StageError(why))

    def close(self):
        """End the child (stdin closed; killed if it has not gone in 5 s), unlink the segments."""
        try:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._reader.join(timeout=5)
            self._fail("stage process: closed")
        finally:
            for seg in self._segments:
                seg.close()
                try:
                    seg.unlink()
                except FileNotFoundError:
                    pass
            self._segments = []


# -- the child's end ------------------------------------------------------------------------

_POOL = []
_LOADER = []
_MAPS = {}
_MAP_LOCK = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """The child's worker threads for a call's own chunks (not the threads calls run on)."""
    return _POOL[0]


def wait_preload() -> float:
    """Seconds from the child's start until its preload (numba's start, the cache loads) ended;
    waits for it (for measurements and tests)."""
    _LOADER[0][0].join()
    return _LOADER[0][1]()


def _mapped(h: Shared) -> np.ndarray:
    """The read-only array of a handle, its segment mapped once per child."""
    with _MAP_LOCK:
        got = _MAPS.get(h.name)
        if got is None:
            import mmap

            nbytes = int(np.prod(h.shape, dtype=np.int64)) * np.dtype(h.dtype).itemsize
            fd = os.open(os.path.join("/dev/shm", h.name.lstrip("/")), os.O_RDONLY)
            try:
                m = mmap.mmap(fd, max(1, nbytes), prot=mmap.PROT_READ)
            finally:
                os.close(fd)
            got = _MAPS[h.name] = np.frombuffer(m, dtype=h.dtype, count=int(np.prod(h.shape))
                                                ).reshape(h.shape)
        return got


def _resolve(x):
    if isinstance(x, Shared):
        return _mapped(x)
    if isinstance(x, tuple):
        return tuple(_resolve(v) for v in x)
    return x


def _run(rid, spec, args, out, lock):
    try:
        mod, _, name = spec.partition(":")
        fn = getattr(importlib.import_module(mod), name)
        reply = (rid, True, fn(*_resolve(args)))
    except BaseException as exc:   # noqa: BLE001 - every failure goes back to the caller
        tb = traceback.format_exc()
        try:
            pickle.dumps(exc)
        except Exception:   # noqa: BLE001 - an exception that does not pickle goes as text
            exc = None
        reply = (rid, False, (exc, f"{type(exc).__name__}: {exc}" if exc else tb.splitlines()[-1],
                              tb))
    try:
        _write(out, reply, lock)
    except Exception:   # noqa: BLE001 - e.g. a result that does not pickle
        _write(out, (rid, False, (None, "stage process: reply failed", traceback.format_exc())),
               lock)


def main(argv):
    """The child: serve requests from stdin until it closes (the module docstring)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)                   # a stray print must not enter the replies
    sys.stdout = sys.stderr
    threads = max(1, int(argv[0]))
    from .. import numba_optional

    numba_optional.install()
    import time

    from .jit import preload

    t0 = time.perf_counter()
    loader = preload(argv[1:])      # numba's start and the cache loads, beside the first calls
    done = []
    _LOADER.append((loader, lambda: done[0] if done else time.perf_counter() - t0))
    threading.Thread(target=lambda: (loader.join(), done.append(time.perf_counter() - t0)),
                     daemon=True).start()
    _POOL.append(ThreadPoolExecutor(max_workers=threads, thread_name_prefix="clalign-stage"))
    calls = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="clalign-call")
    lock, inp = threading.Lock(), sys.stdin.buffer
    while True:
        msg = _read(inp)
        if msg is None:
            break
        calls.submit(_run, *msg, out, lock)
    out.flush()
    os._exit(0)                     # no teardown: the parent has what it asked for


if __name__ == "__main__":   # run as -m: serve from the imported module (its pool and maps)
    from clalign.runtime import stageproc as _self

    _self.main(sys.argv[1:])
