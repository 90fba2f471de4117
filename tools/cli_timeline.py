#!/usr/bin/env python3
"""Wall-clock timeline of one ``clalign`` command, run in this process: where its time goes.

    python3 tools/cli_timeline.py [--json T.json] [--span MOD:QUALNAME ...] -- sw -query Q.fa -db DB

Runs ``clalign.cli.main`` with the given arguments after installing two probes, so it works for
any engine's command:

* **imports**: every import that enters a package from outside it (``numpy`` from
  ``clalign.sw.report``, ``numba`` from the traceback thread, ...) is a span, its time inclusive;
* **functions**: spans around the functions named in ``SPANS`` (device choice, OpenCL context,
  probe, each program's load or build, database open, rates, each batch and query, the
  reporting threads, output) plus ``--span`` ones; a module's functions are wrapped right after
  the module runs, so ``from x import f`` elsewhere binds the wrapped one.

Times are seconds since the process started (from ``/proc/self/stat``, so the interpreter's own
start-up shows as the first gap), with the thread of each span. The table goes to stderr after
the command's own output, and to ``--json``. Spans shorter than ``--min-ms`` are left out of
the table (all are in the JSON). The probes cost microseconds per call.
"""
from __future__ import annotations

import argparse
import functools
import importlib.abc
import json
import os
import sys
import threading
import time

#: Functions timed by default, ``module:Qualified.name``; an optional ``@ARG`` names the argument
#: (index or keyword) whose value labels the span (e.g. the template name of a build).
SPANS = (
    "clalign.runtime.device:all_devices",
    "clalign.runtime.probe:probe",
    "clalign.runtime:Runtime.__init__",
    "clalign.runtime:Runtime._load_or_build@3",
    "clalign.runtime:Runtime.prebuild",
    "clalign.runtime.render:render@0",
    "clalign.data.database:as_database",
    "clalign.data.database:Database.open",
    "clalign.sw.engine:parse_queries",
    "clalign.sw.engine:SWEngine.__init__",
    "clalign.sw.engine:SWEngine.prepare",
    "clalign.sw.engine:SWEngine.search",
    "clalign.sw.threshold:device_rates",
    "clalign.sw.threshold:measure_rates",
    "clalign.sw.multi:search_devices",
    "clalign.sw.worker:Worker.upload",
    "clalign.sw.worker:Worker.score_batch@3",
    "clalign.sw.report:Reporter.__init__",
    "clalign.sw.report:Reporter._select@1",
    "clalign.sw.report:Reporter._align_group@1",
    "clalign.sw.report:Reporter._warm",
    "clalign.sw.worker:Worker.begin@3",
    "clalign.sw.worker:Worker.end",
    "clalign.sw.cli:format_results",
    "clalign.outfile:atomic_output",
    "clalign.stats:SearchStatistics.for_search",
    "clalign.blast.blastp:read_queries",
    "clalign.blast.blastp:_read_subjects",
    "clalign.blast.engine:Subjects.from_database",
    "clalign.blast.device:DeviceUngapped.__init__",
    "clalign.blast.blastp:_query_hits",
    "clalign.runtime.jit:load_cached@0",
    "numba.core.dispatcher:Dispatcher._compile_for_args",
    "numba.core.caching:Cache.load_overload",
)

_T0 = time.perf_counter()


