"""What numba compiles (or loads from its cache) during one clalign command, per function.

    NUMBA_CACHE_DIR=$(mktemp -d) python -m tools.numba_compiles -- blastp -query Q.fa -db DB.fa
    python -m tools.numba_compiles --cold --warm -- sw -query Q.fa -db DB.fa   # two processes

Runs the command in this process (``clalign.cli.main``) with a listener on numba's
``numba:compile`` events (fired only for cache misses) and a timer around its disk-cache loads,
then lists every compiled function of ``clalign``: its specialisations (``signatures``), compiles
with their inclusive and exclusive seconds (a caller's compile types and compiles its callees
inside it), cache loads and their seconds. ``--cold/--warm`` run the command in child processes,
first with an empty ``NUMBA_CACHE_DIR``, then with the one it filled, and print both walls.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


class _Recorder:
    """numba compile events, exclusive of nested compiles, and cache loads, per function."""

    def __init__(self):
        import numba.core.caching as caching
        import numba.core.event as ev

        self.rows = {}          # name -> dict
        self.events = []        # (name, args, inclusive s, exclusive s, caller being compiled)
        self._tls = threading.local()
        rec = self

        class L(ev.Listener):
            def on_start(self, event):
                d = event.data["dispatcher"]
                rec._stack().append([time.perf_counter(), 0.0, _name(d.py_func)])

            def on_end(self, event):
                t0, child, name = rec._stack().pop()
                dt = time.perf_counter() - t0
                parent = rec._stack()[-1][2] if rec._stack() else ""
                if rec._stack():
                    rec._stack()[-1][1] += dt
                rec.events.append((name, str(event.data["args"]), dt, dt - child, parent))
                row = rec._row(name)
                row["compiles"] += 1
                row["compile_s"] += dt
                row["exclusive_s"] += dt - child

        ev.register("numba:compile", L())
        orig = caching.Cache.load_overload

        def load_overload(cache, sig, target_context):
            t0 = time.perf_counter()
            cres = orig(cache, sig, target_context)
            if cres is not None:
                row = rec._row(_name(cache._py_func))
                row["loads"] += 1
                row["load_s"] += time.perf_counter() - t0
            return cres

        caching.Cache.load_overload = load_overload

    def _stack(self):
        if not hasattr(self._tls, "s"):
            self._tls.s = []
        return self._tls.s

    def _row(self, name):
        return self.rows.setdefault(name, dict(compiles=0, compile_s=0.0, exclusive_s=0.0, loads=0,
                                               load_s=0.0, signatures=[]))

    def collect(self):
        """Add every clalign dispatcher's signatures (those compiled or loaded in this process)."""
        from numba.core.registry import CPUDispatcher

        for mod in list(sys.modules.values()):
            if not getattr(mod, "__name__", "").startswith("clalign"):
                continue
            for obj in list(vars(mod).values()):
                if isinstance(obj, CPUDispatcher) and obj.signatures:
                    row = self._row(_name(obj.py_func))
                    row["signatures"] = sorted({str(s) for s in obj.signatures})
        return self.rows


def _name(fn):
    return f"{fn.__module__.replace('clalign.', '')}.{fn.__qualname__}"


def run_inprocess(args):
    rec = _Recorder()
    from clalign.cli import main

    t0 = time.perf_counter()
    try:
        main(args, standalone_mode=False)
    except SystemExit:
        pass
    wall = time.perf_counter() - t0
    return wall, rec.collect(), rec.events


def table(rows) -> str:
    lines = ["| function | specialisations | compiles | compile s (incl.) | exclusive s | cache loads | load s |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in sorted(rows.items(), key=lambda kv: -kv[1]["exclusive_s"] - kv[1]["load_s"]):
        lines.append(f"| `{name}` | {len(r['signatures'])} | {r['compiles']} | {r['compile_s']:.2f} | "
                     f"{r['exclusive_s']:.2f} | {r['loads']} | {r['load_s']:.3f} |")
    tot = lambda k: sum(r[k] for r in rows.values())  # noqa: E731
    lines.append(f"| all ({len(rows)}) | {sum(len(r['signatures']) for r in rows.values())} | "
                 f"{tot('compiles')} | | {tot('exclusive_s'):.2f} | {tot('loads')} | {tot('load_s'):.3f} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cold", action="store_true", help="run in a child with an empty NUMBA_CACHE_DIR")
    ap.add_argument("--warm", action="store_true", help="then again in a child with the same cache")
    ap.add_argument("--cache", default=None, help="NUMBA_CACHE_DIR for --cold/--warm (default: a new temporary one)")
    ap.add_argument("--json", default=None, help="write the rows and events here")
    ap.add_argument("--signatures", action="store_true", help="list each function's signatures")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    cmd = [c for c in a.command if c != "--"] if a.command[:1] == ["--"] else a.command
    if a.cold or a.warm:
        cache = a.cache or tempfile.mkdtemp(prefix="numba_cache_")
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label, on in (("cold", a.cold), ("warm", a.warm)):
            if not on:
                continue
            extra = ["--json", f"{a.json}.{label}"] if a.json else []
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "tools.numba_compiles", *extra, "--", *cmd],
                           env=env, check=True)
            print(f"{label} process wall {time.perf_counter() - t0:.2f} s (NUMBA_CACHE_DIR={cache})")
        return
    wall, rows, events = run_inprocess(cmd)
    print(table(rows), file=sys.stderr)
    print(f"command wall {wall:.2f} s in this process", file=sys.stderr)
    if a.signatures:
        for name, r in sorted(rows.items()):
            for s in r["signatures"]:
                print(f"{name}: {s}", file=sys.stderr)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(dict(wall=wall, rows=rows, events=events), fh, indent=1)


if __name__ == "__main__":
    main()
