"""runtime.jit.njit: numba imported on first use, callees bound, and the query set-up's numpy
forms (used while a command's preload has not loaded the compiled ones) equal to the compiled."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from clalign.blast import engine, lookup
from clalign.blast.engine import PendingSubjects, setup_query
from clalign.blast.options import blastp_options
from clalign.runtime import jit

ROOT = Path(__file__).resolve().parents[1]


def test_importing_the_engines_does_not_import_numba():
    code = ("import sys, clalign.blast.blastp, clalign.blast.blastn, clalign.sw.engine, "
            "clalign.blast.cli; print('numba' in sys.modules)")
    path = os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": path})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


@jit.njit(cache=False)
def _inner(x):
    return x + 1


@jit.njit(cache=False, inline="always")
def _inlined(x):
    return 2 * x


@jit.njit(cache=False)
def _outer(a):
    s = 0
    for v in a:
        s += _inner(v) + _inlined(v)
    return s


def test_deferred_compiles_on_first_call_and_binds_callees():
    d = _outer
    assert isinstance(d, jit.Deferred) and not d.ready() and not jit.ready(d)
    assert not hasattr(d, "pytestmark") and d._disp is None     # probes do not start numba
    assert d.py_func(np.arange(3)) == 3 * 1 + 3 + 6          # plain Python through deferred callees
    assert d(np.arange(3)) == 12
    assert d.ready() and jit.ready(d) and d.signatures
    g = d.py_func.__globals__
    assert not isinstance(g["_inner"], jit.Deferred) and not isinstance(g["_outer"], jit.Deferred)
    assert jit.ready(g["_outer"])


def test_setup_falls_back_to_numpy_forms_while_preloading(monkeypatch):
    rng = np.random.default_rng(3)
    opts = blastp_options()
    subjects = PendingSubjects(np.array([0, 400, 1000, 5000], dtype=np.int64), None)
    queries = [rng.integers(1, 23, n).astype(np.uint8) for n in (1, 2, 3, 40, 517)]
    queries += [np.frombuffer(b"MKVLAAGIVGLLLAAHHHHHHWWW", np.uint8) % 23 + 1]
    want = []
    for q in queries:
        try:
            want.append(setup_query(q, subjects, opts))
        except engine.QuerySkipped:
            want.append(None)
    for mod in (engine, lookup):
        monkeypatch.setattr(mod, "numpy_forms", lambda f: True)
    for q, w in zip(queries, want):
        try:
            got = setup_query(q, subjects, opts)
        except engine.QuerySkipped:
            assert w is None
            continue
        for name in ("xdrop_ungapped", "cutoff_ungapped", "cutoff_gapped", "xdrop_gapped",
                     "xdrop_final"):
            assert getattr(got, name) == getattr(w, name), name
        for name in ("starts", "qoffs", "present"):
            assert np.array_equal(getattr(got.lookup, name), getattr(w.lookup, name)), name


def test_numpy_forms_while_away():
    """``away`` (a search whose compiled stages run in the stage process): numpy forms for what
    is not loaded here, compiled code for what is."""
    assert not jit.numpy_forms(_callee_slow) or jit.preloading()
    with jit.away():
        assert jit.numpy_forms(_callee_slow) == (not jit.ready(_callee_slow))
    assert jit._AWAY[0] == 0


@jit.njit(cache=False)
def _callee_slow(x):
    return x * 3


@jit.njit(cache=False)
def _caller_raced(x):
    return _callee_slow(x) + 1


def test_dispatcher_published_only_after_its_callees_are_bound(monkeypatch):
    """A second thread that sees a function's dispatcher (attribute or module global) while the
    first is still binding its callees would type a call to a Deferred and fail: the
    dispatcher must appear only once the callees are dispatchers."""
    import threading

    seen = []
    real_bind = jit._bind

    def slow_bind(code, g):
        # what another thread could see now: the function's dispatcher must not be out yet
        seen.append((_caller_raced._disp, isinstance(g["_caller_raced"], jit.Deferred)))
        real_bind(code, g)

    monkeypatch.setattr(jit, "_bind", slow_bind)
    t = threading.Thread(target=_caller_raced.dispatcher)
    t.start()
    t.join()
    assert seen and seen[0] == (None, True)
    assert _caller_raced(2) == 7


@jit.njit(cache=False)
def _fact(n):
    if n <= 1:
        return 1
    return n * _fact(n - 1)


def test_self_recursive_deferred_binds_to_its_own_dispatcher():
    assert _fact(5) == 120
    assert not isinstance(_fact.py_func.__globals__["_fact"], jit.Deferred)
