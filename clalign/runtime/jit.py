"""numba, on demand: functions compiled on first use, numba imported only then, and numba's
on-disk cache loaded ahead of need on a background thread.

``njit`` replaces ``numba.njit`` in clalign's modules: importing them does not import numba
(0.3-0.8 s, then ~0.6 s of numba's own start in the first compiled call, on the H100 host), so a
command's device work can begin while numba starts. A function's first call (or ``preload``)
makes the real dispatcher; its module global and the deferred functions it calls are replaced by
dispatchers then, so compiled code calls compiled code as with ``numba.njit`` (inlining included).

A compiled stage's first call in a process loads its machine code from numba's cache: 0.1-0.7 s
each on the H100 host, ~1.2 s in all for one ``clalign blastp``. ``preload`` starts numba and
those loads when the command starts, in the order the stages need them, so they overlap the
OpenCL platform's start, the database's opening and the queries' reading. Only entries the cache
already holds for this machine and this source are loaded: a first run (or a stale cache)
compiles on demand as before. ``numpy_forms`` tells a caller that numba is still starting (or
kept out of this process: ``away``) and a function's compiled code is not there: the query
set-up's lookup table and Karlin block have numpy forms for that case, so a command's first
queries need not wait.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
import threading
import types

_LOCK = threading.RLock()
_PROBE_LOCK = threading.Lock()
_PRELOADS = [0]                     # preloads running (guarded by _LOCK)
_BY_FUNC = {}                       # plain function -> its Deferred
_QUEUED = set()                     # specs given to a preload of this process
_DISPATCHER_ATTRS = frozenset((
    "signatures", "nopython_signatures", "overloads", "stats", "compile", "recompile",
    "targetctx", "typingctx", "targetoptions", "_cache", "inspect_types", "inspect_llvm",
    "inspect_asm", "inspect_cfg", "get_call_template", "typeof_pyval", "enable_caching",
    "disable_compile", "parallel_diagnostics", "get_metadata", "get_annotation_info"))


class Deferred:
    """A function numba compiles on first use (``njit``); ``py_func`` is the plain function."""

    def __init__(self, func, options: dict):
        functools.update_wrapper(self, func)
        self.py_func = func
        self._options = options
        self._disp = None
        self._making = None         # the dispatcher while its callees are bound (under _LOCK)
        _BY_FUNC[func] = self

    def dispatcher(self):
        """The numba dispatcher (made, and numba imported, on the first request)."""
        disp = self._disp
        if disp is None:
            with _LOCK:
                if self._disp is None:
                    if self._making is not None:    # (mutual) recursion, this thread's
                        return self._making
                    _skip_blas_probe()
                    import numba

                    from .gcpause import watch_numba
                    watch_numba()           # full collections allowed while numba compiles

                    # published only once its callees are bound: another thread that sees the
                    # dispatcher (here or as the module global) may compile with it at once
                    disp = self._making = numba.njit(**self._options)(self.py_func)
                    g = self.py_func.__globals__
                    _bind(self.py_func.__code__, g)
                    if g.get(self.__name__) is self:
                        g[self.__name__] = disp
                    self._disp = disp
                disp = self._disp
        return disp

    def ready(self) -> bool:
        """Whether compiled code is loaded for this function in this process."""
        return self._disp is not None and bool(self._disp.overloads)

    def __call__(self, *args):
        return self.dispatcher()(*args)

    def __getattr__(self, name):
        # the dispatcher's own attributes only: a probe for anything else (pytest's collection,
        # hasattr checks) must not start numba
        if name not in _DISPATCHER_ATTRS:
            raise AttributeError(name)
        return getattr(self.dispatcher(), name)

    def __repr__(self):
        return f"<deferred njit {self.__module__}.{self.__qualname__}>"


def _bind(code, g):
    """Replace the deferred functions that ``code`` (and the code nested in it) names in the
    globals ``g`` by their dispatchers, which numba can type and inline."""
    for name in code.co_names:
        v = g.get(name)
        if isinstance(v, Deferred):
            g[name] = v.dispatcher()
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _bind(c, g)


def njit(**options):
    """``numba.njit(**options)``, made on first use (the module docstring)."""

    def wrap(func):
        return Deferred(func, options)

    return wrap


def preloading() -> bool:
    """Whether a ``preload`` is still running in this process."""
    return _PRELOADS[0] > 0


_AWAY = [0]                         # searches keeping numba out of this process (under _LOCK)


@contextlib.contextmanager
def away():
    """While active, ``numpy_forms`` answers True for functions not loaded here: a search whose
    compiled stages run in the stage process (``runtime.stageproc``) keeps numba out of this one."""
    with _LOCK:
        _AWAY[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _AWAY[0] -= 1


def numpy_forms(func) -> bool:
    """Whether a caller with a numpy form of ``func`` should use it: numba is still starting
    (``preloading``) or kept away (``away``), and ``func`` has no compiled code loaded here."""
    return (_PRELOADS[0] > 0 or _AWAY[0] > 0) and not ready(func)


def ready(func) -> bool:
    """Whether ``func`` (deferred or a numba dispatcher) has compiled code loaded here."""
    deferred = func if isinstance(func, Deferred) else _BY_FUNC.get(getattr(func, "py_func", None))
    if deferred is not None:
        return deferred.ready()
    return bool(getattr(func, "overloads", None))


def _dispatcher(spec: str):
    """``module:name`` names a dispatcher; ``module:name()`` a function returning one."""
    mod, _, name = spec.partition(":")
    if name.endswith("()"):
        return getattr(importlib.import_module(mod), name[:-2])()
    return getattr(importlib.import_module(mod), name)


def load_cached(disp) -> int:
    """Load every signature of ``disp`` (a numba dispatcher) that its cache holds for this
    machine and this version of the function's code; returns how many were loaded."""
    if isinstance(disp, Deferred):
        disp = disp.dispatcher()
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


