"""Where a ``clalign`` command's wall time goes: ``python3 -m tools.startup_trace -- blastp ...``.

Runs the command in this process and prints, on stderr, a wall-clock timeline from interpreter
start: imports of large packages, every numba dispatcher compile or cache load (which thread,
which function, how long), every OpenCL program build, the first and last result, exit. Used for
the CLI start-up (issue 10's end-to-end figure is the whole process, not the in-process search).
"""
from __future__ import annotations

import sys
import threading
import time

T0 = time.perf_counter()
EVENTS = []   # (start, end, thread, what)


def _rec(what, t0, t1):
    EVENTS.append((t0 - T0, t1 - T0, threading.current_thread().name, what))


def _wrap(obj, name, label):
    orig = getattr(obj, name)

    def wrapped(*a, **k):
        t0 = time.perf_counter()
        try:
            return orig(*a, **k)
        finally:
            _rec(label(*a) if callable(label) else label, t0, time.perf_counter())
    setattr(obj, name, wrapped)


#: clalign functions timed by default (module:qualified name); missing ones are skipped
FUNCS = ("clalign.runtime:Runtime.__init__", "clalign.data.database:as_database",
         "clalign.blast.engine:Subjects.from_database", "clalign.blast.blastp:read_queries",
         "clalign.blast.device:DeviceUngapped.__init__", "clalign.blast.blastp:_query_hits",
         "clalign.output.tabular:write_tabular", "clalign.outfile:OutputFiles.__exit__")


def _wrap_funcs(names):
    import importlib

    for spec in names:
        mod, _, qual = spec.partition(":")
        try:
            obj = importlib.import_module(mod)
            *path, attr = qual.split(".")
            for part in path:
                obj = getattr(obj, part)
            getattr(obj, attr)
        except (ImportError, AttributeError):
            continue
        _wrap(obj, attr, qual)


def install():
    t0 = time.perf_counter()
    import numba  # noqa: F401
    from numba.core.dispatcher import Dispatcher
    _rec("import numba", t0, time.perf_counter())
    _wrap(Dispatcher, "compile", lambda d, *a: f"numba {d.py_func.__module__}.{d.py_func.__name__}")
    t0 = time.perf_counter()
    import pyopencl as cl
    _rec("import pyopencl", t0, time.perf_counter())
    _wrap(cl.Program, "build", "opencl build")
    _wrap(cl.Context, "__init__", "opencl context")
    _wrap(cl, "get_platforms", "opencl get_platforms")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    install()
    from clalign.cli import main as cli_main
    if argv and argv[0] == "blastp":
        import clalign.blast.blastp  # noqa: F401  (imported here to time its functions)
    _wrap_funcs(FUNCS)
    status = 0
    t0 = time.perf_counter()
    try:
        cli_main(argv)
    except SystemExit as exc:
        status = exc.code
    _rec("command", t0, time.perf_counter())
    total = {}
    for s, e, th, what in sorted(EVENTS):
        key = what.split(" ")[0]
        total[key] = total.get(key, 0.0) + (e - s)
        print(f"{s:8.3f} {e:8.3f} {e - s:7.3f}  {th[:22]:22s} {what}", file=sys.stderr)
    for k, v in sorted(total.items()):
        print(f"total {k}: {v:.3f} s", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
