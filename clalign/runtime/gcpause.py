"""Python's cyclic garbage collector paused for the length of a search.

A search makes hundreds of thousands of acyclic objects (queries, HSP rows, output records);
each of them counts towards the collector's thresholds, and every third young collection or so
a full collection walks every object of the process -- numba's type system and the imported
modules included (~0.05-0.1 s each) -- holding the interpreter lock, so every worker thread
waits for it. 20,000 reads against 120 Mb on a 2-core VM: six full collections, 0.33 s of
``run_blastn``'s 3.6 s (docs/perf/blastn.md, session 13). Objects are still freed by their
reference counts; only cycles wait for the collector, which runs again when the last pause
ends (if it was enabled before the first).
"""
from __future__ import annotations

import contextlib
import gc
import threading

_LOCK = threading.Lock()
_STATE = {"depth": 0, "was_enabled": False}


@contextlib.contextmanager
def paused():
    """Disable the cyclic collector inside the block; nested and concurrent blocks (any
    thread) re-enable it only when the last one ends, and only if it was enabled before."""
    with _LOCK:
        if _STATE["depth"] == 0:
            _STATE["was_enabled"] = gc.isenabled()
            gc.disable()
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0 and _STATE["was_enabled"]:
                gc.enable()