def _process_start_offset() -> float:
    """Seconds between this process's start and now (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/stat") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


_BASE = _T0 - _process_start_offset()     # perf_counter value at process start
_SPANS: list = []
_LOCK = threading.Lock()
_LOCAL = threading.local()


def _now() -> float:
    return time.perf_counter() - _BASE


def _record(kind, name, t0, t1):
    with _LOCK:
        _SPANS.append({"kind": kind, "name": name, "start": round(t0, 4), "end": round(t1, 4),
                       "thread": threading.current_thread().name})


def _label(arg, args, kwargs):
    if arg is None:
        return ""
    try:
        v = args[int(arg)] if arg.isdigit() else kwargs.get(arg)
    except (IndexError, ValueError):
        v = kwargs.get(arg) if not arg.isdigit() else None
    if v is None:
        return ""
    s = str(v)
    return f"[{s[:40]}]"


def _wrap(fn, name, arg):
    if getattr(fn, "_timeline", False):
        return fn
    if isinstance(fn, (staticmethod, classmethod)):
        return type(fn)(_wrap(fn.__func__, name, arg))

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        t0 = _now()
        try:
            return fn(*args, **kwargs)
        finally:
            _record("call", name + _label(arg, args, kwargs), t0, _now())

    if hasattr(fn, "__code__") and fn.__code__.co_flags & 0x20:     # a generator (context managers)
        @functools.wraps(fn)
        def timed_gen(*args, **kwargs):
            t0 = _now()
            try:
                return (yield from fn(*args, **kwargs))
            finally:
                _record("call", name + _label(arg, args, kwargs), t0, _now())
        timed_gen._timeline = True
        return timed_gen
    timed._timeline = True
    return timed


def _install_spans(module, specs):
    for qual, arg in specs:
        parts = qual.split(".")
        owner = module
        for p in parts[:-1]:
            owner = getattr(owner, p, None)
            if owner is None:
                break
        if owner is None:
            continue
        raw = owner.__dict__.get(parts[-1]) if isinstance(owner, type) else None
        if raw is None:         # a module attribute, or a method a class inherits
            raw = getattr(owner, parts[-1], None)
        if raw is None:
            continue
        try:
            setattr(owner, parts[-1], _wrap(raw, f"{module.__name__.replace('clalign.', '')}:{qual}", arg))
        except (AttributeError, TypeError):
            pass


class _Finder(importlib.abc.MetaPathFinder):
    """Times imports that enter a package from outside it, and wraps SPANS after a module runs."""

    def __init__(self, specs):
        self.specs = specs          # module -> [(qualname, arg)]

    def find_spec(self, name, path, target=None):
        # the other finders asked directly: importlib.util.find_spec would take the parent
        # package's import lock inside this import and deadlock with a thread importing it
        spec = None
        for other in sys.meta_path:
            if other is self or not hasattr(other, "find_spec"):
                continue
            try:
                spec = other.find_spec(name, path, target)
            except (ImportError, ValueError):
                spec = None
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        finder = self
        stack = _stack()
        outer = stack[-1] if stack else ""
        entering = name.split(".")[0] != outer.split(".")[0]

        class Timed(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                st = _stack()
                st.append(name)
                t0 = _now()
                try:
                    loader.exec_module(module)
                finally:
                    st.pop()
                    if entering:
                        _record("import", name, t0, _now())
                if name in finder.specs:
                    _install_spans(module, finder.specs[name])

            def __getattr__(self, item):
                return getattr(loader, item)

        spec.loader = Timed()
        return spec


def _stack():
    st = getattr(_LOCAL, "stack", None)
    if st is None:
        st = _LOCAL.stack = []
    return st


def _parse_specs(items) -> dict:
    out: dict = {}
    for it in items:
        mod, _, qual = it.partition(":")
        qual, _, arg = qual.partition("@")
        out.setdefault(mod, []).append((qual, arg or None))
    return out


def table(spans, min_ms=5.0, end=None) -> str:
    """The spans as text, by start time: start, end, seconds, thread, kind and name."""
    rows = [s for s in spans if (s["end"] - s["start"]) * 1e3 >= min_ms]
    rows.sort(key=lambda s: (s["start"], -s["end"]))
    lines = [f"{'start':>8} {'end':>8} {'secs':>7}  {'thread':<22} what"]
    for s in rows:
        lines.append(f"{s['start']:8.3f} {s['end']:8.3f} {s['end'] - s['start']:7.3f}  {s['thread'][:22]:<22} "
                     f"{s['kind']} {s['name']}")
    if end is not None:
        lines.append(f"{end:8.3f} {'':>8} {'':>7}  {'':<22} exit")
    return "\n".join(lines)


def _sampler(every_s: float, out: list):
    """Every ``every_s``, each thread's innermost frame and innermost clalign frame (what each
    thread is doing, including threads blocked in C: their frame is the call that blocked). The
    sampler needs the GIL itself, so a late sample means the GIL was held elsewhere."""
    me = threading.get_ident()

    def where(f):
        return f"{os.path.basename(f.f_code.co_filename)}:{f.f_code.co_name}:{f.f_lineno}"

    def run():
        while True:
            due = time.perf_counter() + every_s
            t = _now()
            names = {th.ident: th.name for th in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                inner, ours, f = where(frame), None, frame
                while f is not None and ours is None:
                    if "clalign" in f.f_code.co_filename:
                        ours = where(f)
                    f = f.f_back
                out.append((round(t, 4), names.get(ident, str(ident)), inner, ours))
            time.sleep(max(0.0, due - time.perf_counter()))

    threading.Thread(target=run, name="timeline-sampler", daemon=True).start()


def sample_table(samples, window=0.25) -> str:
    """Per thread and ``window`` seconds: the most frequent innermost frame and its share."""
    from collections import Counter, defaultdict

    cells = defaultdict(Counter)
    for t, name, inner, ours in samples:
        cells[(name, int(t / window))][f"{inner} <- {ours}" if ours and ours != inner else inner] += 1
    lines = ["  window  thread                 share  frame (<- innermost clalign frame)"]
    for (name, w), c in sorted(cells.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        frame, k = c.most_common(1)[0]
        if "threading.py:wait" in frame or "thread.py:_worker" in frame or "queue" in frame:
            continue        # idle pool threads
        lines.append(f"{w * window:7.2f}  {name[:22]:<22} {k / sum(c.values()):5.0%}  {frame[:150]}")
    return "\n".join(lines)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        k = argv.index("--")
        own, cmd = argv[:k], argv[k + 1:]
    else:
        own, cmd = [], argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", default=None, help="write the spans and the command's exit status here")
    ap.add_argument("--span", action="append", default=[], help="also time MOD:QUALNAME[@ARG]")
    ap.add_argument("--min-ms", type=float, default=5.0, help="table: leave out spans shorter than this")
    ap.add_argument("--sample-ms", type=float, default=0.0,
                    help="also sample every thread's stack this often; a table per thread and window")
    a = ap.parse_args(own)
    samples = []
    if a.sample_ms > 0:
        _sampler(a.sample_ms / 1e3, samples)
    sys.meta_path.insert(0, _Finder(_parse_specs(list(SPANS) + a.span)))
    import atexit

    # registered first, so it runs after every other exit handler (thread pools joined, the
    # command's own handlers); what remains after it is the interpreter's and the drivers' teardown.
    # (Not printed when the command ends through clalign.cli.run, which skips the exit handlers.)
    atexit.register(lambda: print(f"timeline: exit handlers done at {_now():.3f} s", file=sys.stderr, flush=True))
    _record("mark", "tool started (interpreter start-up before this)", _now(), _now())
    state = {"done": False}

    def finish(status):
        if state["done"]:
            return
        state["done"] = True
        end = _now()
        with _LOCK:
            spans = list(_SPANS)
        sys.stderr.flush()
        print(table(spans, a.min_ms, end), file=sys.stderr, flush=True)
        if samples:
            print(sample_table(list(samples)), file=sys.stderr, flush=True)
        cache = sys.modules.get("clalign.runtime.cache")
        if cache is not None:
            print(cache.summary(), file=sys.stderr, flush=True)
        if a.json:
            with open(a.json, "w") as fh:
                json.dump({"argv": cmd, "status": status, "exit": round(end, 4), "spans": spans,
                           "samples": list(samples)}, fh, indent=1)

    real_exit = os._exit

    def exit_now(status):           # clalign.cli leaves at once when worker threads are still busy
        finish(status)
        real_exit(status)

    os._exit = exit_now
    status = 0
    try:
        import clalign.cli as cli

        sys.argv = ["clalign", *cmd]
        if hasattr(cli, "run"):         # the program's own entry (it ends the process itself)
            cli.run()
        else:
            cli.main(cmd, prog_name="clalign")
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        finish(status)
    return status


if __name__ == "__main__":
    sys.exit(main())
