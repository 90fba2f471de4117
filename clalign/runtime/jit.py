"""numba's on-disk cache loaded ahead of need, on a background thread.

A compiled stage's first call in a process loads its machine code from numba's cache (and the
very first one initialises numba's LLVM target): 0.1-0.7 s each on the H100 host, ~1.2 s in
all for one ``clalign blastp``, each on the critical path of the stage that needs it while the
others wait for numba's lock. ``preload`` starts those loads when the command starts, in the
order the stages need them, so they overlap the OpenCL platform's start, the database's
opening and the queries' reading. Only entries the cache already holds for this machine and
this source are loaded: a first run (or a stale cache) compiles on demand as before.
"""
from __future__ import annotations

import importlib
import os
import threading


def _dispatcher(spec: str):
    """``module:name`` names a dispatcher; ``module:name()`` a function returning one."""
    mod, _, name = spec.partition(":")
    if name.endswith("()"):
        return getattr(importlib.import_module(mod), name[:-2])()
    return getattr(importlib.import_module(mod), name)


def load_cached(disp) -> int:
    """Load every signature of ``disp`` (a numba dispatcher) that its cache holds for this
    machine and this version of the function's code; returns how many were loaded."""
    cache = getattr(disp, "_cache", None)
    index_file = getattr(cache, "_cache_file", None)
    if index_file is None:          # cache=False: nothing on disk
        return 0
    codegen = disp.targetctx.codegen()
    loaded = 0
    for key, data_name in index_file._load_index().items():
        sig = key[0]
        if tuple(sig) in disp.overloads:
            continue
        if cache._index_key(sig, codegen) != key:   # another machine or an older source
            continue
        if not os.path.exists(os.path.join(cache.cache_path, data_name)):
            continue                # never a compile here: only what loads
        disp.compile(sig)
        loaded += 1
    return loaded


def preload(specs) -> threading.Thread:
    """Load the cached code of ``specs`` ("module:function" or "module:maker()", in the order
    they will be called) on a daemon thread; returns the thread. Errors are left to the real
    calls to raise."""

    def run():
        for spec in specs:
            try:
                load_cached(_dispatcher(spec))
            except Exception:    # noqa: BLE001 - an optimisation only: the call itself reports
                pass

    t = threading.Thread(target=run, name="clalign-jit-preload", daemon=True)
    t.start()
    return t