def _skip_blas_probe():
    """numba's array-math module, loaded with numba's CPU target, imports ``scipy.linalg`` when
    scipy is installed, only to learn whether ``np.convolve``/``np.correlate`` may call BLAS:
    0.3-0.5 s of Python holding the interpreter lock while a command's device work starts.
    clalign's compiled code calls neither, so numba's import by clalign (the preload, or a
    deferred function's first call: blastn's DUST paid the probe before) has that probe answer
    "no BLAS" (those two then use numba's own loop; every other function is unaffected)."""
    with _PROBE_LOCK:   # two preloads (concurrent searches in one process) may both call it
        if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
            return
        try:
            import numba.np.linalg as linalg
        except Exception:   # noqa: BLE001 - an optimisation only
            return
        real = linalg.ensure_blas

        def no_blas():
            raise ImportError("BLAS probe skipped by clalign's preload")

        linalg.ensure_blas = no_blas
        try:
            # an error here is the real call's to report; the real ensure_blas comes back anyway
            with contextlib.suppress(Exception):
                import numba.np.arraymath as arraymath

                arraymath.ensure_blas = real
        finally:
            linalg.ensure_blas = real


def preload(specs) -> threading.Thread:
    """Load the cached code of ``specs`` ("module:function" or "module:maker()", in the order
    they will be called) on a daemon thread; returns the thread. Specs an earlier preload of
    this process was given are left out (a process running several searches reads each stage's
    cache index once). Errors are left to the real calls to raise."""
    with _LOCK:
        specs = [s for s in specs if s not in _QUEUED]
        _QUEUED.update(specs)

    def run():
        try:
            # numba's import under _LOCK, as a deferred function's first call imports it: two
            # threads importing numba's modules at once can meet a partly initialised module
            # ("cannot import name ... from partially initialized module"), seen with a thread
            # importing numba beside this one at a command's start
            with _LOCK:
                _skip_blas_probe()
            for spec in specs:
                try:
                    load_cached(_dispatcher(spec))
                except Exception:    # noqa: BLE001 - an optimisation only: the call reports
                    pass
        finally:
            with _LOCK:
                _PRELOADS[0] -= 1

    with _LOCK:
        _PRELOADS[0] += 1
    t = threading.Thread(target=run, name="clalign-jit-preload", daemon=True)
    t.start()
    return t
