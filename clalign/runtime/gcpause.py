"""Python's full (oldest-generation) garbage collections paused for the length of a search.

A search makes hundreds of thousands of acyclic objects (queries, HSP rows, output records);
each counts towards the collector's thresholds, and every tenth young collection or so a full
collection walks every object of the process -- numba's type system and the imported modules
included (~0.05-0.1 s each) -- holding the interpreter lock, so every worker thread waits for
it. 20,000 reads against 120 Mb on a 2-core VM: six full collections, 0.33 s of
``run_blastn``'s 3.6 s (docs/perf/blastn.md, session 13). The young collections go on, and
while numba compiles (a first run on a cold cache; :func:`watch_numba` hears of it) full
collections are allowed: a compilation's cycles outlive the young generations (a cold run peaked
at 907 MB with the collector off, 763 MB with only full collections paused, 555 MB with none
paused). Objects are freed by their reference counts as always; the full collections resume when
the last pause ends.
"""
from __future__ import annotations

import contextlib
import gc
import threading

_LOCK = threading.Lock()
_STATE = {"depth": 0, "threshold": None, "compiling": 0, "watching": False}
#: the oldest generation's threshold while paused (collections of the middle one between two
#: full collections): never reached in a search
PAUSED = 1 << 30


def _apply():
    """The thresholds for the state (under _LOCK): paused while a pause is on and numba is not
    compiling."""
    t = _STATE["threshold"]
    if t is not None:
        on = _STATE["depth"] > 0 and _STATE["compiling"] == 0
        gc.set_threshold(t[0], t[1], PAUSED if on else t[2])


@contextlib.contextmanager
def paused():
    """No full collection inside the block (but while numba compiles); nested and concurrent
    blocks (any thread) restore the thresholds only when the last one ends."""
    with _LOCK:
        if _STATE["depth"] == 0:
            _STATE["threshold"] = gc.get_threshold()
        _STATE["depth"] += 1
        _apply()
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            _apply()
            if _STATE["depth"] == 0:
                _STATE["threshold"] = None


def _compiling(step: int):
    with _LOCK:
        _STATE["compiling"] += step
        _apply()


def watch_numba():
    """Allow full collections while numba compiles (its "numba:compile" events); once per
    process, after numba's import (``runtime.jit`` calls it)."""
    with _LOCK:
        if _STATE["watching"]:
            return
        _STATE["watching"] = True
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev):
            _compiling(1)

        def on_end(self, ev):
            _compiling(-1)

    event.register("numba:compile", _Listener())
